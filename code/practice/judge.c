#include "judge.h"

#include "judge_units.h"

#include <math.h>
#include <stdio.h>

/* The slips any part may show, as factors of the right answer.  Tried after
 * the part's own slips and its unit's, before "close" (a GiB/GB mix-up is
 * within 10 %).  The last two, GiB and GB, only where the part's unit is
 * unknown: a part in MB or GB names its binary slip by unit, and a count or
 * a time 7 % off has no GiB in it. */
#define N_BINARY_SLIPS 2
static const struct {
    double factor;
    const char *hint;
} generic_slips[] = {
    {2.0, "off by a factor of 2: a multiply-add is 2 FLOP, K and V are two tensors, or the dense and the sparse peak"},
    {0.5, "off by a factor of 2: a multiply-add is 2 FLOP, K and V are two tensors, or the dense and the sparse peak"},
    {1000.0, "off by a factor of 1000: check the unit prefix (k, M, G, T)"},
    {0.001, "off by a factor of 1000: check the unit prefix (k, M, G, T)"},
    {1e6, "off by a factor of a million: check the unit prefix (M, G, T)"},
    {1e-6, "off by a factor of a million: check the unit prefix (M, G, T)"},
    {1e9, "off by a factor of a billion: check the unit prefix (G, T)"},
    {1e-9, "off by a factor of a billion: check the unit prefix (G, T)"},
    {8.0, "off by a factor of 8: bits and bytes"},
    {0.125, "off by a factor of 8: bits and bytes"},
    {100.0, "off by a factor of 100: a percentage and a fraction"},
    {0.01, "off by a factor of 100: a percentage and a fraction"},
    {1073741824.0 / 1e9, "off by 7%: GiB (2^30 bytes) and GB (10^9 bytes)"},
    {1e9 / 1073741824.0, "off by 7%: GiB (2^30 bytes) and GB (10^9 bytes)"},
};

/* A slip counts when the answer is as near to it as the part's tolerance
 * asks of a right answer, and never tighter than 1 % (a slip worked by hand
 * is rounded too). */
static double slip_tolerance(const judge_part *p)
{
    return p->rule == JUDGE_RELATIVE && p->tol > JUDGE_HAND_TOL ? p->tol : JUDGE_HAND_TOL;
}

static int near_rel(double given, double target, double tol)
{
    return isfinite(target) && fabs(given - target) <= tol * fabs(target);
}

double judge_expected(const judge_part *p)
{
    return p->rule == JUDGE_RANGE ? 0.5 * (p->lo + p->hi) : p->answer;
}

static int is_right(const judge_part *p, double given)
{
    switch (p->rule) {
    case JUDGE_EXACT:
        return given == round(p->answer);
    case JUDGE_RELATIVE:
        return near_rel(given, p->answer, p->tol) || given == p->answer;
    case JUDGE_RANGE:
        return given >= p->lo && given <= p->hi;
    }
    return 0;
}

/* How far from the accepted answers, relative to the answer's size. */
static int is_close(const judge_part *p, double given)
{
    if (p->rule == JUDGE_RANGE) {
        double width = fabs(judge_expected(p)) * JUDGE_CLOSE;
        return given >= p->lo - width && given <= p->hi + width;
    }
    return near_rel(given, p->answer, JUDGE_CLOSE);
}

judge_result judge_answer(const judge_part *p, double given)
{
    judge_result r = {VERDICT_MISSING, "no number: give your answer as a number"};
    if (!isfinite(given))
        return r;
    if (is_right(p, given)) {
        r.verdict = VERDICT_RIGHT;
        r.hint = "right";
        return r;
    }
    double tol = slip_tolerance(p);
    r.verdict = VERDICT_SLIP;
    for (int i = 0; i < p->n_slips && i < JUDGE_MAX_SLIPS; i++)
        if (p->slips[i].hint && near_rel(given, p->slips[i].value, tol)) {
            r.hint = p->slips[i].hint;
            return r;
        }
    double centre = judge_expected(p);
    const char *unit_hint = judge_unit_slip(p->unit, centre, given, tol);
    if (unit_hint) {
        r.hint = unit_hint;
        return r;
    }
    size_t n_generic = sizeof generic_slips / sizeof generic_slips[0] - (p->unit ? N_BINARY_SLIPS : 0);
    for (size_t i = 0; i < n_generic; i++)
        if (centre != 0 && near_rel(given, centre * generic_slips[i].factor, tol)) {
            r.hint = generic_slips[i].hint;
            return r;
        }
    if (is_close(p, given)) {
        r.verdict = VERDICT_CLOSE;
        r.hint = p->close_hint ? p->close_hint
                               : "within 10%: check your rounding and the constants (2 or 2.5 bytes, 1000 or 1024)";
        return r;
    }
    r.verdict = VERDICT_OFF;
    r.hint = "not within 10% and not a typical slip; rework the steps";
    return r;
}

const char *judge_verdict_name(judge_verdict v)
{
    switch (v) {
    case VERDICT_RIGHT: return "right";
    case VERDICT_CLOSE: return "close";
    case VERDICT_SLIP: return "slip";
    case VERDICT_OFF: return "off";
    case VERDICT_MISSING: return "missing";
    }
    return "?";
}

const char *judge_rule_text(const judge_part *p, char *buf, int n)
{
    if (p->rule_note) {
        snprintf(buf, (size_t)n, "%s", p->rule_note);
        return buf;
    }
    switch (p->rule) {
    case JUDGE_EXACT:
        snprintf(buf, (size_t)n, "exactly");
        break;
    case JUDGE_RELATIVE:
        snprintf(buf, (size_t)n, "to %g%%", 100 * p->tol);
        break;
    case JUDGE_RANGE:
        snprintf(buf, (size_t)n, "a reasoned estimate in the accepted range");
        break;
    }
    return buf;
}

double judge_parse_answer(const char *s)
{
    return judge_read_answer(s, NULL).value;
}

judge_result judge_typed_answer(const judge_part *p, const char *text)
{
    judge_reading in = judge_read_answer(text, p->unit);
    if (in.why) {
        judge_result r = {VERDICT_MISSING, in.why};
        return r;
    }
    return judge_answer(p, in.value);
}
