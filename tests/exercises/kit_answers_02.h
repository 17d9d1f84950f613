/* Chapter 2's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h): the inputs of the variant go in as the exercise
 * states them. */
#ifndef EXERCISES_KIT_ANSWERS_02_H
#define EXERCISES_KIT_ANSWERS_02_H

#include "02-measure-it.h"
#include "kit_answers.h"

/* Exercise `exercise` (1 to 7; 0 for all) of the variant s. */
static inline kit_answers kit_answers_02(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    const double datasheet = 4.8e12; /* the H200's, as the exercise states it */
    if (exercise == 0 || exercise == 1) {
        double n = 268435456.0, copy = kit_input_(s, "ch02_ex1_copy_ms") * 1e-3;
        double c = ex02_stream_bandwidth("copy", n, 4, copy);
        kit_answer_(&a, "2.1(a1)", c / 1e12);
        kit_answer_(&a, "2.1(a2)", ex02_stream_bandwidth("read", n, 4, kit_input_(s, "ch02_ex1_read_ms") * 1e-3) / 1e12);
        kit_answer_(&a, "2.1(b)", 100 * c / datasheet);
        kit_answer_(&a, "2.1(c)", ex02_stream_bandwidth("read", n, 4, copy) / 1e12); /* the copy's reads alone */
    }
    if (exercise == 0 || exercise == 2) {
        double size = kit_input_(s, "ch02_ex2_size");
        kit_answer_(&a, "2.2(a)", ex02_knee_batch("h200", size, size));
        kit_answer_(&a, "2.2(c)", ex02_knee_batch("h200", 8192, kit_input_(s, "ch02_ex2_k")));
    }
    if (exercise == 0 || exercise == 3) {
        double n = kit_input_(s, "ch02_ex3_n"), m = kit_input_(s, "ch02_ex3_batch");
        double t1 = ex02_gemm_time("h200", 1, n, 8192), tm = ex02_gemm_time("h200", m, n, 8192);
        kit_answer_(&a, "2.3(c)", tm / t1);
    }
    if (exercise == 0 || exercise == 4) {
        /* the table as printed: its columns are the variant's inputs */
        static const char *const pred[5] = {"ch02_ex4_m1_pred", "ch02_ex4_m64_pred", "ch02_ex4_m128_pred",
                                            "ch02_ex4_m256_pred", "ch02_ex4_m512_pred"};
        static const char *const meas[5] = {"ch02_ex4_m1_meas", "ch02_ex4_m64_meas", "ch02_ex4_m128_meas",
                                            "ch02_ex4_m256_meas", "ch02_ex4_m512_meas"};
        const double m[5] = {1, 64, 128, 256, 512};
        double p[5], t[5];
        int worst = 0;
        for (int i = 0; i < 5; i++) {
            p[i] = kit_input_(s, pred[i]), t[i] = kit_input_(s, meas[i]);
            /* the worst point: the one whose table of one has the largest median */
            if (ex02_median_abs_error(&p[i], &t[i], 1) > ex02_median_abs_error(&p[worst], &t[worst], 1))
                worst = i;
        }
        kit_answer_(&a, "2.4(a)", 100 * ex02_median_abs_error(p, t, 5));
        kit_answer_(&a, "2.4(b)", m[worst]);
    }
    if (exercise == 0 || exercise == 5) {
        double read = kit_input_(s, "ch02_ex5_read_mb") * 1e6, t = kit_input_(s, "ch02_ex5_us") * 1e-6;
        kit_answer_(&a, "2.5(a)", ex02_dram_fraction(read, 16.4e3, t, 1e12));
        kit_answer_(&a, "2.5(b)", 100 * ex02_dram_fraction(read, 16.4e3, t, datasheet));
    }
    if (exercise == 0 || exercise == 6) {
        int context = (int)kit_input_(s, "ch02_ex6_context"), batch = (int)kit_input_(s, "ch02_ex6_batch");
        /* the floor at 10^9 bytes a second is the bytes in GB */
        kit_answer_(&a, "2.6(a)", ex02_attention_floor("llama3-70b", context, 1, 1e9));
        kit_answer_(&a, "2.6(c)", ex02_attention_floor("llama3-8b", context, batch, 1e9));
    }
    if (exercise == 0 || exercise == 7) {
        /* one kernel's work against one launch: the share does not depend on the count */
        double launch = kit_input_(s, "ch02_ex7_launch_us") * 1e-6, work = kit_input_(s, "ch02_ex7_work_us") * 1e-6;
        kit_answer_(&a, "2.7(c)", 100 * ex02_launch_idle_share(1, launch, work));
    }
    return a;
}

#endif
