/* A chapter's answers judged part by part under a policy: the verdict,
 * the points, and the answers that name no part of the variant (reported
 * each by id, never discarding the rest). */
#ifndef GRADE_PARTS_H
#define GRADE_PARTS_H

#include "grade_policy.h"
#include "practice.h"

#include <jansson.h>

typedef struct {
    double given;        /* in the part's unit; NAN when missing or refused */
    judge_result result;
    int carried;         /* right once an earlier part's error is carried */
    double points, max;
} graded_part;

typedef struct {
    practice_set set;
    graded_part g[PRACTICE_MAX_PARTS];
    double score, max;
    int n_unknown;                 /* answers naming no part */
    const char *unknown[PRACTICE_MAX_PARTS]; /* the first of them: ids inside the answers object */
} graded_set;

/* Builds chapter's variant for seed and judges answers (an object of part
 * id -> number or typed string) into *out.  Returns 0, or -1 when the
 * chapter has no variants. */
int grade_answers(graded_set *out, int chapter, uint64_t seed, json_t *answers, const grade_policy *policy);

/* "right", "close", ..., or "carried" for a part right by error carried forward. */
const char *graded_verdict(const graded_part *g);

#endif
