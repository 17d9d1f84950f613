/* A graded chapter out: the terminal's lines, JUnit XML (one testsuite per
 * exercise, one testcase per part), the JSON report, and the tests of a
 * Gradescope results.json.  Every string from outside is escaped for its
 * format (text_formats.h, and text_escape.h for the terminal). */
#ifndef GRADE_REPORT_H
#define GRADE_REPORT_H

#include "grade_parts.h"

#include <jansson.h>
#include <stdio.h>

/* What the report says beside the parts: who, and anything to flag. */
typedef struct {
    const char *student; /* name or id; NULL: none */
    const char *id;      /* roster id; NULL: none */
    const char *note;    /* a flag ("answered seed 12, not their own 34"); NULL: none */
} report_who;

void report_terminal(FILE *f, const graded_set *g, const report_who *who);
int report_junit(const char *path, const graded_set *g, const report_who *who);
/* The report as JSON (the caller owns it). */
json_t *report_json(const graded_set *g, const report_who *who);
int report_json_file(const char *path, const graded_set *g, const report_who *who);
/* Appends one Gradescope test per part to tests (a JSON array). */
void report_gradescope_tests(json_t *tests, const graded_set *g);
/* A JSON string of s made valid UTF-8; null for NULL. */
json_t *json_text(const char *s);
/* An integral value as a JSON integer, another as a real. */
json_t *json_points(double v);

#endif
