/* The fused BGMV kernel's arithmetic (kernels/lora_bgmv.cu, v2), emulated
 * on the host in its order (lora_bgmv_fused_emulate: 32 lanes over 8-element
 * chunks, the butterfly, fmaf in the expand, bf16 output), against the fp64
 * reference (lora_bgmv_ref) with the bound the kernel is validated by. */
#include "lora_ref.h"
#include "measure_ref.h"
#include "rng.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

Test(bgmv_fused, a_hand_worked_token)
{
    /* d_in 8 (one chunk, lane 0 alone), rank 1, d_out 1: v = x . a =
     * 1 + 2 + ... + 8 = 36; y = 1 + 0.25 * 36 * 0.5 = 5.5, exact in bf16.
     * Token 1 has no adapter: y stays 3. */
    float x[16], a[8], b[1] = {0.5f}, y[2] = {1.0f, 3.0f};
    for (int i = 0; i < 8; i++) {
        x[i] = 1.0f;
        x[8 + i] = 2.0f;
        a[i] = (float)(i + 1);
    }
    int idx[2] = {0, -1};
    cr_assert_eq(lora_bgmv_fused_emulate(2, 8, 1, 1, 1, x, a, b, idx, 0.25f, y), 0);
    cr_assert_eq(y[0], 5.5f);
    cr_assert_eq(y[1], 3.0f);
    /* d_in not a multiple of 8, and an adapter index out of range, refused */
    cr_assert_eq(lora_bgmv_fused_emulate(1, 12, 1, 1, 1, x, a, b, idx, 1, y), -1);
    int bad[1] = {1};
    cr_assert_eq(lora_bgmv_fused_emulate(1, 8, 1, 1, 1, x, a, b, bad, 1, y), -1);
}

/* LLaMA-3-8B's q projection at rank 16 (d_in = d_out = 4096), 8 tokens on
 * 3 adapters, bf16 inputs in [-1, 1), as the kernel is timed. */
enum { T = 8, DIN = 4096, DOUT = 4096, RANK = 16, ADAPTERS = 3 };

static float *bf16_uniform(rng_state *r, size_t n)
{
    float *p = malloc(n * sizeof *p);
    cr_assert_not_null(p);
    fill_uniform_f32(r, p, n, -1, 1);
    for (size_t i = 0; i < n; i++)
        p[i] = bf16_to_f32(bf16_from_f32(p[i]));
    return p;
}

Test(bgmv_fused, meets_the_kernels_bound_against_the_fp64_reference, .timeout = 60)
{
    rng_state r = rng_make(17);
    float *x = bf16_uniform(&r, (size_t)T * DIN), *a = bf16_uniform(&r, (size_t)ADAPTERS * RANK * DIN);
    float *b = bf16_uniform(&r, (size_t)ADAPTERS * DOUT * RANK), *y0 = bf16_uniform(&r, (size_t)T * DOUT);
    float *ref = malloc((size_t)T * DOUT * sizeof *ref), *got = malloc((size_t)T * DOUT * sizeof *got);
    cr_assert(ref && got);
    int idx[T] = {0, 1, 2, 0, 1, 2, 0, 1};
    memcpy(ref, y0, (size_t)T * DOUT * sizeof *ref);
    memcpy(got, y0, (size_t)T * DOUT * sizeof *got);
    float scale = 1.0f / RANK;
    cr_assert_eq(lora_bgmv_ref(T, DIN, DOUT, RANK, ADAPTERS, x, a, b, idx, scale, ref), 0);
    cr_assert_eq(lora_bgmv_fused_emulate(T, DIN, DOUT, RANK, ADAPTERS, x, a, b, idx, scale, got), 0);
    /* kernels/lora_bgmv.cu's check: atol 3e-2 + rtol 1e-2 (bf16 output,
     * relative rounding <= 2^-8, plus room for results near zero). */
    long first;
    size_t bad = validate_close(got, ref, (size_t)T * DOUT, 3e-2, 1e-2, &first, NULL);
    cr_assert_eq(bad, 0, "%zu outputs over the bound (first %ld: %g vs %g)", bad, first, got[first], ref[first]);
    /* and it is not trivially close: the adapter moved y well past the bound */
    size_t moved = 0;
    for (size_t i = 0; i < (size_t)T * DOUT; i++)
        moved += fabsf(ref[i] - y0[i]) > 0.1f;
    cr_assert_gt(moved, (size_t)T * DOUT / 2);

    /* One lane's partial sum of rank row 0 lost (its chunks c = 5, 37, ...
     * zeroed in A, 1/32 of the row): the same check fails. */
    for (int ad = 0; ad < ADAPTERS; ad++)
        for (int c = 5; c < DIN / 8; c += 32)
            for (int i = 0; i < 8; i++)
                a[(size_t)ad * RANK * DIN + 8 * c + i] = 0.0f;
    memcpy(got, y0, (size_t)T * DOUT * sizeof *got);
    cr_assert_eq(lora_bgmv_fused_emulate(T, DIN, DOUT, RANK, ADAPTERS, x, a, b, idx, scale, got), 0);
    bad = validate_close(got, ref, (size_t)T * DOUT, 3e-2, 1e-2, &first, NULL);
    cr_assert_gt(bad, (size_t)T * DOUT / 10, "a lost lane must fail the check (%zu outputs over)", bad);
    free(x), free(a), free(b), free(y0), free(ref), free(got);
}

