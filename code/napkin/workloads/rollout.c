/* Per-class speculation switch with hysteresis. */
#include "rollout.h"

#include <stdio.h>

rollout_policy rollout_policy_default(void)
{
    rollout_policy p = {.on_above = 1.10, .off_below = 1.00, .min_rounds = 1000, .gamma = 4};
    return p;
}

//> rollout_decide
int rollout_next_state(const rollout_policy *p, int on, double predicted_speedup, long rounds)
{
    if (on)
        return predicted_speedup < p->off_below ? 0 : 1;
    /* off: demand a margin and enough evidence before paying for a draft */
    return predicted_speedup >= p->on_above && rounds >= p->min_rounds ? 1 : 0;
}
//< rollout_decide

int rollout_update(const rollout_policy *p, const spec_setup *s, rollout_class *cls, double alpha, long rounds,
                   int batch, char *err, size_t errlen)
{
    if (!(p->off_below < p->on_above)) {
        snprintf(err, errlen, "rollout policy needs off_below < on_above (got %g, %g)", p->off_below,
                 p->on_above);
        return -1;
    }
    if (batch < 1 || rounds < 0) {
        snprintf(err, errlen, "batch must be >= 1 and rounds >= 0 (got %d, %ld)", batch, rounds);
        return -1;
    }
    spec_setup at = *s;
    at.batch = batch;
    spec_estimate e;
    if (spec_estimate_compute(&at, alpha, p->gamma, &e, err, errlen) != 0)
        return -1;
    int next = rollout_next_state(p, cls->on, e.speedup_roofline, rounds);
    if (next != cls->on)
        cls->switches++;
    cls->on = next;
    cls->alpha = alpha;
    cls->rounds = rounds;
    cls->predicted = e.speedup_roofline;
    return next;
}
