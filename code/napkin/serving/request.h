/* One request end to end on a replica that keeps `concurrency` requests in
 * flight: time to first token, time per output token, end-to-end latency,
 * throughput and cost per million tokens.
 *
 * The replica runs a closed loop: every slot holds one request; a request is
 * a prefill of its prompt, then output - 1 decode steps (the prefill yields
 * the first token).  Always busy, the replica runs either one prefill or one
 * decode step of every decoding slot, so by Little's law (C = throughput x
 * latency) the whole chain follows from two step times:
 *   p = the prompt's prefill (logits at its last position only),
 *   d = the mean decode step of a batch of C over the growing context;
 * without chunking
 *   e2e  = C p + (o - 1) d          (every slot's prefill stalls the others),
 *   TTFT = p,  TPOT = (e2e - p) / (o - 1) = d + (C - 1) p / (o - 1).
 * With chunked prefill (at most `chunk` prompt tokens a step), the prompt
 * rides on n = ceil(prompt / chunk) mixed steps; a steady share of slots is
 * prefilling, and each step carries the decodes of the others plus their
 * prompt tokens:
 *   t_mix = d(C_dec) + (the chunk's step time less its weight read, which
 *           the decode step already pays),
 *   TTFT = n t_mix, TPOT = t_mix, e2e = (n + o - 1) t_mix.
 * With pipeline parallelism (pp stages of tp GPUs, pipeline.h) p is one
 * prompt's trip through the stages and d the steady-state cycle of min(C, pp)
 * microbatches; chunked prefill is not modelled with pp > 1.
 * TTFT above is the prefill alone (a request that finds the GPU idle);
 * ttft_closed is what a closed-loop benchmark measures (closed_loop.h): the
 * start-up burst through the engine's token budget, then in the steady
 * state a departure interval, the step in flight, the prefills queued ahead
 * and its own, each with the per-request overhead, averaged over the
 * benchmark's requests (with chunked prefill or a pipeline: half a step and
 * the prefill, as before).  Everything
 * is checked against memory with memory_fit: C sequences of prompt + output
 * tokens on one stage's GPUs.
 *
 * Prefix caching (request_estimate_cached: the first S prompt tokens of
 * every request are shared, a system prompt, and a share h of requests
 * finds their KV cached): a hit prefills only the
 * prompt's last prompt - S tokens, attending to the S cached ones; a miss
 * prefills the whole prompt.  p = h p_hit + (1 - h) p_miss.  The cached
 * prefix is held once, shared by every slot; a miss holds its own copy, so
 * a slot holds prompt + output - h S tokens of its own (rounded down) and
 * the replica S more.  Not with chunked prefill or a pipeline. */
#ifndef NAPKIN_REQUEST_H
#define NAPKIN_REQUEST_H

#include "closed_loop.h"
#include "expert_parallel.h"
#include "memory.h"
#include "mtp.h"
#include "specs.h"
#include "transformer.h"

#include <stddef.h>

typedef struct {
    const model_spec *model;
    const gpu_spec *gpu; /* as the caller wants it timed: datasheet, derated or calibrated */
    precision prec;
    int tp;
    int prompt, output;  /* tokens; prompt >= 1, output >= 1 */
    int concurrency;     /* requests in flight, C >= 1 */
    int chunk;           /* prompt tokens a step with chunked prefill; 0 = the whole prompt at once */
    int all_logits;      /* 1: the prefill computes logits at every prompt position */
    memory_policy policy;
    double price_per_gpu_hour; /* money per GPU-hour for the costs; 0 = no cost */
    int pp;              /* pipeline stages, each of tp GPUs; 0 or 1 = none */
} request_setup;

typedef struct {
    double prefill_flop;      /* the prompt's prefill, one GPU of the group */
    double prefill_bytes;
    double prefill_time;      /* p: the whole prompt in one step, alone */
    bound_kind prefill_bound;
    double decode_step;       /* d: mean decode step of the decoding slots */
    double mixed_step;        /* t_mix with chunked prefill (0 without) */
    int prefill_steps;        /* n: steps a prompt takes (1 without chunking) */
    double ttft, tpot, e2e;   /* seconds; ttft: the prefill alone */
    double ttft_closed;       /* seconds: TTFT in the busy closed loop, waits included */
    bench_ttft bench;         /* its parts (closed_loop.h); zeros with chunked prefill or a pipeline */
    step_costs costs;         /* the linear step the closed loop and the simulation use */
    double user_tokens_per_s; /* 1 / TPOT */
    double tokens_per_s;      /* output tokens per second, the replica */
    double requests_per_s;
    int gpus;                 /* tp x pp */
    double gpu_seconds_per_request;
    double cost_per_m_input, cost_per_m_output; /* price units per million tokens; NAN without a price */
    fit_check fit;            /* C sequences of prompt + output tokens */
    int running;              /* requests the KV cache holds at once: C, fewer (the rest queue), 0 (none fits) */
    mtp_round mtp;            /* with multi-token prediction: the round at the mean context (zeros without);
                                 decode_step is then its time per output token */
} request_estimate;

