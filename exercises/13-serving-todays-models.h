/* Chapter 13 exercises: latent attention's cache, the experts a batch
 * touches, the all-to-all of expert parallelism, disaggregated prefill and
 * decode, and prefix caching.
 *
 * Bytes, seconds and bytes/s are SI doubles.  Model and GPU keys are those
 * of code/specs/models.tsv and gpus.tsv ("deepseek-v3", "h200"); dtype is
 * "bf16" or "fp8".  Every function returns NAN (or -1 for a count) for
 * input it cannot use, and never crashes. */
#ifndef EXERCISES_13_SERVING_TODAYS_MODELS_H
#define EXERCISES_13_SERVING_TODAYS_MODELS_H

/* KV bytes one sequence of `context` tokens holds, whole model (windowed
 * layers keep at most their window). */
double ex13_kv_bytes_per_sequence(const char *model_key, const char *kv_dtype, int context);

/* The fewest H200s (1, 2, 4, ... up to 64) that serve `concurrency`
 * sequences of `context` tokens of DeepSeek-V3 in fp8 (weights and KV),
 * with layout "ep" (experts over the GPUs, attention data-parallel: each GPU
 * holds ceil(concurrency / n) sequences) or "tp" (tensor parallelism: each
 * GPU holds every sequence's latent); -1 when none does. */
int ex13_h200s_for_deepseek(int concurrency, int context, const char *layout);

/* Expected experts that at least one of `tokens` tokens routes to, uniform
 * top-k routing over `experts`. */
double ex13_experts_touched(int experts, int k, double tokens);
/* The fewest tokens that touch at least `share` of the experts, in expectation. */
int ex13_tokens_to_cover(int experts, int k, double share);

/* Bytes one GPU sends in a dispatch: `tokens` tokens, top-k of `experts`
 * spread evenly over ep GPUs, uniform routing, hidden width,
 * `bytes_per_value` a value; a token's copies bound for one GPU merged (sent
 * once to each other GPU its top-k reaches). */
double ex13_dispatch_bytes(double tokens, int experts, int k, int hidden, int ep, double bytes_per_value);

/* A closed-loop aggregated replica's TPOT: d + (C - 1) p / (output - 1). */
double ex13_aggregated_tpot(double p, double d, int concurrency, int output);
/* Requests/s of gpus / tp aggregated replicas: each C / (C p + (output - 1) d). */
double ex13_aggregated_requests_per_s(double p, double d, int concurrency, int output, int gpus, int tp);
/* Requests/s of a disaggregated server: prefill and decode pools of whole
 * tp-GPU instances, C requests in flight a decode instance. */
double ex13_disagg_requests_per_s(double p, double d, int concurrency, int output, int prefill_gpus,
                                  int decode_gpus, int tp);

/* The largest concurrency a replica holds with a cached shared prefix:
 * kv_budget bytes, kv_per_token bytes a token, `prefix` of each prompt
 * shared, a share `hit` of requests finding it (each holds prompt + output
 * - floor(hit x prefix) tokens of its own; the prefix is held once). */
int ex13_prefix_max_concurrency(double kv_budget, double kv_per_token, int prompt, int output, int prefix,
                                double hit);

#endif
