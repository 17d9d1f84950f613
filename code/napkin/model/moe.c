#include "moe.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

//> moe_zipf_inclusion
int moe_zipf_inclusion(int experts, int k, double s, double *pi)
{
    if (experts < 1 || k < 1 || k > experts || !(s >= 0) || !isfinite(s))
        return -1;
    double sum = 0;
    for (int i = 0; i < experts; i++)
        sum += pi[i] = pow(i + 1.0, -s);
    for (int i = 0; i < experts; i++)
        pi[i] *= k / sum;
    /* cap at 1 and rescale the uncapped ones until none exceeds 1 (at most E rounds) */
    for (int round = 0; round < experts; round++) {
        double capped = 0, rest = 0;
        int over = 0;
        for (int i = 0; i < experts; i++) {
            if (pi[i] >= 1) {
                over += pi[i] > 1;
                pi[i] = 1;
                capped += 1;
            } else {
                rest += pi[i];
            }
        }
        if (!over)
            break;
        if (rest <= 0) { /* the tail underflowed (a very large s): the limit, top-k always the hottest k */
            double left = k - capped;
            for (int i = 0; i < experts && left > 0; i++)
                if (pi[i] < 1) {
                    pi[i] = left < 1 ? left : 1;
                    left -= pi[i];
                }
            break;
        }
        double scale = (k - capped) / rest;
        for (int i = 0; i < experts; i++)
            if (pi[i] < 1)
                pi[i] *= scale;
    }
    return 0;
}
//< moe_zipf_inclusion

//> moe_expected_touched
double moe_expected_touched(const double *pi, int experts, double tokens)
{
    double touched = 0;
    for (int i = 0; i < experts; i++)
        touched += 1 - pow(1 - pi[i], tokens); /* expert i: touched by at least one token */
    return touched;
}
//< moe_expected_touched

double moe_zipf_touched(int experts, int k, double s, double tokens)
{
    if (experts < 1)
        return NAN;
    double *pi = malloc(sizeof *pi * (size_t)experts);
    double t = NAN;
    if (pi && moe_zipf_inclusion(experts, k, s, pi) == 0)
        t = moe_expected_touched(pi, experts, tokens);
    free(pi);
    return t;
}

//> moe_zipf_hot_rank
int moe_zipf_hot_rank(int experts, int k, double s, int ep, double tokens, double *load, double *touched)
{
    if (experts < 1 || ep < 1 || experts % ep != 0 || !(tokens >= 0))
        return -1;
    double *pi = malloc(sizeof *pi * (size_t)experts);
    if (!pi || moe_zipf_inclusion(experts, k, s, pi) != 0) {
        free(pi);
        return -1;
    }
    double share = 0, hit = 0;
    for (int i = 0; i < experts; i += ep) { /* GPU 0 holds experts 0, ep, 2 ep, ...: the hottest of each round */
        share += pi[i];
        hit += 1 - pow(1 - pi[i], tokens);
    }
    free(pi);
    *load = share * ep / k; /* its pairs over the mean k / ep per token */
    if (*load < 1) /* rounding at s = 0 */
        *load = 1;
    *touched = hit;
    return 0;
}
//< moe_zipf_hot_rank

double moe_power_law_skew(double alpha)
{
    if (fabs(alpha - 1.01) < 1e-9)
        return 0.9;
    if (fabs(alpha - 1.2) < 1e-9)
        return 1.0;
    return NAN;
}

//> moe_rank_work
int moe_rank_work(int experts, int k, double s, int ep, double tokens, int balanced, double *pairs,
                  double *touched)
{
    if (experts < 1 || k < 1 || k > experts || ep < 1 || experts % ep != 0 || !(tokens >= 0))
        return -1;
    const int local = experts / ep;
    if (balanced) {
        const int k_local = k < local ? k : local;
        *pairs = ceil(tokens / ep) * k_local;
        *touched = *pairs < local ? *pairs : local;
        return 0;
    }
    double load;
    if (moe_zipf_hot_rank(experts, k, s, ep, tokens, &load, touched) != 0)
        return -1;
    *pairs = tokens * k / ep * load;
    return 0;
}
//< moe_rank_work
//> moe_expected_gpus_reached
double moe_expected_gpus_reached(int experts, int ep, int k)
{
    if (experts < 1 || ep < 1 || experts % ep != 0 || k < 1 || k > experts)
        return NAN;
    /* C(E - m, k) / C(E, k) = prod_{i < k} (E - m - i) / (E - i), 0 once a factor is */
    const int m = experts / ep;
    double missed = 1;
    for (int i = 0; i < k && missed > 0; i++)
        missed *= experts - m - i > 0 ? (double)(experts - m - i) / (experts - i) : 0;
    return ep * (1 - missed);
}
//< moe_expected_gpus_reached

//> moe_alltoall_bytes
double moe_alltoall_bytes(double tokens, int experts, int k, int hidden, int ep, double bpv)
{
    /* the token's own GPU is one of those reached a share 1/ep of the time, and sends nothing */
    return tokens * moe_expected_gpus_reached(experts, ep, k) * (ep - 1.0) / ep * hidden * bpv;
}
//< moe_alltoall_bytes

int moe_tokens_to_cover(int experts, int k, double share)
{
    if (experts < 1 || k < 1 || k > experts || !(share > 0 && share < 1))
        return -1;
    if (k == experts)
        return 1;
    double t = ceil(log(1 - share) / log(1 - (double)k / experts));
    return t < 1 ? 1 : t > 1e9 ? -1 : (int)t;
}

void moe_route_token(const double *pi, int experts, int k, rng_state *r, int *out)
{
    /* Systematic sampling: lay the pi_i end to end on [0, k) and take the
     * experts under u, u+1, ..., u+k-1.  Each pi_i <= 1 covers at most one
     * of the points, so the k are distinct, and expert i is hit with
     * probability pi_i. */
    double u = rng_uniform(r), edge = 0;
    int got = 0;
    for (int i = 0; i < experts && got < k; i++) {
        edge += pi[i];
        while (got < k && u + got < edge)
            out[got++] = i;
    }
    while (got < k) /* rounding left the last point past the sum */
        out[got++] = experts - 1;
}

int moe_simulate_touched(const double *pi, int experts, int k, int tokens, int trials, uint64_t seed,
                         double *mean, double *stderr_out)
{
    if (experts < 1 || k < 1 || k > experts || tokens < 0 || trials < 2)
        return -1;
    unsigned char *seen = malloc((size_t)experts);
    int *pick = malloc((size_t)k * sizeof *pick);
    if (!seen || !pick) {
        free(seen);
        free(pick);
        return -1;
    }
    rng_state r = rng_make(seed);
    double sum = 0, sumsq = 0;
    for (int t = 0; t < trials; t++) {
        memset(seen, 0, (size_t)experts);
        int distinct = 0;
        for (int j = 0; j < tokens; j++) {
            moe_route_token(pi, experts, k, &r, pick);
            for (int q = 0; q < k; q++)
                if (!seen[pick[q]]) {
                    seen[pick[q]] = 1;
                    distinct++;
                }
        }
        sum += distinct;
        sumsq += (double)distinct * distinct;
    }
    double m = sum / trials, var = (sumsq - trials * m * m) / (trials - 1);
    *mean = m;
    if (stderr_out)
        *stderr_out = sqrt(var > 0 ? var / trials : 0);
    free(seen);
    free(pick);
    return 0;
}
