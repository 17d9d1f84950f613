/* A variant of a chapter's exercises: its drawn inputs and its judged
 * parts, the calls a chapter's generator (practice_chNN.c) builds one with,
 * and the lookups every reader of a variant uses (the grade program, the
 * page, the kits).  Below the chapter list (practice.h): a generator
 * includes this header, never practice.h. */
#ifndef NAPKIN_PRACTICE_SET_H
#define NAPKIN_PRACTICE_SET_H

#include "judge.h"

#include <stddef.h>
#include <stdint.h>

#define PRACTICE_MAX_PARTS 40
#define PRACTICE_MAX_INPUTS 40

typedef struct {
    const char *id;    /* "12.1(a)": chapter.exercise(part) */
    int exercise;      /* 1 for "12.1(a)" */
    const char *what;  /* "GPUs the spreadsheet rents" */
    const char *unit;  /* "GPUs", "days", "%" */
    judge_part judge;
} practice_part;

/* One input the prose shows: a value name, its number, how it is printed,
 * and the range it is drawn from. */
typedef struct {
    const char *name;  /* value name, "ch12_ex1_params_b" */
    double value;
    const char *fmt;   /* printf format for the prose, "%.0f", or PRACTICE_GROUPED */
    double lo, hi;     /* the stated range */
    const char *text;  /* a choice's text ("B200"), NULL for a number */
    const char *key;   /* a choice's table key ("b200"), NULL for a number */
} practice_input;

/* The format of a whole number with thousands separators ("16,384"). */
#define PRACTICE_GROUPED "grouped"

typedef struct {
    int chapter;
    uint64_t seed;
    int n_parts;
    practice_part parts[PRACTICE_MAX_PARTS];
    int n_inputs;
    practice_input inputs[PRACTICE_MAX_INPUTS];
} practice_set;

/* The largest seed, the one statement of the range: `napkin practice
 * --seed`, the WebAssembly module the page runs (which also tells the page,
 * napkin_web_max_seed), the page's ?seed= and "new variant", the grade
 * program and $NB_SEED take 0 to 2^31 - 1.  A course's seeds
 * (course_seed.h) lie inside it. */
#define PRACTICE_MAX_SEED 2147483647ULL
/* A seed as given ($NB_SEED, SEED=, --seed): a whole number from 0 to
 * PRACTICE_MAX_SEED; NULL or "" is 0.  Returns 0, or -1 for anything else. */
int practice_parse_seed(const char *s, uint64_t *out);

/* The part with that id ("12.1(a)"), or NULL. */
const practice_part *practice_find(const practice_set *s, const char *id);
/* A typed answer to part p in the part's unit (judge_read_answer: "17.6 GB",
 * "549 MiB", "4x"), where "80%" is 80 for a part in percent and 0.8 for any
 * other (a utilisation as a fraction); NAN when refused. */
double practice_parse_answer(const practice_part *p, const char *text);

/* The input with that value name, or NULL. */
const practice_input *practice_input_named(const practice_set *s, const char *name);

/* The table key of a choice input (practice_add_choice: "b200"), or NULL. */
const char *practice_input_key(const practice_set *s, const char *name);

/* An input as the prose prints it ("16,384", "13"), in buf. */
const char *practice_input_text(const practice_input *in, char *buf, size_t n);
/* Records every input as a value (nb_value), for the exercise prose. */
void practice_record_values(const practice_set *s);
/* ---- building a variant: for the chapters' generators (practice_chNN.c) */
void practice_add_input(practice_set *s, const char *name, double value, const char *fmt, double lo, double hi);
/* An input that names a row of a table (which GPU, which model): its value
 * is the row's index in the generator's list of n, the prose prints text,
 * and the kit finds the row by key (practice_input_key). */
void practice_add_choice(practice_set *s, const char *name, int index, int n, const char *text, const char *key);
/* A part judged by rule: tol is the relative tolerance (RELATIVE) or the
 * range's half width around answer (RANGE).  NULL when the set is full
 * (practice_add_slip accepts NULL). */
practice_part *practice_add_part(practice_set *s, const char *id, int exercise, const char *what, const char *unit,
                                 judge_rule rule, double answer, double tol);
void practice_add_slip(practice_part *p, double value, const char *hint);

#endif
