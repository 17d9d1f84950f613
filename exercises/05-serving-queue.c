/* Chapter 5 fill-in kit.  Replace each TODO body with your own derivation,
 * then run `make exercise N=05`.  You may call the napkin library (queue.h,
 * batch_vs_sequential.h) or work from the formulas of the chapter.  Return NAN (or -1)
 * for input you cannot use or a queue that is not stable. */
#include "05-serving-queue.h"

#include <math.h>

double ex05_in_system(double lambda, double time)
{
    /* TODO: Little's law. */
    return NAN;
}

double ex05_cache_bytes(const char *model_key, double requests, int tokens, const char *kv_dtype)
{
    /* TODO: K and V of every layer and KV head, per token, times the tokens held. */
    return NAN;
}

double ex05_mm1_time(double lambda, double mu)
{
    /* TODO: 1 / (mu - lambda) when lambda < mu. */
    return NAN;
}

double ex05_md1_time(double lambda, double mu)
{
    /* TODO: rho / (2 mu (1 - rho)) + 1 / mu. */
    return NAN;
}

double ex05_mg1_wait(double lambda, double service, double cs2)
{
    /* TODO: Pollaczek-Khinchine. */
    return NAN;
}

double ex05_max_rate(double service, double cs2, double target)
{
    /* TODO: solve W(rho) = target for rho; lambda = rho / service. */
    return NAN;
}

double ex05_batch_capacity(const char *model_key, const char *gpu_key, int prompt, int output, int max_batch,
                           int kv_cap)
{
    /* TODO: s(n) for each allowed n (prefill + decode steps), best n / s(n). */
    return NAN;
}

int ex05_replicas_needed(double lambda, double capacity, double max_load)
{
    /* TODO: lambda over what one replica may carry, rounded up. */
    return -1;
}
