/* Decode attention v5's arithmetic (code/napkin/ref/attention_emulate.c: the
 * kernel's tiles, per-warp softmax, P split into bf16 high and low parts,
 * warp merge and parallel split merge) against the fp64 reference, held to
 * the bound the kernel is validated by on the GPU: atol 1e-5 + rtol 1e-3
 * |ref|.  Inputs are bf16 values, as the kernel reads them, with queries in
 * [-8, 8) so softmax is peaked (scores q.k/sqrt(128) of std 8/3, see
 * tests/test_measure.c) and a lost position shows. */
#include "attention_emulate.h"
#include "kv_layout.h"
#include "measure_ref.h"
#include "rng.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

enum { D = 128 };

static float *bf16_uniform(rng_state *r, size_t n, float lo, float hi)
{
    float *x = malloc(n * sizeof *x);
    cr_assert(x);
    fill_uniform_f32(r, x, n, lo, hi);
    bf16_round_array(x, n, NULL, x);
    return x;
}

/* The emulation against the reference for one sequence: the number of
 * outputs outside the bound. */
static size_t outside_bound(const kv_layout *l, int heads, const float *q, const float *k, const float *v, int chunk)
{
    float *ref = malloc((size_t)heads * D * sizeof *ref), *got = malloc((size_t)heads * D * sizeof *got);
    cr_assert(ref && got);
    cr_assert_eq(decode_attention_ref(l, 0, heads, q, k, v, ref), 0);
    cr_assert_eq(decode_attention_v5_emulate(l, 0, heads, q, k, v, chunk, got), 0);
    long first;
    double excess;
    size_t bad = validate_close(got, ref, (size_t)heads * D, 1e-5, 1e-3, &first, &excess);
    if (bad)
        cr_log_warn("chunk %d: %zu outside, first %ld (%g vs %g)", chunk, bad, first, got[first], ref[first]);
    free(ref), free(got);
    return bad;
}

Test(attention_v5, meets_the_kernel_bound_at_32k_for_4_and_8_heads_per_kv_head, .timeout = 120)
{
    /* Batch 1 at 32k, one KV head: 4 query heads (LLaMA-3-8B's group) and
     * 8 (LLaMA-3-70B's).  Chunks of 1024 (32 splits: about what the plan
     * gives at batch 1 on 8 KV heads, 2 blocks on each of 132 SMs), 192
     * (171 splits: more than the merge's 128 threads, two per thread) and
     * the whole context (one split, no merge). */
    enum { CTX = 32768 };
    rng_state r = rng_make(51);
    float *q = bf16_uniform(&r, 8 * D, -8, 8), *k = bf16_uniform(&r, (size_t)CTX * D, -1, 1),
          *v = bf16_uniform(&r, (size_t)CTX * D, -1, 1);
    kv_layout l = {1, D, CTX, 0, 0, NULL};
    int chunks[] = {1024, 192, CTX};
    for (int i = 0; i < 3; i++)
        cr_assert_eq(outside_bound(&l, 4, q, k, v, chunks[i]), 0, "G = 4, chunk %d", chunks[i]);
    cr_assert_eq(outside_bound(&l, 8, q, k, v, 1024), 0, "G = 8");
    free(q), free(k), free(v);
}

Test(attention_v5, paged_and_ragged_contexts_stay_inside_the_bound)
{
    /* Pages of 16 in a shuffled table, 2 KV heads of 8 query heads each,
     * at 1000 positions (the last tile 40 positions long: warps 0 and 1
     * partly filled, 2 and 3 past the end) and at 70 (the second chunk of 64
     * holds 6 positions: warps 1 to 3 of it see none). */
    int ctxs[] = {1000, 70};
    for (int c = 0; c < 2; c++) {
        const int ctx = ctxs[c], blocks = (ctx + 15) / 16;
        rng_state r = rng_make(52 + c);
        int *table = malloc((size_t)blocks * sizeof *table);
        cr_assert(table);
        for (int i = 0; i < blocks; i++)
            table[i] = i;
        for (int i = blocks; i > 1; i--) {
            int j = (int)rng_below(&r, (uint64_t)i), t = table[i - 1];
            table[i - 1] = table[j], table[j] = t;
        }
        size_t n = (size_t)blocks * 16 * 2 * D;
        float *q = bf16_uniform(&r, 16 * D, -8, 8), *k = bf16_uniform(&r, n, -1, 1), *v = bf16_uniform(&r, n, -1, 1);
        kv_layout l = {2, D, ctx, 16, blocks, table};
        cr_assert_eq(outside_bound(&l, 16, q, k, v, 64), 0, "paged ctx %d, chunk 64", ctx);
        cr_assert_eq(outside_bound(&l, 16, q, k, v, 320), 0, "paged ctx %d, chunk 320", ctx);
        free(q), free(k), free(v), free(table);
    }
}

