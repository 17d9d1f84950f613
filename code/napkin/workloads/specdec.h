/* Speculative decoding: a draft proposes gamma tokens, the target checks them
 * in one forward pass and keeps the longest accepted prefix plus one token of
 * its own (the correction on a rejection, the bonus token when all pass).
 *
 * The acceptance model is Leviathan et al. (2023): each draft token is
 * accepted independently with probability alpha.  N, the tokens a round
 * yields, is then a geometric count capped at gamma + 1:
 *     P(N = k) = alpha^(k-1) (1 - alpha)  for k = 1 .. gamma
 *     P(N = gamma + 1) = alpha^gamma
 *     E[N] = (1 - alpha^(gamma+1)) / (1 - alpha)
 *
 * Two cost regimes for a round (gamma draft steps, then one verification):
 *  (i)  free verification: checking gamma+1 tokens costs one target step, so
 *       a round costs gamma*c + 1 target steps (c = draft step / target step);
 *  (ii) roofline verification: the verification step processes gamma+1 new
 *       tokens for each of the batch's sequences and costs what
 *       decoder_step_cost says; the draft steps too.
 * Regime (i) is the memory-bound limit of (ii). */
#ifndef NAPKIN_SPECDEC_H
#define NAPKIN_SPECDEC_H

#include "accepted_tokens.h"
#include "memory.h"
#include "specs.h"
#include "transformer.h"

#include <stddef.h>

/* --- the capped geometric process (alpha in [0, 1], gamma >= 0) --- */

/* E[N]: spec_expected_tokens, accepted_tokens.h (model/: multi-token
 * prediction prices its rounds with the same mean). */
/* P(N = k) for k in 1 .. gamma+1; 0 outside. */
double spec_tokens_pmf(double alpha, int gamma, int k);
/* P(N <= k). */
double spec_tokens_cdf(double alpha, int gamma, int k);
/* Var[N]. */
double spec_tokens_variance(double alpha, int gamma);
/* Mean draft tokens evaluated (Bernoulli trials) per round: each accepted
 * token, plus the first rejection if there is one: (1 - alpha^gamma)/(1 - alpha). */
double spec_expected_trials(double alpha, int gamma);

/* --- regime (i): Leviathan's closed forms --- */

/* Walltime improvement E[N] / (gamma*c + 1). */
double spec_walltime_speedup(double alpha, int gamma, double c);
/* Arithmetic operations relative to plain decoding:
 * (1 - alpha)(gamma*c_hat + gamma + 1) / (1 - alpha^(gamma+1)),
 * c_hat = draft operations per token over target operations per token. */
double spec_operations_factor(double alpha, int gamma, double c_hat);
/* The gamma in 1 .. gamma_max with the highest walltime speedup (the
 * smallest such gamma on a tie); its speedup into *speedup (may be NULL). */
int spec_best_gamma(double alpha, double c, int gamma_max, double *speedup);
/* The smallest alpha whose walltime speedup reaches target at gamma and c
 * (bisection: the speedup grows with alpha); 0 when alpha = 0 already
 * reaches it (a target of 1 / (1 + gamma c) or less), NAN when even
 * alpha = 1 does not. */
double spec_alpha_for_speedup(double target, int gamma, double c);

/* --- regime (ii): the roofline step model --- */

typedef struct {
    const model_spec *target;
    const model_spec *draft; /* NULL: the draft costs draft_c target decode steps */
    const gpu_spec *gpu;
    int tp;       /* tensor parallel degree of the target */
    int draft_tp; /* of the draft */
    int draft_own_gpus; /* 0: the draft is time-sliced on the target's GPUs (its weights and KV share
                           their memory); 1: it runs on draft_tp GPUs of its own */
    double draft_c; /* used when draft is NULL */
    int batch;
    int context;
    precision prec;
    int skip_comm; /* 1: leave the TP collectives out of every step (the pure roofline) */
} spec_setup;

