/* The answer key as Markdown (course_key.h). */
#include "course_key.h"

#include "text_formats.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void course_accepted(const judge_part *j, double *lo, double *hi)
{
    switch (j->rule) {
    case JUDGE_EXACT:
        *lo = *hi = round(j->answer);
        break;
    case JUDGE_RELATIVE:
        *lo = j->answer - j->tol * fabs(j->answer);
        *hi = j->answer + j->tol * fabs(j->answer);
        break;
    default:
        *lo = j->lo;
        *hi = j->hi;
    }
}

int course_input_exercise(const char *name)
{
    const char *p = strstr(name, "_ex");
    if (!p || p[3] < '0' || p[3] > '9')
        return 0;
    return atoi(p + 3);
}

const char *course_input_label(const char *name)
{
    const char *p = strstr(name, "_ex");
    if (!p)
        return name;
    p += 3;
    while (*p >= '0' && *p <= '9')
        p++;
    return *p == '_' ? p + 1 : name;
}

void course_key_write(FILE *f, const practice_set *s, const char *id, const char *name)
{
    char buf[128];
    fprintf(f, "# Answer key: chapter %d, seed %llu\n\n", s->chapter, (unsigned long long)s->seed);
    if (id) {
        fputs("For ", f);
        text_md(f, name ? name : "");
        fputs(" (", f);
        text_md(f, id);
        fputs(").  ", f);
    }
    fputs("Instructor's copy: do not hand it out.\n\n## The variant's numbers\n\n| value | as printed |\n|---|---|\n", f);
    for (int i = 0; i < s->n_inputs; i++) {
        fputs("| ", f);
        text_md(f, s->inputs[i].name);
        fputs(" | ", f);
        text_md(f, practice_input_text(&s->inputs[i], buf, sizeof buf));
        fputs(" |\n", f);
    }
    fputs("\n## The answers\n\n| part | asked | answer | unit | judged | accepted |\n|---|---|---|---|---|---|\n", f);
    for (int i = 0; i < s->n_parts; i++) {
        const practice_part *p = &s->parts[i];
        double lo, hi;
        course_accepted(&p->judge, &lo, &hi);
        fputs("| ", f);
        text_md(f, p->id);
        fputs(" | ", f);
        text_md(f, p->what);
        fprintf(f, " | %.6g | ", judge_expected(&p->judge));
        text_md(f, p->unit);
        fputs(" | ", f);
        text_md(f, judge_rule_text(&p->judge, buf, sizeof buf));
        fprintf(f, " | %.6g to %.6g |\n", lo, hi);
    }
    fputs("\n## The slips the judge names\n\nA wrong answer near one of these values made that slip.\n\n", f);
    int any = 0;
    for (int i = 0; i < s->n_parts; i++) {
        const practice_part *p = &s->parts[i];
        for (int k = 0; k < p->judge.n_slips; k++) {
            any = 1;
            fputs("- ", f);
            text_md(f, p->id);
            fprintf(f, ": %.6g ", p->judge.slips[k].value);
            text_md(f, p->unit);
            fputs(", ", f);
            text_md(f, p->judge.slips[k].hint);
            fputs("\n", f);
        }
    }
    if (!any)
        fputs("(none beyond the generic factors: x2, x1000, bits for bytes)\n", f);
}
