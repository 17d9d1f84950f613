/* Watching a speculative decoder for a silent regression: the acceptance rate
 * drifts down (new traffic, a changed target) and the speedup quietly turns
 * into a slowdown.  The detector is Page's CUSUM on per-round accepted
 * counts, with the log-likelihood ratio of "alpha = alpha1" against
 * "alpha = alpha0" as its increment.
 *
 * A round with a accepted drafts out of gamma is a run of Bernoulli trials:
 * a successes, then one failure unless a = gamma.  Its log-likelihood ratio:
 *     llr(a) = a ln(alpha1/alpha0) + [a < gamma] ln((1-alpha1)/(1-alpha0)).
 * S_n = max(0, S_{n-1} + llr(a_n)); alarm when S_n >= h.
 *
 * Design (stated, and checked by the tests on synthetic streams):
 *  - false alarms: the in-control average run length ARL0 >= e^h (the
 *    likelihood-ratio CUSUM bound), so h = ln(ARL0) keeps the false-alarm
 *    rate at or below 1/ARL0 per round;
 *  - detection delay from S = 0 after the change, by Wald's identity:
 *    E[delay] <= (h + llr_max) / I1, where I1 = E_alpha1[llr] is the
 *    Kullback-Leibler information per round and llr_max the largest step. */
#ifndef NAPKIN_SPECMON_H
#define NAPKIN_SPECMON_H

typedef struct {
    double alpha0;    /* in-control acceptance rate */
    double alpha1;    /* the degraded rate to detect (alpha1 < alpha0) */
    int gamma;        /* draft tokens per round */
    double threshold; /* h, in nats */
} cusum_design;

typedef struct {
    double s;     /* current statistic, >= 0 */
    long rounds;  /* rounds seen */
    long alarms;  /* alarms raised (the statistic restarts at 0 after each) */
    long last_alarm; /* round number (1-based) of the latest alarm; 0 if none */
} cusum_state;

/* h = ln(arl0): a false alarm at most once per arl0 rounds on average. */
double cusum_threshold_for_arl0(double arl0);
/* The guaranteed lower bound on ARL0 for a threshold: e^h. */
double cusum_arl0_bound(double threshold);

/* A design for detecting alpha0 -> alpha1 with the given ARL0.  Returns 0,
 * or -1 when the rates are not 0 < alpha1 < alpha0 < 1, gamma < 1 or
 * arl0 <= 1. */
int cusum_design_make(double alpha0, double alpha1, int gamma, double arl0, cusum_design *out);

/* The increment for a round with `accepted` of gamma drafts accepted. */
double cusum_llr(const cusum_design *d, int accepted);
/* The largest increment (a round with no draft accepted). */
double cusum_llr_max(const cusum_design *d);
/* E[llr] per round when the true acceptance rate is alpha: negative in
 * control, positive after the drop (it is I1 at alpha = alpha1). */
double cusum_drift(const cusum_design *d, double alpha);
/* Upper bound on the expected rounds from the change to the alarm when the
 * rate is now alpha (> 0 drift required; INFINITY otherwise). */
double cusum_delay_bound(const cusum_design *d, double alpha);
/* Wald/Siegmund approximation of the same delay, without the overshoot:
 * (h - 1 + e^-h) / drift. */
double cusum_delay_approx(const cusum_design *d, double alpha);

void cusum_init(cusum_state *st);
/* Feed one round; returns 1 when it raises an alarm (and restarts the
 * statistic), else 0.  Returns -1 for accepted outside 0 .. gamma. */
int cusum_update(const cusum_design *d, cusum_state *st, int accepted);

/* The maximum-likelihood acceptance rate: accepted drafts over drafts
 * examined (accepted plus the one rejection that ends a round early).
 * NAN when nothing was examined. */
double spec_alpha_mle(long accepted, long rejections);

/* The metrics a speculative server should export, from its counters over an
 * interval. */
typedef struct {
    long rounds;          /* verification rounds (sequence-rounds) */
    long drafted;         /* draft tokens proposed: rounds * gamma */
    long accepted;        /* draft tokens accepted */
    long rejections;      /* rounds that ended on a rejected draft (not all gamma accepted) */
    long emitted;         /* tokens emitted: accepted + one per round */
    double busy_seconds;  /* wall time of the steps in the interval */
    long steps;           /* batched steps (rounds of the whole batch) */
    double user_seconds;  /* summed over sequences: time each was being served */
} spec_counters;

//> metrics
typedef struct {
    double acceptance_rate;      /* per-draft-token MLE of alpha: accepted / trials */
    double accepted_per_drafted; /* accepted / drafted: what many servers report; below alpha */
    double mean_accepted_length; /* emitted / rounds: E[N], the bonus token counted */
    double tokens_per_s_per_user;/* emitted / user_seconds */
    double step_time;            /* busy_seconds / steps */
} spec_metrics;

/* Fills *out.  Returns -1 when there is nothing to summarise (no rounds,
 * steps or user time) or the counters contradict each other. */
int spec_metrics_compute(const spec_counters *c, spec_metrics *out);
//< metrics

#endif
