/* Chapter 5 exercises: each expected number is derived by hand below from
 * the queueing formulas, the datasheet rates in code/specs/gpus.tsv and the
 * config.json shapes in code/specs/models.tsv, never from the library's
 * output. */
#include "05-serving-queue.h"

#include <math.h>

#include "exercise_check.h"

/* Tests are named eN_... after exercise N (make exercise N=05 ONLY=N). */
#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex05, e1_littles_law)
{
    /* 40 requests/s for 6 s each: 240 in the system; twice the time, twice the count. */
    ex_check_near("5.1(a) requests in the system", ex05_in_system(40, 6), 240, 1e-9);
    ex_check_near("5.1(c) requests in the system at twice the time", ex05_in_system(40, 12), 480, 1e-9);
    /* LLaMA-3-8B, bf16: 2 (K, V) x 32 layers x 8 KV heads x 128 x 2 B = 131,072 B a token;
     * 240 requests x 1,500 tokens x 131,072 B = 47,185,920,000 B; fp8 halves it */
    ex_check_rel("5.1(b) KV cache of 240 requests (B)", ex05_cache_bytes("llama3-8b", 240, 1500, "bf16"),
                 47185920000.0, 1e-12);
    ex_check_rel("5.1(b) KV cache in fp8 (B)", ex05_cache_bytes("llama3-8b", 240, 1500, "fp8"), 23592960000.0,
                 1e-12);
}
#endif

Test(ex05, e1_bad_input)
{
    ex_check_nan("5.1(b) cache of model \"gpt-5\"", ex05_cache_bytes("gpt-5", 240, 1500, "bf16"), "unknown model");
    ex_check_nan("5.1(b) cache in dtype \"bf17\"", ex05_cache_bytes("llama3-8b", 240, 1500, "bf17"),
                 "unknown dtype");
    /* and good input must not be NAN, so "always NAN" cannot pass */
    cr_expect(!isnan(ex05_cache_bytes("llama3-8b", 10, 100, "bf16")),
              "5.1(b) cache of 10 requests of 100 tokens: NAN: not computed yet");
}

