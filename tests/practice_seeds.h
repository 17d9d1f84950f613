/* Checks every chapter's variants share: for 200 seeds the inputs stay in
 * their stated ranges and are reproducible, every answer is finite and
 * positive, judged right, a small miss is close (or a named slip) and a
 * miss by 3.7 times is off; and every slip a part names, made exactly, gets
 * that slip's hint.  Each chapter's test (test_practice_chNN.c) adds the
 * checks of its own regime. */
#ifndef TESTS_PRACTICE_SEEDS_H
#define TESTS_PRACTICE_SEEDS_H

#include "practice.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

/* got within rel of want, naming the expression when not. */
#define expect_rel(got, want, rel)                                                                        \
    do {                                                                                                  \
        double g_ = (got), w_ = (want);                                                                   \
        cr_expect(fabs(g_ - w_) <= (rel) * fabs(w_), "%s: got %.10g, want %.10g", #got, g_, w_);          \
    } while (0)

static inline double seeds_answer_of(const practice_set *s, const char *id)
{
    const practice_part *p = practice_find(s, id);
    cr_assert(p != NULL, "no part %s", id);
    return judge_expected(&p->judge);
}
static inline double seeds_input_of(const practice_set *s, const char *name)
{
    const practice_input *in = practice_input_named(s, name);
    cr_assert(in != NULL, "no input %s", name);
    return in->value;
}

/* Just outside what a part accepts, inside "close": above its range, or
 * 5 % off (halfway to 10 % for a wider tolerance). */
static inline double seeds_small_miss(const judge_part *j)
{
    if (j->rule == JUDGE_RANGE)
        return j->hi * 1.03;
    /* halfway from the tolerance to "close" (10 %), at least 2 % */
    double tol = j->rule == JUDGE_RELATIVE ? j->tol : 0;
    double rel = tol + 0.5 * (JUDGE_CLOSE - tol);
    rel = tol <= JUDGE_HAND_TOL ? 0.05 : rel;
    double miss = j->answer * (1 + rel);
    /* an exact count: the next whole number up is a miss too */
    return j->rule == JUDGE_EXACT && round(miss) == round(j->answer) ? j->answer + 1 : miss;
}

/* One variant's generic checks. */
static inline void seeds_check_set(const practice_set *s, const practice_set *again)
{
    unsigned long long seed = (unsigned long long)s->seed;
    cr_expect(s->n_parts < PRACTICE_MAX_PARTS && s->n_inputs < PRACTICE_MAX_INPUTS,
              "chapter %d seed %llu: the set is full (%d parts, %d inputs)", s->chapter, seed, s->n_parts, s->n_inputs);
    for (int i = 0; i < s->n_inputs; i++) {
        const practice_input *in = &s->inputs[i];
        cr_expect(in->value >= in->lo && in->value <= in->hi, "seed %llu: %s = %g outside [%g, %g]", seed, in->name,
                  in->value, in->lo, in->hi);
        cr_expect_eq(in->value, again->inputs[i].value, "seed %llu: %s not reproducible", seed, in->name);
    }
    for (int i = 0; i < s->n_parts; i++) {
        const judge_part *j = &s->parts[i].judge;
        const char *id = s->parts[i].id;
        double a = judge_expected(j);
        cr_expect(isfinite(a) && a >= 0, "seed %llu %s: answer %g", seed, id, a);
        cr_expect_eq(judge_answer(j, a).verdict, VERDICT_RIGHT, "seed %llu %s: its own answer", seed, id);
        if (a == 0) {
            /* a count of none (no batch fits): only 0 is right */
            cr_expect(j->rule == JUDGE_EXACT, "seed %llu %s: an answer of 0 that is not a count", seed, id);
            cr_expect_neq(judge_answer(j, 1).verdict, VERDICT_RIGHT, "seed %llu %s: 1 judged right", seed, id);
            continue;
        }
        judge_verdict near = judge_answer(j, seeds_small_miss(j)).verdict;
        /* a count under ten: the next number up is more than 10 % away; a
         * range near zero (a share of batches that rarely fill): "close" is
         * a tenth of almost nothing */
        if (!(j->rule == JUDGE_EXACT && a < 10) && !(j->rule == JUDGE_RANGE && a < 10 * j->tol))
            cr_expect(near == VERDICT_CLOSE || near == VERDICT_SLIP, "seed %llu %s: a small miss judged %s", seed, id,
                      judge_verdict_name(near));
        else
            cr_expect(near != VERDICT_RIGHT, "seed %llu %s: a miss judged right", seed, id);
        if (j->rule == JUDGE_RANGE && a < 10 * j->tol) {
            /* near zero, factors mean nothing: a miss by three half-widths is one */
            cr_expect_neq(judge_answer(j, a + 3 * j->tol).verdict, VERDICT_RIGHT, "seed %llu %s", seed, id);
            continue;
        }
        judge_verdict far = judge_answer(j, a * 3.7).verdict;
        /* off, unless 3.7 times the answer happens to be one of the part's own slips */
        int own = 0;
        for (int k = 0; k < j->n_slips; k++) {
            double v = j->slips[k].value, t = j->rule == JUDGE_RELATIVE && j->tol > 0.01 ? j->tol : 0.01;
            own |= fabs(a * 3.7 - v) <= t * fabs(v);
        }
        cr_expect(far == VERDICT_OFF || (own && far == VERDICT_SLIP), "seed %llu %s: x3.7 judged %s", seed, id,
                  judge_verdict_name(far));
    }
}

/* A typical slip as a chapter's test states it: the part, the answer a
 * candidate who made it gives (worked by hand), and a word its hint says. */
typedef struct {
    const char *id;
    double given;
    const char *word;
} seeds_slip;

/* Each of the n slips is judged a slip, with a hint that says its word. */
static inline void seeds_expect_slips(const practice_set *s, const seeds_slip *slips, size_t n)
{
    for (size_t i = 0; i < n; i++) {
        const practice_part *p = practice_find(s, slips[i].id);
        cr_assert(p != NULL, "no part %s", slips[i].id);
        judge_result r = judge_answer(&p->judge, slips[i].given);
        cr_expect_eq(r.verdict, VERDICT_SLIP, "%s: %g judged %s", slips[i].id, slips[i].given,
                     judge_verdict_name(r.verdict));
        cr_expect(strstr(r.hint, slips[i].word) != NULL, "%s: hint '%s'", slips[i].id, r.hint);
    }
}

/* Each slip a part names, made exactly, gets that slip's hint, unless it
 * lands within the part's tolerance of the answer (then it is right) or of
 * a slip named before it.  Returns the slips checked. */
static inline int seeds_check_slips(const practice_set *s)
{
    int named = 0;
    for (int i = 0; i < s->n_parts; i++) {
        const judge_part *j = &s->parts[i].judge;
        for (int k = 0; k < j->n_slips; k++) {
            double v = j->slips[k].value;
            judge_result r = judge_answer(j, v);
            if (r.verdict == VERDICT_RIGHT)
                continue;
            int earlier = 0;
            for (int e = 0; e < k; e++)
                earlier |= fabs(v - j->slips[e].value) <= 0.01 * fabs(j->slips[e].value);
            if (earlier)
                continue;
            cr_expect_eq(r.verdict, VERDICT_SLIP, "chapter %d seed %llu %s slip %d (%g): %s", s->chapter,
                         (unsigned long long)s->seed, s->parts[i].id, k, v, judge_verdict_name(r.verdict));
            cr_expect_str_eq(r.hint, j->slips[k].hint, "chapter %d seed %llu %s", s->chapter,
                             (unsigned long long)s->seed, s->parts[i].id);
            named++;
        }
    }
    return named;
}

#endif
