/* Checks every chapter's exercise variants share (practice.h), for the
 * tests/test_practice_chNN.c suites: over seeds 1 to 200 each input stays
 * in its stated range and replays from its seed, each answer is finite and
 * judged right, 5 % off is close or a slip and 3.7 times it is off (or a
 * slip the part names); over
 * seeds 0 to 200 each slip a part names, made exactly, gets its own hint. */
#ifndef TESTS_PRACTICE_SEEDS_H
#define TESTS_PRACTICE_SEEDS_H

#include "practice.h"

#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#define PRACTICE_SEEDS 200

static inline double practice_answer_of(const practice_set *s, const char *id)
{
    const practice_part *p = practice_find(s, id);
    cr_assert(p != NULL, "no part %s", id);
    return judge_expected(&p->judge);
}

static inline double practice_input_of(const practice_set *s, const char *name)
{
    const practice_input *in = practice_input_named(s, name);
    cr_assert(in != NULL, "no input %s", name);
    return in->value;
}

#define practice_expect_rel(got, want, rel)                                                               \
    do {                                                                                                  \
        double g_ = (got), w_ = (want);                                                                   \
        cr_expect(fabs(g_ - w_) <= (rel) * fabs(w_), "%s: got %.10g, want %.10g", #got, g_, w_);          \
    } while (0)

/* The generic checks of one variant; not_positive names the parts whose
 * answer may be 0 or negative (a count of none, whose right answer alone is
 * checked then; a log-likelihood ratio). */
static inline void practice_check_variant(const practice_set *s, const char *const *not_positive)
{
    unsigned long long seed = (unsigned long long)s->seed;
    practice_set again;
    cr_assert_eq(practice_build(s->chapter, s->seed, &again), 0);
    for (int i = 0; i < s->n_inputs; i++) {
        const practice_input *in = &s->inputs[i];
        cr_expect(in->value >= in->lo && in->value <= in->hi, "seed %llu: %s = %g outside [%g, %g]", seed, in->name,
                  in->value, in->lo, in->hi);
        cr_expect_eq(in->value, again.inputs[i].value, "seed %llu: %s does not replay", seed, in->name);
    }
    for (int i = 0; i < s->n_parts; i++) {
        const practice_part *p = &s->parts[i];
        double a = judge_expected(&p->judge);
        int any_sign = 0;
        for (int k = 0; not_positive && not_positive[k]; k++)
            any_sign |= strcmp(not_positive[k], p->id) == 0;
        cr_expect(isfinite(a) && (a > 0 || any_sign), "seed %llu %s: answer %g", seed, p->id, a);
        cr_expect_eq(judge_answer(&p->judge, a).verdict, VERDICT_RIGHT, "seed %llu %s", seed, p->id);
        if (a == 0)
            continue;
        judge_verdict five = judge_answer(&p->judge, a * 1.05).verdict;
        cr_expect(five == VERDICT_CLOSE || five == VERDICT_SLIP, "seed %llu %s: 5%% off judged %s", seed, p->id,
                  judge_verdict_name(five));
        /* 3.7 is no generic slip's factor: off, unless a part's own slip
         * happens to land there (the hint is then that slip's) */
        judge_result far = judge_answer(&p->judge, a * 3.7);
        int own = 0;
        for (int k = 0; k < p->judge.n_slips; k++)
            own |= far.hint == p->judge.slips[k].hint;
        cr_expect(far.verdict == VERDICT_OFF || (far.verdict == VERDICT_SLIP && own), "seed %llu %s: x3.7 judged %s",
                  seed, p->id, judge_verdict_name(far.verdict));
    }
}

/* Each slip a part names, made exactly, gets that slip's hint, unless it
 * lands within the part's tolerance of the answer (then it is right) or of
 * a slip named before it.  Returns how many slips were checked. */
static inline int practice_check_slips(const practice_set *s)
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
            cr_expect_eq(r.verdict, VERDICT_SLIP, "seed %llu %s slip %d (%g): %s", (unsigned long long)s->seed,
                         s->parts[i].id, k, v, judge_verdict_name(r.verdict));
            cr_expect_str_eq(r.hint, j->slips[k].hint, "seed %llu %s", (unsigned long long)s->seed, s->parts[i].id);
            named++;
        }
    }
    return named;
}

#endif
