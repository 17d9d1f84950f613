/* The measurement references and glue in the library: bf16 rounding, the
 * naive GEMM and decode attention, validation, medians and fits, the GEMM
 * roofline model, provenance parsing and slugs, the measured-TSV reader, and
 * the counter-based random inputs.  Every expected number is derived by hand
 * in the comment beside it. */
#include "counter_rng.h"
#include "gemm_model.h"
#include "kv_layout.h"
#include "measure_ref.h"
#include "measured.h"
#include "provenance.h"
#include "rng.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

/* ------------------------------------------------------------ bf16 */
Test(bf16, rounds_to_nearest_even)
{
    /* 1.0f = 0x3F800000 -> top half 0x3F80 */
    cr_assert_eq(bf16_from_f32(1.0f), 0x3F80);
    /* -2.0f = 0xC0000000 */
    cr_assert_eq(bf16_from_f32(-2.0f), 0xC000);
    /* 1 + 2^-8 lies halfway between 1 (0x3F80, even) and 1 + 2^-7 (0x3F81): ties go to even */
    cr_assert_eq(bf16_from_f32(1.0f + 0x1p-8f), 0x3F80);
    /* 1 + 3*2^-8 lies halfway between 0x3F81 (odd) and 0x3F82 (even) */
    cr_assert_eq(bf16_from_f32(1.0f + 3 * 0x1p-8f), 0x3F82);
    /* pi = 0x40490FDB: the dropped half 0x0FDB < 0x8000 rounds down to 0x4049 = 3.140625 */
    cr_assert_eq(bf16_from_f32(3.14159265f), 0x4049);
    cr_assert_float_eq(bf16_to_f32(0x4049), 3.140625f, 0);
    /* NaN stays NaN */
    cr_assert(isnan(bf16_to_f32(bf16_from_f32(NAN))));
}

Test(bf16, round_array_fills_both_forms)
{
    float x[2] = {1.0f + 3 * 0x1p-8f, -2.0f}, r[2];
    uint16_t b[2];
    bf16_round_array(x, 2, b, r);
    cr_assert_eq(b[0], 0x3F82);
    /* 0x3F82 = 1 + 2/128 = 1.015625 */
    cr_assert_float_eq(r[0], 1.015625f, 0);
    cr_assert_float_eq(r[1], -2.0f, 0);
}

/* ------------------------------------------------------------ GEMM reference */
Test(gemm_ref, small_product_by_hand)
{
    /* X = [1 2 3; 4 5 6], W = [1 0 1; 0 1 0] (rows are outputs).
     * Y[0] = (1+3, 2) = (4, 2); Y[1] = (4+6, 5) = (10, 5). */
    float x[6] = {1, 2, 3, 4, 5, 6}, w[6] = {1, 0, 1, 0, 1, 0}, y[4] = {-1, -1, -1, -1};
    gemm_ref_f32(2, 2, 3, x, w, y, 0, 2);
    cr_assert_float_eq(y[0], 4, 0);
    cr_assert_float_eq(y[1], 2, 0);
    cr_assert_float_eq(y[2], 10, 0);
    cr_assert_float_eq(y[3], 5, 0);
}

Test(gemm_ref, column_range_leaves_others_alone)
{
    float x[3] = {1, 1, 1}, w[6] = {1, 2, 3, 4, 5, 6}, y[2] = {-7, -7};
    gemm_ref_f32(1, 2, 3, x, w, y, 1, 2);
    cr_assert_float_eq(y[0], -7, 0);
    /* row 1 of W sums to 4 + 5 + 6 = 15 */
    cr_assert_float_eq(y[1], 15, 0);
}

/* ------------------------------------------------------------ KV layout */
Test(kv_layout, contiguous_and_paged_indices)
{
    /* contiguous [seq][kv_head][pos][dim] with 2 KV heads, 4 positions, dim 8:
     * (seq 1, head 0, pos 2, dim 1) = ((1*2 + 0)*4 + 2)*8 + 1 = 81 */
    kv_layout c = {2, 8, 4, 0, 0, NULL};
    cr_assert_eq(kv_index(&c, 1, 0, 2, 1), 81);
    /* paged, block 2, 2 blocks per sequence, table {3, 0, 2, 1}:
     * (seq 1, head 1, pos 3, dim 5): logical block 1 of seq 1 -> table[3] = 1;
     * [phys][head][slot][dim] = ((1*2 + 1)*2 + 1)*8 + 5 = 61 */
    int table[4] = {3, 0, 2, 1};
    kv_layout p = {2, 8, 4, 2, 2, table};
    cr_assert_eq(kv_index(&p, 1, 1, 3, 5), 61);
    /* a whole page per block: 2 blocks * 2 slots * 2 heads * 8 dims = 64 */
    cr_assert_eq(kv_elements_per_seq(&p), 64);
    cr_assert_eq(kv_elements_per_seq(&c), 64);
}

