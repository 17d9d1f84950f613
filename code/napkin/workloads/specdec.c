/* Speculative decoding arithmetic: the capped geometric process, Leviathan's
 * closed forms, and round costs from the roofline step model. */
#include "specdec.h"

#include "pricing.h"
#include "roofline.h"

#include <math.h>
#include <stdio.h>

//> pmf
double spec_tokens_pmf(double alpha, int gamma, int k)
{
    if (gamma < 0 || k < 1 || k > gamma + 1)
        return 0.0;
    if (k == gamma + 1) /* all gamma accepted; the target adds the bonus */
        return pow(alpha, gamma);
    /* k-1 accepted, then a rejection; the target adds the correction */
    return pow(alpha, k - 1) * (1.0 - alpha);
}
//< pmf

double spec_tokens_cdf(double alpha, int gamma, int k)
{
    double p = 0.0;
    for (int j = 1; j <= k && j <= gamma + 1; j++)
        p += spec_tokens_pmf(alpha, gamma, j);
    return p;
}

double spec_tokens_variance(double alpha, int gamma)
{
    if (gamma < 0)
        return NAN;
    /* Straight from the distribution: gamma is small, the sum is exact. */
    double m1 = 0.0, m2 = 0.0;
    for (int k = 1; k <= gamma + 1; k++) {
        double p = spec_tokens_pmf(alpha, gamma, k);
        m1 += k * p;
        m2 += (double)k * k * p;
    }
    double v = m2 - m1 * m1;
    return v < 0.0 ? 0.0 : v; /* rounding at alpha = 0 or 1 */
}

double spec_expected_trials(double alpha, int gamma)
{
    if (gamma < 0)
        return NAN;
    if (alpha >= 1.0)
        return gamma;
    /* draft j is examined when the first j-1 passed: sum of alpha^(j-1), j = 1..gamma */
    return (1.0 - pow(alpha, gamma)) / (1.0 - alpha);
}

//> speedup
double spec_walltime_speedup(double alpha, int gamma, double c)
{
    /* A round: gamma draft steps (c each) and one verification that costs
     * one target step (regime i); it yields E[N] tokens. */
    return spec_expected_tokens(alpha, gamma) / (gamma * c + 1.0);
}
//< speedup

//> operations
double spec_alpha_for_speedup(double target, int gamma, double c)
{
    if (spec_walltime_speedup(1, gamma, c) < target)
        return NAN;
    if (spec_walltime_speedup(0, gamma, c) >= target)
        return 0; /* reached with nothing accepted: a slowdown target, 1 / (1 + gamma c) or less */
    double lo = 0, hi = 1;
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (lo + hi);
        if (spec_walltime_speedup(mid, gamma, c) < target)
            lo = mid;
        else
            hi = mid;
    }
    return hi;
}

double spec_operations_factor(double alpha, int gamma, double c_hat)
{
    /* Per round: gamma draft tokens (c_hat each) and gamma+1 target token
     * evaluations, for E[N] tokens; plain decoding spends 1 per token. */
    return (gamma * c_hat + gamma + 1.0) / spec_expected_tokens(alpha, gamma);
}
//< operations

int spec_best_gamma(double alpha, double c, int gamma_max, double *speedup)
{
    int best = 1;
    double best_s = spec_walltime_speedup(alpha, 1, c);
    for (int g = 2; g <= gamma_max; g++) {
        double s = spec_walltime_speedup(alpha, g, c);
        if (s > best_s) {
            best_s = s;
            best = g;
        }
    }
    if (speedup)
        *speedup = best_s;
    return best;
}

spec_setup spec_setup_default(const model_spec *target, const model_spec *draft, const gpu_spec *gpu, int tp,
                              int batch, int context)
{
    spec_setup s = {
        .target = target,
        .draft = draft,
        .gpu = gpu,
        .tp = tp,
        .draft_tp = tp,
        .draft_own_gpus = 0,
        .draft_c = 0.0,
        .batch = batch,
        .context = context,
        .prec = precision_uniform(DT_BF16),
        .skip_comm = 0,
    };
    return s;
}

