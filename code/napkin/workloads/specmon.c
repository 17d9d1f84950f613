/* CUSUM on per-round accepted counts, its design formulas, and the metrics
 * a speculative server exports. */
#include "specmon.h"

#include <math.h>

double cusum_threshold_for_arl0(double arl0)
{
    return log(arl0);
}

double cusum_arl0_bound(double threshold)
{
    return exp(threshold);
}

int cusum_design_make(double alpha0, double alpha1, int gamma, double arl0, cusum_design *out)
{
    if (!(alpha1 > 0.0 && alpha1 < alpha0 && alpha0 < 1.0) || gamma < 1 || !(arl0 > 1.0))
        return -1;
    out->alpha0 = alpha0;
    out->alpha1 = alpha1;
    out->gamma = gamma;
    out->threshold = cusum_threshold_for_arl0(arl0);
    return 0;
}

//> llr
double cusum_llr(const cusum_design *d, int accepted)
{
    /* accepted successes, then one failure unless every draft passed */
    double l = accepted * log(d->alpha1 / d->alpha0);
    if (accepted < d->gamma)
        l += log((1.0 - d->alpha1) / (1.0 - d->alpha0));
    return l;
}
//< llr

double cusum_llr_max(const cusum_design *d)
{
    return cusum_llr(d, 0); /* alpha1 < alpha0: every success lowers the ratio */
}

double cusum_drift(const cusum_design *d, double alpha)
{
    /* E[successes] = alpha (1 - alpha^gamma)/(1 - alpha); P(failure) = 1 - alpha^gamma */
    double ag = pow(alpha, d->gamma);
    double successes = alpha >= 1.0 ? d->gamma : alpha * (1.0 - ag) / (1.0 - alpha);
    double failures = 1.0 - ag;
    return successes * log(d->alpha1 / d->alpha0) + failures * log((1.0 - d->alpha1) / (1.0 - d->alpha0));
}

double cusum_delay_bound(const cusum_design *d, double alpha)
{
    double mu = cusum_drift(d, alpha);
    if (!(mu > 0.0))
        return INFINITY;
    /* Wald: E[S at the crossing] = mu E[delay], and the crossing overshoots h
     * by at most one step; the reflection at 0 only shortens the wait. */
    return (d->threshold + cusum_llr_max(d)) / mu;
}

double cusum_delay_approx(const cusum_design *d, double alpha)
{
    double mu = cusum_drift(d, alpha);
    if (!(mu > 0.0))
        return INFINITY;
    double h = d->threshold;
    return (h - 1.0 + exp(-h)) / mu;
}

void cusum_init(cusum_state *st)
{
    st->s = 0.0;
    st->rounds = 0;
    st->alarms = 0;
    st->last_alarm = 0;
}

//> update
int cusum_update(const cusum_design *d, cusum_state *st, int accepted)
{
    if (accepted < 0 || accepted > d->gamma)
        return -1;
    st->rounds++;
    st->s += cusum_llr(d, accepted);
    if (st->s < 0.0)
        st->s = 0.0; /* evidence for "all is well" does not bank up */
    if (st->s >= d->threshold) {
        st->alarms++;
        st->last_alarm = st->rounds;
        st->s = 0.0;
        return 1;
    }
    return 0;
}
//< update

double spec_alpha_mle(long accepted, long rejections)
{
    if (accepted < 0 || rejections < 0 || accepted + rejections == 0)
        return NAN;
    /* drafts after a rejection were never examined: they are not failures */
    return (double)accepted / (double)(accepted + rejections);
}

int spec_metrics_compute(const spec_counters *c, spec_metrics *out)
{
    if (c->rounds <= 0 || c->steps <= 0 || !(c->user_seconds > 0.0) || c->accepted < 0 || c->rejections < 0 ||
        c->rejections > c->rounds || c->accepted > c->drafted || c->emitted != c->accepted + c->rounds)
        return -1;
    out->acceptance_rate = spec_alpha_mle(c->accepted, c->rejections);
    out->accepted_per_drafted = c->drafted > 0 ? (double)c->accepted / c->drafted : NAN;
    out->mean_accepted_length = (double)c->emitted / c->rounds;
    out->tokens_per_s_per_user = c->emitted / c->user_seconds;
    out->step_time = c->busy_seconds / c->steps;
    return 0;
}
