/* Exercise variants: a chapter's exercises with numbers drawn from a seed.
 *
 * Each chapter that has variants draws its inputs from stated ranges (round
 * values that keep the question in the original's regime: inside memory, the
 * same bound) and computes every part's answer with the library.  Seed 0 is
 * the printed book's version.  The same seed gives the same variant
 * everywhere: the handout, the kit's checks, the grade program and the page.
 *
 * A variant's inputs are also values (practice_record_values), so the
 * exercise prose shows the variant's numbers.
 *
 * This header is the chapter list's door (practice_chapters.h): build a
 * chapter's variant, name the chapters that have them, run a chapter's
 * exercise_variant program.  The set itself is practice_set.h. */
#ifndef NAPKIN_PRACTICE_H
#define NAPKIN_PRACTICE_H

#include "practice_set.h"

#include <stdint.h>

/* Fills *out with chapter's variant for seed.  Returns 0, or -1 when the
 * chapter has no variants (practice_chapters lists those that do). */
int practice_build(int chapter, uint64_t seed, practice_set *out);
/* "1 2 3 4 5 6 7 8 9 10 11 12 13": the chapters with variants, space-separated, in order. */
const char *practice_chapters(void);

/* The whole of a chapter's exercise_variant program: the variant of the
 * seed in $NB_SEED (0 when unset) recorded as values, one line on stdout.
 * Returns the program's exit status (2 for a bad seed, 1 for a chapter
 * without variants). */
int practice_variant_program(int chapter);

#endif