/* bf16 throughout, draft_tp = tp on the target's GPUs, draft_c = 0. */
spec_setup spec_setup_default(const model_spec *target, const model_spec *draft, const gpu_spec *gpu, int tp,
                              int batch, int context);

typedef struct {
    double t_target;      /* one plain decode step of the target at the batch */
    double t_verify;      /* one target step with gamma+1 new tokens per sequence */
    double t_draft;       /* one draft decode step */
    double c;             /* t_draft / t_target */
    double verify_ratio;  /* t_verify / t_target: 1 while memory-bound, up to gamma+1 */
    double tokens;        /* E[N] */
    double speedup_free;  /* regime (i) with this c */
    double speedup_roofline; /* regime (ii): E[N] t_target / (gamma t_draft + t_verify) */
} spec_estimate;

/* Fill *out for one alpha and gamma.  Returns 0, or -1 with a message for a
 * bad alpha, gamma or shape. */
int spec_estimate_compute(const spec_setup *s, double alpha, int gamma, spec_estimate *out, char *err,
                          size_t errlen);

/* Does the setup fit at its batch?  The target's GPUs hold the target and,
 * when the draft shares them, the draft: weights and the KV of every
 * sequence for both.  A draft on GPUs of its own must fit there with its KV.
 * Every sequence holds context + gamma + 1 tokens of KV (the speculated
 * tokens are written before they are accepted). */
typedef struct {
    fit_check target_gpu; /* one of the target's GPUs */
    fit_check draft_gpu;  /* one of the draft's own GPUs (meaningful when draft_separate) */
    int draft_separate;   /* 1: a draft model on GPUs of its own */
    int max_batch;        /* the largest batch both sides hold */
    int fits;             /* the setup's batch fits */
} spec_fit;

/* Fill *out; 0, or -1 with a message for a bad setup or policy. */
int spec_memory_fit(const spec_setup *s, memory_policy pol, int gamma, spec_fit *out, char *err, size_t errlen);

/* The smallest batch in 1 .. batch_max (the setup's own batch is ignored) at
 * which the regime (ii) speedup falls below 1; 0 when it never does in that
 * range, -1 with a message on a bad setup.  Pass the memory limit
 * (spec_fit.max_batch) as batch_max, or a loss is found where no batch can
 * exist.  The speedup falls as the batch grows (verification leaves the
 * memory-bound region before the plain step does), so the search doubles to
 * bracket the crossing and then bisects: about 2 log2(batch_max) estimates. */
int spec_break_even_batch(const spec_setup *s, double alpha, int gamma, int batch_max, char *err, size_t errlen);

/* The gamma in 1 .. gamma_max with the best regime (ii) speedup at the
 * setup's batch; its speedup into *speedup.  -1 with a message on error. */
int spec_best_gamma_roofline(const spec_setup *s, double alpha, int gamma_max, double *speedup, char *err,
                             size_t errlen);

/* The acceptance rate at which the regime (ii) speedup is exactly 1 at the
 * setup's batch (bisection over alpha; the speedup grows with alpha);
 * NAN when even alpha = 1 loses (no acceptance rate breaks even), -1 with a
 * message on error. */
double spec_break_even_alpha(const spec_setup *s, int gamma, char *err, size_t errlen);

/* --- draft heads on the target (Medusa-style) --- */

/* Parameters of `heads` extra decoding heads: each one hidden x hidden
 * residual layer, plus its own hidden x vocab projection when own_vocab
 * (otherwise the heads share the target's output head). */
double spec_heads_params(const model_spec *m, int heads, int own_vocab);
/* Added time per target step on one GPU of a tp group to run the heads on
 * `tokens` positions: the roofline time of reading their weights (stored at
 * prec.weights) and applying them (at prec.compute).  NAN for bad input. */
double spec_heads_time(const model_spec *m, const gpu_spec *g, int heads, int own_vocab, int tp, int tokens,
                       precision prec);

#endif
