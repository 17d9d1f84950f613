/* Judging a chapter's answers under a policy; see grade_parts.h. */
#include "grade_parts.h"

#include "judge_units.h"

#include <math.h>
#include <string.h>

/* The part as the policy judges it: its own tolerance, or the policy's. */
static judge_part judged_as(const practice_part *p, const policy_row *r)
{
    judge_part j = p->judge;
    if (!isnan(r->tol) && j.rule != JUDGE_RANGE) {
        j.rule = JUDGE_RELATIVE;
        j.tol = r->tol;
        j.rule_note = NULL;
    }
    return j;
}

static double credit(const graded_part *g, const policy_row *r)
{
    switch (g->result.verdict) {
    case VERDICT_RIGHT: return 1;
    case VERDICT_CLOSE: return r->close;
    case VERDICT_SLIP: return r->slip;
    default: return 0;
    }
}

static void judge_one(const practice_part *p, const policy_row *r, json_t *v, graded_part *g)
{
    judge_part j = judged_as(p, r);
    if (json_is_number(v)) {
        g->given = json_number_value(v);
        g->result = judge_answer(&j, g->given);
    } else if (json_is_string(v)) {
        judge_reading in = judge_read_answer(json_string_value(v), j.unit);
        g->given = in.value;
        g->result = in.why ? (judge_result){VERDICT_MISSING, in.why} : judge_answer(&j, in.value);
    } else {
        g->given = NAN;
        g->result = judge_answer(&j, NAN);
        if (v && !json_is_null(v))
            g->result.hint = "not a number or a string: give the answer as a number";
    }
}

/* An answer right once the earlier part's error is carried: the earlier
 * answer's ratio to its own expected value (or the inverse) applied to
 * this part's, judged by this part's rule without its slips. */
static void carry_forward(const practice_set *s, graded_part *g, int i, const policy_row *r)
{
    const practice_part *from = practice_find(s, r->carry);
    if (!from || g[i].result.verdict == VERDICT_RIGHT || !isfinite(g[i].given))
        return;
    const graded_part *gf = &g[from - s->parts];
    double want = judge_expected(&from->judge);
    if (!isfinite(gf->given) || gf->given == 0 || want == 0 || gf->result.verdict == VERDICT_RIGHT)
        return;
    double ratio = r->carry_inverse ? want / gf->given : gf->given / want;
    judge_part j = judged_as(&s->parts[i], r);
    j.answer *= ratio;
    j.lo *= ratio, j.hi *= ratio;
    if (j.lo > j.hi) {
        double t = j.lo;
        j.lo = j.hi, j.hi = t;
    }
    if (j.rule == JUDGE_EXACT) { /* a count from a wrong count: to the hand tolerance */
        j.rule = JUDGE_RELATIVE;
        j.tol = JUDGE_HAND_TOL;
    }
    j.n_slips = 0;
    if (judge_answer(&j, g[i].given).verdict == VERDICT_RIGHT) {
        g[i].carried = 1;
        g[i].result.verdict = VERDICT_RIGHT;
        g[i].result.hint = "right with the earlier part's error carried forward";
    }
}

int grade_answers(graded_set *out, int chapter, uint64_t seed, json_t *answers, const grade_policy *policy)
{
    memset(out, 0, sizeof *out);
    if (practice_build(chapter, seed, &out->set) != 0)
        return -1;
    const practice_set *s = &out->set;
    policy_row rows[PRACTICE_MAX_PARTS];
    for (int i = 0; i < s->n_parts; i++) {
        rows[i] = policy_for(policy, s->parts[i].id);
        judge_one(&s->parts[i], &rows[i], json_object_get(answers, s->parts[i].id), &out->g[i]);
    }
    for (int i = 0; i < s->n_parts; i++) {
        if (rows[i].carry[0])
            carry_forward(s, out->g, i, &rows[i]);
        out->g[i].max = rows[i].weight;
        out->g[i].points = rows[i].weight * credit(&out->g[i], &rows[i]);
        out->score += out->g[i].points;
        out->max += out->g[i].max;
    }
    const char *k;
    json_t *v;
    json_object_foreach(answers, k, v) {
        if (!practice_find(s, k)) {
            if (out->n_unknown < PRACTICE_MAX_PARTS)
                out->unknown[out->n_unknown] = k;
            out->n_unknown++;
        }
    }
    return 0;
}

const char *graded_verdict(const graded_part *g)
{
    return g->carried ? "carried" : judge_verdict_name(g->result.verdict);
}
