/* Chapter 10 exercises: each expected number is derived by hand below from
 * the capped geometric process, never from the library's output. */
#include "10-speculative-decoding.h"

#include "specs.h"

#include <math.h>

#include "exercise_check.h"

/* Tests are named eN_... after exercise N (make exercise N=10 ONLY=N). */
Test(ex10, e1_the_missing_token)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* 1 + .7 + .49 + .343 = 2.533 */
    ex_check_near("10.1(a) expected tokens per round, alpha 0.7, gamma 3", ex10_expected_tokens(0.7, 3), 2.533, 1e-9);
    /* Leviathan Table 1: alpha 0.7, gamma 3, c 0: 2.53 */
    ex_check_near("10.1(c) speedup with a free draft", ex10_speedup(0.7, 3, 0.0), 2.533, 1e-9);
#endif
    /* every draft accepted: gamma + 1 = 5 tokens */
    ex_check_near("10.1 expected tokens, alpha 1, gamma 4", ex10_expected_tokens(1.0, 4), 5.0, 1e-12);
}

Test(ex10, e2_bursty_output)
{
#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
    /* (1 - 0.9^9)/0.1 = (1 - 0.387420489)/0.1 = 6.12579511 */
    ex_check_near("10.2(a) E[N], alpha 0.9, gamma 8", ex10_expected_tokens(0.9, 8), 6.12579511, 1e-8);
    /* P(N=1) = 1 - alpha; P(N=gamma+1) = alpha^gamma = 0.9^8 = 0.43046721 */
    ex_check_near("10.2(a) P(N = 1)", ex10_prob_tokens(0.9, 8, 1), 0.1, 1e-12);
    ex_check_near("10.2(a) P(N = 9)", ex10_prob_tokens(0.9, 8, 9), 0.43046721, 1e-10);
    /* P(N=2) = 0.9 * 0.1 */
    ex_check_near("10.2(b) P(N = 2)", ex10_prob_tokens(0.9, 8, 2), 0.09, 1e-12);
#endif
    /* alpha 0.5, gamma 2: P = .5, .25, .25; E = 1.75; E[N^2] = 3.75;
     * Var = 0.6875, sd = 0.8291562 */
    ex_check_near("10.2 standard deviation of N, alpha 0.5, gamma 2", ex10_tokens_stddev(0.5, 2), 0.82915620, 1e-7);
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex10, e3_how_long_a_draft)
{
    /* E = (1 - 0.75^5)/0.25 = 3.05078125; / (1 + 0.4) = 2.17912946 */
    ex_check_near("10.3(a) speedup at gamma 4", ex10_speedup(0.75, 4, 0.1), 2.17912946, 1e-7);
    /* S(g) = 4(1 - 0.75^(g+1))/(1 + 0.1 g): g=4 2.17913, g=5 3.28808594/1.5 =
     * 2.19206, g=6 3.46606445/1.6 = 2.16629: best is 5 */
    ex_check_int("10.3(b) best gamma in 1..10", ex10_best_gamma(0.75, 0.1, 10), 5);
}
#endif

Test(ex10, e4_acceptance_rate_needed)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* 2x at gamma 4, c 0.1 needs E = 2.8: 1+a+a^2+a^3+a^4 at a = 0.705 is
     * 2.79946, at 0.706 is 2.80423: the answer lies between */
    double a = ex10_alpha_for_speedup(2.0, 4, 0.1);
    ex_check_near("10.4(a) smallest alpha for 2x at gamma 4", a, (0.705 + 0.706) / 2, 0.0005);
    /* and it delivers exactly 2x (independent evaluation of the sum) */
    ex_check_near("10.4(a) the speedup your alpha gives", (1 + a + a * a + a * a * a + a * a * a * a) / 1.4, 2.0, 1e-6);
    /* gamma 2 needs 1 + a + a^2 = 2.4: a = (-1 + sqrt(1 + 4 x 1.4)) / 2 = 0.7845208 */
    ex_check_near("10.4(b) smallest alpha for 2x at gamma 2", ex10_alpha_for_speedup(2.0, 2, 0.1),
                  (-1 + sqrt(6.6)) / 2, 1e-6);
#endif
    /* gamma 2 can give at most 3/1.2 = 2.5: 3x is out of reach */
    ex_check_nan("10.4(c) alpha for 3x at gamma 2", ex10_alpha_for_speedup(3.0, 2, 0.1),
                 "gamma 2 gives at most 3/1.2 = 2.5x");
}

