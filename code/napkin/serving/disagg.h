/* Disaggregated prefill and decode: prompts run on a pool of prefill GPUs,
 * their KV moves to a pool of decode GPUs, and the decode GPUs run only
 * decode steps, so no prefill stalls a decoding request.
 *
 * From request.h's two step times for the setup (tp GPUs an instance, C
 * requests in flight on a decode instance):
 *   p = one prompt's prefill, d = the mean decode step of a batch of C;
 *   a prefill instance serves 1/p prompts a second, a decode instance
 *   C / ((output - 1) d) requests a second;
 *   the KV of a prompt, prompt x KV per token per GPU on each of the tp GPUs,
 *   crosses `kv_link_bw` per GPU (NVLink, PCIe or the network) in
 *   t_kv = latency + bytes / kv_link_bw;
 *   TTFT = p + t_kv, TPOT = d;
 *   throughput = min(prefill pool, decode pool), and the balanced split
 *   puts prefill_gpus / decode_gpus = p C / ((output - 1) d).
 * The aggregated server at the same GPU count runs (gpus / tp) replicas of
 * request.h's closed loop at the same C.  Queueing, and the prefill pool's
 * batching of several prompts, are left out. */
#ifndef NAPKIN_DISAGG_H
#define NAPKIN_DISAGG_H

#include "layout.h"
#include "request.h"

typedef struct {
    request_setup base;   /* model, GPU, tp, prompt, output, concurrency C of a decode instance, policy */
    int prefill_gpus;     /* a multiple of tp */
    int decode_gpus;      /* a multiple of tp */
    double kv_link_bw;    /* bytes/s per GPU for the KV hand-off */
    double kv_link_latency; /* seconds, fixed per hand-off */
} disagg_setup;

typedef struct {
    double prefill_time;   /* p */
    double decode_step;    /* d */
    double kv_bytes;       /* KV of one prompt, all GPUs of an instance */
    double kv_time;        /* t_kv */
    double ttft, tpot;
    double prefill_rate;   /* requests/s, the prefill pool */
    double decode_rate;    /* requests/s, the decode pool */
    double requests_per_s; /* the smaller */
    double tokens_per_s;   /* output tokens/s */
    double balanced_ratio; /* prefill GPUs per decode GPU that balance the two pools */
    int fits;              /* C sequences of prompt + output fit a decode instance */
    int max_concurrency;   /* the largest C that fits */
    /* the aggregated server, (prefill_gpus + decode_gpus) / tp replicas at agg_concurrency:
     * the same C for disagg_estimate, the largest C meeting the same targets
     * for disagg_search (0 and NANs when none does) */
    int agg_concurrency;
    double agg_ttft, agg_tpot, agg_requests_per_s, agg_tokens_per_s;
} disagg_result;

/* Requests/s of a prefill pool of prefill_gpus / tp instances (1/p each)
 * and a decode pool of decode_gpus / tp instances (C / ((o - 1) d) each;
 * infinite for o = 1). */
double disagg_prefill_rate(double p, int prefill_gpus, int tp);
double disagg_decode_rate(double d, int concurrency, int output, int decode_gpus, int tp);

/* Returns 0, or -1 with a message for a bad setup (pools not multiples of tp
 * or empty, kv_link_bw <= 0, what request_estimate_compute refuses). */
int disagg_estimate(const disagg_setup *s, disagg_result *out, char *err, size_t errlen);

/* The split of `gpus` GPUs (multiples of tp) and the decode concurrency
 * that serve the most requests/s with TTFT <= ttft_max and TPOT <= tpot_max
 * (<= 0: no target), C from 1 to what fits; the aggregated fields are the
 * aggregated server's best under the same targets on the same GPUs.
 * *found = 0 when no split meets them.  Returns 0, or -1 with a message for
 * a bad setup. */
int disagg_search(const disagg_setup *s, int gpus, double ttft_max, double tpot_max, disagg_setup *best,
                  disagg_result *best_result, int *found, char *err, size_t errlen);

