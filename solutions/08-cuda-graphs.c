/* Chapter 8 worked answers, computed through the napkin library.  The
 * exercise tests check these functions against hand derivations; main()
 * records the numbers the written solutions quote. */
#include "08-cuda-graphs.h"

#include "graphs.h"
#include "memory.h"
#include "notebook.h"
#include "specs.h"
#include "transformer.h"

#include <math.h>
#include <stdio.h>

static step_shape shape(int batch, int context, int tp)
{
    return decode_shape(batch, context, tp, precision_uniform(DT_BF16));
}

int ex08_kernels(const char *model_key, int tp, const char *fusion)
{
    model_spec m;
    int f;
    step_kernels k;
    char err[256];
    if (model_lookup(model_key, &m) != 0 || fusion_parse(fusion, &f) != 0)
        return -1;
    step_shape s = shape(1, 1, tp);
    return step_kernel_count(&m, &s, f, &k, err, sizeof err) == 0 ? k.total : -1;
}

/* One step with no padding, or padded to vLLM's list up to 512. */
static int step(const char *model_key, const char *gpu_key, const step_shape *s, double launch_us, double node_us,
                int padded, graph_step *out)
{
    model_spec m;
    gpu_spec g;
    char err[256];
    if (model_lookup(model_key, &m) != 0 || gpu_lookup(gpu_key, &g) != 0 || !(launch_us >= 0) || !(node_us >= 0))
        return -1;
    launch_costs lc = launch_costs_default();
    lc.launch = launch_us * 1e-6;
    lc.node = node_us * 1e-6;
    capture_list c;
    capture_list_vllm(512, &c);
    return graph_step_cost(&m, &g, s, FUSE_NONE, &lc, padded ? &c : NULL, out, err, sizeof err);
}

double ex08_share_saved(const char *model_key, const char *gpu_key, int tp, int batch, int context, double launch_us,
                        double node_us)
{
    step_shape s = shape(batch, context, tp);
    graph_step r;
    return step(model_key, gpu_key, &s, launch_us, node_us, 0, &r) == 0 ? r.saved : NAN;
}

double ex08_implied_launch_us(double eager_step_s, int kernels)
{
    return eager_step_s > 0 && kernels > 0 ? eager_step_s / kernels * 1e6 : NAN;
}

int ex08_padded_tokens(int tokens, int max_size)
{
    if (tokens < 1 || max_size < 1)
        return -1;
    capture_list c;
    capture_list_vllm(max_size, &c);
    return capture_padded_tokens(&c, tokens);
}

double ex08_pad_extra_seconds(const char *model_key, const char *gpu_key, int tp, int batch, int context)
{
    step_shape s = shape(batch, context, tp);
    graph_step r;
    if (step(model_key, gpu_key, &s, 4, 1, 1, &r) != 0)
        return NAN;
    return r.padded_tokens > 0 ? r.gpu_padded - r.gpu : NAN;
}

int ex08_spec_padded_tokens(int batch, int k, int max_size)
{
    if (batch < 1 || k < 0 || max_size < 1)
        return -1;
    return ex08_padded_tokens(batch * (1 + k), max_size);
}

static int max_batch(const model_spec *m, const gpu_spec *g, int tp, int context, double extra)
{
    resident_model rm = {m, precision_uniform(DT_BF16), tp};
    fit_check f;
    char err[256];
    if (memory_fit(g, memory_policy_default(), &rm, 1, extra, 1, context + 1, &f, err, sizeof err) != 0)
        return -1;
    return f.max_batch;
}

int ex08_seqs_lost(const char *model_key, const char *gpu_key, int tp, int context, int n_graphs,
                   double mib_per_graph)
{
    model_spec m;
    gpu_spec g;
    if (model_lookup(model_key, &m) != 0 || gpu_lookup(gpu_key, &g) != 0 || n_graphs < 0 || !(mib_per_graph >= 0))
        return -1;
    int without = max_batch(&m, &g, tp, context, 0);
    int with = max_batch(&m, &g, tp, context, n_graphs * mib_per_graph * MiB);
    return without < 0 || with < 0 ? -1 : without - with;
}

int ex08_threshold_batch(const char *model_key, const char *gpu_key, int tp, int context, double launch_us,
                         double threshold)
{
    model_spec m;
    gpu_spec g;
    char err[256];
    if (model_lookup(model_key, &m) != 0 || gpu_lookup(gpu_key, &g) != 0 || !(launch_us >= 0))
        return -1;
    capture_list c;
    capture_list_vllm(512, &c);
    int limit = max_batch(&m, &g, tp, context, capture_memory_bytes(&c, GRAPH_BYTES_DEFAULT));
    if (limit < 1)
        return -1;
    launch_costs lc = launch_costs_default();
    lc.launch = launch_us * 1e-6;
    step_shape s = shape(1, context, tp);
    int b;
    return graph_threshold_batch(&m, &g, &s, FUSE_NONE, &lc, threshold, limit, &b, err, sizeof err) == 0 ? b : -1;
}

