/* A kit's answers to a chapter's variant parts, by part id: filled by
 * kit_answers_NN.h (the kit's functions on the variant's inputs), checked
 * by test_NN.c and written as the grade's answers file by kit_answers_NN.c. */
#ifndef EXERCISES_KIT_ANSWERS_H
#define EXERCISES_KIT_ANSWERS_H

#include "practice.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define KIT_MAX_ANSWERS 40

typedef struct {
    int n;
    const char *id[KIT_MAX_ANSWERS];
    double value[KIT_MAX_ANSWERS];
} kit_answers;

static inline void kit_answer_(kit_answers *a, const char *id, double v)
{
    if (a->n < KIT_MAX_ANSWERS) {
        a->id[a->n] = id;
        a->value[a->n++] = v;
    }
}

static inline double kit_input_(const practice_set *s, const char *name)
{
    const practice_input *in = practice_input_named(s, name);
    return in ? in->value : NAN;
}

/* main() of kit_answers_NN.c: the answers to the variant of $NB_SEED as
 * {"chapter", "seed", "student": "kit", "answers": {...}}; a part the kit
 * leaves NAN, or -1 (its "no answer" for a count), is left out and graded
 * "missing"; other negative answers (a log-likelihood ratio) are kept. */
static inline int kit_answers_main(int chapter, kit_answers (*answers)(const practice_set *, int))
{
    uint64_t seed;
    if (practice_parse_seed(getenv("NB_SEED"), &seed) != 0) {
        fprintf(stderr, "kit_answers: SEED=%s: give a whole number from 0 to %llu\n", getenv("NB_SEED"),
                PRACTICE_MAX_SEED);
        return 2;
    }
    practice_set s;
    if (practice_build(chapter, seed, &s) != 0) {
        fprintf(stderr, "kit_answers: chapter %d has no variants\n", chapter);
        return 2;
    }
    kit_answers a = answers(&s, 0);
    printf("{\"chapter\": %d, \"seed\": %llu, \"student\": \"kit\", \"answers\": {", chapter, (unsigned long long)seed);
    for (int i = 0, first = 1; i < a.n; i++) {
        if (!isfinite(a.value[i]) || a.value[i] == -1)
            continue;
        printf("%s\"%s\": %.17g", first ? "" : ", ", a.id[i], a.value[i]);
        first = 0;
    }
    printf("}}\n");
    return 0;
}

#endif