/* Open-loop arrivals at `rate` requests/s on one split: the smallest decode
 * concurrency C (1 .. what fits a decode instance) at which the split
 * serves the rate, found by bisection (requests/s grow with C), in *c; 0
 * when it cannot (the prefill pool's 1/p per instance, or the fullest decode
 * pool, falls short: *out is then the fullest split's).  The aggregated
 * fields of *out are the aggregated server's on the same GPUs at the same
 * rate: (prefill + decode) / tp replicas, each at the smallest C that serves
 * its share (request_concurrency_for_rate; agg_concurrency 0 and NANs when
 * none does).  Returns 0, or -1 with a message for a bad setup or rate. */
int disagg_for_rate(const disagg_setup *s, double rate, int *c, disagg_result *out, char *err, size_t errlen);

/* ---- Pools as deployed: each its own layout, worker count and batch ----
 *
 * A pool is `workers` replicas of one parallel_layout (layout.h): each
 * worker spans tp x attention_dp GPUs and runs attention_dp attention ranks
 * in step.  A prefill worker's step prefills `batch` prompts on every rank
 * (p_B, request_prefill_step), a decode worker's step advances `batch`
 * sequences on every rank (d, request.h's mean decode step), so
 *   prefill pool:  workers x attention_dp x B / p_B prompts/s,
 *   decode pool:   workers x attention_dp x C / ((o - 1) d) requests/s,
 *   concurrency:   N = C x attention_dp x workers (decode), in flight at once.
 * The KV of a prompt, one copy of the cache a decode rank needs
 * (kv_bytes_per_token x prompt), leaves the prefill rank's tp GPUs, each its
 * 1/tp share over its own link, in t_kv = latency + bytes / (tp link_bw).
 * The link: NVLink (the GPU row's link_bw) when both pools fit in one node
 * of gpus_per_node GPUs, else the network, net_bw per GPU
 * (disagg_kv_link).
 * TTFT = W + p_B + t_kv: prompts reach the prefill pool at the rate X the
 * split serves.  Below the prefill pool's capacity (rho < 1) W is the M/D/c
 * wait (queue.h's mdc_formula) of c = workers x attention_dp x B prompt
 * slots of p_B each; a prefill pool that sets X (rho = 1) holds every
 * request not decoding, and W follows from the closed loop by Little's law:
 * N / X = TTFT + (o - 1) d.  TPOT = d (the decode step at the full batch C:
 * an upper bound when the prefill pool leaves decode slots empty). */

typedef struct {
    parallel_layout layout;
    int workers;  /* replicas of the layout in the pool, >= 1 */
    int batch;    /* per attention rank: prompts a prefill step takes, or sequences a decode step carries */
} disagg_pool;

typedef struct {
    request_setup base;    /* model, GPU (as timed), precision, prompt, output, policy, price; tp and
                              concurrency are set per pool */
    request_options opt;   /* the expert-parallel links (ep_layout's gpus_per_node, net_bw, bytes per value,
                              imbalance, routing_skew; its ep is set per pool) */
    disagg_pool prefill, decode;
    double kv_link_bw;      /* bytes/s per GPU for the hand-off; 0: chosen by disagg_kv_link */
    double kv_link_latency; /* seconds a hand-off */
} disagg_plan;

typedef struct {
    double prefill_step;    /* p_B: one prefill step of B prompts a rank */
    double decode_step;     /* d */
    double kv_bytes, kv_time;
    int kv_over_nvlink;     /* 1: NVLink inside a node; 0: the network (or the link given) */
    double kv_link_bw;
    double prefill_rho;     /* X over the prefill pool's capacity */
    double prefill_wait;    /* W */
    double ttft, tpot;
    double prefill_rate, decode_rate, requests_per_s, tokens_per_s;
    int gpus;               /* both pools */
    int concurrency;        /* N = C x attention_dp x decode workers */
    double tokens_per_s_per_gpu;
    int fits;               /* the decode batch and the prefill batch fit their GPUs */
    int max_batch;          /* the largest decode batch per rank that fits */
} disagg_pools_result;

