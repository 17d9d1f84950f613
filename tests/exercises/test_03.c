/* Chapter 3 exercises: each expected number is derived by hand below, from
 * the datasheet rates in code/specs/gpus.tsv, the config.json shapes in
 * code/specs/models.tsv and the Poisson distribution, never from the
 * library's output. */
#include "03-batching-in-practice.h"
#include "specs.h"

#include <math.h>
#include <stdio.h>

#include "exercise_check.h"

/* Tests are named eN_... after exercise N (make exercise N=03 ONLY=N). */
#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex03, e1_offsets_by_hand)
{
    /* 5, 3, 8, 1 -> 0, 5, 8, 16, 17; token 2 of sequence 2 sits at cu[2] + 2 = 10. */
    int len[] = {5, 3, 8, 1};
    long cu[5] = {-7, -7, -7, -7, -7};
    ex_check_int("3.1 tokens in the packed batch", ex03_pack_offsets(len, 4, cu), 17);
    long want[] = {0, 5, 8, 16, 17};
    for (int i = 0; i < 5; i++) {
        char what[32];
        snprintf(what, sizeof what, "3.1(a) cu[%d]", i);
        ex_check_int(what, cu[i], want[i]);
    }
}

Test(ex03, e1_padding_waste_by_hand)
{
    /* Longest 8, four rows: 32 slots for 17 tokens, waste 15/32 = 0.46875. */
    int len[] = {5, 3, 8, 1};
    ex_check_near("3.1(c) padding share", ex03_padding_waste(len, 4), 15.0 / 32, 1e-12);
    int same[] = {6, 6, 6};
    ex_check_near("3.1 padding share of equal lengths", ex03_padding_waste(same, 3), 0, 1e-12);
}
#endif

