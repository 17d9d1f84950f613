/* Chapter 13 worked answers, computed through the napkin library.  The
 * exercise tests check these functions against hand derivations; main()
 * records the numbers the written solutions quote. */
#include "13-serving-todays-models.h"

#include "comm.h"
#include "disagg.h"
#include "expert_parallel.h"
#include "memory.h"
#include "moe.h"
#include "notebook.h"
#include "request.h"
#include "specs.h"

#include <math.h>
#include <string.h>

double ex13_kv_bytes_per_sequence(const char *model_key, const char *kv_dtype, int context)
{
    model_spec m;
    dtype kv;
    if (!model_key || !kv_dtype || model_lookup(model_key, &m) != 0 || dtype_parse(kv_dtype, &kv) != 0 ||
        context < 0)
        return NAN;
    return kv_bytes_per_sequence(&m, kv, context);
}

int ex13_h200s_for_deepseek(int concurrency, int context, const char *layout)
{
    model_spec m;
    gpu_spec g;
    if (concurrency < 1 || context < 1 || !layout || model_lookup("deepseek-v3", &m) != 0 ||
        gpu_lookup("h200", &g) != 0)
        return -1;
    int ep = strcmp(layout, "ep") == 0;
    if (!ep && strcmp(layout, "tp") != 0)
        return -1;
    precision p = precision_uniform(DT_FP8);
    char err[256];
    for (int n = 1; n <= 64; n *= 2) {
        fit_check f;
        if (ep) {
            int each = (concurrency + n - 1) / n; /* data-parallel attention: each GPU its own share */
            if (ep_memory_fit(&m, &g, p, memory_policy_default(), n, each, context, &f, err, sizeof err) != 0)
                continue;
        } else {
            resident_model rm = {&m, p, n};
            if (memory_fit(&g, memory_policy_default(), &rm, 1, 0, concurrency, context, &f, err, sizeof err) != 0)
                continue; /* n does not divide the heads */
        }
        if (f.fits)
            return n;
    }
    return -1;
}

double ex13_experts_touched(int experts, int k, double tokens)
{
    if (experts < 1 || k < 1 || k > experts || !(tokens >= 0))
        return NAN;
    double pi[4096];
    if (experts > 4096 || moe_zipf_inclusion(experts, k, 0, pi) != 0)
        return NAN;
    return moe_expected_touched(pi, experts, tokens);
}

int ex13_tokens_to_cover(int experts, int k, double share)
{
    return moe_tokens_to_cover(experts, k, share);
}

double ex13_dispatch_bytes(double tokens, int experts, int k, int hidden, int ep, double bytes_per_value)
{
    if (!(tokens >= 0) || k < 1 || k > experts || hidden < 1 || ep < 1 || experts % ep != 0 ||
        !(bytes_per_value > 0))
        return NAN;
    return moe_alltoall_bytes(tokens, experts, k, hidden, ep, bytes_per_value);
}

double ex13_aggregated_tpot(double p, double d, int concurrency, int output)
{
    if (!(p > 0) || !(d > 0) || concurrency < 1 || output < 2)
        return NAN;
    return closed_loop_tpot(p, d, concurrency, output);
}

double ex13_aggregated_requests_per_s(double p, double d, int concurrency, int output, int gpus, int tp)
{
    if (!(p > 0) || !(d > 0) || concurrency < 1 || output < 1 || tp < 1 || gpus < tp)
        return NAN;
    return (gpus / tp) * concurrency / closed_loop_e2e(p, d, concurrency, output);
}

double ex13_disagg_requests_per_s(double p, double d, int concurrency, int output, int prefill_gpus,
                                  int decode_gpus, int tp)
{
    if (!(p > 0) || !(d > 0) || concurrency < 1 || output < 2 || tp < 1 || prefill_gpus < tp || decode_gpus < tp)
        return NAN;
    return fmin(disagg_prefill_rate(p, prefill_gpus, tp), disagg_decode_rate(d, concurrency, output, decode_gpus, tp));
}

