/* The instructor's answer key of one variant, as Markdown: the student (when
 * given) and the seed, the numbers the variant drew, and for each part the
 * answer with its unit, the rule it is judged by and the interval that rule
 * accepts, and the value and words of every slip the judge names, so a
 * marker can place a wrong answer by hand. */
#ifndef NAPKIN_COURSE_KEY_H
#define NAPKIN_COURSE_KEY_H

#include "practice_set.h"

#include <stdio.h>

/* id and name may be NULL (a key for a seed, not a student). */
void course_key_write(FILE *f, const practice_set *s, const char *id, const char *name);

/* The interval part j accepts: [lo, hi]. */
void course_accepted(const judge_part *j, double *lo, double *hi);

/* The exercise an input belongs to, from its value name ("ch06_ex3_context"
 * is 3), or 0 for an input the chapter's exercises share. */
int course_input_exercise(const char *name);
/* An input's name as a reader says it: past "chNN_exK_" ("context"). */
const char *course_input_label(const char *name);

#endif
