#include "judge.h"

#include <math.h>
#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The slips any part may show, as factors of the right answer.  Tried after
 * the part's own slips, before "close" (a GiB/GB mix-up is within 10 %). */
static const struct {
    double factor;
    const char *hint;
} generic_slips[] = {
    {2.0, "off by a factor of 2: a multiply-add is 2 FLOP, K and V are two tensors, or the dense and the sparse peak"},
    {0.5, "off by a factor of 2: a multiply-add is 2 FLOP, K and V are two tensors, or the dense and the sparse peak"},
    {1000.0, "off by a factor of 1000: check the unit prefix (k, M, G, T)"},
    {0.001, "off by a factor of 1000: check the unit prefix (k, M, G, T)"},
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
    for (size_t i = 0; i < sizeof generic_slips / sizeof generic_slips[0]; i++)
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
    if (!s)
        return NAN;
    while (isspace((unsigned char)*s))
        s++;
    /* copy without the thousands separators, checking that each comma is
     * followed by exactly three digits and preceded by 1-3 (first) or 3 */
    char buf[64];
    size_t k = 0;
    int run = 0, commas = 0;
    const char *p = s;
    for (; *p && k + 1 < sizeof buf; p++) {
        if (*p == ',') {
            if (run == 0 || (commas > 0 && run != 3) || run > 3)
                return NAN;
            commas++, run = 0;
            continue;
        }
        if (isdigit((unsigned char)*p))
            run++;
        else if (commas > 0) {
            if (run != 3)
                return NAN;
            commas = -1; /* separators end with the integer part */
        }
        buf[k++] = *p;
    }
    if (*p)
        return NAN; /* too long to be a number */
    if (commas > 0 && run != 3)
        return NAN;
    buf[k] = '\0';
    char *end;
    double v = strtod(buf, &end);
    if (end == buf || !isfinite(v))
        return NAN;
    while (isspace((unsigned char)*end))
        end++;
    if (*end == '%')
        end++;
    while (isspace((unsigned char)*end))
        end++;
    return *end ? NAN : v;
}
