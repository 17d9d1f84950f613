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
 * `make exercise N=12 ONLY=3` runs exercise 3 alone.
 *
 * Parts with variants (practice.h) are checked with ex_check_part, against
 * the variant of $NB_SEED (`make exercise N=12 SEED=4711`; 0, the printed
 * numbers, when unset; ex_variant), judged as the grade program and the page judge
 * them (judge.h): the message gives the verdict and the hint, never the
 * expected value.  In the student kit (NB_STUDENT_KIT defined, `make
 * student-kit`) every check speaks that way: your answer, close or off,
 * and the hint. */
#ifndef NAPKIN_EXERCISE_CHECK_H
#define NAPKIN_EXERCISE_CHECK_H

#include "judge.h"
#include "practice.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>

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

/* The variant of chapter ch the checks use: $NB_SEED (make exercise
 * SEED=4711), 0 (the printed numbers) when unset. */
static inline practice_set ex_variant(int ch)
{
    practice_set s;
    uint64_t seed;
    const char *env = getenv("NB_SEED");
    cr_assert_eq(practice_parse_seed(env, &seed), 0, "SEED=%s: give a whole number from 0 to %llu", env,
                 PRACTICE_MAX_SEED);
    cr_assert_eq(practice_build(ch, seed, &s), 0, "chapter %d has no variants", ch);
    return s;
}

/* One input of the variant, by value name. */
static inline double ex_input(const practice_set *s, const char *name)
{
    const practice_input *in = practice_input_named(s, name);
    cr_assert(in != NULL, "the variant has no input %s", name);
    return in->value;
}

/* got judged against part id of the variant: right, or the verdict and hint. */
#define ex_check_part(set_, id_, got_)                                                                             \
    do {                                                                                                    \
        const practice_part *p_ = practice_find((set_), (id_));                                               \
        cr_assert(p_ != NULL, "the variant has no part %s", (id_));                                          \
        double g_ = (got_);                                                                                  \
        judge_result r_ = judge_answer(&p_->judge, g_);                                                     \
        char rule_[64];                                                                                     \
        cr_expect(r_.verdict == VERDICT_RIGHT, "%s %s (seed %llu): your answer %.6g %s, judged %s: %s: %s", \
                  p_->id, p_->what, (unsigned long long)(set_)->seed, g_, p_->unit,                          \
                  judge_rule_text(&p_->judge, rule_, sizeof rule_), judge_verdict_name(r_.verdict), r_.hint); \
    } while (0)

/* Every answer of a kit (kit_answers.h) judged against its variant part. */
#define ex_check_kit_answers(set_, answers_)                                                               \
    do {                                                                                                    \
        kit_answers a_ = (answers_);                                                                        \
        cr_assert(a_.n > 0, "no answers to check");                                                         \
        for (int i_ = 0; i_ < a_.n; i_++)                                                                   \
            ex_check_part((set_), a_.id[i_], a_.value[i_]);                                                 \
    } while (0)

/* Test(suite_, name_): the kit's answers (kit_answers_NN.h) to exercise n_
 * of chapter ch_'s variant of $NB_SEED, judged as the grade and the page
 * judge them. */
#define EX_VARIANT_TEST(suite_, name_, ch_, answers_, n_)                                                   \
    Test(suite_, name_)                                                                                     \
    {                                                                                                       \
        practice_set s_ = ex_variant(ch_);                                                                  \
        ex_check_kit_answers(&s_, answers_(&s_, n_));                                                       \
    }

/* Macros, so a failure names the line of the check in the test file. */

#ifdef NB_STUDENT_KIT
/* The student kit's checks: the verdict and the hint of the judge, not the
 * expected value. */
static inline judge_result ex_judged_(judge_rule rule, double got, double expected, double tol)
{
    judge_part p = {0};
    p.rule = rule;
    p.answer = expected;
    p.tol = tol;
    p.lo = expected - tol;
    p.hi = expected + tol;
    return judge_answer(&p, got);
}
#define ex_student_check_(exercise, rule, got, expected, tol)                                              \
    do {                                                                                                    \
        double g_ = (got);                                                                                  \
        judge_result r_ = ex_judged_((rule), g_, (expected), (tol));                                        \
        cr_expect(r_.verdict == VERDICT_RIGHT, "%s: your answer %.10g: %s: %s", (exercise), g_,             \
                  judge_verdict_name(r_.verdict), r_.hint);                                                 \
    } while (0)
#define ex_check_near(exercise, got, expected, tol) ex_student_check_(exercise, JUDGE_RANGE, got, expected, tol)
#define ex_check_rel(exercise, got, expected, rel) ex_student_check_(exercise, JUDGE_RELATIVE, got, expected, rel)
#define ex_check_int(exercise, got, expected) ex_student_check_(exercise, JUDGE_EXACT, (double)(got), expected, 0)
#else

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

#endif

/* An answer that must be NAN: the question has no answer (bad input). */
#define ex_check_nan(exercise, got, why)                                                                    \
    do {                                                                                                    \
        double g_ = (got);                                                                                  \
        cr_expect(isnan(g_), "%s: your answer %.10g, expected NAN (%s)", (exercise), g_, (why));            \
    } while (0)

#endif
