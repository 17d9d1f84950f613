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

#endif
