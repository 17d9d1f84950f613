/* Ragged batches: offsets, pack/unpack round trips and the padding bill,
 * each against hand arithmetic. */
#include "packing.h"

#include <criterion/criterion.h>
#include <math.h>

Test(packing, offsets_are_running_sums)
{
    /* lengths 3, 1, 4 -> cu = 0, 3, 3+1 = 4, 4+4 = 8. */
    int len[] = {3, 1, 4};
    long cu[4];
    cr_expect_eq(pack_offsets(len, 3, cu), 8);
    cr_expect_eq(cu[0], 0);
    cr_expect_eq(cu[1], 3);
    cr_expect_eq(cu[2], 4);
    cr_expect_eq(cu[3], 8);
    long empty[1] = {99};
    cr_expect_eq(pack_offsets(len, 0, empty), 0, "no sequences: total 0");
    cr_expect_eq(empty[0], 0);
}

Test(packing, offsets_reject_negative_length)
{
    int len[] = {3, -1};
    long cu[3] = {7, 7, 7};
    cr_expect_eq(pack_offsets(len, 2, cu), -1);
    cr_expect_eq(cu[0], 7, "cu untouched on error");
    cr_expect_eq(pack_offsets(len, -1, cu), -1);
}

/* Token t of sequence i carries the pair (100 i + t, -(100 i + t)). */
typedef struct {
    int a, b;
} tok;

Test(packing, pack_then_unpack_round_trips)
{
    enum { N = 3, L = 4 };
    int len[N] = {3, 1, 4};
    tok padded[N][L], packed[8], back[N][L];
    for (int i = 0; i < N; i++)
        for (int t = 0; t < L; t++)
            padded[i][t] = t < len[i] ? (tok){100 * i + t, -(100 * i + t)} : (tok){555, 555};
    cr_assert_eq(pack_tokens(padded, sizeof(tok), N, L, len, packed), 0);
    /* Packed order: seq 0 tokens 0..2, seq 1 token 0, seq 2 tokens 0..3. */
    int expect[8] = {0, 1, 2, 100, 200, 201, 202, 203};
    for (int k = 0; k < 8; k++) {
        cr_expect_eq(packed[k].a, expect[k], "packed[%d]", k);
        cr_expect_eq(packed[k].b, -expect[k]);
    }
    tok pad = {-7, -7};
    cr_assert_eq(unpack_tokens(packed, sizeof(tok), N, L, len, back, &pad), 0);
    for (int i = 0; i < N; i++)
        for (int t = 0; t < L; t++) {
            int a = t < len[i] ? 100 * i + t : -7;
            cr_expect_eq(back[i][t].a, a, "back[%d][%d]", i, t);
        }
    /* NULL pad row: zero bytes. */
    cr_assert_eq(unpack_tokens(packed, sizeof(tok), N, L, len, back, NULL), 0);
    cr_expect_eq(back[1][3].a, 0);
    cr_expect_eq(back[1][1].b, 0);
}

Test(packing, pack_rejects_a_row_longer_than_the_padding)
{
    int len[] = {2, 5};
    char padded[8] = {0}, packed[8] = {0};
    cr_expect_eq(pack_tokens(padded, 1, 2, 4, len, packed), -1);
    cr_expect_eq(unpack_tokens(packed, 1, 2, 4, len, padded, NULL), -1);
}

Test(packing, padded_cost_by_hand)
{
    /* 3, 1, 4 padded to 4: slots 3*4 = 12, tokens 8, waste 4/12 = 1/3.
     * Causal pairs padded: 3 * (4*5/2) = 30; real: 6 + 1 + 10 = 17. */
    int len[] = {3, 1, 4};
    padding_cost c = padding_cost_padded(len, 3);
    cr_expect_eq(c.tokens, 8);
    cr_expect_eq(c.slots, 12);
    cr_expect_float_eq(c.waste, 1.0 / 3, 1e-12);
    cr_expect_float_eq(c.attn_pairs, 30, 1e-12);
    cr_expect_float_eq(c.attn_pairs_real, 17, 1e-12);
    cr_expect_eq(c.batches, 1);
    padding_cost p = padding_cost_packed(len, 3);
    cr_expect_eq(p.slots, 8);
    cr_expect_float_eq(p.waste, 0, 1e-12);
    cr_expect_float_eq(p.attn_pairs, 17, 1e-12);
}