Test(bgmv_fused, version_3_spreads_few_groups_over_the_sms)
{
    /* H200: 132 SMs, so 264 blocks fill them twice; at least 256 columns a
     * block.  LLaMA-3-8B's q (d_out 4096): one group wants 264 blocks but
     * 4096 / 256 = 16 is the most, 256 columns each; 8 groups (batch 64 on
     * one adapter) want ceil(264 / 8) = 33, again 16; 64 groups want
     * ceil(264 / 64) = 5, ceil(4096 / 5) = 820 columns; 300 groups fill the
     * SMs alone: 1 block of all 4096 columns. */
    int cols;
    cr_assert_eq(lora_bgmv_column_splits(1, 4096, 132, 256, &cols), 16);
    cr_assert_eq(cols, 256);
    cr_assert_eq(lora_bgmv_column_splits(8, 4096, 132, 256, &cols), 16);
    cr_assert_eq(lora_bgmv_column_splits(64, 4096, 132, 256, &cols), 5);
    cr_assert_eq(cols, 820);
    cr_assert_eq(lora_bgmv_column_splits(300, 4096, 132, 256, &cols), 1);
    cr_assert_eq(cols, 4096);
    /* fewer columns than one block's minimum: one block */
    cr_assert_eq(lora_bgmv_column_splits(1, 100, 132, 256, &cols), 1);
    cr_assert_eq(cols, 100);
    /* Every column in exactly one block and no block empty, over a range of
     * shapes (70B's q is 8192 wide; 1000 is not a multiple of anything). */
    int douts[] = {100, 1000, 4096, 8192}, items[] = {1, 3, 8, 64, 100, 300}, sms[] = {1, 108, 132};
    for (int i = 0; i < 4; i++)
        for (int j = 0; j < 6; j++)
            for (int k = 0; k < 3; k++) {
                int n = lora_bgmv_column_splits(items[j], douts[i], sms[k], 256, &cols);
                cr_assert_geq(n, 1);
                cr_assert_geq((long)n * cols, douts[i], "d_out %d items %d: %d x %d short", douts[i], items[j], n, cols);
                cr_assert_lt((long)(n - 1) * cols, douts[i], "d_out %d items %d: last block empty", douts[i], items[j]);
                if (n > 1)
                    cr_assert_geq(cols, 256);
            }
    cr_assert_eq(lora_bgmv_column_splits(0, 4096, 132, 256, &cols), -1);
    cr_assert_eq(lora_bgmv_column_splits(1, 4096, 132, 256, NULL), -1);
}
