/* Moodle XML (the format Moodle's question bank imports, and Canvas through
 * Moodle's converter): a category per seed and one numerical question per
 * part, its answer with Moodle's absolute tolerance (the judge's rule turned
 * into the same accepted interval), its unit (optional to type, multiplier
 * 1), and each slip the judge names as a zero-credit answer whose feedback
 * is the slip's words. */
#ifndef NAPKIN_COURSE_MOODLE_H
#define NAPKIN_COURSE_MOODLE_H

#include "practice_set.h"

#include <stdio.h>

void moodle_begin(FILE *f);
/* The category and questions of one variant. */
void moodle_variant(FILE *f, const practice_set *s);
void moodle_end(FILE *f);

#endif
