/* Chapter 11 fill-in kit.  Replace each TODO body with your own derivation,
 * then run `make exercise N=11`.  You may call the napkin library
 * (transformer.h, memory.h) or work from first principles.  Return NAN (or
 * -1) for input you cannot use. */
#include "11-speculative-fleet.h"

#include <math.h>

int ex11_max_batch(const char *target, const char *draft, const char *gpu, int tp, int context, int gamma)
{
    /* TODO: usable memory less both models' weights and the reserve, over the KV
     * of one sequence for both. */
    return -1;
}

double ex11_speedup_at_batch(const char *target, const char *draft, const char *gpu, int tp, int batch,
                             int context, double alpha, int gamma)
{
    /* TODO: E[N] * plain step / (gamma * draft step + verification step). */
    return NAN;
}

int ex11_break_even_batch(const char *target, const char *draft, const char *gpu, int tp, int context,
                          double alpha, int gamma, int batch_max)
{
    /* TODO: scan the batch, no further than memory allows. */
    return -1;
}

double ex11_draft_memory_per_gpu(const char *draft, int tp, int batch, int context)
{
    /* TODO: weights / tp plus the KV heads' share of the draft's cache. */
    return NAN;
}

double ex11_cusum_threshold(double arl0)
{
    /* TODO: ARL0 >= e^h. */
    return NAN;
}

double ex11_cusum_llr(double alpha0, double alpha1, int gamma, int accepted)
{
    /* TODO: accepted successes, then a failure unless accepted == gamma. */
    return NAN;
}

double ex11_cusum_delay_bound(double alpha0, double alpha1, int gamma, double arl0)
{
    /* TODO: (h + largest step) / expected step under alpha1. */
    return NAN;
}

double ex11_alpha_estimate(long accepted, long rejections)
{
    /* TODO: successes over trials. */
    return NAN;
}

int ex11_rollout_next(int on, double predicted_speedup, long rounds)
{
    /* TODO: two thresholds and an evidence rule. */
    return -1;
}