static int step_time(const spec_setup *s, const model_spec *m, int batch, int new_tokens, int tp, double *t,
                     char *err, size_t errlen)
{
    const gpu_spec *g = s->gpu;
    step_shape sh = decode_shape(batch, s->context, tp, s->prec);
    sh.new_tokens = new_tokens;
    sh.skip_comm = s->skip_comm;
    step_cost c;
    if (decoder_step_cost(m, g, &sh, &c, err, errlen) != 0)
        return -1;
    *t = c.time;
    return 0;
}

int spec_estimate_compute(const spec_setup *s, double alpha, int gamma, spec_estimate *out, char *err,
                          size_t errlen)
{
    if (!(alpha >= 0.0 && alpha <= 1.0)) {
        snprintf(err, errlen, "acceptance rate alpha must lie in [0, 1], got %g", alpha);
        return -1;
    }
    if (gamma < 1) {
        snprintf(err, errlen, "gamma (draft tokens per round) must be at least 1, got %d", gamma);
        return -1;
    }
    if (!s->target || !s->gpu) {
        snprintf(err, errlen, "speculative setup needs a target model and a GPU");
        return -1;
    }
    if (!s->draft && !(s->draft_c >= 0.0 && isfinite(s->draft_c))) {
        snprintf(err, errlen, "draft cost c must be a finite number >= 0, got %g", s->draft_c);
        return -1;
    }
    //> round_cost
    double t_target, t_verify, t_draft;
    /* plain decoding: one token per sequence per step */
    if (step_time(s, s->target, s->batch, 1, s->tp, &t_target, err, errlen) != 0)
        return -1;
    /* verification: gamma+1 new tokens per sequence in one target pass */
    if (step_time(s, s->target, s->batch, gamma + 1, s->tp, &t_verify, err, errlen) != 0)
        return -1;
    /* one draft decode step at the same batch, or c target steps */
    if (s->draft) {
        if (step_time(s, s->draft, s->batch, 1, s->draft_tp, &t_draft, err, errlen) != 0)
            return -1;
    } else {
        t_draft = s->draft_c * t_target;
    }
    double tokens = spec_expected_tokens(alpha, gamma);
    out->speedup_roofline = tokens * t_target / (gamma * t_draft + t_verify);
    //< round_cost
    out->t_target = t_target;
    out->t_verify = t_verify;
    out->t_draft = t_draft;
    out->c = t_draft / t_target;
    out->verify_ratio = t_verify / t_target;
    out->tokens = tokens;
    out->speedup_free = spec_walltime_speedup(alpha, gamma, out->c);
    return 0;
}

static int speedup_at(const spec_setup *s, int batch, double alpha, int gamma, double *out, char *err,
                      size_t errlen)
{
    spec_setup t = *s;
    t.batch = batch;
    spec_estimate e;
    if (spec_estimate_compute(&t, alpha, gamma, &e, err, errlen) != 0)
        return -1;
    *out = e.speedup_roofline;
    return 0;
}

//> break_even_batch
int spec_break_even_batch(const spec_setup *s, double alpha, int gamma, int batch_max, char *err, size_t errlen)
{
    double sp;
    if (batch_max < 1)
        return 0;
    /* bracket: the last batch known to win (lo) and the first known to lose (hi) */
    int lo = 0, hi = 0;
    for (long b = 1;; b *= 2) {
        int bb = b < batch_max ? (int)b : batch_max;
        if (speedup_at(s, bb, alpha, gamma, &sp, err, errlen) != 0)
            return -1;
        if (sp < 1.0) {
            hi = bb;
            break;
        }
        lo = bb;
        if (bb == batch_max)
            return 0; /* no loss within the range */
    }
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        if (speedup_at(s, mid, alpha, gamma, &sp, err, errlen) != 0)
            return -1;
        if (sp < 1.0)
            hi = mid;
        else
            lo = mid;
    }
    return hi;
}
//< break_even_batch

