/* Where decode attention v5 (kernels/decode_attention.cu) puts each element:
 * the lane's share of the ring copy, the row address each lane gives
 * ldmatrix (K) and ldmatrix.trans (V), the P scratch, the meaning the
 * kernel gives each accumulator register, and the warp-merge scratch.
 * Header-only, as kv_layout.h, so the kernel and the host test
 * (tests/test_attention_fragments.c, which emulates ldmatrix and
 * mma.m16n8k16 lane by lane from the PTX ISA's ownership rules) use the
 * same lines.
 *
 * Lane l of a warp: g = l / 4 (its "group"), t4 = l % 4; for ldmatrix
 * .x4, lanes 8 m ... 8 m + 7 give the row addresses of matrix m (mi = l / 8,
 * mr = l % 8).  A warp's ring slot is 16 rows (positions) of `krow` bf16
 * elements; element offsets below are counted in elements of that slot. */
#ifndef NAPKIN_ATTN_V5_INDEX_H
#define NAPKIN_ATTN_V5_INDEX_H

#include "kv_layout.h" /* NB_HOST_DEVICE */

/* The copy: lane l moves the 16-byte chunk (8 elements) at row
 * attn_v5_copy_row(l, i), column attn_v5_copy_col(l), for i = 0 ... 7:
 * 32 lanes x 8 = 16 rows x 16 chunks. */
static inline NB_HOST_DEVICE int attn_v5_copy_row(int lane, int i)
{
    return (lane >> 4) + 2 * i;
}
static inline NB_HOST_DEVICE int attn_v5_copy_col(int lane)
{
    return (lane & 15) * 8;
}

/* K as the A operand (16 positions x 16 dims of dim step st, at + 16 st):
 * matrices 0..3 = rows 0-7 / 8-15 x dims 0-7, then rows 0-7 / 8-15 x dims
 * 8-15, which is the order a0..a3 of mma.m16n8k16 takes. */
static inline NB_HOST_DEVICE int attn_v5_k_ldsm(int lane, int krow)
{
    const int mi = lane >> 3, mr = lane & 7;
    return (mr + 8 * (mi & 1)) * krow + 8 * (mi >> 1);
}

/* V^T as the A operand (16 dims x 16 positions, dims 16 j ... at + 16 j)
 * by ldmatrix.trans: matrices 0..3 = positions 0-7 x dims 0-7, positions
 * 0-7 x dims 8-15, positions 8-15 x dims 0-7, positions 8-15 x dims 8-15,
 * each transposed on the way. */
static inline NB_HOST_DEVICE int attn_v5_v_ldsm(int lane, int krow)
{
    const int mi = lane >> 3, mr = lane & 7;
    return (mr + 8 * (mi >> 1)) * krow + 8 * (mi & 1);
}

/* q^T as the B operand of dim step st: register r (0, 1) of lane l holds
 * head g's dims attn_v5_q_dim(l, st, r) and the next. */
static inline NB_HOST_DEVICE int attn_v5_q_dim(int lane, int st, int r)
{
    return st * 16 + 2 * (lane & 3) + 8 * r;
}

/* The score registers c[0..3]: position (within the warp's 16) and head. */
static inline NB_HOST_DEVICE int attn_v5_score_pos(int lane, int i)
{
    return (lane >> 2) + 8 * (i >> 1);
}
static inline NB_HOST_DEVICE int attn_v5_score_head(int lane, int i)
{
    return 2 * (lane & 3) + (i & 1);
}

/* The P scratch ([head][position], `pstride` floats a row): lane l writes
 * its probability i (of attn_v5_score_head / _pos) at attn_v5_p_write, and
 * reads the float2 k (0: positions 2 t4, +1; 1: positions 2 t4 + 8, +9) of
 * head g, the B operand P^T, at attn_v5_p_read. */
static inline NB_HOST_DEVICE int attn_v5_p_write(int lane, int i, int pstride)
{
    return attn_v5_score_head(lane, i) * pstride + attn_v5_score_pos(lane, i);
}
static inline NB_HOST_DEVICE int attn_v5_p_read(int lane, int k, int pstride)
{
    return (lane >> 2) * pstride + 2 * (lane & 3) + 8 * k;
}

/* The accumulator acc[j][i] (O^T, dims 16 j ...): its dim and its head. */
static inline NB_HOST_DEVICE int attn_v5_acc_dim(int lane, int j, int i)
{
    return 16 * j + (lane >> 2) + 8 * (i >> 1);
}
static inline NB_HOST_DEVICE int attn_v5_acc_head(int lane, int i)
{
    return 2 * (lane & 3) + (i & 1);
}

/* The warps' merge scratch: [warp][head][wrow floats]; thread tid of the
 * block later reads dim tid of each head. */
static inline NB_HOST_DEVICE int attn_v5_wacc(int warp, int head, int G, int dim, int wrow)
{
    return (warp * G + head) * wrow + dim;
}

#endif
