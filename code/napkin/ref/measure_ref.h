/* Host-side references for the measurements (kernels/ and code/measure/):
 * seeded random inputs, bf16 rounding, naive GEMM and decode attention,
 * validation with atol + rtol*|ref| (medians, the least-squares line and the
 * STREAM byte counts they use are core's: stats.h, stream_count.h).
 * Plain C so that Criterion tests them on every machine; the CUDA kernels
 * are validated against exactly these functions. */
#ifndef NAPKIN_MEASURE_REF_H
#define NAPKIN_MEASURE_REF_H

#include "kv_layout.h"

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "rng.h"
#include "stats.h"
#include "stream_count.h"

/* Fill x[0..n) with uniform values in [lo, hi) from the library's seeded
 * generator: a fixed seed gives the same (never all-zero) inputs everywhere. */
void fill_uniform_f32(rng_state *r, float *x, size_t n, float lo, float hi);

/* bf16: the top 16 bits of an fp32, rounded to nearest even (NaN kept NaN). */
uint16_t bf16_from_f32(float x);
float bf16_to_f32(uint16_t b);
/* Round every element through bf16 and store both forms (either may be NULL). */
void bf16_round_array(const float *x, size_t n, uint16_t *out_bf16, float *out_rounded);

/* Y[m][n] = sum_k X[m][k] * W[n][k] for rows n in [n_begin, n_end): the layout
 * of a linear layer (W is out x in, row-major).  Accumulates in double; Y has
 * leading dimension n (only the given columns are written). */
void gemm_ref_f32(int m, int n, int k, const float *x, const float *w, float *y, int n_begin, int n_end);

/* One decode step of attention for one sequence with grouped-query heads:
 * heads query heads share kv_heads K/V heads (heads % kv_heads == 0); each
 * query head h reads KV head h / (heads / kv_heads).  q is heads x head_dim,
 * out is heads x head_dim, K and V are addressed through the layout (the
 * same index function the CUDA kernel uses).  Scores are scaled by
 * 1/sqrt(head_dim); softmax over all `layout->context` cached positions.
 * Accumulates in double.  Returns 0, or -1 for an invalid shape. */
int decode_attention_ref(const kv_layout *layout, int seq, int heads, const float *q, const float *k_cache,
                         const float *v_cache, float *out);

/* The same for query heads [h0, h1) only (out rows h0..h1-1 written, the
 * others untouched): a measured run checks a few heads of one sequence
 * instead of all of them.  Returns -1 for an empty or out-of-range span. */
int decode_attention_ref_heads(const kv_layout *layout, int seq, int heads, int h0, int h1, const float *q,
                               const float *k_cache, const float *v_cache, float *out);

/* Compare got against ref: element i passes when |got-ref| <= atol + rtol*|ref|.
 * Returns the number of failures; *first_bad (may be NULL) gets the first
 * failing index or -1, *max_excess (may be NULL) the largest
 * |got-ref| - (atol + rtol*|ref|) seen (negative when all pass). */
size_t validate_close(const float *got, const float *ref, size_t n, double atol, double rtol, long *first_bad,
                      double *max_excess);

/* Validation that a reduced-precision reduction cannot fail wrongly, and a
 * real bug cannot pass.  A library GEMM may split K and round each partial
 * sum to bf16 before adding them; then an element's error is about
 * u * (sum of |partials| + |y|) with u = 2^-8 (bf16's unit roundoff), which
 * for random inputs scales with the typical magnitude rms(ref), not with the
 * element's own |ref|: an element near zero can be off by a good part of u *
 * rms(ref), and a per-element atol + rtol*|ref| check fails on it.  So the
 * bound is scaled by the set:
 *   every element: |got - ref| <= elem_tol * rms(ref) + rtol * |ref|
 *   the set:       ||got - ref||_2 <= norm_tol * ||ref||_2
 * and no element may be NaN or infinite. */
typedef struct {
    size_t n;         /* elements checked */
    size_t bad;       /* elements over the per-element bound (non-finite count as bad) */
    long first_bad;   /* index of the first, or -1 */
    double rel_l2;    /* ||got - ref|| / ||ref|| (INFINITY when ref is all zero and got is not) */
    double ref_rms;   /* sqrt(mean ref^2) */
    double worst_err; /* largest |got - ref| over rms(ref) */
    int pass;         /* bad == 0 and rel_l2 <= norm_tol */
} norm_check;

norm_check validate_scaled(const float *got, const float *ref, size_t n, double norm_tol, double elem_tol,
                           double rtol);

/* The bounds for a bf16 output of an fp32- or bf16-split-accumulated dot
 * product over random inputs, with u = 2^-8:
 *   norm_tol = 4u (the rounding's rms is below u; 4x margin),
 *   elem_tol = 16u (a split of S parts adds about u sqrt(S) rms(ref) per
 *              element: 16u leaves room for S = 16 at 4 sigma),
 *   rtol     = 2u (the output's own rounding, twice). */
#define BF16_UNIT_ROUNDOFF (1.0 / 256.0)
#define BF16_NORM_TOL (4 * BF16_UNIT_ROUNDOFF)
#define BF16_ELEM_TOL (16 * BF16_UNIT_ROUNDOFF)
#define BF16_RTOL (2 * BF16_UNIT_ROUNDOFF)
norm_check validate_bf16_output(const float *got, const float *ref, size_t n);

/* What a reduced-precision library GEMM may return for one output: K split
 * into `splits` equal parts, each summed in fp32 and rounded to bf16, the
 * partials added in fp32 and the result rounded to bf16.  splits = 1 is
 * the plain fp32-accumulate, bf16-output result.  For tests of the
 * validation above; splits must divide k. */
float dot_bf16_split(const float *x, const float *w, int k, int splits);

/* Decode attention as the split-KV kernel computes it, in fp32: the context
 * cut into `splits` chunks, each with its own running max and sum (online
 * softmax over its positions), then merged by rescaling each chunk with
 * exp(max_chunk - max_all).  The same result as decode_attention_ref up to
 * fp32 rounding: the tests use it to show the kernel's tolerance holds for
 * the arithmetic it does.  Returns 0, or -1 for a bad shape. */
int decode_attention_split_f32(const kv_layout *layout, int seq, int heads, const float *q, const float *k_cache,
                               const float *v_cache, int splits, float *out);

/* The same splits merged as decode attention v4 merges them in parallel
 * (kernels/decode_attention.cu): 128 threads, thread t taking splits t,
 * t + 128, ..., each split's weight exp(m_split - m_all) computed once, the
 * denominator summed by a butterfly per warp of 32 and then the four warps
 * in order, each output dim summed as four interleaved sums (split s into
 * sum s mod 4) added pairwise.  Returns 0, or -1 for a bad shape. */
int decode_attention_split_pmerge_f32(const kv_layout *layout, int seq, int heads, const float *q,
                                      const float *k_cache, const float *v_cache, int splits, float *out);

/* v4's and v5's parallel merge of one head's splits, as described above:
 * acc is splits x d unnormalised outputs, m and sum each split's max and
 * sum (natural-log domain, or log2 with log2_domain as the kernels keep
 * them), w room for `splits` weights; writes the d outputs. */
void decode_attention_pmerge_f32(const float *acc, const float *m, const float *sum, int splits, int d, int log2_domain,
                                 float *w, float *out);

#ifdef __cplusplus
}
#endif

#endif
