/* Where a KV-cache element lives, for the contiguous and the paged layout.
 * Header-only so that the C reference and the CUDA kernel index the cache
 * with the same lines.
 *
 * Contiguous: [seq][kv_head][position][dim].
 * Paged:      [physical block][kv_head][slot][dim] with `block` slots per
 *             block; block_table[seq * blocks_per_seq + position / block]
 *             names the physical block (vLLM's idea, our own order). */
#ifndef NAPKIN_KV_LAYOUT_H
#define NAPKIN_KV_LAYOUT_H

#include <stddef.h>

#if defined(__CUDACC__)
#define NB_HOST_DEVICE __host__ __device__
#else
#define NB_HOST_DEVICE
#endif

typedef struct {
    int kv_heads;
    int head_dim;
    int context;            /* cached positions per sequence */
    int block;              /* 0: contiguous; else positions per page */
    int blocks_per_seq;     /* paged: ceil(context / block) */
    const int *block_table; /* paged: physical block of each logical one */
} kv_layout;

static inline NB_HOST_DEVICE size_t kv_index(const kv_layout *l, int seq, int kv_head, int pos, int dim)
{
    if (l->block == 0)
        return (((size_t)seq * l->kv_heads + kv_head) * l->context + pos) * l->head_dim + dim;
    int phys = l->block_table[(size_t)seq * l->blocks_per_seq + pos / l->block];
    return (((size_t)phys * l->kv_heads + kv_head) * l->block + pos % l->block) * l->head_dim + dim;
}

/* Elements one sequence's K (or V) occupies in the layout: whole pages when paged. */
static inline NB_HOST_DEVICE size_t kv_elements_per_seq(const kv_layout *l)
{
    size_t positions = l->block == 0 ? (size_t)l->context : (size_t)l->blocks_per_seq * l->block;
    return positions * l->kv_heads * l->head_dim;
}

#endif