/* ------------------------------------------------------------ decode attention */
Test(decode_attention, softmax_weights_by_hand)
{
    /* head_dim 2, one KV head, two query heads (GQA group of 2), context 2.
     * K rows: t0 = (1, 0), t1 = (0, 1).  V rows: t0 = (4, 0), t1 = (0, 8).
     * head 0: q = 0, equal scores, weights 1/2 each: out = (2, 4).
     * head 1: q = (sqrt(2) ln 3, 0); scores scaled by 1/sqrt(2): (ln 3, 0);
     * softmax = (3/4, 1/4): out = (3, 2). */
    float k[4] = {1, 0, 0, 1}, v[4] = {4, 0, 0, 8};
    float q[4] = {0, 0, (float)(sqrt(2.0) * log(3.0)), 0}, out[4];
    kv_layout l = {1, 2, 2, 0, 0, NULL};
    cr_assert_eq(decode_attention_ref(&l, 0, 2, q, k, v, out), 0);
    cr_assert_float_eq(out[0], 2, 1e-6);
    cr_assert_float_eq(out[1], 4, 1e-6);
    cr_assert_float_eq(out[2], 3, 1e-5);
    cr_assert_float_eq(out[3], 2, 1e-5);
}

Test(decode_attention, paged_equals_contiguous)
{
    /* The same logical cache stored both ways gives the same answer: the
     * paged copy is written through the paged index, read through it too. */
    enum { KVH = 2, D = 4, CTX = 5, HEADS = 4, BLOCK = 2, BPS = 3 };
    int table[BPS] = {2, 0, 1};
    kv_layout c = {KVH, D, CTX, 0, 0, NULL}, p = {KVH, D, CTX, BLOCK, BPS, table};
    float kc[KVH * CTX * D], vc[KVH * CTX * D], kp[BPS * BLOCK * KVH * D] = {0}, vp[BPS * BLOCK * KVH * D] = {0};
    float q[HEADS * D], oc[HEADS * D], op[HEADS * D];
    rng_state r = rng_make(3);
    fill_uniform_f32(&r, kc, sizeof kc / sizeof kc[0], -1, 1);
    fill_uniform_f32(&r, vc, sizeof vc / sizeof vc[0], -1, 1);
    fill_uniform_f32(&r, q, HEADS * D, -1, 1);
    for (int h = 0; h < KVH; h++)
        for (int t = 0; t < CTX; t++)
            for (int i = 0; i < D; i++) {
                kp[kv_index(&p, 0, h, t, i)] = kc[kv_index(&c, 0, h, t, i)];
                vp[kv_index(&p, 0, h, t, i)] = vc[kv_index(&c, 0, h, t, i)];
            }
    cr_assert_eq(decode_attention_ref(&c, 0, HEADS, q, kc, vc, oc), 0);
    cr_assert_eq(decode_attention_ref(&p, 0, HEADS, q, kp, vp, op), 0);
    for (int i = 0; i < HEADS * D; i++)
        cr_assert_float_eq(op[i], oc[i], 1e-6);
}

Test(decode_attention, a_span_of_heads_is_the_hand_worked_answer_and_touches_no_other_row)
{
    /* The two-head case above (out = (2, 4) and (3, 2) by hand), head 1
     * alone: row 1 is (3, 2) and row 0 keeps its sentinel. */
    float k[4] = {1, 0, 0, 1}, v[4] = {4, 0, 0, 8};
    float q[4] = {0, 0, (float)(sqrt(2.0) * log(3.0)), 0}, out[4] = {-7, -7, -7, -7};
    kv_layout l = {1, 2, 2, 0, 0, NULL};
    cr_assert_eq(decode_attention_ref_heads(&l, 0, 2, 1, 2, q, k, v, out), 0);
    cr_assert_float_eq(out[2], 3, 1e-5);
    cr_assert_float_eq(out[3], 2, 1e-5);
    cr_assert_eq(out[0], -7);
    cr_assert_eq(out[1], -7);
    /* an empty or out-of-range span is refused */
    cr_assert_eq(decode_attention_ref_heads(&l, 0, 2, 1, 1, q, k, v, out), -1);
    cr_assert_eq(decode_attention_ref_heads(&l, 0, 2, 0, 3, q, k, v, out), -1);
    cr_assert_eq(decode_attention_ref_heads(&l, 0, 2, -1, 1, q, k, v, out), -1);
}

Test(decode_attention, rejects_bad_shapes)
{
    float x[8] = {0};
    kv_layout l = {3, 2, 1, 0, 0, NULL};
    /* 4 query heads do not divide into 3 KV heads */
    cr_assert_eq(decode_attention_ref(&l, 0, 4, x, x, x, x), -1);
    kv_layout paged_without_table = {1, 2, 1, 16, 1, NULL};
    cr_assert_eq(decode_attention_ref(&paged_without_table, 0, 1, x, x, x, x), -1);
}

