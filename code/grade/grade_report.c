/* A graded chapter as terminal lines, JUnit XML, JSON and Gradescope tests;
 * see grade_report.h. */
#include "grade_report.h"

#include "text_escape.h"
#include "text_formats.h"

#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

json_t *json_text(const char *s)
{
    if (!s)
        return json_null();
    char *v = text_utf8_valid(s);
    json_t *j = v ? json_string(v) : NULL;
    free(v);
    return j ? j : json_null();
}

json_t *json_points(double v)
{
    return v == floor(v) && fabs(v) < 1e15 ? json_integer((json_int_t)v) : json_real(v);
}

/* The parts of exercise ex start at i; their count. */
static int exercise_span(const practice_set *s, int i)
{
    int n = 0;
    while (i + n < s->n_parts && s->parts[i + n].exercise == s->parts[i].exercise)
        n++;
    return n;
}

void report_terminal(FILE *f, const graded_set *g, const report_who *who)
{
    const practice_set *s = &g->set;
    fprintf(f, "chapter %d, seed %llu", s->chapter, (unsigned long long)s->seed);
    if (who && who->student) {
        fputs(", ", f);
        text_escape_put(who->student, f);
    }
    fputc('\n', f);
    if (who && who->note) {
        fputs("  note: ", f);
        text_escape_put(who->note, f);
        fputc('\n', f);
    }
    for (int i = 0; i < s->n_parts;) {
        int n = exercise_span(s, i);
        double got = 0, max = 0;
        for (int j = i; j < i + n; j++) {
            const graded_part *p = &g->g[j];
            fprintf(f, "  %-9s %g/%g  %-7s %s\n", s->parts[j].id, p->points, p->max, graded_verdict(p),
                    p->result.verdict == VERDICT_RIGHT && !p->carried ? "" : p->result.hint);
            got += p->points, max += p->max;
        }
        fprintf(f, "  exercise %d.%d: %g/%g\n", s->chapter, s->parts[i].exercise, got, max);
        i += n;
    }
    for (int k = 0; k < g->n_unknown && k < PRACTICE_MAX_PARTS; k++) {
        fputs("  unknown part \"", f);
        text_escape_put(g->unknown[k], f);
        fputs("\": not graded (no such part in this chapter)\n", f);
    }
    fprintf(f, "score: %g/%g\n", g->score, g->max);
}

int report_junit(const char *path, const graded_set *g, const report_who *who)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "grade: --junit ");
        text_escape_put(path, stderr);
        fprintf(stderr, ": %s\n", strerror(errno));
        return -1;
    }
    const practice_set *s = &g->set;
    int failed = 0;
    for (int i = 0; i < s->n_parts; i++)
        failed += g->g[i].result.verdict != VERDICT_RIGHT;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"chapter %d seed %llu", s->chapter, (unsigned long long)s->seed);
    if (who && who->student && *who->student) {
        fputs(" ", f);
        text_xml(f, who->student);
    }
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n", s->n_parts, failed);
    for (int i = 0; i < s->n_parts;) {
        int ex = s->parts[i].exercise, n = exercise_span(s, i), bad = 0;
        for (int j = i; j < i + n; j++)
            bad += g->g[j].result.verdict != VERDICT_RIGHT;
        fprintf(f, "  <testsuite name=\"%d.%d\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\">\n", s->chapter,
                ex, n, bad);
        for (int j = i; j < i + n; j++) {
            fprintf(f, "    <testcase classname=\"chapter%d.exercise%d\" name=\"", s->chapter, ex);
            text_xml(f, s->parts[j].id);
            fputs(" ", f);
            text_xml(f, s->parts[j].what);
            fputs("\"", f);
            if (g->g[j].result.verdict == VERDICT_RIGHT)
                fputs("/>\n", f);
            else {
                fprintf(f, ">\n      <failure type=\"%s\" message=\"", graded_verdict(&g->g[j]));
                text_xml(f, g->g[j].result.hint);
                fputs("\"/>\n    </testcase>\n", f);
            }
        }
        fputs("  </testsuite>\n", f);
        i += n;
    }
    fputs("</testsuites>\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

json_t *report_json(const graded_set *g, const report_who *who)
{
    const practice_set *s = &g->set;
    json_t *root = json_object(), *exercises = json_array();
    for (int i = 0; i < s->n_parts;) {
        int n = exercise_span(s, i);
        double got = 0, max = 0;
        json_t *parts = json_array();
        for (int j = i; j < i + n; j++) {
            const graded_part *p = &g->g[j];
            got += p->points, max += p->max;
            json_array_append_new(parts, json_pack("{s:s, s:s, s:o, s:s, s:s, s:o, s:o}", "id", s->parts[j].id, "what",
                                                   s->parts[j].what, "given",
                                                   isfinite(p->given) ? json_real(p->given) : json_null(), "verdict",
                                                   graded_verdict(p), "hint", p->result.hint, "points",
                                                   json_points(p->points), "max", json_points(p->max)));
        }
        char name[16];
        snprintf(name, sizeof name, "%d.%d", s->chapter, s->parts[i].exercise);
        json_array_append_new(exercises, json_pack("{s:s, s:o, s:o, s:o}", "exercise", name, "score",
                                                   json_points(got), "max", json_points(max), "parts", parts));
        i += n;
    }
    json_t *unknown = json_array();
    for (int k = 0; k < g->n_unknown && k < PRACTICE_MAX_PARTS; k++)
        json_array_append_new(unknown, json_text(g->unknown[k]));
    json_object_set_new(root, "chapter", json_integer(s->chapter));
    json_object_set_new(root, "seed", json_integer((json_int_t)s->seed));
    json_object_set_new(root, "student", json_text(who ? who->student : NULL));
    if (who && who->id)
        json_object_set_new(root, "id", json_text(who->id));
    if (who && who->note)
        json_object_set_new(root, "note", json_text(who->note));
    json_object_set_new(root, "score", json_points(g->score));
    json_object_set_new(root, "max", json_points(g->max));
    json_object_set_new(root, "exercises", exercises);
    json_object_set_new(root, "unknown_parts", unknown);
    return root;
}

int report_json_file(const char *path, const graded_set *g, const report_who *who)
{
    json_t *root = report_json(g, who);
    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (rc != 0) {
        fputs("grade: --json ", stderr);
        text_escape_put(path, stderr);
        fputs(": cannot write\n", stderr);
    }
    return rc;
}

void report_gradescope_tests(json_t *tests, const graded_set *g)
{
    const practice_set *s = &g->set;
    for (int i = 0; i < s->n_parts; i++) {
        const graded_part *p = &g->g[i];
        char name[160], out[320];
        snprintf(name, sizeof name, "%s %s", s->parts[i].id, s->parts[i].what);
        snprintf(out, sizeof out, "%s: %s", graded_verdict(p), p->result.hint);
        json_array_append_new(tests, json_pack("{s:s, s:s, s:o, s:o, s:s, s:s}", "name", name, "number",
                                               s->parts[i].id, "score", json_points(p->points), "max_score",
                                               json_points(p->max), "output", out, "status",
                                               p->result.verdict == VERDICT_RIGHT ? "passed" : "failed"));
    }
}