//> spec_memory_fit
int spec_memory_fit(const spec_setup *s, memory_policy pol, int gamma, spec_fit *out, char *err, size_t errlen)
{
    if (gamma < 0 || !s->target || !s->gpu) {
        snprintf(err, errlen, "a fit check needs a target, a GPU and gamma >= 0");
        return -1;
    }
    int held = s->context + gamma + 1; /* KV per sequence at the end of a round */
    resident_model rm[2] = {{s->target, s->prec, s->tp}, {s->draft, s->prec, s->draft_tp}};
    int shared_draft = s->draft && !s->draft_own_gpus;
    spec_fit f = {0};
    if (memory_fit(s->gpu, pol, rm, shared_draft ? 2 : 1, 0, s->batch, held, &f.target_gpu, err, errlen) != 0)
        return -1;
    f.max_batch = f.target_gpu.max_batch;
    f.draft_separate = s->draft && s->draft_own_gpus;
    if (f.draft_separate) {
        if (memory_fit(s->gpu, pol, &rm[1], 1, 0, s->batch, held, &f.draft_gpu, err, errlen) != 0)
            return -1;
        if (f.draft_gpu.max_batch < f.max_batch)
            f.max_batch = f.draft_gpu.max_batch;
    }
    f.fits = s->batch >= 1 && s->batch <= f.max_batch;
    *out = f;
    return 0;
}
//< spec_memory_fit

int spec_best_gamma_roofline(const spec_setup *s, double alpha, int gamma_max, double *speedup, char *err,
                             size_t errlen)
{
    int best = -1;
    double best_s = 0.0;
    for (int g = 1; g <= gamma_max; g++) {
        spec_estimate e;
        if (spec_estimate_compute(s, alpha, g, &e, err, errlen) != 0)
            return -1;
        if (best < 0 || e.speedup_roofline > best_s) {
            best_s = e.speedup_roofline;
            best = g;
        }
    }
    if (best < 0) {
        snprintf(err, errlen, "gamma_max must be at least 1, got %d", gamma_max);
        return -1;
    }
    if (speedup)
        *speedup = best_s;
    return best;
}

double spec_break_even_alpha(const spec_setup *s, int gamma, char *err, size_t errlen)
{
    spec_estimate e;
    if (spec_estimate_compute(s, 1.0, gamma, &e, err, errlen) != 0)
        return -1.0;
    if (e.speedup_roofline < 1.0)
        return NAN; /* even alpha = 1 loses: no acceptance rate breaks even */
    double lo = 0.0, hi = 1.0; /* speedup(lo) <= 1 <= speedup(hi) */
    for (int i = 0; i < 60; i++) {
        double mid = 0.5 * (lo + hi);
        if (spec_estimate_compute(s, mid, gamma, &e, err, errlen) != 0)
            return -1.0;
        if (e.speedup_roofline < 1.0)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

//> heads
double spec_heads_params(const model_spec *m, int heads, int own_vocab)
{
    double per_head = (double)m->hidden * m->hidden + m->hidden; /* residual layer: weight and bias */
    if (own_vocab)
        per_head += (double)m->hidden * m->vocab;
    return heads * per_head;
}

double spec_heads_time(const model_spec *m, const gpu_spec *g, int heads, int own_vocab, int tp, int tokens,
                       precision prec)
{
    double peak = gpu_peak_flops(g, prec.compute);
    if (heads < 0 || tp < 1 || tokens < 1 || !(peak > 0))
        return NAN;
    /* split over the tp GPUs like the target's own projections */
    double params = spec_heads_params(m, heads, own_vocab) / tp;
    /* the heads' GEMMs as one lump: their kernels' fixed costs are not counted */
    op_cost gemms = op_lump("spec_heads", rate_class_gemm(prec.weights, prec.compute), 2.0 * tokens * params,
                            params * dtype_bytes(prec.weights), 0, 0);
    return price_op(&gemms, g, peak, tp, NULL);
}
//< heads
