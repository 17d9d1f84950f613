/* Published measured ceilings: what code is reported to reach on a GPU, as
 * opposed to its datasheet.  Inputs quoted with their source, not this
 * book's measurements.  A weight read is a read, so a step's bandwidth
 * ceiling is the read-only rate; the copy rate (bytes read plus written)
 * is kept for comparison with STREAM-style reports. */
#ifndef NAPKIN_CEILINGS_H
#define NAPKIN_CEILINGS_H

#include "specs.h"

typedef struct {
    const char *gpu_key;
    double read_bw;     /* bytes/s, read-only stream */
    double copy_bw;     /* bytes/s, copy (read + write counted) */
    double gemm_bf16;   /* FLOP/s, cuBLAS bf16 GEMM on random data */
    const char *source; /* where the figures come from */
} published_ceilings;

/* The published ceilings of the GPU row `gpu_key`; 0, or -1 when none are known. */
int published_ceilings_for(const char *gpu_key, published_ceilings *out);

/* A copy of g at the published ceilings: its bandwidth the read-only rate,
 * every FLOP rate scaled by the bf16 GEMM's share of the datasheet peak.
 * Link figures and memory capacity are kept. */
gpu_spec gpu_at_published_ceilings(const gpu_spec *g, const published_ceilings *c);

#endif
