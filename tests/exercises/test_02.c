/* Chapter 2 exercises: each expected number is derived by hand below, from
 * the datasheet rates in code/specs/gpus.tsv and the config.json shapes in
 * code/specs/models.tsv, never from the library's output. */
#include "02-measure-it.h"

#include <math.h>

#include "exercise_check.h"

/* Tests are named eN_... after exercise N (make exercise N=02 ONLY=N). */
#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex02, e1_stream_bandwidth_counts_reads_and_writes)
{
    /* 2^28 floats = 1,073,741,824 bytes per array.
     * copy: read a, write b = 2,147,483,648 B in 0.536 ms = 4.0065e12 B/s */
    ex_check_rel("2.1(a) copy bandwidth (B/s)", ex02_stream_bandwidth("copy", 268435456, 4, 0.536e-3),
                 2147483648.0 / 0.536e-3, 1e-12);
    /* read: one array, 1,073,741,824 B in 0.240 ms = 4.4739e12 B/s */
    ex_check_rel("2.1(a) read-only bandwidth (B/s)", ex02_stream_bandwidth("read", 268435456, 4, 0.240e-3), 4.47392e12,
                 1e-5);
    /* triad: a = b + s*c reads two arrays and writes one: 3 * 8e6 B in 1 ms = 2.4e10 */
    ex_check_rel("2.1 triad bandwidth (B/s)", ex02_stream_bandwidth("triad", 1e6, 8, 1e-3), 2.4e10, 1e-12);
    ex_check_rel("2.1 write bandwidth (B/s)", ex02_stream_bandwidth("write", 1e6, 8, 1e-3), 8e9, 1e-12);
}
#endif