/* What a request_setup leaves out (so every initializer of it stays as it
 * is): the replica's layout, expert parallelism and the router, and a
 * cached prefix.
 *  - layout (layout.h; layout.tp must be the setup's tp): all 0 (not
 *    given) means tp alone, or with ep.ep > 1 the group below.  With
 *    attention_dp > 1 or moe_ep > 1 the setup is one attention rank of the
 *    replica, every rank running the same phase at once: concurrency,
 *    throughput, cost and gpus are the rank's (its tp GPUs; the replica's
 *    are attention_dp times), the step is layout_decoder_step_cost's and
 *    memory one GPU's (layout_fit_adjust).  Not with a pipeline.
 *  - ep.ep > 1: the replica is one of ep / tp tensor-parallel attention
 *    replicas of an expert-parallel group of ep GPUs (expert_parallel.h),
 *    every replica running the same phase at once; concurrency, throughput
 *    and cost are one attention replica's (its tp GPUs), and memory is one
 *    GPU's of the group (ep_fit_adjust).  Not with a pipeline.
 *  - ep.routing_skew > 0 without ep: the decode reads the experts a Zipf
 *    router touches (step_shape.routing_skew).
 *  - prefix_tokens, prefix_hit: as request_estimate_cached's.
 *  - budget, requests, overhead: the benchmark of closed_loop.h (0: its
 *    defaults, and no overhead).
 *  - prefill_first: the engine's scheduler runs waiting prompts before any
 *    decode (closed_loop.h): the closed loop's cohorts then set TPOT and
 *    e2e too.
 *  - mixed_steps (not with prefill_first, a pipeline or chunked prefill):
 *    the engine's in-flight batching puts each waiting prompt, whole when it
 *    fits the token budget B, into a step with every running decode, so the
 *    weights a decode step reads serve the prompt too (TensorRT-LLM's
 *    in-flight batching [@trtllm-tuning], vLLM's scheduler filling the
 *    budget after the running decodes [@vllm-chunked-prefill]; SGLang runs
 *    prompts first, prefill_first).  A request spends
 *    n = ceil(P / B) steps on its prompt and R = (o - 1) / E[N] decode steps
 *    (rounds with MTP, E[N] their tokens; R = o - 1 without); each of its
 *    decode steps carries the other C - 1 prompts spread over their n + R
 *    steps, m = (C - 1) / (n + R) a step, beside 1 + (C - 1) R / (n + R)
 *    decodes (rounded).  With p the prompt's
 *    step alone, w_p its weight read, d the decode step at those decodes and
 *    w_d its weight read, a step holding a prompt reads max(w_p, w_d) (a
 *    prompt touches every expert, a small decode batch a few) and adds the
 *    prompt's work beyond its weight read:
 *      TPOT = d + (min(1, m n) (max(w_p, w_d) - w_d) + m (p - w_p)) / E[N],
 *    against the unmixed d + (C - 1) p / (o - 1), whose every prefill reads
 *    the weights again.  e2e = n (d E[N] + max(w_p, w_d) - w_d) + p - w_p +
 *    (o - 1) TPOT (its own prompt's steps, then its decodes); TTFT and
 *    ttft_closed as without (the closed loop of closed_loop.h already mixes).
 *  - mtp_steps > 0: the model's MTP module drafts mtp_steps tokens a step,
 *    each accepted with probability mtp_accept (mtp.h); the decode step d
 *    becomes the round's time per output token, the module is resident.
 *    With a layout the verification is the layout's step and the module's
 *    layer is split as the main model's (layout_mtp_pass_cost).  Not with a
 *    pipeline or chunked prefill. */