Test(attention_v5, a_single_bf16_p_would_miss_the_bound, .timeout = 60)
{
    /* Why P is split: as one bf16 each weight carries a relative error up
     * to 2^-8 (8 significant bits), and at 32k with peaked scores some of
     * the 512 outputs land outside 1e-5 + 1e-3 |ref|; with hi + lo the
     * error per weight is at most 2^-8 of 2^-8 = 2^-16, and every output is
     * inside a tenth of the bound. */
    enum { CTX = 32768 };
    rng_state r = rng_make(51);
    float *q = bf16_uniform(&r, 8 * D, -8, 8), *k = bf16_uniform(&r, (size_t)CTX * D, -1, 1),
          *v = bf16_uniform(&r, (size_t)CTX * D, -1, 1), ref[4 * D], got[4 * D];
    kv_layout l = {1, D, CTX, 0, 0, NULL};
    cr_assert_eq(decode_attention_ref(&l, 0, 4, q, k, v, ref), 0);
    cr_assert_eq(decode_attention_v5_emulate_bf16_p(&l, 0, 4, q, k, v, 1024, got), 0);
    cr_assert_gt(validate_close(got, ref, 4 * D, 1e-5, 1e-3, NULL, NULL), 0);
    cr_assert_eq(decode_attention_v5_emulate(&l, 0, 4, q, k, v, 1024, got), 0);
    cr_assert_eq(validate_close(got, ref, 4 * D, 1e-6, 1e-4, NULL, NULL), 0);
    free(q), free(k), free(v);
}

Test(attention_v5, a_dropped_position_fails_the_bound, .timeout = 60)
{
    /* The same inputs at 32k with the position of head 0's largest score
     * removed (as a tile's off-by-one would lose a position): of 32k scores
     * of std 8/3 the largest is about 4 std above the mean, and its weight
     * e^10.7 / (32768 e^(3.6)) is about 4 %, so head 0's outputs move by
     * about 0.04 |v - o|, far past 1e-5 + 1e-3 |ref|: the check above can
     * fail. */
    enum { CTX = 32768 };
    rng_state r = rng_make(51);
    float *q = bf16_uniform(&r, 8 * D, -8, 8), *k = bf16_uniform(&r, (size_t)CTX * D, -1, 1),
          *v = bf16_uniform(&r, (size_t)CTX * D, -1, 1), ref[4 * D], got[4 * D];
    kv_layout l = {1, D, CTX, 0, 0, NULL}, short_l = {1, D, CTX - 1, 0, 0, NULL};
    cr_assert_eq(decode_attention_ref(&l, 0, 4, q, k, v, ref), 0);
    int best = 0;
    double best_s = -INFINITY;
    for (int t = 0; t < CTX; t++) {
        double s = 0;
        for (int i = 0; i < D; i++)
            s += (double)q[i] * k[(size_t)t * D + i];
        if (s > best_s)
            best_s = s, best = t;
    }
    /* positions after `best` move up one */
    memmove(k + (size_t)best * D, k + (size_t)(best + 1) * D, (size_t)(CTX - 1 - best) * D * sizeof *k);
    memmove(v + (size_t)best * D, v + (size_t)(best + 1) * D, (size_t)(CTX - 1 - best) * D * sizeof *v);
    cr_assert_eq(decode_attention_v5_emulate(&short_l, 0, 4, q, k, v, 1024, got), 0);
    cr_assert_gt(validate_close(got, ref, D, 1e-5, 1e-3, NULL, NULL), D / 4, "head 0: most outputs move");
    free(q), free(k), free(v);
}

Test(attention_v5, rejects_shapes_the_kernel_does_not_build)
{
    float x[D] = {0};
    kv_layout l = {1, D, 64, 0, 0, NULL};
    cr_assert_eq(decode_attention_v5_emulate(&l, 0, 16, x, x, x, 64, x), -1); /* 16 heads per KV head: over 8 */
    cr_assert_eq(decode_attention_v5_emulate(&l, 0, 4, x, x, x, 100, x), -1); /* chunk not whole tiles */
    kv_layout odd = {1, D, 64, 8, 8, (const int[8]){0}};
    cr_assert_eq(decode_attention_v5_emulate(&odd, 0, 4, x, x, x, 64, x), -1); /* pages of 8 split a warp's rows */
}