Test(ex02, e1_bad_input)
{
    ex_check_nan("2.1 bandwidth of kernel \"scale\"", ex02_stream_bandwidth("scale", 1e6, 8, 1e-3),
                 "not a kernel this exercise knows");
    ex_check_nan("2.1 bandwidth in zero time", ex02_stream_bandwidth("copy", 1e6, 8, 0), "a time of 0 s");
    /* and good input must not be NAN, so "always NAN" cannot pass */
    cr_expect(!isnan(ex02_stream_bandwidth("copy", 1e6, 8, 1e-3)), "2.1 on good input: NAN: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex02, e3_gemm_time_on_the_h200_datasheet)
{
    /* LLaMA-3-70B gate+up at TP 4: N = 2*28672/4 = 14,336, K = 8,192.
     * M = 1: bytes 2*(8,192 + 14,336*8,192) + 2*14,336 = 234,926,080
     * over 4.8e12 B/s = 48.943 us (FLOP 2.35e8 / 989.4e12 = 0.24 us: memory-bound) */
    ex_check_rel("2.3(a) gate+up time on the H200 at batch 1 (s)", ex02_gemm_time("h200", 1, 14336, 8192),
                 234926080.0 / 4.8e12, 1e-9);
    /* M = 512: FLOP 2*512*14,336*8,192 = 120,259,084,288 / 989.4e12 = 121.547 us;
     * bytes 2*(512*8,192 + 117,440,512) + 2*512*14,336 = 257,949,696 / 4.8e12 = 53.7 us */
    ex_check_rel("2.3(a) gate+up time on the H200 at batch 512 (s)", ex02_gemm_time("h200", 512, 14336, 8192),
                 120259084288.0 / 989.4e12, 1e-9);
    /* M = 128, the table of exercise 4: bytes 2*(128*8,192 + 117,440,512) +
     * 2*128*14,336 = 240,648,192 / 4.8e12 = 50.135 us; FLOP 2*128*14,336*8,192
     * = 30.06e9 / 989.4e12 = 30.4 us: memory-bound, 50.1 us (below the knee). */
    ex_check_rel("2.3 gate+up time on the H200 at batch 128 (s)", ex02_gemm_time("h200", 128, 14336, 8192),
                 240648192.0 / 4.8e12, 1e-9);
}
#endif

Test(ex02, e3_bad_input)
{
    ex_check_nan("2.3 GEMM time on GPU \"nonesuch\"", ex02_gemm_time("nonesuch", 1, 1, 1), "unknown GPU");
    ex_check_nan("2.3 GEMM time at batch 0", ex02_gemm_time("h200", 0, 1, 1), "batch 0 is not a batch");
    /* and good input must not be NAN, so "always NAN" cannot pass */
    cr_expect(!isnan(ex02_gemm_time("h200", 1, 8, 8)), "2.3 on good input: NAN: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex02, e2_knee_batches)
{
    /* Dividing 2mnk/P = 2(mk + nk + mn)/B by 2nk/B: m = 1 / (B/P - (n + k)/(nk)).
     * H100, 8192^2: 1 / (3.35/989.4 - 2/8192) = 1 / 0.00314175 = 318.29 */
    ex_check_rel("2.2(a) knee batch, 8192 x 8192 on the H100", ex02_knee_batch("h100", 8192, 8192), 318.294, 1e-4);
    /* H200, 8192^2: 1 / (4.8/989.4 - 2/8192) = 1 / 0.00460734 = 217.05 */
    ex_check_rel("2.2(a) knee batch, 8192 x 8192 on the H200", ex02_knee_batch("h200", 8192, 8192), 217.048, 1e-4);
    /* H200, down_proj at TP 8 (N 8192, K 28672/8 = 3584):
     * 1 / (0.00485143 - 11776/29,360,128) = 1 / 0.00445034 = 224.70 */
    ex_check_rel("2.2(c) knee batch, down projection at TP 8 on the H200", ex02_knee_batch("h200", 8192, 3584),
                 224.702, 1e-4);
}
#endif

Test(ex02, e2_bad_input)
{
    ex_check_nan("2.2 knee batch of a weight with n = -1", ex02_knee_batch("h200", -1, 8), "not a matrix");
    /* and good input must not be NAN, so "always NAN" cannot pass */
    cr_expect(!isnan(ex02_knee_batch("h200", 8, 8)), "2.2 on good input: NAN: not computed yet");
}

Test(ex02, e4_median_abs_error_of_a_table)
{
    /* a table that is not the exercise's: |errors| 6.3/55.2 = 0.11413, 6.4/55.9 =
     * 0.11449, 19.4/80.4 = 0.24129, 18.8/140.3 = 0.13400, 18.9/262.0 = 0.07214;
     * sorted, the middle is 0.11449 */
    double pred[5] = {48.9, 49.5, 61.0, 121.5, 243.1}, meas[5] = {55.2, 55.9, 80.4, 140.3, 262.0};
    ex_check_rel("2.4 median |error| of a table", ex02_median_abs_error(pred, meas, 5), 6.4 / 55.9, 1e-9);
    /* even count: |errors| 0.1 and 0.3, median 0.2 */
    double p2[2] = {0.9, 1.3}, m2[2] = {1, 1};
    ex_check_rel("2.4 median |error| of two points", ex02_median_abs_error(p2, m2, 2), 0.2, 1e-12);
    ex_check_nan("2.4 median |error| of no points", ex02_median_abs_error(pred, meas, 0), "an empty table");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex02, e4_median_abs_error_of_the_printed_table)
{
    /* The printed table (exercise 3's weight, 14336 x 8192, on the H200 at 90 %
     * and 85 %), to 0.1 us: |errors| 5.5/54.4 = 0.10110, 8.4/57.9 = 0.14508,
     * 16.1/66.2 = 0.24320, 30.7/91.5 = 0.33552, 33.5/155.0 = 0.21613; sorted,
     * the middle is 0.21613, the worst m = 256 */
    double pred[5] = {48.9, 49.5, 50.1, 60.8, 121.5}, meas[5] = {54.4, 57.9, 66.2, 91.5, 155.0};
    ex_check_rel("2.4(a) median |error| of the table", ex02_median_abs_error(pred, meas, 5), 33.5 / 155.0, 1e-9);
}
#endif

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex02, e5_dram_fraction_from_a_profile)
{
    /* (134.3e6 + 16.4e3) B / 31.87 us = 4.21453e12 B/s; / 4.8e12 = 0.87803 */
    ex_check_rel("2.5(b) share of the datasheet bandwidth", ex02_dram_fraction(134.3e6, 16.4e3, 31.87e-6, 4.8e12),
                 134316400.0 / 31.87e-6 / 4.8e12, 1e-12);
    ex_check_rel("2.5(b) share of the datasheet bandwidth, rounded",
                 ex02_dram_fraction(134.3e6, 16.4e3, 31.87e-6, 4.8e12), 0.87803, 1e-4);
}
#endif

Test(ex02, e5_bad_input)
{
    ex_check_nan("2.5 share in zero time", ex02_dram_fraction(1, 1, 0, 1), "a time of 0 s");
    /* and good input must not be NAN, so "always NAN" cannot pass */
    cr_expect(!isnan(ex02_dram_fraction(1, 1, 1, 1)), "2.5 on good input: NAN: not computed yet");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex02, e6_attention_floor_uses_kv_heads)
{
    /* LLaMA-3-70B: K and V * 80 layers * 8 KV heads * 128 dims * 2 bytes = 327,680 B per token;
     * 32,768 tokens = 10,737,418,240 B; at 4.48e12 B/s: 2.39674 ms */
    ex_check_rel("2.6(b) attention floor, LLaMA-3-70B, one sequence of 32k (s)",
                 ex02_attention_floor("llama3-70b", 32768, 1, 4.48e12), 10737418240.0 / 4.48e12, 1e-9);
    /* LLaMA-3-8B: 2 * 32 * 8 * 128 * 2 = 131,072 B per token; 16 sequences of 32,768:
     * 68,719,476,736 B / 4.48e12 = 15.339 ms */
    ex_check_rel("2.6(c) attention floor, LLaMA-3-8B, 16 sequences of 32k (s)",
                 ex02_attention_floor("llama3-8b", 32768, 16, 4.48e12), 68719476736.0 / 4.48e12, 1e-9);
}
#endif

Test(ex02, e6_bad_input)
{
    ex_check_nan("2.6 attention floor of model \"nonesuch\"", ex02_attention_floor("nonesuch", 1, 1, 1),
                 "unknown model");
    /* and good input must not be NAN, so "always NAN" cannot pass */
    cr_expect(!isnan(ex02_attention_floor("llama3-8b", 1, 1, 1)), "2.6 on good input: NAN: not computed yet");
}

Test(ex02, e7_launch_idle_share)
{
    /* not the exercise's numbers: 100 launches of 4 us = 0.4 ms of host work;
     * 1 ms of GPU work hides it: 0; 0.3 ms of it leaves the GPU idle 1 - 0.3/0.4 = 0.25 */
    ex_check_near("2.7 idle share of a 1 ms step", ex02_launch_idle_share(100, 4e-6, 1e-3), 0, 0);
    ex_check_rel("2.7 idle share of 0.3 ms of GPU work", ex02_launch_idle_share(100, 4e-6, 0.3e-3), 0.25, 1e-9);
    ex_check_nan("2.7 idle share of no launches", ex02_launch_idle_share(0, 7e-6, 1e-3), "no kernels");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex02, e7_launch_idle_share_as_printed)
{
    /* 355 launches of 7 us = 2.485 ms of host work; a 4.5 ms GPU step hides it: 0 */
    ex_check_near("2.7(b) idle share of a 4.5 ms step", ex02_launch_idle_share(355, 7e-6, 4.5e-3), 0, 0);
    /* the same launches for 1.775 ms of GPU work: idle 1 - 1.775/2.485 = 0.28571 */
    ex_check_rel("2.7(c) idle share of 1.775 ms of GPU work", ex02_launch_idle_share(355, 7e-6, 1.775e-3),
                 1 - 1.775 / (355 * 0.007), 1e-9);
}
#endif

/* The variant of $NB_SEED (make exercise N=02 SEED=4711), judged as the grade
 * and the page judge it; at seed 0 these are the printed questions, whose
 * answers the tests above derive by hand. */
#include "kit_answers_02.h"

EX_VARIANT_TEST(ex02, e1_variant, 2, kit_answers_02, 1)
EX_VARIANT_TEST(ex02, e2_variant, 2, kit_answers_02, 2)
EX_VARIANT_TEST(ex02, e3_variant, 2, kit_answers_02, 3)
EX_VARIANT_TEST(ex02, e4_variant, 2, kit_answers_02, 4)
EX_VARIANT_TEST(ex02, e5_variant, 2, kit_answers_02, 5)
EX_VARIANT_TEST(ex02, e6_variant, 2, kit_answers_02, 6)
EX_VARIANT_TEST(ex02, e7_variant, 2, kit_answers_02, 7)