/* ------------------------------------------------------------ validation and statistics */
Test(validate, atol_plus_rtol)
{
    /* limits: 0.1 + 0.01*|ref|: ref 0 -> 0.1; ref 100 -> 1.1; ref -10 -> 0.2 */
    float ref[3] = {0, 100, -10}, got[3] = {0.09f, 101.0f, -10.3f};
    long first;
    double excess;
    cr_assert_eq(validate_close(got, ref, 3, 0.1, 0.01, &first, &excess), 1);
    cr_assert_eq(first, 2);
    /* |-10.3 + 10| - 0.2 = 0.1 */
    cr_assert_float_eq(excess, 0.1, 1e-5);
    float nan_got[1] = {NAN}, zero[1] = {0};
    cr_assert_eq(validate_close(nan_got, zero, 1, 1, 1, NULL, NULL), 1);
}

/* ------------------------------------------------------------ validation robust to reduced precision */
Test(validate, scaled_bound_by_hand)
{
    /* ref = (3, -4, 0, 0): ||ref|| = 5, rms = 5/2 = 2.5.  elem_tol 0.1 and
     * rtol 0.01: element bounds 0.25 + 0.01|ref| = 0.28, 0.29, 0.25, 0.25.
     * got off by (0.2, 0, 0.26, 0): one element (index 2) over its bound;
     * ||err|| = sqrt(0.04 + 0.0676) = 0.32802, rel_l2 = 0.065605. */
    float ref[4] = {3, -4, 0, 0}, got[4] = {3.2f, -4, 0.26f, 0};
    norm_check c = validate_scaled(got, ref, 4, 0.1, 0.1, 0.01);
    cr_assert_eq(c.bad, 1);
    cr_assert_eq(c.first_bad, 2);
    cr_assert_float_eq(c.ref_rms, 2.5, 1e-12);
    cr_assert_float_eq(c.rel_l2, sqrt(0.04 + 0.0676) / 5, 1e-6);
    cr_assert_float_eq(c.worst_err, 0.26 / 2.5, 1e-6);
    cr_assert(!c.pass);
    /* the same error in the set's norm only (0.24 < 0.25 everywhere), but a
     * norm bound of 0.05 < 0.0679 = sqrt(2 * 0.24^2) / 5 still fails it */
    float got2[4] = {3.24f, -4.24f, 0, 0};
    c = validate_scaled(got2, ref, 4, 0.05, 0.1, 0.01);
    cr_assert_eq(c.bad, 0);
    cr_assert(!c.pass);
    cr_assert(validate_scaled(got2, ref, 4, 0.1, 0.1, 0.01).pass);
    /* NaN never passes */
    float nan_got[4] = {3, -4, NAN, 0};
    cr_assert(!validate_scaled(nan_got, ref, 4, 1, 1, 1).pass);
}

/* Outputs of a bf16 GEMM with uniform [-1, 1) inputs at depth K, computed
 * the way a reduced-precision library kernel may (K split, partials rounded
 * to bf16), against the double reference.  Returns nothing; fills got/ref. */
static void simulated_gemm(int k, int splits, int outputs, float *got, float *ref)
{
    float *x = malloc((size_t)k * sizeof *x), *w = malloc((size_t)k * sizeof *w);
    cr_assert(x && w);
    rng_state r = rng_make(17);
    fill_uniform_f32(&r, x, (size_t)k, -1, 1);
    bf16_round_array(x, (size_t)k, NULL, x);
    for (int j = 0; j < outputs; j++) {
        fill_uniform_f32(&r, w, (size_t)k, -1, 1);
        bf16_round_array(w, (size_t)k, NULL, w);
        got[j] = dot_bf16_split(x, w, k, splits);
        gemm_ref_f32(1, 1, k, x, w, &ref[j], 0, 1);
    }
    free(x);
    free(w);
}

Test(validate, bf16_split_k_passes_the_scaled_check_not_the_elementwise_one)
{
    /* A 2-way bf16 split: each partial (std sqrt(K/2)/3) is rounded with
     * error up to 2^-9 of itself, i.e. up to ~0.4% of rms(ref) = sqrt(K)/3,
     * independent of the element's own |ref|.  An element with |ref| near 0
     * then misses atol 2e-2 + rtol 1e-2 |ref| (2e-2 is 0.07% of rms at
     * K = 8192); over 2048 outputs some do.  The scaled bound (16u rms +
     * 2u |ref|) is ~16x above that error: every output passes. */
    enum { OUT = 2048 };
    static float got[OUT], ref[OUT];
    for (int kk = 0; kk < 2; kk++) {
        int k = kk ? 28672 : 8192;
        simulated_gemm(k, 2, OUT, got, ref);
        size_t old_bad = validate_close(got, ref, OUT, 2e-2, 1e-2, NULL, NULL);
        cr_assert_gt(old_bad, 0, "K=%d: the elementwise check should fail some split-K outputs", k);
        norm_check c = validate_bf16_output(got, ref, OUT);
        cr_assert(c.pass, "K=%d: %zu bad, rel_l2 %g, worst %g rms", k, c.bad, c.rel_l2, c.worst_err);
        /* 4- and 8-way splits too */
        for (int s = 4; s <= 8; s *= 2) {
            simulated_gemm(k, s, OUT, got, ref);
            c = validate_bf16_output(got, ref, OUT);
            cr_assert(c.pass, "K=%d split %d: %zu bad, rel_l2 %g, worst %g rms", k, s, c.bad, c.rel_l2, c.worst_err);
        }
        /* and the plain fp32-accumulate result, of course */
        simulated_gemm(k, 1, OUT, got, ref);
        cr_assert(validate_bf16_output(got, ref, OUT).pass);
    }
}

