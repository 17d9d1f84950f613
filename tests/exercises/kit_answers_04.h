/* Chapter 4's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h): the inputs of the variant go in as the exercise
 * states them. */
#ifndef EXERCISES_KIT_ANSWERS_04_H
#define EXERCISES_KIT_ANSWERS_04_H

#include "04-batch-window-in-c.h"
#include "kit_answers.h"

/* Exercise `exercise` (1 to 6; 0 for all) of the variant s. */
static inline kit_answers kit_answers_04(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    if (exercise == 0 || exercise == 1) {
        double now = kit_input_(s, "ch04_ex1_now_a"), dl = NAN;
        ex04_decide((size_t)kit_input_(s, "ch04_ex1_queued"), 1.0, now, (size_t)kit_input_(s, "ch04_ex1_batch"),
                    kit_input_(s, "ch04_ex1_window_ms") / 1e3, &dl);
        kit_answer_(&a, "4.1(a)", (dl - now) * 1e3);
    }
    if (exercise == 0 || exercise == 2) {
        double now = kit_input_(s, "ch04_ex2_now"), w = kit_input_(s, "ch04_ex2_window_ms") / 1e3;
        struct timespec ts = ex04_deadline(now, w), at = ex04_deadline(now, 0);
        kit_answer_(&a, "4.2(a1)", (double)ts.tv_sec);
        kit_answer_(&a, "4.2(a2)", (double)ts.tv_nsec);
        kit_answer_(&a, "4.2(b)", (double)at.tv_nsec + round(w * 1e9)); /* now's nanoseconds plus the window's */
    }
    if (exercise == 0 || exercise == 3) {
        int n = (int)kit_input_(s, "ch04_ex3_n"), bad[128] = {0};
        if (n < 1 || n > 128)
            return a;
        bad[(int)kit_input_(s, "ch04_ex3_bad")] = 1;
        kit_answer_(&a, "4.3(a)", (double)ex04_bisect_calls((size_t)n, bad));
        for (int i = 0; i < n; i++)
            bad[i] = i == 0 || i == n - 1;
        kit_answer_(&a, "4.3(b)", (double)ex04_bisect_calls((size_t)n, bad));
        int lo = (int)kit_input_(s, "ch04_ex3_run_start"), hi = (int)kit_input_(s, "ch04_ex3_run_end");
        for (int i = 0; i < n; i++)
            bad[i] = i >= lo && i <= hi;
        kit_answer_(&a, "4.3(c)", (double)ex04_bisect_calls((size_t)n, bad));
        for (int i = 0; i < n; i++)
            bad[i] = 1;
        kit_answer_(&a, "4.3(d)", (double)ex04_bisect_calls((size_t)n, bad));
    }
    if (exercise == 0 || exercise == 4) {
        double lambda = kit_input_(s, "ch04_ex4_rate"), w = kit_input_(s, "ch04_ex4_window_ms") / 1e3;
        kit_answer_(&a, "4.4(a)", 1e3 * ex04_mean_wait(lambda, w, 64));
        kit_answer_(&a, "4.4(b)", 1e3 * ex04_mean_wait(lambda, w, 4));
    }
    if (exercise == 0 || exercise == 5) {
        double lambda = kit_input_(s, "ch04_ex5_rate"), w = kit_input_(s, "ch04_ex5_window_ms") / 1e3;
        kit_answer_(&a, "4.5(a)", 100 * ex04_fill_share(lambda, w, 16));
        kit_answer_(&a, "4.5(b)", 100 * ex04_fill_share(lambda, w, 32));
    }
    if (exercise == 0 || exercise == 6) {
        double over = kit_input_(s, "ch04_ex6_overhead_us") * 1e-6, fixed = kit_input_(s, "ch04_ex6_fixed_ms") * 1e-3;
        double item = kit_input_(s, "ch04_ex6_per_item_ms") * 1e-3;
        kit_answer_(&a, "4.6(a)", ex04_serial_throughput(1, over, fixed, item));
        kit_answer_(&a, "4.6(b)", ex04_serial_throughput((size_t)kit_input_(s, "ch04_ex6_batch"), over, fixed, item));
        /* the limit: a batch so large the fixed costs vanish */
        kit_answer_(&a, "4.6(c)", ex04_serial_throughput(1000000000, over, fixed, item));
    }
    return a;
}

#endif
