/* The host-side reference of the batched gathered adapter operator (BGMV):
 * the CUDA kernel (kernels/lora_bgmv.cu) and its CPU twin
 * (code/measure/lora_bgmv.c) are validated against this. */
#ifndef NAPKIN_LORA_REF_H
#define NAPKIN_LORA_REF_H

#ifdef __cplusplus
extern "C" {
#endif

/* For every token t with adapter a = idx[t] (a < 0: no adapter, y unchanged):
 *   y[t][o] += scale * sum_j (sum_i x[t][i] * A[a][j][i]) * B[a][o][j]
 * x is tokens x d_in, y tokens x d_out, A adapters x rank x d_in and B
 * adapters x d_out x rank (each the out x in layout of a linear layer), all
 * row-major.  The shrink sums accumulate in double.  Returns 0, or -1 for a
 * bad shape or an index at or above `adapters`. */
int lora_bgmv_ref(int tokens, int d_in, int d_out, int rank, int adapters, const float *x, const float *a,
                  const float *b, const int *idx, float scale, float *y);

/* Distinct indices >= 0 among idx[0..n). */
int lora_count_distinct(const int *idx, int n);

#ifdef __cplusplus
}
#endif

#endif