Test(validate, bf16_scaled_check_catches_real_bugs)
{
    enum { OUT = 64, K = 8192 };
    float got[OUT], ref[OUT], x[K], w[K];
    simulated_gemm(K, 1, OUT, got, ref);
    cr_assert(validate_bf16_output(got, ref, OUT).pass);
    /* One output replaced by a neighbour's (a wrong column): the difference
     * of two independent outputs has std sqrt(2) rms, far above 16u = 6%. */
    float wrong[OUT];
    memcpy(wrong, got, sizeof wrong);
    wrong[5] = got[6];
    cr_assert(!validate_bf16_output(wrong, ref, OUT).pass);
    /* A dot product that drops the last 1/16 of K (a tail bug): the missing
     * part has std sqrt(K/16)/3 = rms/4 = 25% of rms, 4x the bound. */
    rng_state r = rng_make(23);
    fill_uniform_f32(&r, x, K, -1, 1);
    size_t caught = 0;
    for (int j = 0; j < OUT; j++) {
        fill_uniform_f32(&r, w, K, -1, 1);
        got[j] = dot_bf16_split(x, w, K - K / 16, 1);
        gemm_ref_f32(1, 1, K, x, w, &ref[j], 0, 1);
    }
    norm_check c = validate_bf16_output(got, ref, OUT);
    caught = c.bad;
    cr_assert(!c.pass);
    cr_assert_gt(caught, OUT / 2, "only %zu of %d short dot products caught", caught, OUT);
}

/* ------------------------------------------------------------ decode attention at the measured size */
/* One KV head and 4 query heads (LLaMA-3-8B's group), head dim 128, with
 * query values in [-8, 8): scores q.k/sqrt(128) then have std 8/3 = 2.7
 * (var = 128 * (64/3) * (1/3) / 128), so softmax is peaked (the largest of
 * 32k weights is a few per cent, not 1/32768) and a lost position shows. */
static void peaked_attention_inputs(int ctx, float *q, float *k, float *v)
{
    rng_state r = rng_make(41);
    fill_uniform_f32(&r, q, 4 * 128, -8, 8);
    fill_uniform_f32(&r, k, (size_t)ctx * 128, -1, 1);
    fill_uniform_f32(&r, v, (size_t)ctx * 128, -1, 1);
}

Test(decode_attention, split_merge_in_fp32_meets_the_tight_tolerance_at_32k, .timeout = 60)
{
    /* The kernel's arithmetic (fp32, online softmax per split, merge by
     * exp(m_split - m_all)) against the double reference at batch 1, 32k,
     * with the splits the kernel uses there (64) and with none: within
     * atol 1e-5 + rtol 1e-3 |ref| everywhere, so the kernel's check cannot
     * fail on rounding alone. */
    enum { CTX = 32768 };
    float *q = malloc(4 * 128 * sizeof *q), *k = malloc((size_t)CTX * 128 * sizeof *k),
          *v = malloc((size_t)CTX * 128 * sizeof *v), ref[4 * 128], got[4 * 128];
    cr_assert(q && k && v);
    peaked_attention_inputs(CTX, q, k, v);
    kv_layout l = {1, 128, CTX, 0, 0, NULL};
    cr_assert_eq(decode_attention_ref(&l, 0, 4, q, k, v, ref), 0);
    int splits[] = {64, 1};
    for (int i = 0; i < 2; i++) {
        cr_assert_eq(decode_attention_split_f32(&l, 0, 4, q, k, v, splits[i], got), 0);
        long first;
        double excess;
        size_t bad = validate_close(got, ref, 4 * 128, 1e-5, 1e-3, &first, &excess);
        cr_assert_eq(bad, 0, "splits %d: %zu bad, first %ld (%g vs %g)", splits[i], bad, first,
                     bad ? got[first] : 0, bad ? ref[first] : 0);
    }
    /* Dropping one position (the last) from the sum is caught: with peaked
     * scores its weight is e^(s - max) / sum, and over 512 outputs some
     * move by more than 1e-5 + 1e-3 |ref|. */
    kv_layout short_l = {1, 128, CTX - 1, 0, 0, NULL};
    cr_assert_eq(decode_attention_split_f32(&short_l, 0, 4, q, k, v, 64, got), 0);
    cr_assert_gt(validate_close(got, ref, 4 * 128, 1e-5, 1e-3, NULL, NULL), 0);
    free(q), free(k), free(v);
}

