/* The answer key of a variant (instructor-only); see grade_key.h. */
#include "grade_key.h"

#include <stdio.h>
#include <stdlib.h>

/* A part's expected value as the key prints it (to 10 figures), so the
 * printed key and the batch's agree digit for digit. */
static double key_value(const judge_part *j)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.10g", judge_expected(j));
    return strtod(buf, NULL);
}

void key_print(const practice_set *s)
{
    printf("chapter %d, seed %llu: the answer key\n", s->chapter, (unsigned long long)s->seed);
    for (int i = 0; i < s->n_inputs; i++) {
        /* a choice names its table row: "input ch01_ex1_gpu_a 2 (b200)" */
        printf("  input %-22s %g", s->inputs[i].name, s->inputs[i].value);
        printf(s->inputs[i].key ? " (%s)\n" : "\n", s->inputs[i].key);
    }
    for (int i = 0; i < s->n_parts; i++) {
        const judge_part *j = &s->parts[i].judge;
        char rule[64];
        if (j->rule == JUDGE_RANGE)
            snprintf(rule, sizeof rule, "from %g to %g", j->lo, j->hi);
        else
            judge_rule_text(j, rule, sizeof rule);
        printf("  %-9s %-44s %.10g [%s] (%s)\n", s->parts[i].id, s->parts[i].what, judge_expected(j), s->parts[i].unit,
               rule);
    }
}

json_t *key_json(const practice_set *s)
{
    json_t *parts = json_object();
    for (int i = 0; i < s->n_parts; i++)
        json_object_set_new(parts, s->parts[i].id, json_real(key_value(&s->parts[i].judge)));
    return json_pack("{s:i, s:I, s:o}", "chapter", s->chapter, "seed", (json_int_t)s->seed, "parts", parts);
}
