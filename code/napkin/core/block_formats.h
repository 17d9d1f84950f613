/* Block-scaled 4-bit weight formats, counted in bytes: the one place their
 * sizes live.  A weight row is cut into blocks along its input dimension;
 * each block stores its 4-bit E2M1 values and one shared scale:
 *   MXFP4 (OCP Microscaling v1.0): 32 values, an 8-bit E8M0 scale
 *         -> 4 + 8/32 = 4.25 bits a weight (gpt-oss's released experts);
 *   NVFP4 (NVIDIA): 16 values, an 8-bit FP8 E4M3 scale
 *         -> 4 + 8/16 = 4.5 bits a weight (NVIDIA's fp4 checkpoints).
 * NVFP4's one fp32 scale per tensor is 4 bytes and is counted by
 * block_format_tensor_bytes only. */
#ifndef NAPKIN_BLOCK_FORMATS_H
#define NAPKIN_BLOCK_FORMATS_H

typedef enum { BF_MXFP4, BF_NVFP4, BF_COUNT } block_format_id;

typedef struct {
    const char *name;        /* "mxfp4", "nvfp4" */
    int block;               /* values sharing one scale */
    double value_bits;       /* bits of one value (E2M1: 4) */
    double scale_bits;       /* bits of one block scale */
    const char *scale;       /* the scale's encoding, for people */
    double tensor_scale_bytes; /* a second-level scale per tensor (NVFP4: one fp32) */
} block_format;

/* The format's row, or NULL for an id out of range. */
const block_format *block_format_get(block_format_id f);
/* Mean bytes of one weight in a row whose length is a multiple of the block:
 * (value_bits + scale_bits / block) / 8 (MXFP4 0.53125, NVFP4 0.5625). */
double block_format_bytes_per_weight(block_format_id f);
/* Bytes of a rows x cols weight tensor, blocks along cols (the input
 * dimension): values, one scale per started block of each row, and the
 * per-tensor scale.  NAN for a negative size or an unknown format. */
double block_format_tensor_bytes(block_format_id f, double rows, double cols);
/* Parse "mxfp4" or "nvfp4" (case-insensitive): 0 and *out, or -1. */
int block_format_parse(const char *s, block_format_id *out);

#endif
