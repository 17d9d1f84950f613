/* Chapter 13 fill-in kit.  Replace each TODO body with your own derivation,
 * then run `make exercise N=13`.  You may call the napkin library (memory.h,
 * moe.h, expert_parallel.h, disagg.h) or work from first principles.
 * Return NAN (or -1) for input you cannot use. */
#include "13-serving-todays-models.h"

#include <math.h>

double ex13_kv_bytes_per_sequence(const char *model_key, const char *kv_dtype, int context)
{
    /* TODO: MLA caches kv_lora + rope values a layer; GQA 2 x kv_heads x
     * head_dim; a windowed layer stops at its window. */
    return NAN;
}

int ex13_h200s_for_deepseek(int concurrency, int context, const char *layout)
{
    /* TODO: weights per GPU (the routed experts split by ep, or everything
     * by tp), then the KV each GPU must hold, against 90% of the H200. */
    return -1;
}

double ex13_experts_touched(int experts, int k, double tokens)
{
    /* TODO: E (1 - (1 - k/E)^T) */
    return NAN;
}

int ex13_tokens_to_cover(int experts, int k, double share)
{
    /* TODO */
    return -1;
}

double ex13_dispatch_bytes(double tokens, int experts, int k, int hidden, int ep, double bytes_per_value)
{
    /* TODO: the other GPUs each token's top-k reaches, one vector to each */
    return NAN;
}

double ex13_aggregated_tpot(double p, double d, int concurrency, int output)
{
    /* TODO */
    return NAN;
}

double ex13_aggregated_requests_per_s(double p, double d, int concurrency, int output, int gpus, int tp)
{
    /* TODO: Little's law on each replica's closed loop */
    return NAN;
}

double ex13_disagg_requests_per_s(double p, double d, int concurrency, int output, int prefill_gpus,
                                  int decode_gpus, int tp)
{
    /* TODO: the slower of the two pools */
    return NAN;
}

int ex13_prefix_max_concurrency(double kv_budget, double kv_per_token, int prompt, int output, int prefix,
                                double hit)
{
    /* TODO */
    return -1;
}
