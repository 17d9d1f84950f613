/* Drawing a variant's inputs from the lists a chapter's generator states
 * (practice_chNN.c): seed 0 takes the printed value, any other seed one of
 * the list's entries, and the list's least and greatest entries are the
 * range the input reports. */
#ifndef NAPKIN_PRACTICE_DRAW_H
#define NAPKIN_PRACTICE_DRAW_H

#include "practice_set.h"
#include "rng.h"

#include <stdint.h>

#define PRACTICE_COUNT(a) ((int)(sizeof(a) / sizeof((a)[0])))

/* opts[printed] at seed 0, else a uniform draw from opts[0..n). */
static inline double practice_pick(rng_state *r, uint64_t seed, const double *opts, int n, int printed)
{
    return seed == 0 ? opts[printed] : opts[rng_below(r, (uint64_t)n)];
}

static inline double practice_least(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}

static inline double practice_greatest(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

/* The range of a list, as practice_add_input's lo, hi. */
#define PRACTICE_RANGE_OF(a) practice_least(a, PRACTICE_COUNT(a)), practice_greatest(a, PRACTICE_COUNT(a))

/* n streams for one seed's variant, one per exercise, so that a change to
 * one exercise's draws leaves the others': r[0] is the seed's stream
 * (rng_make), r[k] is r[k - 1] jumped once (rng_jump). */
static inline void practice_streams(uint64_t seed, rng_state *r, int n)
{
    r[0] = rng_make(seed);
    for (int i = 1; i < n; i++) {
        r[i] = r[i - 1];
        rng_jump(&r[i]);
    }
}

/* An input drawn from a list and added to the set (practice_add_input, its
 * range the list's): the value it drew. */
static inline double practice_draw_input(practice_set *s, rng_state *r, const char *name, const double *opts, int n,
                                         int printed, const char *fmt)
{
    double v = practice_pick(r, s->seed, opts, n, printed);
    practice_add_input(s, name, v, fmt, practice_least(opts, n), practice_greatest(opts, n));
    return v;
}
#define PRACTICE_DRAW(s, r, name, list, printed, fmt) practice_draw_input(s, r, name, list, PRACTICE_COUNT(list), printed, fmt)

#endif
