/* A directory of answer files graded into a course's gradebook.
 *
 * Every entry of the directory is read by path (never through a shell), so
 * any file name is graded or refused by name.  Each .json file is one
 * student's answers to one chapter; with a roster its "student" must be a
 * roster id and its "seed" must be there: a seed other than the student's
 * own (course_seed) is graded against their own, and flagged.  Answers that
 * name no part are listed part by part; the rest are graded.  Out, under
 * the output folder:
 *
 *   gradebook.csv                      id,name,chapter,seed,<C.E>...,total,max
 *   gradescope/<id>/results.json       Gradescope's autograder results
 *   students/<id>/chapter-NN.junit.xml and chapter-NN.report.json
 *   summary.txt                        what was graded, what was not and why
 *
 * Without a roster, a student's folder is named after the file (its
 * letters, digits, '.', '_' and '-'). */
#ifndef GRADE_ALL_H
#define GRADE_ALL_H

#include "grade_policy.h"

typedef struct {
    const char *dir;    /* the answer files */
    const char *roster; /* NULL: none */
    const char *salt;   /* the course's salt (course_seed); NULL: "" */
    const char *out;    /* the output folder (made if missing) */
    const grade_policy *policy;
} grade_all_opts;

/* Returns 0 when the directory was walked (whatever was refused in it; the
 * summary names those), 2 for a bad roster, directory or output folder. */
int grade_all(const grade_all_opts *o);

#endif