Test(packing, bucketed_cost_by_hand)
{
    /* Edges 2, 8: {1} -> bucket 0 (1 slot), {3, 4} -> bucket 1 padded to 4 (8 slots).
     * Slots 9, tokens 8, waste 1/9; pairs 1 + 2*10 = 21; two batches. */
    int len[] = {3, 1, 4};
    int edges[] = {2, 8};
    padding_cost c;
    cr_assert_eq(padding_cost_bucketed(len, 3, edges, 2, &c), 0);
    cr_expect_eq(c.slots, 9);
    cr_expect_float_eq(c.waste, 1.0 / 9, 1e-12);
    cr_expect_float_eq(c.attn_pairs, 21, 1e-12);
    cr_expect_eq(c.batches, 2);
    /* Longer than the last edge: still the last bucket.  20 with {3,1,4} and
     * edges {2, 8}: bucket 1 = {3, 4, 20} padded to 20 -> 60 slots + 1. */
    int len2[] = {3, 1, 4, 20};
    cr_assert_eq(padding_cost_bucketed(len2, 4, edges, 2, &c), 0);
    cr_expect_eq(c.slots, 61);
}

Test(packing, bucketed_rejects_bad_edges)
{
    int len[] = {3};
    int edges[] = {8, 8};
    padding_cost c;
    cr_expect_eq(padding_cost_bucketed(len, 1, edges, 2, &c), -1);
    cr_expect_eq(padding_cost_bucketed(len, 1, edges, 0, &c), -1);
}

Test(packing, equal_lengths_waste_nothing)
{
    int len[] = {7, 7, 7, 7};
    cr_expect_float_eq(padding_cost_padded(len, 4).waste, 0, 1e-12);
    cr_expect_eq(padding_cost_padded(NULL, 0).slots, 0);
}

Test(packing, lognormal_lengths_have_the_median_and_clamp)
{
    /* Median 300, sigma 0.8: P(round(X) <= 300) = P(X < 300.5)
     * = Phi(ln(300.5/300)/0.8) = Phi(0.0021) = 0.5008.  n = 2e5:
     * 5 SE = 5*0.5/sqrt(n) = 0.0056. */
    length_dist d = length_dist_lognormal(300, 0.8, 1, 100000);
    rng_state r = rng_make(11);
    const int n = 200000;
    long le = 0;
    for (int i = 0; i < n; i++)
        le += length_draw(&d, &r) <= 300;
    cr_expect(fabs((double)le / n - 0.5008) < 5 * 0.5 / sqrt(n), "share <= median %g", (double)le / n);
    /* A clamp of [16, 64] around a median of 300 leaves most at 64:
     * P(X >= 64) = Phi(ln(300/64)/0.8) = Phi(1.93) = 0.973; nothing below 16. */
    length_dist c = length_dist_lognormal(300, 0.8, 16, 64);
    long at_max = 0, out = 0;
    for (int i = 0; i < 20000; i++) {
        int x = length_draw(&c, &r);
        at_max += x == 64;
        out += x < 16 || x > 64;
    }
    cr_expect_eq(out, 0);
    cr_expect(fabs(at_max / 20000.0 - 0.973) < 0.01, "share at the clamp %g", at_max / 20000.0);
}

Test(packing, long_tail_mix_share)
{
    /* 10% from a tail with median 8000, sigma 0.3; 90% median 300, sigma 0.5.
     * P(len > 4000) = 0.1 * Phi(ln 2 / 0.3 = 2.31) + 0.9 * P(Z > ln(13.3)/0.5 = 5.18)
     * = 0.1 * 0.98956 + ~1e-7 = 0.0990.  SE at n = 2e5: sqrt(0.099*0.901/n) = 0.00067;
     * 5 SE = 0.0033. */
    length_dist d = length_dist_lognormal(300, 0.5, 1, 32768);
    d.tail_share = 0.1;
    d.tail_median = 8000;
    d.tail_sigma = 0.3;
    rng_state r = rng_make(12);
    const int n = 200000;
    long over = 0;
    for (int i = 0; i < n; i++)
        over += length_draw(&d, &r) > 4000;
    cr_expect(fabs((double)over / n - 0.0990) < 5 * sqrt(0.099 * 0.901 / n), "share over 4000 %g",
              (double)over / n);
}
