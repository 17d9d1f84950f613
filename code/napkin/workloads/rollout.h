/* Turning speculation on or off per traffic class.  Each class has its own
 * measured acceptance rate; the predicted speedup at the current serving
 * batch (regime ii of specdec.h) decides, with hysteresis so that a class
 * near the break-even point does not flap on every measurement:
 *  - an off class turns on when the predicted speedup reaches on_above and
 *    the rate rests on at least min_rounds rounds;
 *  - an on class turns off when the predicted speedup drops below off_below
 *    (off_below < on_above), whatever the sample size: a slowdown is not
 *    worth waiting out. */
#ifndef NAPKIN_ROLLOUT_H
#define NAPKIN_ROLLOUT_H

#include "specdec.h"

#include <stddef.h>

typedef struct {
    double on_above;  /* e.g. 1.10: a 10% margin before switching on */
    double off_below; /* e.g. 1.00: off as soon as it loses */
    long min_rounds;  /* rounds of evidence needed before switching on */
    int gamma;        /* draft length used when on */
} rollout_policy;

/* on_above 1.10, off_below 1.00, min_rounds 1000, gamma 4. */
rollout_policy rollout_policy_default(void);

typedef struct {
    int on;            /* speculation enabled for the class */
    double alpha;      /* latest measured acceptance rate */
    long rounds;       /* rounds behind that measurement */
    double predicted;  /* predicted speedup at the last decision */
    long switches;     /* how many times the class flipped */
} rollout_class;

/* The pure decision: the next on/off state from the current one and the
 * predicted speedup. */
int rollout_next_state(const rollout_policy *p, int on, double predicted_speedup, long rounds);

/* Record a measurement for a class and decide at the current batch: the
 * setup supplies model, GPU and context; its batch is replaced by `batch`.
 * Returns the new state (0 or 1), or -1 with a message on bad input. */
int rollout_update(const rollout_policy *p, const spec_setup *s, rollout_class *cls, double alpha, long rounds,
                   int batch, char *err, size_t errlen);

#endif
