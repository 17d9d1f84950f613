/* The answer key of a variant: --key's table and --batch's key lines.
 * Instructor-only: grade_key.c is built into the grade program only in the
 * full tree (the Makefile defines GRADE_KEY where it exists), and the
 * student kit (tools/student_kit.py) leaves it out. */
#ifndef GRADE_KEY_H
#define GRADE_KEY_H

#include "practice.h"

#include <jansson.h>

/* The key as a table on stdout: the inputs, then each part's expected
 * value, unit and rule. */
void key_print(const practice_set *s);
/* {"chapter", "seed", "parts": {"12.1(a)": expected, ...}}. */
json_t *key_json(const practice_set *s);

#endif
