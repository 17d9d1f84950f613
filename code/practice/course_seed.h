/* A student's variant seed for one chapter of a course: derived from the
 * roster id, the chapter and the course's salt, so an instructor can
 * regenerate every seed from the roster alone and a new term (a new salt)
 * draws new variants.  Used by `make course` (handouts, keys) and `make
 * grade-all` (which variant a student's file must answer). */
#ifndef NAPKIN_COURSE_SEED_H
#define NAPKIN_COURSE_SEED_H

#include <stdint.h>

/* Course seeds run 1 .. COURSE_SEED_MAX: never 0 (the printed book's
 * variant, which every student can read in the book) and inside every
 * seed range the page, the CLI and the grader accept (2^24 - 1 is also
 * exact in a 32-bit float). */
#define COURSE_SEED_MAX 16777215ULL

/* The seed for student id in chapter (1-13) under salt (NULL or "" is the
 * empty salt): 1 + FNV-1a-64(salt 0x1F id 0x1F chapter as two digits)
 * mod COURSE_SEED_MAX.  0 for a NULL or empty id or a chapter outside
 * 1..99. */
uint64_t course_seed(const char *salt, const char *id, int chapter);

#endif
