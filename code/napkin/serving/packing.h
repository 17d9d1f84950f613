/* Ragged batches: sequences of different lengths in one step.
 *
 * Three layouts of the same tokens:
 *  - padded to the longest: n rows of max_len slots, the tail of each row
 *    wasted;
 *  - packed (varlen): the tokens end to end, with cumulative sequence offsets
 *    cu[0] = 0, cu[i+1] = cu[i] + len[i], so sequence i is [cu[i], cu[i+1]);
 *  - length-bucketed: sequences grouped by length into separate batches,
 *    each padded to its own longest member.
 *
 * Token rows are opaque: a token is `row_bytes` bytes (hidden * dtype bytes
 * in a real model), so the functions move any element type. */
#ifndef NAPKIN_PACKING_H
#define NAPKIN_PACKING_H

#include "rng.h"

#include <stddef.h>

/* cu[0..n] from lengths; returns the total token count, or -1 when n < 0 or
 * a length is negative (cu is then untouched). */
long pack_offsets(const int *lengths, int n, long *cu);

/* Longest of n lengths (0 for n = 0). */
int max_length(const int *lengths, int n);

/* padded[n][max_len] rows -> packed[total] rows, dropping each row's tail.
 * Returns 0, or -1 when a length exceeds max_len or is negative. */
int pack_tokens(const void *padded, size_t row_bytes, int n, int max_len, const int *lengths, void *packed);

/* packed[total] -> padded[n][max_len], with every padding slot set to
 * `pad_row` (row_bytes bytes; NULL writes zero bytes).  Returns 0 or -1 as above. */
int unpack_tokens(const void *packed, size_t row_bytes, int n, int max_len, const int *lengths, void *padded,
                  const void *pad_row);

/* What a layout costs in token slots and attention work. */
typedef struct {
    long sequences;
    long tokens;           /* real tokens: sum of lengths */
    long slots;            /* token slots computed (padded rows * their length) */
    double waste;          /* (slots - tokens) / slots: share of slots that are padding; 0 when empty */
    double attn_pairs;     /* causal query-key pairs computed: sum over rows of L(L+1)/2 at the padded L */
    double attn_pairs_real;/* the same for the real lengths */
    int batches;           /* separate batches the layout launches */
} padding_cost;

/* Everything padded to the longest. */
padding_cost padding_cost_padded(const int *lengths, int n);
/* Packed: no slot wasted (the varlen kernels' case). */
padding_cost padding_cost_packed(const int *lengths, int n);
/* Bucketed: sequence i goes to the first bucket whose upper edge >= len[i]
 * (edges ascending; longer than the last edge: the last bucket); each
 * non-empty bucket is one batch padded to its own longest member.
 * Returns -1 (and a zero cost) for bad edges: nbuckets < 1 or not ascending. */
int padding_cost_bucketed(const int *lengths, int n, const int *edges, int nbuckets, padding_cost *out);

/* A length distribution: a mix of two lognormals (say chat turns and long
 * documents), clamped to [min_len, max_len]. */
typedef struct {
    double median;       /* of the main component, tokens */
    double sigma;        /* its log-space spread */
    double tail_share;   /* probability of drawing from the tail component; 0 for one lognormal */
    double tail_median;
    double tail_sigma;
    int min_len, max_len;
} length_dist;

/* Lognormal prompts with this median and sigma, clamped. */
length_dist length_dist_lognormal(double median, double sigma, int min_len, int max_len);
/* One draw. */
int length_draw(const length_dist *d, rng_state *r);
/* n draws into lengths[]. */
void length_draw_n(const length_dist *d, rng_state *r, int *lengths, int n);

#endif