Test(ex05, e2_mm1_and_md1)
{
    /* mu = 5/s (S = 0.2 s), lambda = 4/s, rho = 0.8.
     * M/M/1: W = 1/(mu - lambda) = 1 s.
     * M/D/1: Wq = rho/(2 mu (1 - rho)) = 0.8/(2*5*0.2) = 0.4 s; W = 0.6 s. */
#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
    ex_check_near("5.2(b) M/M/1 time in system (s)", ex05_mm1_time(4, 5), 1.0, 1e-12);
    ex_check_near("5.2(b) M/D/1 time in system (s)", ex05_md1_time(4, 5), 0.6, 1e-12);
#endif
    ex_check_nan("5.2 M/M/1 time at rho = 1", ex05_mm1_time(5, 5), "rho = 1 is not stable");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex05, e4_pollaczek_khinchine)
{
    /* S = 2 s, lambda = 0.4/s: rho = 0.8; Wq = rho (1 + cs2)/(2 (1 - rho)) S
     * = 0.8 (1 + cs2)/0.4 * 2 = 4 (1 + cs2): fixed 4 s, cs2 = 0.5 -> 6 s,
     * exponential 8 s. */
    ex_check_near("5.4(b) wait before service, fixed service (s)", ex05_mg1_wait(0.4, 2, 0), 4.0, 1e-12);
    ex_check_near("5.4(a) wait before service, cs2 = 0.5 (s)", ex05_mg1_wait(0.4, 2, 0.5), 6.0, 1e-12);
    ex_check_near("5.4(b) wait before service, exponential service (s)", ex05_mg1_wait(0.4, 2, 1), 8.0, 1e-12);
}
#endif

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex05, e3_the_knee)
{
    /* M/D/1, S = 1: W = 1 + rho/(2(1-rho)); W = 2 at rho = 2/3, W = 5 at 8/9.
     * M/M/1, S = 1: W = 1/(1-rho); W = 2 at 1/2, W = 5 at 4/5. */
    ex_check_near("5.3(a) M/D/1 rate for a mean of 2 s", ex05_max_rate(1, 0, 2), 2.0 / 3, 1e-9);
    ex_check_near("5.3(a) M/D/1 rate for a mean of 5 s", ex05_max_rate(1, 0, 5), 8.0 / 9, 1e-9);
    ex_check_near("5.3(b) M/M/1 rate for a mean of 2 s", ex05_max_rate(1, 1, 2), 0.5, 1e-9);
    ex_check_near("5.3(b) M/M/1 rate for a mean of 5 s", ex05_max_rate(1, 1, 5), 0.8, 1e-9);
}
#endif

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex05, e5_batch_capacity_by_hand)
{
    /* LLaMA-3-8B bf16 on an H100 (3.35 TB/s, 989.4 TFLOP/s), prompt 512,
     * output 256.  Streamed weights 15.01 GB (8.03e9 params less the 0.525e9
     * embedding rows, 2 B each); KV 131072 B per token.
     * Batch of 64: prefill 64*512 = 32768 tokens * 2 * 7.50e9 FLOP = 4.92e14
     * -> 0.50 s; 255 decode steps reading 15.01 GB + 64 sequences * ~639 tokens
     * * 131072 B = 5.36 GB -> 6.08 ms each, 1.55 s.  s(64) ~ 2.05 s: 31.2/s.
     * Capped at 16: prefill 8192 tokens -> 0.124 s; decode 15.01 + 1.34 GB ->
     * 4.88 ms, * 255 = 1.245 s; s(16) ~ 1.37 s: 11.7/s.
     * Attention FLOP, activations and norms are left out: allow 10%. */
    double cap = ex05_batch_capacity("llama3-8b", "h100", 512, 256, 64, 0);
    ex_check_near("5.5(a) capacity with batches of 64 (requests/s)", cap, 31.2, 3.1);
    double capped = ex05_batch_capacity("llama3-8b", "h100", 512, 256, 64, 16);
    ex_check_near("5.5(b) capacity with 16 sequences of KV (requests/s)", capped, 11.7, 1.2);
}
#endif

Test(ex05, e5_bad_input)
{
    ex_check_nan("5.5 capacity on GPU \"nope\"", ex05_batch_capacity("llama3-8b", "nope", 512, 256, 64, 0),
                 "unknown GPU");
    /* and good input must not be NAN, so "always NAN" cannot pass */
    cr_expect(!isnan(ex05_batch_capacity("llama3-8b", "h100", 128, 16, 4, 0)), "5.5 on good input: NAN: not computed yet");
}

Test(ex05, e6_replicas)
{
    /* 100 req/s at most 80% of 25/s = 20 per replica: exactly 5.
     * 80% of 30 = 24: 100/24 = 4.17 -> 5.  80% of 40 = 32: 3.125 -> 4. */
    ex_check_int("5.6 replicas of 25/s", ex05_replicas_needed(100, 25, 0.8), 5);
    ex_check_int("5.6 replicas of 30/s", ex05_replicas_needed(100, 30, 0.8), 5);
    ex_check_int("5.6 replicas of 40/s", ex05_replicas_needed(100, 40, 0.8), 4);
    ex_check_int("5.6 replicas of 0/s", ex05_replicas_needed(100, 0, 0.8), -1);
}

/* The variant of $NB_SEED (make exercise N=05 SEED=4711), judged as the grade
 * and the page judge it; at seed 0 these are the printed questions, whose
 * answers the tests above derive by hand. */
#include "kit_answers_05.h"

EX_VARIANT_TEST(ex05, e1_variant, 5, kit_answers_05, 1)
EX_VARIANT_TEST(ex05, e2_variant, 5, kit_answers_05, 2)
EX_VARIANT_TEST(ex05, e3_variant, 5, kit_answers_05, 3)
EX_VARIANT_TEST(ex05, e4_variant, 5, kit_answers_05, 4)
EX_VARIANT_TEST(ex05, e5_variant, 5, kit_answers_05, 5)
EX_VARIANT_TEST(ex05, e6_variant, 5, kit_answers_05, 6)
