/* A variant's inputs and parts: building, finding, printing; see
 * practice_set.h. */
#include "practice_set.h"

#include "judge_units.h"
#include "notebook.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int practice_parse_seed(const char *s, uint64_t *out)
{
    if (!s || !*s) {
        *out = 0;
        return 0;
    }
    if (*s < '0' || *s > '9')
        return -1; /* no sign, no space: strtoull would take "-1" */
    char *end;
    errno = 0;
    unsigned long long v = strtoull(s, &end, 10);
    if (errno || *end || v > PRACTICE_MAX_SEED)
        return -1;
    *out = v;
    return 0;
}

const practice_part *practice_find(const practice_set *s, const char *id)
{
    for (int i = 0; id && i < s->n_parts; i++)
        if (strcmp(s->parts[i].id, id) == 0)
            return &s->parts[i];
    return NULL;
}

double practice_parse_answer(const practice_part *p, const char *text)
{
    return judge_read_answer(text, p->unit).value;
}

const practice_input *practice_input_named(const practice_set *s, const char *name)
{
    for (int i = 0; name && i < s->n_inputs; i++)
        if (strcmp(s->inputs[i].name, name) == 0)
            return &s->inputs[i];
    return NULL;
}

/* A whole number with thousands separators, as the prose prints them: 16,384. */
static void grouped(char *buf, size_t n, double v)
{
    char digits[32];
    snprintf(digits, sizeof digits, "%.0f", v < 0 ? -v : v);
    size_t len = strlen(digits), k = 0;
    if (v < 0 && k + 1 < n)
        buf[k++] = '-';
    for (size_t i = 0; i < len && k + 2 < n; i++) {
        if (i > 0 && (len - i) % 3 == 0)
            buf[k++] = ',';
        buf[k++] = digits[i];
    }
    buf[k] = '\0';
}

const char *practice_input_text(const practice_input *in, char *buf, size_t n)
{
    if (in->text)
        snprintf(buf, n, "%s", in->text);
    else if (strcmp(in->fmt, PRACTICE_GROUPED) == 0)
        grouped(buf, n, in->value);
    else
        snprintf(buf, n, in->fmt, in->value);
    return buf;
}

void practice_record_values(const practice_set *s)
{
    for (int i = 0; i < s->n_inputs; i++) {
        char buf[64];
        nb_value(s->inputs[i].name, "%s", practice_input_text(&s->inputs[i], buf, sizeof buf));
    }
}

void practice_add_input(practice_set *s, const char *name, double value, const char *fmt, double lo, double hi)
{
    if (s->n_inputs >= PRACTICE_MAX_INPUTS)
        return;
    practice_input *in = &s->inputs[s->n_inputs++];
    in->name = name;
    in->value = value;
    in->fmt = fmt;
    in->lo = lo;
    in->hi = hi;
    in->text = in->key = NULL;
}

void practice_add_choice(practice_set *s, const char *name, int index, int n, const char *text, const char *key)
{
    practice_add_input(s, name, index, "%g", 0, n - 1);
    if (s->n_inputs > 0 && s->inputs[s->n_inputs - 1].name == name) {
        s->inputs[s->n_inputs - 1].text = text;
        s->inputs[s->n_inputs - 1].key = key;
    }
}

const char *practice_input_key(const practice_set *s, const char *name)
{
    const practice_input *in = practice_input_named(s, name);
    return in ? in->key : NULL;
}

practice_part *practice_add_part(practice_set *s, const char *id, int exercise, const char *what, const char *unit,
                                 judge_rule rule, double answer, double tol)
{
    if (s->n_parts >= PRACTICE_MAX_PARTS)
        return NULL;
    practice_part *p = &s->parts[s->n_parts++];
    memset(p, 0, sizeof *p);
    p->id = id;
    p->exercise = exercise;
    p->what = what;
    p->unit = unit;
    p->judge.rule = rule;
    p->judge.answer = answer;
    p->judge.tol = tol;
    p->judge.unit = unit;
    p->judge.lo = answer - tol;
    p->judge.hi = answer + tol;
    return p;
}

void practice_add_slip(practice_part *p, double value, const char *hint)
{
    if (p && p->judge.n_slips < JUDGE_MAX_SLIPS) {
        p->judge.slips[p->judge.n_slips].value = value;
        p->judge.slips[p->judge.n_slips].hint = hint;
        p->judge.n_slips++;
    }
}
