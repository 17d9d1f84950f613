/* Moodle XML writer (moodle.h). */
#include "moodle.h"

#include "course_key.h"
#include "text_formats.h"

#include <math.h>

void moodle_begin(FILE *f)
{
    fputs("<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<quiz>\n", f);
}

void moodle_end(FILE *f)
{
    fputs("</quiz>\n", f);
}

/* The variant's numbers that exercise k shows, as an HTML list (escaped
 * once for HTML, then once more as XML text). */
static void inputs_html(FILE *f, const practice_set *s, int exercise)
{
    char buf[128];
    text_xml(f, "<ul>");
    for (int i = 0; i < s->n_inputs; i++) {
        int e = course_input_exercise(s->inputs[i].name);
        if (e != 0 && e != exercise)
            continue;
        text_xml(f, "<li>");
        text_xml(f, course_input_label(s->inputs[i].name));
        text_xml(f, ": ");
        text_xml(f, practice_input_text(&s->inputs[i], buf, sizeof buf));
        text_xml(f, "</li>");
    }
    text_xml(f, "</ul>");
}

static void answer(FILE *f, int fraction, double value, double tolerance, const char *feedback)
{
    fprintf(f, "    <answer fraction=\"%d\" format=\"moodle_auto_format\">\n      <text>%.10g</text>\n", fraction, value);
    fputs("      <feedback format=\"html\">\n        <text>", f);
    text_xml(f, feedback);
    fprintf(f, "</text>\n      </feedback>\n      <tolerance>%.10g</tolerance>\n    </answer>\n", tolerance);
}

void moodle_variant(FILE *f, const practice_set *s)
{
    unsigned long long seed = (unsigned long long)s->seed;
    fprintf(f, "  <question type=\"category\">\n    <category>\n      <text>$course$/top/napkin/chapter-%02d/seed-%llu</text>\n"
               "    </category>\n  </question>\n",
            s->chapter, seed);
    char rule[128];
    for (int i = 0; i < s->n_parts; i++) {
        const practice_part *p = &s->parts[i];
        const judge_part *j = &p->judge;
        double lo, hi;
        course_accepted(j, &lo, &hi);
        fputs("  <question type=\"numerical\">\n    <name>\n      <text>", f);
        text_xml(f, p->id);
        fprintf(f, " seed %llu</text>\n    </name>\n    <questiontext format=\"html\">\n      <text>", seed);
        char head[160];
        snprintf(head, sizeof head, "<p>Chapter %d, exercise %d, variant %llu (the book at ?seed=%llu). Its numbers:</p>",
                 s->chapter, p->exercise, seed, seed);
        text_xml(f, head);
        inputs_html(f, s, p->exercise);
        text_xml(f, "<p>");
        text_xml(f, p->id);
        text_xml(f, ": ");
        text_xml(f, p->what);
        text_xml(f, ", in ");
        text_xml(f, p->unit);
        text_xml(f, " (");
        text_xml(f, judge_rule_text(j, rule, sizeof rule));
        text_xml(f, ").</p>");
        fputs("</text>\n    </questiontext>\n    <generalfeedback format=\"html\">\n      <text></text>\n"
              "    </generalfeedback>\n    <defaultgrade>1</defaultgrade>\n    <penalty>0.3333333</penalty>\n"
              "    <hidden>0</hidden>\n    <idnumber></idnumber>\n",
              f);
        answer(f, 100, 0.5 * (lo + hi), 0.5 * (hi - lo), "right");
        for (int k = 0; k < j->n_slips; k++) {
            double v = j->slips[k].value;
            /* a slip inside the accepted interval is right, not a slip */
            if (!isfinite(v) || (v >= lo && v <= hi))
                continue;
            /* matched as the judge matches the answer: exactly a count, else to the part's tolerance */
            double tol = j->rule == JUDGE_EXACT ? 0 : fabs(v) * (j->rule == JUDGE_RELATIVE ? j->tol : JUDGE_HAND_TOL);
            answer(f, 0, v, tol, j->slips[k].hint);
        }
        fputs("    <unitgradingtype>0</unitgradingtype>\n    <unitpenalty>0.1000000</unitpenalty>\n"
              "    <showunits>0</showunits>\n    <unitsleft>0</unitsleft>\n"
              "    <units>\n      <unit>\n        <multiplier>1</multiplier>\n        <unit_name>",
              f);
        text_xml(f, p->unit);
        fputs("</unit_name>\n      </unit>\n    </units>\n  </question>\n", f);
    }
}
