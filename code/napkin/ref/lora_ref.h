/* The host-side reference of the batched gathered adapter operator (BGMV):
 * the CUDA kernel (kernels/lora_bgmv.cu) and its CPU twin
 * (code/measure/lora_bgmv.c) are validated against this. */
#ifndef NAPKIN_LORA_REF_H
#define NAPKIN_LORA_REF_H

#include <stddef.h>

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

/* The fused BGMV kernel's arithmetic (kernels/lora_bgmv.cu, version 2),
 * emulated in fp32 in its order, for the tests to hold against the fp64
 * reference above.  Shrink: row j's dot product over d_in is split over 32
 * lanes, lane l taking the 8-element chunks c = l, l + 32, l + 64, ... in
 * turn (fmaf over the 8 elements of a chunk), then the 32 partial sums
 * added by the butterfly (xor 16, 8, 4, 2, 1: lane 0's result).  Expand:
 * output o sums v[j] * B[a][o][j] for j = 0, 1, ... with fmaf, and y is
 * rounded to bf16 after adding scale times that sum.  x, A and B are the
 * bf16 values as floats; d_in % 8 == 0.  Returns 0, or -1 for a bad shape
 * or index. */
int lora_bgmv_fused_emulate(int tokens, int d_in, int d_out, int rank, int adapters, const float *x, const float *a,
                            const float *b, const int *idx, float scale, float *y);

/* How version 3 of the fused kernel spreads a step with few adapters over
 * the SMs: each of `items` work items (a group of tokens sharing one
 * adapter) gets the returned number of blocks, block c expanding the
 * output columns [c * cols, min(d_out, (c + 1) * cols)) after the group's
 * shrink (each block repeats it; A comes from the L2 for all but the first
 * of them).  Enough blocks for two per SM where d_out allows, each with at
 * least min_cols columns, none empty; one block per item when the items
 * alone fill the SMs twice.  Per output the arithmetic is version 2's, so
 * lora_bgmv_fused_emulate stands for both.  Returns the blocks per item
 * (>= 1) with *cols set, or -1 for a bad argument. */
int lora_bgmv_column_splits(int items, int d_out, int sms, int min_cols, int *cols);

/* The same plan for `resident` blocks resident at once over the whole
 * card (lora_bgmv_column_splits asks for 2 sms): the kernel passes
 * sms x min(2, the blocks per SM the occupancy API allows at its shared
 * memory), so a plan never asks for a second wave. */
int lora_bgmv_column_splits_resident(int items, int d_out, int resident, int min_cols, int *cols);

/* Dynamic shared memory of one fused block (versions 2 and 3): the x of
 * its group's tokens, `group_max` the largest group of the launch (at
 * most 8), d_in bf16 each.  Sized by the group, not by the most a group
 * may hold: LLaMA-3-70B's d_in = 8192 at 8 tokens is 128 KB, one block per
 * SM, where one token's 16 KB leaves room for many. */
size_t lora_bgmv_fused_smem_bytes(int group_max, int d_in);

/* Distinct indices >= 0 among idx[0..n). */
int lora_count_distinct(const int *idx, int n);

#ifdef __cplusplus
}
#endif

#endif