/* The request_setup and request_options that price a pool of layout l with
 * `batch` sequences a rank through request.h: tp = l.tp, and for a mixture
 * request_options.layout = l (any tp x attention_dp = moe_tp x moe_ep:
 * experts tensor-split, whole on each GPU of an expert group, or both; the
 * setup is one attention rank), ep.ep its moe_ep for the all-to-all's
 * links.  A dense model's attention_dp ranks are independent tp replicas
 * (no layout).  A mixture's layout whose expert split does not cover its
 * GPUs is refused naming `prefix` ("prefill-" or "decode-").  Returns 0, or
 * -1 with a message. */
int disagg_pool_request(const disagg_plan *p, const parallel_layout *l, int batch, const char *prefix,
                        request_setup *s, request_options *o, char *err, size_t errlen);

/* The hand-off link of pools that span `gpus` GPUs: NVLink (1) at the row's
 * link_bw when gpus <= gpus_per_node and the row has a link, else the
 * network (0) at net_bw per GPU.  *bw receives the bytes/s. */
int disagg_kv_link(const gpu_spec *g, int gpus, int gpus_per_node, double net_bw, double *bw);

/* The prefill wait W of the model above: rate x prompts/s arriving at
 * `slots` prompt slots of p_B each, the closed loop's Little's law when the
 * prefill pool is saturated (concurrency N, decode span (o - 1) d). */
double disagg_prefill_wait(double rate, double prefill_capacity, int slots, double p_b, double decode_span,
                           int concurrency, double kv_time);

/* Fill *out for one plan.  Returns 0 (also when it does not fit: out->fits
 * is 0), or -1 with a message naming the pool's flag for a bad layout. */
int disagg_pools_estimate(const disagg_plan *p, disagg_pools_result *out, char *err, size_t errlen);

/* The same at an open-loop `rate` requests/s: the smallest decode batch
 * that serves it in *batch (0 when the fullest cannot, or the prefill pool
 * falls short); TTFT's wait is the M/D/c one at that rate. */
int disagg_pools_for_rate(const disagg_plan *p, double rate, int *batch, disagg_pools_result *out, char *err,
                          size_t errlen);

/* The candidate layouts of one replica up to `gpus` GPUs that
 * disagg_pool_request prices: tensor-parallel degrees dividing the heads;
 * for a mixture also the expert groups of g GPUs (g dividing the experts)
 * with attention ranks of every tp dividing g (tp 1: DEP g).  Returns the
 * count (at most max). */
int disagg_candidate_layouts(const model_spec *m, int gpus, parallel_layout *out, int max);

/* The split of at most `gpus` GPUs that serves the most output tokens/s per
 * GPU under TTFT <= ttft_max and TPOT <= tpot_max (<= 0: no target): every
 * pair of candidate layouts, worker counts, and the largest decode batch
 * meeting both; p->prefill.batch is kept (0: 1).  *found 0 when none does.
 * Returns 0, or -1 with a message (also for gpus above
 * DISAGG_SEARCH_MAX_GPUS: the pairs of worker counts grow as its square). */
#define DISAGG_SEARCH_MAX_GPUS 64
int disagg_pools_search(const disagg_plan *p, int gpus, double ttft_max, double tpot_max, disagg_plan *best,
                        disagg_pools_result *best_result, int *found, char *err, size_t errlen);

/* The aggregated server's best on the same GPUs: over the same candidate
 * layouts, the largest concurrency meeting the targets (TTFT as the closed
 * loop's benchmark measures it), ranked by output tokens/s per GPU.
 * *layout receives the winner, *concurrency its concurrency per attention
 * rank (0: none meets them), *e its estimate (one attention rank's).
 * Returns 0, or -1 with a message. */
int disagg_aggregated_best(const disagg_plan *p, int gpus, double ttft_max, double tpot_max, parallel_layout *layout,
                           int *concurrency, request_estimate *e, double *tokens_per_s_per_gpu, char *err,
                           size_t errlen);

#endif