typedef struct {
    ep_layout ep; /* with a layout: the all-to-all's links, router and imbalance (its ep is the layout's
                     moe_ep; gpus_per_node 0: ep_links_default's) */
    int prefix_tokens;
    double prefix_hit;
    int budget, requests;
    double overhead;
    int departure_wait;
    int prefill_first;
    int mixed_steps;   /* 1: in-flight batching, prompts ride in the decode steps (request_mixed_tpot) */
    int mtp_steps;     /* 0: no multi-token prediction */
    double mtp_accept;
    parallel_layout layout;
} request_options;

/* The layout a setup and its options describe (request_options.layout). */
parallel_layout request_layout(const request_setup *s, const request_options *o);

/* Mean TTFT of a request arriving in a busy closed loop: half the decode
 * step d in flight, the M/D/1 wait behind queued prefills of p each (the
 * prefill queue busy a share rho of the time), then its own prefill. */
double closed_loop_ttft(double p, double d, double rho);

/* Fill *out.  Returns 0 (also when the setup does not fit: out->fit.fits is
 * 0), or -1 with a message for a bad setup.  An engine never turns a request
 * away for want of KV cache: it runs the B = fit.max_batch requests it holds
 * and keeps the other C - B waiting in its queue (vLLM's and SGLang's
 * schedulers admit while blocks last, TensorRT-LLM's while it can guarantee
 * them).  So when C does not fit but B >= 1 (running = B), the times are
 * those of B in flight, and a client of the closed loop waits (C / B - 1)
 * e2e_B for a slot before its request starts: that wait adds to e2e and
 * ttft_closed, while TPOT and the throughput are B's.  running = 0: not one
 * sequence fits, and the times are those C would have. */
int request_estimate_compute(const request_setup *s, request_estimate *out, char *err, size_t errlen);

/* One step that prefills `batch` whole prompts of s->prompt tokens at once
 * on one attention replica (with o->ep, every replica of the group doing the
 * same), logits at each prompt's last position: the step a prefill server
 * runs when it takes `batch` waiting prompts together.  batch 1 is
 * request_estimate_with's prefill_time (without a cached prefix).  Returns
 * 0, or -1 with a message. */
int request_prefill_step(const request_setup *s, const request_options *o, int batch, double *time, char *err,
                         size_t errlen);

/* The closed loop's arithmetic, for C requests in flight, prefill p, mean
 * decode step d, o output tokens: e2e = C p + (o - 1) d; TPOT = (e2e - p) /
 * (o - 1) (0 for o = 1); requests/s = C / e2e. */
double closed_loop_e2e(double p, double d, int concurrency, int output);
double closed_loop_tpot(double p, double d, int concurrency, int output);

/* Tokens a slot holds of its own with a cached prefix: prompt + output -
 * floor(hit x prefix). */
int prefix_own_tokens(int prompt, int output, int prefix, double hit);

/* The same with prefix caching: prefix_tokens S (0 .. prompt - 1) shared by
 * every prompt, found cached by a share prefix_hit (0 .. 1) of requests;
 * (0, 0) is request_estimate_compute. */
int request_estimate_cached(const request_setup *s, int prefix_tokens, double prefix_hit, request_estimate *out,
                            char *err, size_t errlen);

/* request_estimate_cached with options (NULL: none). */
int request_estimate_with(const request_setup *s, const request_options *o, request_estimate *out, char *err,
                          size_t errlen);

/* The smallest concurrency whose throughput reaches `rate` requests/s, within
 * 1 .. the largest that fits; 0 when even that falls short (the replica
 * cannot serve the rate), -1 with a message for a bad setup.  Throughput
 * grows with the concurrency (bisection). */
int request_concurrency_for_rate(const request_setup *s, double rate, char *err, size_t errlen);
int request_concurrency_for_rate_with(const request_setup *s, const request_options *o, double rate, char *err,
                                      size_t errlen);

/* The largest concurrency that fits memory and meets both targets (a target
 * <= 0 is no target), the TTFT as the benchmark measures it (ttft_closed):
 * 0 when none does, -1 with a message for a bad setup.  TPOT is bisected
 * (it grows with C); TTFT is scanned down from there (it need not). */
int request_best_concurrency(const request_setup *s, double ttft_max, double tpot_max, char *err, size_t errlen);
int request_best_concurrency_with(const request_setup *s, const request_options *o, double ttft_max,
                                  double tpot_max, char *err, size_t errlen);

#endif
