/* Checks for the exercise kits that teach: each names its exercise and part
 * ("12.3(b)"), the value your code gave, the expected value and the
 * tolerance, so a failing kit says which answer is off and by how much:
 *
 *   12.1(a): your answer 80, expected 160 (exactly)
 *   12.3(b): your answer 36.1, expected 34.03 (within 1e-12): off by +2.069
 *   12.5(a): your answer nan, expected 0.95 (within 1e-12): NAN: not computed yet, ...
 *
 * Every check is a Criterion expectation (cr_expect): one wrong answer does
 * not hide the others of the same exercise.  NAN never passes a numeric
 * check, so an untouched kit that returns NAN fails.
 *
 * Exercise tests are named eN_title (Test(ex12, e3_thirty_four)) so that
 * `make exercise N=12 ONLY=3` runs exercise 3 alone. */
#ifndef NAPKIN_EXERCISE_CHECK_H
#define NAPKIN_EXERCISE_CHECK_H

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

/* How far off, in words: "off by +2.069", or why there is no number. */
static inline const char *ex_off_(char *buf, size_t n, double got, double expected, int percent)
{
    if (isnan(got))
        snprintf(buf, n, "NAN: not computed yet, or a case your code treats as invalid");
    else if (percent && expected != 0)
        snprintf(buf, n, "off by %+.4g (%+.3g%%)", got - expected, 100 * (got - expected) / expected);
    else
        snprintf(buf, n, "off by %+.4g", got - expected);
    return buf;
}

/* Macros, so a failure names the line of the check in the test file. */

/* |got - expected| <= tol. */
#define ex_check_near(exercise, got, expected, tol)                                                         \
    do {                                                                                                    \
        double g_ = (got), e_ = (expected), t_ = (tol);                                                     \
        char b_[96];                                                                                        \
        cr_expect(fabs(g_ - e_) <= t_, "%s: your answer %.10g, expected %.10g (within %g): %s", (exercise), \
                  g_, e_, t_, ex_off_(b_, sizeof b_, g_, e_, 0));                                           \
    } while (0)

/* |got - expected| <= rel * |expected|: for answers of any size (bytes, FLOPs). */
#define ex_check_rel(exercise, got, expected, rel)                                                          \
    do {                                                                                                    \
        double g_ = (got), e_ = (expected), r_ = (rel);                                                     \
        char b_[96];                                                                                        \
        cr_expect(fabs(g_ - e_) <= r_ * fabs(e_), "%s: your answer %.10g, expected %.10g (within %g%%): %s", \
                  (exercise), g_, e_, 100 * r_, ex_off_(b_, sizeof b_, g_, e_, 1));                         \
    } while (0)

/* An exact integer answer (a count, a batch size, -1 for "none"). */
#define ex_check_int(exercise, got, expected)                                                               \
    do {                                                                                                    \
        long long g_ = (got), e_ = (expected);                                                              \
        cr_expect(g_ == e_, "%s: your answer %lld, expected %lld (exactly)%s", (exercise), g_, e_,          \
                  e_ == -1 ? ": -1 means there is no answer (does not fit, or bad input)" : "");            \
    } while (0)

/* An answer that must be NAN: the question has no answer (bad input). */
#define ex_check_nan(exercise, got, why)                                                                    \
    do {                                                                                                    \
        double g_ = (got);                                                                                  \
        cr_expect(isnan(g_), "%s: your answer %.10g, expected NAN (%s)", (exercise), g_, (why));            \
    } while (0)

#endif