int ex13_prefix_max_concurrency(double kv_budget, double kv_per_token, int prompt, int output, int prefix,
                                double hit)
{
    if (!(kv_budget >= 0) || !(kv_per_token > 0) || prompt < 1 || output < 1 || prefix < 0 || prefix >= prompt ||
        !(hit >= 0 && hit <= 1))
        return -1;
    double shared = hit > 0 && prefix > 0 ? prefix * kv_per_token : 0; /* the cached copy, held once */
    int own = hit > 0 ? prefix_own_tokens(prompt, output, prefix, hit) : prompt + output;
    double n = floor((kv_budget - shared) / (own * kv_per_token));
    return n < 0 ? 0 : (int)n;
}

#ifndef NB_EXERCISE_TEST
int main(void)
{
    nb_value("ch13_ex1_ds", "%.0f", ex13_kv_bytes_per_sequence("deepseek-v3", "bf16", 8192) / 1e6);
    nb_value("ch13_ex1_qwen", "%.0f", ex13_kv_bytes_per_sequence("qwen3-235b-a22b", "bf16", 8192) / 1e6);
    nb_value("ch13_ex1_oss", "%.0f", ex13_kv_bytes_per_sequence("gpt-oss-120b", "bf16", 8192) / 1e6);
    nb_value("ch13_ex2_ep128", "%d", ex13_h200s_for_deepseek(128, 8192, "ep"));
    nb_value("ch13_ex2_tp128", "%d", ex13_h200s_for_deepseek(128, 8192, "tp"));
    nb_value("ch13_ex2_ep512", "%d", ex13_h200s_for_deepseek(512, 8192, "ep"));
    int tp512 = ex13_h200s_for_deepseek(512, 8192, "tp");
    nb_value("ch13_ex2_tp512", "%s", tp512 < 0 ? "none, up to 64" : "some");
    nb_value("ch13_ex2_ep1024", "%d", ex13_h200s_for_deepseek(1024, 8192, "ep"));
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    nb_value("ch13_ex2_w8", "%.1f", ep_weight_bytes_per_gpu(&m, DT_FP8, 8) / 1e9);
    nb_value("ch13_ex2_w4", "%.1f", ep_weight_bytes_per_gpu(&m, DT_FP8, 4) / 1e9);
    nb_value("ch13_ex2_usable", "%.1f", 0.9 * g.mem_bytes / 1e9);
    nb_value("ch13_ex2_seq_gb", "%.3f", kv_bytes_per_sequence(&m, DT_FP8, 8192) / 1e9);
    nb_value("ch13_ex3_64", "%.1f", ex13_experts_touched(256, 8, 64));
    nb_value("ch13_ex3_cover", "%d", ex13_tokens_to_cover(256, 8, 0.9));
    nb_value("ch13_ex3_qwen_cover", "%d", ex13_tokens_to_cover(128, 8, 0.9));
    double b8 = ex13_dispatch_bytes(64, 256, 8, 7168, 8, 1), b32 = ex13_dispatch_bytes(64, 256, 8, 7168, 32, 1);
    nb_value("ch13_ex4_b8", "%.0f", b8);
    nb_value("ch13_ex4_b32", "%.0f", b32);
    nb_value("ch13_ex4_us", "%.1f", alltoall_time(&g, b8, 1.0, 50e9) * 1e6);
    nb_value("ch13_ex5_tpot_ms", "%.1f", ex13_aggregated_tpot(0.2, 0.025, 100, 512) * 1e3);
    nb_value("ch13_ex5_dis", "%.2f", ex13_disagg_requests_per_s(0.2, 0.025, 100, 512, 8, 8, 4));
    nb_value("ch13_ex5_agg", "%.2f", ex13_aggregated_requests_per_s(0.2, 0.025, 100, 512, 16, 4));
    nb_value("ch13_ex6_none", "%d", ex13_prefix_max_concurrency(60e9, 131072, 4096, 256, 3072, 0));
    nb_value("ch13_ex6_all", "%d", ex13_prefix_max_concurrency(60e9, 131072, 4096, 256, 3072, 1));
    nb_value("ch13_ex6_90", "%d", ex13_prefix_max_concurrency(60e9, 131072, 4096, 256, 3072, 0.9));
    return 0;
}
#endif