Test(ex03, e1_bad_input)
{
    long cu[5];
    int bad[] = {2, -1};
    ex_check_int("3.1 offsets of a sequence of -1 tokens", ex03_pack_offsets(bad, 2, cu), -1);
    ex_check_nan("3.1 padding share of a sequence of -1 tokens", ex03_padding_waste(bad, 2), "negative length");
    /* and good input must not be NAN, so "always NAN" cannot pass */
    int one[] = {3};
    cr_expect(!isnan(ex03_padding_waste(one, 1)), "3.1 padding share of one sequence: NAN: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */

Test(ex03, e2_bucketed_waste_by_hand)
{
    /* Tokens 40+60+100+250+300+900+1000+4000 = 6650.  Padded: 8*4000 = 32000
     * slots, waste 25350/32000 = 0.7921875.  Buckets <=128 {40,60,100} -> 300;
     * <=512 {250,300} -> 600; <=2048 {900,1000} -> 2000; <=8192 {4000} -> 4000:
     * 6900 slots, waste 250/6900. */
    int len[] = {40, 60, 100, 250, 300, 900, 1000, 4000};
    int edges[] = {128, 512, 2048, 8192};
    ex_check_near("3.2(a) padding share, padded to the longest", ex03_padding_waste(len, 8), 25350.0 / 32000, 1e-12);
    ex_check_near("3.2(b) padding share, bucketed", ex03_bucketed_waste(len, 8, edges, 4), 250.0 / 6900, 1e-12);
    /* four buckets used; {5, 3, 8, 1} with edges 4 and 16: {3, 1} and {5, 8}, two */
    ex_check_int("3.2(b) batches the buckets launch", ex03_bucket_batches(len, 8, edges, 4), 4);
    int len1[] = {5, 3, 8, 1}, edges1[] = {4, 16};
    ex_check_int("3.2 batches of {5, 3, 8, 1} over edges 4, 16", ex03_bucket_batches(len1, 4, edges1, 2), 2);
    /* causal pairs L(L+1)/2: padded 8 * 4000 * 4001 / 2 = 64,016,000; bucketed
     * 3 * 5050 + 2 * 45150 + 2 * 500500 + 8,002,000 = 9,108,450: 7.0282 */
    ex_check_rel("3.2(c) attention work padded over bucketed", ex03_attention_ratio(len, 8, edges, 4),
                 64016000.0 / 9108450.0, 1e-9);
}
#endif

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */

Test(ex03, e3_window_light_load)
{
    /* lambda 20/s, W 50 ms: lambda W = 1, and B = 16 never binds (P(X >= 15)
     * ~ 1e-13).  E[N] = 1 + 1 = 2.  The first request waits W, the other
     * (one on average) arrives uniformly and waits W/2: total 0.05 + 0.025 =
     * 0.075 s over 2 requests = 0.0375 s. */
    ex_check_near("3.3(a) mean batch at 20/s", ex03_expected_batch(20, 0.050, 16), 2.0, 1e-9);
    ex_check_near("3.3(b) mean wait at 20/s (s)", ex03_mean_wait(20, 0.050, 16), 0.0375, 1e-9);
    /* the batch of 16 (almost) never fills: it goes when the window ends */
    ex_check_near("3.3 dispatch after the first request at 20/s (s)", ex03_mean_dispatch(20, 0.050, 16), 0.050, 1e-9);
}

Test(ex03, e4_window_heavy_load)
{
    /* lambda 2000/s, W 50 ms: lambda W = 100, so 15 more arrivals come well
     * inside the window (P(X <= 14) ~ 1e-28): every batch is full, E[N] = 16.
     * The k-th (k = 0..15) waits (15-k) gaps of 1/2000 s on average: mean
     * 7.5/2000 = 3.75 ms. */
    ex_check_near("3.4(a) mean batch at 2,000/s", ex03_expected_batch(2000, 0.050, 16), 16.0, 1e-9);
    ex_check_near("3.4(b) mean wait at 2,000/s (s)", ex03_mean_wait(2000, 0.050, 16), 0.00375, 1e-9);
    /* 15 more arrivals after the first: 15 / 2000 s = 7.5 ms */
    ex_check_near("3.4(a) dispatch after the first request at 2,000/s (s)", ex03_mean_dispatch(2000, 0.050, 16),
                  0.0075, 1e-9);
}

Test(ex03, e5_window_for_a_latency_budget)
{
    /* lambda 100/s, budget 20 ms, B = 32 (it will not bind: lambda W ~ 3.2).
     * Mean wait W(2 + 100W)/(2(1 + 100W)) = 0.02  =>  100 W^2 - 2 W - 0.04 = 0
     * => W = (2 + sqrt(4 + 16))/200 = 0.0323607 s. */
    ex_check_near("3.5(a) longest window for a 20 ms mean wait (s)", ex03_window_for_wait(100, 32, 0.020), 0.0323607,
                  2e-6);
    /* A batch of one never waits: any window meets the budget. */
    double w1 = ex03_window_for_wait(100, 1, 0.020);
    cr_expect(isinf(w1), "3.5 window for batches of one: your answer %.10g, expected INFINITY (B = 1 waits nothing)",
              w1);
}

Test(ex03, e6_sequential_over_batch_by_hand)
{
    /* LLaMA-3-8B bf16 on an H100 (3.35 TB/s, 989.4 TFLOP/s), 16 requests,
     * prompt 256, output 128.  Weights streamed per step: 8.03e9 params less
     * the 0.525e9 embedding rows, 2 B each = 15.01 GB -> 4.48 ms.
     *  One request: prefill of 256 tokens is still memory-bound (intensity
     *  ~256 < ridge 295): ~4.5 ms; 127 decode steps at ~4.49 ms (KV of ~319
     *  tokens * 131072 B = 0.04 GB) = 570 ms.  Total ~575 ms; 16 of them 9.2 s.
     *  One batch: prefill 4096 tokens * 15.0 GFLOP = 61.4 TFLOP -> 62 ms;
     *  decode steps read 15.01 + 16*319*131072 B = 15.68 GB -> 4.68 ms, * 127
     *  = 594 ms.  Total ~656 ms.
     * Ratio ~ 9.2/0.656 = 14.0; activations and norms are left out of this
     * estimate, so allow 10%. */
    double r = ex03_seq_over_batch("llama3-8b", "h100", 16, 256, 128);
    ex_check_near("3.6(a) sequential over one batch", r, 14.0, 1.4);
}
#endif

Test(ex03, e6_bad_input)
{
    ex_check_nan("3.6 sequential over one batch of model \"no-such-model\"",
                 ex03_seq_over_batch("no-such-model", "h100", 16, 256, 128), "unknown model");
    /* and good input must not be NAN, so "always NAN" cannot pass */
    cr_expect(!isnan(ex03_seq_over_batch("llama3-8b", "h100", 2, 64, 16)),
              "3.6 two requests of 64 and 16 tokens: NAN: not computed yet");
}


#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex03, e7_kv_cap_by_hand)
{
    /* The capacity is the GPU row's (what the driver reports: 81,559 MiB =
     * 85.52e9 B for an H100), read here; the rest by hand.  0.9 * 85.52e9 =
     * 76.97e9; bf16 weights 8,030,261,248 * 2 = 16,060,522,496; reserve 5e9:
     * 55.91e9 B left.  One 768-token sequence: 768 * 131072 (2*32*8*128*2) =
     * 100,663,296 B -> floor(555.4) = 555.  At 8192 tokens: 1,073,741,824 B
     * -> floor(52.07) = 52. */
    double left = 0.9 * gpu_builtin("h100").mem_bytes - 16060522496.0 - 5e9;
    ex_check_int("3.7(a) 768-token sequences that fit", ex03_kv_cap("llama3-8b", "h100", 768, 0.9, 5e9),
                 (int)floor(left / 100663296.0));
    ex_check_int("3.7(b) 8,192-token sequences that fit", ex03_kv_cap("llama3-8b", "h100", 8192, 0.9, 5e9),
                 (int)floor(left / 1073741824.0));
}
#endif

Test(ex03, e7_edge_cases)
{
    /* a reserve that eats the budget: none fit */
    ex_check_int("3.7 sequences that fit beside a 70 GB reserve", ex03_kv_cap("llama3-8b", "h100", 8192, 0.9, 70e9), 0);
    ex_check_int("3.7 sequences that fit on GPU \"nope\"", ex03_kv_cap("llama3-8b", "nope", 8192, 0.9, 5e9), -1);
}

/* The variant of $NB_SEED (make exercise N=03 SEED=4711), judged as the grade
 * and the page judge it; at seed 0 these are the printed questions, whose
 * answers the tests above derive by hand. */
#include "kit_answers_03.h"

EX_VARIANT_TEST(ex03, e1_variant, 3, kit_answers_03, 1)
EX_VARIANT_TEST(ex03, e2_variant, 3, kit_answers_03, 2)
EX_VARIANT_TEST(ex03, e3_variant, 3, kit_answers_03, 3)
EX_VARIANT_TEST(ex03, e4_variant, 3, kit_answers_03, 4)
EX_VARIANT_TEST(ex03, e5_variant, 3, kit_answers_03, 5)
EX_VARIANT_TEST(ex03, e6_variant, 3, kit_answers_03, 6)
EX_VARIANT_TEST(ex03, e7_variant, 3, kit_answers_03, 7)