#ifndef NB_EXERCISE_TEST
int main(void)
{
    /* 1: graphs make kernels faster? */
    nb_value("ch08_ex1_saved4", "%.0f", 100 * ex08_share_saved("llama3-8b", "h100", 1, 1, 1024, 4, 1));
    nb_value("ch08_ex1_saved20", "%.1f", 100 * ex08_share_saved("llama3-8b", "h100", 1, 1, 1024, 20, 1));
    graph_step r;
    step_shape s1 = shape(1, 1024, 1);
    step("llama3-8b", "h100", &s1, 20, 1, 0, &r);
    nb_value("ch08_ex1_gpu_ms", "%.2f", r.gpu * 1e3);
    nb_value("ch08_ex1_host20_ms", "%.2f", r.host_eager * 1e3);
    nb_value("ch08_ex1_host4_ms", "%.2f", host_time_eager(r.kernels.total, &(launch_costs){4e-6, 4e-6, 1e-6, 0}) * 1e3);
    nb_value("ch08_ex1_graph_host_ms", "%.3f", r.host_graph * 1e3);
    /* 2: kernels per step */
    nb_value("ch08_ex2_8b", "%d", ex08_kernels("llama3-8b", 1, "none"));
    nb_value("ch08_ex2_70b_tp8", "%d", ex08_kernels("llama3-70b", 8, "none"));
    nb_value("ch08_ex2_70b_tp8_all", "%d", ex08_kernels("llama3-70b", 8, "all"));
    nb_value("ch08_ex2_70b_tp1", "%d", ex08_kernels("llama3-70b", 1, "none"));
    /* 3: what llama.cpp's gain implies (issue #6763: 143.35 -> 163.83 tokens/s) */
    int k8 = ex08_kernels("llama3-8b", 1, "none");
    nb_value("ch08_ex3_us_323", "%.1f", ex08_implied_launch_us(1 / 143.35, k8));
    nb_value("ch08_ex3_kernels_5us", "%.0f", (1 / 143.35) / 5e-6);
    nb_value("ch08_ex3_saved_ms", "%.2f", (1 / 143.35 - 1 / 163.83) * 1e3);
    /* 4: padding waste */
    nb_value("ch08_ex4_pad100", "%d", ex08_padded_tokens(100, 512));
    nb_value("ch08_ex4_pad300", "%d", ex08_padded_tokens(300, 512));
    nb_value("ch08_ex4_pad300_rows", "%.1f", 100.0 * (ex08_padded_tokens(300, 512) - 300) / 300);
    step_shape s300 = shape(300, 512, 1);
    step("llama3-8b", "h100", &s300, 4, 1, 1, &r);
    nb_value("ch08_ex4_pad300_time", "%.2f", 100 * r.pad_waste);
    nb_value("ch08_ex4_extra9_us", "%.1f", ex08_pad_extra_seconds("llama3-8b", "h100", 1, 9, 1024) * 1e6);
    step_shape s9 = shape(9, 1024, 1);
    step("llama3-8b", "h100", &s9, 4, 1, 1, &r);
    nb_value("ch08_ex4_pad9_time", "%.2f", 100 * r.pad_waste);
    /* 5: speculative (1 + k) alignment */
    nb_value("ch08_ex5_b9k3", "%d", ex08_spec_padded_tokens(9, 3, 512));
    nb_value("ch08_ex5_b9k4", "%d", ex08_spec_padded_tokens(9, 4, 512));
    nb_value("ch08_ex5_b13k4", "%d", ex08_spec_padded_tokens(13, 4, 512));
    int last3 = 0, last7 = 0;
    for (int b = 1; b <= 512; b++) {
        if (ex08_spec_padded_tokens(b, 3, 512) > 0)
            last3 = b;
        if (ex08_spec_padded_tokens(b, 7, 512) > 0)
            last7 = b;
    }
    /* the smallest k for which every batch of 2 or more whose tokens stay below 256 lands on a size */
    int aligned = 0;
    for (int k = 1; k <= 32 && !aligned; k++) {
        int all = 1;
        for (int b = 2; b * (1 + k) < 256 && all; b++)
            all = ex08_spec_padded_tokens(b, k, 512) == b * (1 + k);
        if (all)
            aligned = k;
    }
    nb_value("ch08_ex5_aligned_k", "%d", aligned);
    nb_value("ch08_ex5_last_k3", "%d", last3);
    nb_value("ch08_ex5_last_k7", "%d", last7);
    /* 6: graph memory against KV */
    nb_value("ch08_ex6_lost51", "%d", ex08_seqs_lost("llama3-8b", "h100", 1, 1024, 51, 26));
    nb_value("ch08_ex6_lost10", "%d", ex08_seqs_lost("llama3-8b", "h100", 1, 1024, 10, 26));
    nb_value("ch08_ex6_lost51_l40s", "%d", ex08_seqs_lost("llama3-8b", "l40s", 1, 1024, 51, 26));
    model_spec m8b = model_builtin("llama3-8b");
    gpu_spec l40s = gpu_builtin("l40s"), h100g = gpu_builtin("h100");
    nb_value("ch08_ex6_l40s_max", "%d", max_batch(&m8b, &l40s, 1, 1024, 0));
    nb_value("ch08_ex6_h100_max", "%d", max_batch(&m8b, &h100g, 1, 1024, 0));
    nb_value("ch08_ex6_l40s_saved4", "%.0f", 100 * ex08_share_saved("llama3-8b", "l40s", 1, 1, 1024, 4, 1));
    step_shape l1 = shape(1, 1024, 1);
    step("llama3-8b", "l40s", &l1, 4, 1, 0, &r);
    nb_value("ch08_ex6_l40s_gpu_ms", "%.1f", r.gpu * 1e3);
    nb_value("ch08_ex6_mem51_gb", "%.2f", 51 * 26 * MiB / GB);
    nb_value("ch08_ex6_mem10_gb", "%.2f", 10 * 26 * MiB / GB);
    nb_value("ch08_ex6_seq_mb", "%.0f", kv_bytes_per_sequence(&m8b, DT_BF16, 1025) / MB);
    nb_value("ch08_ex6_back", "%d", ex08_seqs_lost("llama3-8b", "h100", 1, 1024, 51, 26) -
                                        ex08_seqs_lost("llama3-8b", "h100", 1, 1024, 10, 26));
    step_shape s129 = shape(129, 1024, 1);
    model_spec m8 = model_builtin("llama3-8b");
    gpu_spec h100 = gpu_builtin("h100");
    capture_list pow2;
    char err[256];
    capture_list_parse("1,2,4,8,16,32,64,128,256,512", &pow2, err, sizeof err);
    launch_costs lc = launch_costs_default();
    graph_step p129;
    graph_step_cost(&m8, &h100, &s129, FUSE_NONE, &lc, &pow2, &p129, err, sizeof err);
    nb_value("ch08_ex6_pad129", "%d", p129.padded_tokens);
    nb_value("ch08_ex6_pad129_time", "%.2f", 100 * p129.pad_waste);
    step_shape s136 = shape(129, 1024, 1);
    graph_step p136;
    capture_list vllm;
    capture_list_vllm(512, &vllm);
    graph_step_cost(&m8, &h100, &s136, FUSE_NONE, &lc, &vllm, &p136, err, sizeof err);
    nb_value("ch08_ex6_pad129_vllm", "%d", p136.padded_tokens);
    nb_value("ch08_ex6_pad129_vllm_time", "%.2f", 100 * p136.pad_waste);
    /* 7: where graphs stop paying */
    nb_value("ch08_ex7_stop20", "%d", ex08_threshold_batch("llama3-8b", "h100", 1, 4096, 20, 0.05));
    nb_value("ch08_ex7_stop20_ctx1k", "%d", ex08_threshold_batch("llama3-8b", "h100", 1, 1024, 20, 0.05));
    nb_value("ch08_ex7_stop20_70b", "%d", ex08_threshold_batch("llama3-70b", "h100", 4, 4096, 20, 0.05));
    step_shape t1 = shape(1, 4096, 1);
    step("llama3-8b", "h100", &t1, 20, 1, 0, &r);
    nb_value("ch08_ex7_gpu1_ms", "%.2f", r.gpu * 1e3);
    nb_value("ch08_ex7_bar_ms", "%.2f", 0.95 * r.host_eager * 1e3);
    step_shape t2 = shape(2, 4096, 1);
    graph_step r2;
    step("llama3-8b", "h100", &t2, 20, 1, 0, &r2);
    nb_value("ch08_ex7_per_seq_ms", "%.2f", (r2.gpu - r.gpu) * 1e3);
    step_shape t70 = shape(1, 4096, 4);
    step("llama3-70b", "h100", &t70, 20, 1, 0, &r);
    nb_value("ch08_ex7_70b_host_ms", "%.1f", r.host_eager * 1e3);
    nb_value("ch08_ex7_70b_gpu_ms", "%.1f", r.gpu * 1e3);
    return 0;
}
#endif