Test(decode_attention, parallel_merge_of_v4_meets_the_tight_tolerance_at_32k, .timeout = 60)
{
    /* v4's merge order (a thread per split, butterfly and warp sums, four
     * interleaved output sums) against the double reference, batch 1 at
     * 32k: 64 splits (about what the plan gives there), 200 (more splits
     * than the block's 128 threads: two per thread) and 1; within atol 1e-5
     * + rtol 1e-3 |ref|, the bound the kernel is checked by.  One dropped
     * position fails it. */
    enum { CTX = 32768 };
    float *q = malloc(4 * 128 * sizeof *q), *k = malloc((size_t)CTX * 128 * sizeof *k),
          *v = malloc((size_t)CTX * 128 * sizeof *v), ref[4 * 128], got[4 * 128];
    cr_assert(q && k && v);
    peaked_attention_inputs(CTX, q, k, v);
    kv_layout l = {1, 128, CTX, 0, 0, NULL};
    cr_assert_eq(decode_attention_ref(&l, 0, 4, q, k, v, ref), 0);
    int splits[] = {64, 200, 1};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(decode_attention_split_pmerge_f32(&l, 0, 4, q, k, v, splits[i], got), 0);
        long first;
        double excess;
        size_t bad = validate_close(got, ref, 4 * 128, 1e-5, 1e-3, &first, &excess);
        cr_assert_eq(bad, 0, "splits %d: %zu bad, first %ld (%g vs %g)", splits[i], bad, first,
                     bad ? got[first] : 0, bad ? ref[first] : 0);
    }
    kv_layout short_l = {1, 128, CTX - 1, 0, 0, NULL};
    cr_assert_eq(decode_attention_split_pmerge_f32(&short_l, 0, 4, q, k, v, 200, got), 0);
    cr_assert_gt(validate_close(got, ref, 4 * 128, 1e-5, 1e-3, NULL, NULL), 0);
    free(q), free(k), free(v);
}

Test(decode_attention, a_dropped_position_is_caught_at_1k)
{
    /* At the validation sizes of the kernel: drop the position with the
     * largest score for head 0 (as an off-by-one in a tile would drop some
     * position) and the check fails. */
    enum { CTX = 1000 };
    static float q[4 * 128], k[CTX * 128], v[CTX * 128], k2[CTX * 128];
    float ref[4 * 128], got[4 * 128];
    peaked_attention_inputs(CTX, q, k, v);
    kv_layout l = {1, 128, CTX, 0, 0, NULL};
    cr_assert_eq(decode_attention_ref(&l, 0, 4, q, k, v, ref), 0);
    int best = 0;
    double best_s = -INFINITY;
    for (int t = 0; t < CTX; t++) {
        double s = 0;
        for (int i = 0; i < 128; i++)
            s += (double)q[i] * k[t * 128 + i];
        if (s > best_s)
            best_s = s, best = t;
    }
    /* a K row of -1e4 * q makes that score -inf in effect: the position is dropped */
    memcpy(k2, k, sizeof k2);
    for (int i = 0; i < 128; i++)
        k2[best * 128 + i] = -1e4f * q[i];
    cr_assert_eq(decode_attention_split_f32(&l, 0, 4, q, k2, v, 8, got), 0);
    cr_assert_gt(validate_close(got, ref, 4 * 128, 1e-5, 1e-3, NULL, NULL), 0);
    /* and without the drop it passes */
    cr_assert_eq(decode_attention_split_f32(&l, 0, 4, q, k, v, 8, got), 0);
    cr_assert_eq(validate_close(got, ref, 4 * 128, 1e-5, 1e-3, NULL, NULL), 0);
}

Test(stats, median_and_fit)
{
    double odd[3] = {3, 1, 2}, even[4] = {4, 1, 3, 2};
    cr_assert_float_eq(median_of(odd, 3), 2, 0);
    cr_assert_float_eq(median_of(even, 4), 2.5, 0); /* (2 + 3) / 2 */
    cr_assert_float_eq(odd[0], 3, 0);               /* input untouched */
    cr_assert(isnan(median_of(odd, 0)));
    /* points on y = 2 + 3x */
    double x[4] = {1, 2, 4, 8}, y[4] = {5, 8, 14, 26}, a, b;
    cr_assert_eq(linear_fit(x, y, 4, &a, &b), 0);
    cr_assert_float_eq(a, 2, 1e-12);
    cr_assert_float_eq(b, 3, 1e-12);
    double same[2] = {1, 1};
    cr_assert_eq(linear_fit(same, y, 2, &a, &b), -1);
}

