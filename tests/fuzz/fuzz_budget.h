/* A per-input time budget for a libFuzzer target, finer than libFuzzer's
 * own -timeout (whole seconds): an input whose run takes more than
 * NAPKIN_FUZZ_INPUT_MS milliseconds (default 100; tools/fuzz.sh sets it;
 * 0 turns the check off) of this thread's CPU time aborts, so libFuzzer
 * keeps it as a finding like a crash.  CPU time, not the wall clock: on a
 * shared machine the wall clock counts other processes' work too, and a
 * finding must be the input's own doing.
 *
 *   struct timespec t0 = fuzz_budget_start();
 *   ... run the input ...
 *   fuzz_budget_check(t0, "config");
 */
#ifndef NAPKIN_FUZZ_BUDGET_H
#define NAPKIN_FUZZ_BUDGET_H

#include <stdio.h>
#include <stdlib.h>
#include <time.h>

static inline struct timespec fuzz_budget_start(void)
{
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return t;
}

static inline void fuzz_budget_check(struct timespec t0, const char *what)
{
    static double budget_ms = -1;
    if (budget_ms < 0) {
        const char *v = getenv("NAPKIN_FUZZ_INPUT_MS");
        budget_ms = v && *v ? atof(v) : 100;
    }
    if (budget_ms <= 0)
        return;
    struct timespec t;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    double ms = (double)(t.tv_sec - t0.tv_sec) * 1e3 + (double)(t.tv_nsec - t0.tv_nsec) * 1e-6;
    if (ms > budget_ms) {
        fprintf(stderr, "fuzz: a %s took %.0f ms of CPU, over the %.0f ms budget (NAPKIN_FUZZ_INPUT_MS): a slow input\n",
                what, ms, budget_ms);
        abort();
    }
}

#endif
