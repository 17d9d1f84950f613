/* Chapter 10 fill-in kit.  Replace each TODO body with your own derivation,
 * then run `make exercise N=10`.  You may call the napkin library
 * (transformer.h has decoder_step_cost) or work from first principles.
 * Return NAN (or -1) for input you cannot use. */
#include "10-speculative-decoding.h"

#include <math.h>

double ex10_expected_tokens(double alpha, int gamma)
{
    /* TODO: the k-th token arrives when the first k-1 drafts passed. */
    return NAN;
}

double ex10_prob_tokens(double alpha, int gamma, int k)
{
    /* TODO: k-1 accepted then a rejection; or all gamma accepted. */
    return NAN;
}

double ex10_tokens_stddev(double alpha, int gamma)
{
    /* TODO: sqrt(E[N^2] - E[N]^2) over the distribution above. */
    return NAN;
}

double ex10_speedup(double alpha, int gamma, double c)
{
    /* TODO: tokens per round over the round's cost in target steps. */
    return NAN;
}

int ex10_best_gamma(double alpha, double c, int gamma_max)
{
    /* TODO: try every gamma. */
    return -1;
}

double ex10_alpha_for_speedup(double target, int gamma, double c)
{
    /* TODO: the speedup grows with alpha; bisect. */
    return NAN;
}

double ex10_operations_factor(double alpha, int gamma, double c_hat)
{
    /* TODO: (gamma c_hat + gamma + 1) evaluations per round, per token emitted. */
    return NAN;
}

double ex10_verify_ratio(const char *model_key, const char *gpu_key, int tp, int batch, int context, int gamma)
{
    /* TODO: check the batch fits (memory_fit), then two roofline step times:
     * new_tokens = gamma+1 and new_tokens = 1. */
    return NAN;
}