Test(stats, stream_byte_counting)
{
    /* STREAM convention for 1000 doubles: copy reads 8000 and writes 8000 */
    cr_assert_float_eq(stream_bytes(STREAM_COPY, 1000, 8), 16000, 0);
    cr_assert_float_eq(stream_bytes(STREAM_READ, 1000, 8), 8000, 0);
    cr_assert_float_eq(stream_bytes(STREAM_WRITE, 1000, 8), 8000, 0);
    /* triad a = b + s c: two reads, one write */
    cr_assert_float_eq(stream_bytes(STREAM_TRIAD, 1000, 8), 24000, 0);
    cr_assert_str_eq(stream_kind_name(STREAM_TRIAD), "triad");
}

/* ------------------------------------------------------------ GEMM model */
Test(gemm_model, work_of_a_gemv)
{
    /* M = 1 through a 4096 x 4096 bf16 weight: 2*4096*4096 = 33,554,432 FLOP;
     * bytes 2*(4096 + 16,777,216) read + 2*4096 written = 33,570,816 */
    gemm_work w = gemm_work_of(1, 4096, 4096, 2, 2);
    cr_assert_float_eq(w.flop, 33554432.0, 0);
    cr_assert_float_eq(w.bytes, 33570816.0, 0);
    cr_assert_float_eq(w.intensity, 33554432.0 / 33570816.0, 1e-12);
}

Test(gemm_model, predicted_time_on_h100_datasheet)
{
    /* Memory-bound at M = 1: 33,570,816 B / 3.35e12 B/s = 10.0211 us */
    bound_kind b;
    double t = gemm_predicted_time(1, 4096, 4096, 2, 2, 989.4e12, 3.35e12, &b);
    cr_assert_eq(b, BOUND_MEMORY);
    cr_assert_float_eq(t, 33570816.0 / 3.35e12, 1e-15);
    /* Compute-bound at M = 4096 (square 4096^3): 2*4096^3 = 1.374e11 FLOP / 989.4e12 = 138.9 us */
    t = gemm_predicted_time(4096, 4096, 4096, 2, 2, 989.4e12, 3.35e12, &b);
    cr_assert_eq(b, BOUND_COMPUTE);
    cr_assert_float_eq(t, 2.0 * 4096 * 4096 * 4096 / 989.4e12, 1e-15);
}

Test(gemm_model, fixed_latency_term)
{
    /* The H100 datasheet GEMV above plus 4 us of per-kernel cost:
     * 33,570,816 / 3.35e12 = 10.0211 us, + 4 us = 14.0211 us; still memory-bound */
    bound_kind b;
    double t = gemm_predicted_time_lat(1, 4096, 4096, 2, 2, 989.4e12, 3.35e12, 4e-6, &b);
    cr_assert_eq(b, BOUND_MEMORY);
    cr_assert_float_eq(t, 33570816.0 / 3.35e12 + 4e-6, 1e-15);
    /* latency 0 is the plain roofline */
    cr_assert_float_eq(gemm_predicted_time_lat(4096, 4096, 4096, 2, 2, 989.4e12, 3.35e12, 0, NULL),
                       2.0 * 4096 * 4096 * 4096 / 989.4e12, 1e-15);
}

Test(gemm_model, knee_near_the_ridge)
{
    /* bf16 8192 x 8192 on the H100 datasheet: dividing 2mnk/peak = 2(mk + nk + mn)/bw
     * by 2nk/bw gives m = 1 / (bw/peak - (n + k)/(nk))
     *   = 1 / (3.35/989.4 - 2/8192) = 1 / (0.0033859 - 0.0002441) = 318.29,
     * a little above the ridge 295 because X and Y bytes count too. */
    cr_assert_float_eq(gemm_knee_batch(8192, 8192, 2, 2, 989.4e12, 3.35e12), 318.294, 0.01);
    /* fp32 4096 x 4096 at 300 GFLOP/s and 15 GB/s: dividing by 4nk/bw,
     * m = 1 / (2 bw/(4 peak) - (n + k)/(nk)) = 1 / (0.025 - 2/4096) = 1 / 0.0245117 = 40.797 */
    cr_assert_float_eq(gemm_knee_batch(4096, 4096, 4, 4, 300e9, 15e9), 40.797, 0.01);
    /* A 16 x 16 weight never reaches intensity 2*16*16 / (2*(16 + 16)) = 8 FLOP/B
     * (the limit of large m), far below a ridge of 1e12 / 1e9 = 1000: no knee */
    cr_assert(isinf(gemm_knee_batch(16, 16, 2, 2, 1e12, 1e9)));
}