Test(ex10, e5_the_hidden_bill)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* (1-0.8)(0.5+6)/(1-0.8^6) = 1.3/0.737856 = 1.7618614 */
    ex_check_near("10.5(b) operations factor, c_hat 0.1", ex10_operations_factor(0.8, 5, 0.1), 1.3 / 0.737856, 1e-7);
    /* Leviathan Table 1, alpha 0.8, gamma 5: 1.63 */
    ex_check_near("10.5(b) operations factor, free draft", ex10_operations_factor(0.8, 5, 0.0), 1.2 / 0.737856, 1e-7);
#endif
    /* every draft accepted, a free draft: gamma + 1 evaluations for gamma + 1 tokens */
    ex_check_near("10.5 operations factor, alpha 1, free draft", ex10_operations_factor(1.0, 4, 0.0), 1.0, 1e-12);
}

Test(ex10, e6_verify_ratio)
{
    /* Batch 1 on 4 x H100: the step reads 35.3 GB of weights per GPU (10.5 ms)
     * while five tokens need 2*70.55e9*5/4 = 176 GFLOP (0.18 ms): free
     * within 1%: from 1.0 to 1.01. */
    double r1 = ex10_verify_ratio("llama3-70b", "h100", 4, 1, 512, 4);
    ex_check_near("10.6(a) verification over plain step, batch 1", r1, (1.0 + 1.01) / 2, 0.005);
    /* Batch 4096 with one token of context: every projection is past the
     * ridge, five tokens cost nearly five steps: from 4.5 to 5.0 */
    double rb = ex10_verify_ratio("llama3-70b", "h100", 8, 4096, 1, 4);
    ex_check_near("10.6(b) verification over plain step, batch 4096, TP 8", rb, (4.5 + 5.0) / 2, 0.25 + 1e-9);
    ex_check_nan("10.6 GPU \"tpu\"", ex10_verify_ratio("llama3-70b", "tpu", 4, 1, 512, 4), "not a GPU in the table");
}

Test(ex10, e6_verify_ratio_only_inside_memory)
{
    /* Batch 256 of 4096-token sequences on 4 x H100: the KV of 256 x (4096 + 4 + 1)
     * = 1,049,856 tokens at 81,920 B per token per GPU (2 x 80 layers x 2 KV heads x
     * 128 x 2 B) is 86.0e9 B, more than the 90% of the GPU's capacity that is usable
     * once the 70,553,706,496 x 2 / 4 = 35.28e9 B of weights are in, whatever the
     * activation reserve: no ratio for a batch that cannot exist. */
    gpu_spec g = gpu_builtin("h100");
    double kv = 256.0 * (4096 + 4 + 1) * 81920.0, left = 0.90 * g.mem_bytes - 70553706496.0 * 2 / 4;
    cr_assert(kv > left, "the premise: %g B of KV against %g B left", kv, left);
    ex_check_nan("10.6(d) ratio at batch 256, 4096-token sequences",
                 ex10_verify_ratio("llama3-70b", "h100", 4, 256, 4096, 4), "that batch does not fit the four GPUs");
    /* batch 96 of 4096 tokens needs 96 x 4101 x 81,920 = 32.3e9 B: it fits, and the
     * cache reads, which verification does not multiply, make the ratio smaller than
     * with 512-token sequences */
    double r4096 = ex10_verify_ratio("llama3-70b", "h100", 4, 96, 4096, 4);
    double r512 = ex10_verify_ratio("llama3-70b", "h100", 4, 96, 512, 4);
    cr_expect(r4096 > 1.0 && r4096 < r512,
              "10.6(c): your ratio at batch 96 is %.6g with 4096-token sequences and %.6g with 512-token ones; "
              "expected above 1 and below the 512-token ratio",
              r4096, r512);
}

/* The variant of $NB_SEED (make exercise N=10 SEED=4711), judged as the grade
 * and the page judge it; at seed 0 these are the printed questions, whose
 * answers the tests above derive by hand. */
#include "kit_answers_10.h"

EX_VARIANT_TEST(ex10, e1_variant, 10, kit_answers_10, 1)
EX_VARIANT_TEST(ex10, e2_variant, 10, kit_answers_10, 2)
EX_VARIANT_TEST(ex10, e3_variant, 10, kit_answers_10, 3)
EX_VARIANT_TEST(ex10, e4_variant, 10, kit_answers_10, 4)
EX_VARIANT_TEST(ex10, e5_variant, 10, kit_answers_10, 5)
EX_VARIANT_TEST(ex10, e6_variant, 10, kit_answers_10, 6)
