/* Decode attention v5 (kernels/decode_attention.cu) emulated on the host in
 * the kernel's own order, so that a CPU test can hold the algorithm to the
 * bound the kernel is validated by (atol 1e-5 + rtol 1e-3 |ref|) against
 * the fp64 reference: the same tiles, the same split of P into bf16 high
 * and low parts, the same merges. */
#ifndef NAPKIN_ATTENTION_EMULATE_H
#define NAPKIN_ATTENTION_EMULATE_H

#include "kv_layout.h"

#ifdef __cplusplus
extern "C" {
#endif

/* Positions per tile and per warp of a tile in v5. */
#define ATTN_V5_TILE 64
#define ATTN_V5_WARP_ROWS 16

/* One sequence's decode attention as v5 computes it.  q, K and V hold bf16
 * values (as the kernel reads them); the context is cut into chunks of
 * `chunk` positions (a multiple of 64), one block each; in a chunk, warp w
 * of 4 takes positions 64 t + 16 w ... + 15 of every tile t and keeps its
 * own online softmax in the log2 domain: scores as 8 tensor-core steps of
 * 16 dims, each a 16-term fp32 sum; per head the tile max, p = exp2(s - m)
 * in fp32, 8 lanes' partial sums reduced at the end by the butterfly; P
 * split into bf16 hi and lo = bf16(p - hi), the accumulator rescaled and
 * then added hi.V and lo.V (16-term sums); the 4 warps merged in order,
 * then the chunks by v4's parallel merge.  At most 8 query heads per KV
 * head; head_dim a multiple of 16; contiguous, or pages of a multiple of
 * 16 positions.  Returns 0, or -1 for a bad shape. */
int decode_attention_v5_emulate(const kv_layout *layout, int seq, int heads, const float *q, const float *k_cache,
                                const float *v_cache, int chunk, float *out);

/* The same with P as one bf16 (no low part): what the tensor-core P V
 * would give without the split, for the test that shows the split is
 * needed. */
int decode_attention_v5_emulate_bf16_p(const kv_layout *layout, int seq, int heads, const float *q,
                                       const float *k_cache, const float *v_cache, int chunk, float *out);

#ifdef __cplusplus
}
#endif

#endif