Test(gemm_model, measured_knee_and_errors)
{
    /* floor 1 ms; 1024 rows take 8 ms, so 8 us per row: the lines meet at 1 ms / 8 us = 128 */
    cr_assert_float_eq(measured_knee_batch(1e-3, 1024, 8e-3), 128, 1e-9);
    cr_assert_float_eq(relative_error(0.9, 1.0), -0.1, 1e-12);
    /* errors -10%, +20%, 0%: median |e| 10%, worst 20%, mean +3.33% */
    double pred[3] = {0.9, 1.2, 1.0}, meas[3] = {1, 1, 1};
    error_summary s = error_summary_of(pred, meas, 3);
    cr_assert_eq(s.n, 3);
    cr_assert_float_eq(s.median_abs, 0.1, 1e-12);
    cr_assert_float_eq(s.worst_abs, 0.2, 1e-12);
    cr_assert_float_eq(s.mean, 0.1 / 3, 1e-12);
    cr_assert(isnan(error_summary_of(pred, meas, 0).median_abs));
}

/* ------------------------------------------------------------ provenance */
Test(provenance, cpu_model_from_cpuinfo)
{
    const char *x86 = "processor\t: 0\nvendor_id\t: GenuineIntel\nmodel\t\t: 143\n"
                      "model name\t: Intel(R) Xeon(R) Platinum 8480C\nflags\t: fpu\n";
    char out[128];
    cr_assert_eq(cpu_model_parse(x86, out, sizeof out), 0);
    cr_assert_str_eq(out, "Intel(R) Xeon(R) Platinum 8480C");
    const char *arm = "processor\t: 0\nCPU part\t: 0xd0c\n";
    cr_assert_eq(cpu_model_parse(arm, out, sizeof out), 0);
    cr_assert_str_eq(out, "0xd0c");
    cr_assert_eq(cpu_model_parse("processor : 0\n", out, sizeof out), -1);
}

Test(provenance, cache_sizes)
{
    cr_assert_float_eq(cache_size_parse("480M\n"), 480.0 * 1048576, 0); /* 503,316,480 */
    cr_assert_float_eq(cache_size_parse("2048K"), 2097152, 0);
    cr_assert_float_eq(cache_size_parse("32768"), 32768, 0);
    cr_assert_float_eq(cache_size_parse("big"), -1, 0);
    cr_assert_float_eq(cache_size_parse("12Q"), -1, 0);
}

Test(provenance, slugs)
{
    char s[64];
    device_slug("Intel(R) Xeon(R) CPU @ 2.10GHz", s, sizeof s);
    cr_assert_str_eq(s, "intel-xeon");
    device_slug("NVIDIA H200", s, sizeof s);
    cr_assert_str_eq(s, "nvidia-h200");
    device_slug("AMD EPYC 7B13 64-Core Processor", s, sizeof s);
    cr_assert_str_eq(s, "amd-epyc-7b13-64-core-processor");
    device_slug("  ", s, sizeof s);
    cr_assert_str_eq(s, "unknown");
    char tiny[5];
    device_slug("NVIDIA H200", tiny, sizeof tiny); /* truncated, still terminated */
    cr_assert_eq(strlen(tiny), 4);
    host_info h;
    memset(&h, 0, sizeof h);
    strcpy(h.cpu_model, "Intel(R) Xeon(R) Processor");
    h.cores = 2;
    cpu_set_slug(&h, s, sizeof s);
    cr_assert_str_eq(s, "cpu-intel-xeon-processor-2c");
}

Test(provenance, header_lines_are_one_line_each)
{
    char buf[256] = {0};
    FILE *f = fmemopen(buf, sizeof buf, "w");
    cr_assert_not_null(f);
    provenance_line(f, "device", "two\nlines\tand tab");
    fclose(f);
    cr_assert_str_eq(buf, "# device: two lines and tab\n");
}

Test(provenance, revision_from_the_environment)
{
    /* a copied tree without git: the runner exports the revision */
    setenv("NB_REVISION", "abc1234-dirty", 1);
    char rev[64];
    git_revision(rev, sizeof rev);
    unsetenv("NB_REVISION");
    cr_assert_str_eq(rev, "abc1234-dirty");
}

Test(provenance, host_info_is_filled)
{
    host_info h;
    host_info_collect(&h);
    cr_assert_gt(h.cores, 0);
    cr_assert_gt(strlen(h.cpu_model), 0);
    /* "YYYY-MM-DDTHH:MM:SSZ" is 20 characters */
    cr_assert_eq(strlen(h.date), 20);
}

/* ------------------------------------------------------------ measured tables */
static const char *sample =
    "# measurement: stream\n# device: Test CPU\n# date: 2026-01-01T00:00:00Z\n"
    "kernel\tgb_s\tpct_datasheet\ncopy\t10.5\t-\nread\t12.25\t-\n";

