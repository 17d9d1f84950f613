/* The chapter list's door: a chapter's variant by number, through the one
 * list of generators (practice_chapters.h); see practice.h. */
#include "practice.h"

#include "practice_chapters.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The one chapter list (practice_chapters.h) as a table and as text. */
#define PRACTICE_ROW(n, build) {n, build},
static const struct {
    int chapter;
    int (*build)(uint64_t seed, practice_set *out);
} chapter_builders[] = {PRACTICE_CHAPTERS(PRACTICE_ROW)};

#define PRACTICE_NUMBER(n, build) " " #n
const char *practice_chapters(void)
{
    return &PRACTICE_CHAPTERS(PRACTICE_NUMBER)[1]; /* past the leading space */
}

static int build_variant(int chapter, uint64_t seed, practice_set *out)
{
    memset(out, 0, sizeof *out);
    out->chapter = chapter;
    out->seed = seed;
    for (size_t i = 0; i < sizeof chapter_builders / sizeof chapter_builders[0]; i++)
        if (chapter_builders[i].chapter == chapter)
            return chapter_builders[i].build(seed, out);
    return -1;
}

/* The last variant built, kept per thread: the page judges one box after
 * another of the same variant, and each judgement would otherwise build the
 * whole chapter again.  A variant depends on (chapter, seed) alone, and the
 * strings it points to are literals, so a copy stays valid. */
static _Thread_local struct {
    int valid, chapter;
    uint64_t seed;
    practice_set set;
} last_built;

int practice_build(int chapter, uint64_t seed, practice_set *out)
{
    if (last_built.valid && last_built.chapter == chapter && last_built.seed == seed) {
        *out = last_built.set;
        return 0;
    }
    int rc = build_variant(chapter, seed, out);
    last_built.valid = rc == 0;
    if (rc == 0) {
        last_built.chapter = chapter;
        last_built.seed = seed;
        last_built.set = *out;
    }
    return rc;
}

int practice_variant_program(int chapter)
{
    uint64_t seed;
    const char *text = getenv("NB_SEED");
    if (practice_parse_seed(text, &seed) != 0) {
        fprintf(stderr, "exercise_variant: NB_SEED=%s: give a whole number from 0 to %llu\n", text,
                PRACTICE_MAX_SEED);
        return 2;
    }
    practice_set s;
    if (practice_build(chapter, seed, &s) != 0) {
        fprintf(stderr, "exercise_variant: chapter %d has no variants\n", chapter);
        return 1;
    }
    practice_record_values(&s);
    printf("chapter %d exercises, seed %llu: %d inputs, %d parts\n", chapter, (unsigned long long)seed, s.n_inputs,
           s.n_parts);
    return 0;
}