Test(measured, parse_meta_columns_and_numbers)
{
    measured_table t;
    char err[128];
    cr_assert_eq(measured_table_parse(sample, "s.tsv", &t, err, sizeof err), 0, "%s", err);
    cr_assert_str_eq(measured_meta(&t, "device"), "Test CPU");
    cr_assert_null(measured_meta(&t, "nothing"));
    cr_assert_eq(t.nrows, 2);
    int g = measured_col(&t, "gb_s");
    cr_assert_eq(g, 1);
    cr_assert_eq(measured_find_row(&t, measured_col(&t, "kernel"), "read"), 1);
    cr_assert_float_eq(measured_num(&t, 1, g), 12.25, 0);
    cr_assert(isnan(measured_num(&t, 0, 2))); /* "-" is not a number */
    cr_assert(isnan(measured_num(&t, 5, 0))); /* no such row */
    cr_assert_eq(measured_col(&t, "missing"), -1);
    measured_table_free(&t);
}

Test(measured, read_bandwidth_is_the_read_row)
{
    /* The sample's read row says 12.25 GB/s: 12.25e9 bytes/s (GB = 1e9),
     * not the copy row's 10.5. */
    measured_table t;
    char err[128];
    cr_assert_eq(measured_table_parse(sample, "s.tsv", &t, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(measured_read_bandwidth(&t), 12.25e9, 1);
    measured_table_free(&t);
    /* no read row, a read row that is no number, no gb_s column: NAN */
    const char *no_read = "kernel\tgb_s\ncopy\t10\n", *dash = "kernel\tgb_s\nread\t-\n", *no_col = "kernel\tx\nread\t3\n";
    const char *texts[] = {no_read, dash, no_col};
    for (int i = 0; i < 3; i++) {
        cr_assert_eq(measured_table_parse(texts[i], "b.tsv", &t, err, sizeof err), 0, "%s", err);
        cr_assert(isnan(measured_read_bandwidth(&t)), "case %d", i);
        measured_table_free(&t);
    }
}

Test(measured, ragged_row_names_file_and_line)
{
    measured_table t;
    char err[128];
    const char *bad = "# x: y\na\tb\n1\t2\n3\n";
    cr_assert_eq(measured_table_parse(bad, "bad.tsv", &t, err, sizeof err), -1);
    cr_assert_str_eq(err, "bad.tsv:4: 1 cells, header has 2");
    cr_assert_eq(measured_table_parse("# only: meta\n", "e.tsv", &t, err, sizeof err), -1);
    cr_assert_eq(measured_table_load("/nonexistent/x.tsv", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "/nonexistent/x.tsv") != NULL);
}

Test(measured, many_rows_grow)
{
    /* 1000 rows exercise the doubling growth past its first capacity of 8 */
    char *text = malloc(20000);
    size_t o = (size_t)sprintf(text, "i\tsq\n");
    for (int i = 0; i < 1000; i++)
        o += (size_t)sprintf(text + o, "%d\t%d\n", i, i * i);
    measured_table t;
    char err[128];
    cr_assert_eq(measured_table_parse(text, "n.tsv", &t, err, sizeof err), 0);
    cr_assert_eq(t.nrows, 1000);
    cr_assert_float_eq(measured_num(&t, 999, 1), 998001, 0); /* 999^2 */
    measured_table_free(&t);
    free(text);
}

Test(measured, gpu_from_device_name)
{
    gpu_table t;
    char err[256];
    cr_assert_eq(gpu_table_builtin(&t, err, sizeof err), 0, "%s", err);
    const gpu_spec *g = gpu_match_device_name(&t, "NVIDIA H200");
    cr_assert_not_null(g);
    cr_assert_str_eq(g->key, "h200");
    g = gpu_match_device_name(&t, "NVIDIA H100 80GB HBM3");
    cr_assert_not_null(g);
    cr_assert_str_eq(g->key, "h100");
    cr_assert_null(gpu_match_device_name(&t, "Tesla T4"));
    gpu_table_free(&t);
}

/* ------------------------------------------------------------ random inputs */
Test(counter_rng, equals_splitmix64_sequence)
{
    /* counter_hash(s, i) is the (i+1)-th output of splitmix64 started at s */
    uint64_t x = 42;
    for (uint64_t i = 0; i < 5; i++) {
        uint64_t want = splitmix64_next(&x);
        cr_assert_eq(counter_hash(42, i), want);
    }
    for (uint64_t i = 0; i < 1000; i++) {
        float u = counter_uniform(7, i, -1, 1);
        cr_assert(u >= -1 && u < 1);
    }
}

Test(counter_rng, fill_uniform_range_and_not_zero)
{
    float x[256];
    rng_state r = rng_make(1);
    fill_uniform_f32(&r, x, 256, 1, 2);
    double sum = 0;
    for (int i = 0; i < 256; i++) {
        cr_assert(x[i] >= 1 && x[i] < 2);
        sum += x[i];
    }
    /* mean of U[1,2) is 1.5; 256 draws have standard error 0.29/16 = 0.018 */
    cr_assert_float_eq(sum / 256, 1.5, 0.1);
}
