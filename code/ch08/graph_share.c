/* Chapter 8: what CUDA graphs save a decode step, by batch, for LLaMA-3-8B on
 * one H100 and LLaMA-3-70B on 4 x H100 (bf16, 1024-token contexts), at the
 * driver's launch cost, at a Python-side launch and at a what-if 20 us; the
 * floor on the launch cost that published gains imply; the padding a capture
 * list costs; the memory the graphs take from the KV budget.
 *
 * Writes 08-share.tsv (share saved against batch, "-" beyond memory),
 * 08-published.tsv (published gains at batch 1), 08-padding.tsv (padding
 * waste against batch) and the values the chapter quotes. */
#include "graphs.h"
#include "memory.h"
#include "notebook.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

enum { CONTEXT = 1024, PAD_CONTEXT = 512, BATCH_MAX = 512 };

/* vLLM PR #1440, LLaMA-2-7B at batch 1: 100 output tokens in 1.2 s eager,
 * 1.05 s with graphs.  SGLang PR #1401, LLaMA-3-8B at batch 1: 9.28 -> 7.06
 * ms a step (triton attention), 8.23 -> 7.35 ms (flashinfer).  llama.cpp
 * issue #6763, LLaMA-2-7B Q4_K_M on an H100 PCIe: 143.35 -> 163.83 tokens/s. */
#define VLLM_EAGER_S (1.2 / 100)
#define VLLM_GRAPH_S (1.05 / 100)
#define SGL_TRITON_EAGER_S 9.28e-3
#define SGL_TRITON_GRAPH_S 7.06e-3
#define SGL_FI_EAGER_S 8.23e-3
#define SGL_FI_GRAPH_S 7.35e-3
#define LCPP_EAGER_TOK_S LLAMA_CPP_6763_EAGER_TOK_S
#define LCPP_GRAPH_TOK_S LLAMA_CPP_6763_GRAPH_TOK_S
/* the driver's cost per launch and per replayed node (REFERENCE: 2.6-7 us, 0.6-1.3 us) */
#define DRIVER_LAUNCH_S 4e-6
#define LLAMA_CPP_LAUNCH_S 5e-6
/* tritonbench PR #1017: a Python-side launch 6.8-9.1 us (the upper end) */
#define PYTHON_LAUNCH_S 9.1e-6
/* a what-if for an eager path that dispatches more per op */
#define WHATIF_LAUNCH_S 20e-6
/* a what-if per-step host work (scheduling, sampling) that graphs do not remove */
#define WHATIF_STEP_HOST_S 1e-3

typedef struct {
    const char *name;
    model_spec model;
    int tp;
    int max_batch; /* at CONTEXT, graphs taken out */
} replica;

static void die(const char *err)
{
    fprintf(stderr, "graph_share: %s\n", err);
    exit(1);
}

static graph_step step_host_at(const replica *r, const gpu_spec *g, int batch, int context, double launch,
                               double step_host, const capture_list *c)
{
    step_shape s = decode_shape(batch, context, r->tp, precision_uniform(DT_BF16));
    launch_costs lc = launch_costs_default();
    lc.launch = launch;
    lc.step_host = step_host;
    graph_step out;
    char err[512];
    if (graph_step_cost(&r->model, g, &s, FUSE_NONE, &lc, c, &out, err, sizeof err) != 0)
        die(err);
    return out;
}

static graph_step step_at(const replica *r, const gpu_spec *g, int batch, int context, double launch,
                          const capture_list *c)
{
    return step_host_at(r, g, batch, context, launch, 0.0, c);
}

/* A published pair (eager, graph) at batch 1: the share saved, the saving per
 * kernel and the floor it puts on the eager launch cost. */
static void published_pair(const char *name, double eager, double graph, int kernels)
{
    launch_costs lc = launch_costs_default();
    char n[64];
    snprintf(n, sizeof n, "ch08_%s_eager_ms", name);
    nb_value(n, "%.2f", eager * 1e3);
    snprintf(n, sizeof n, "ch08_%s_graph_ms", name);
    nb_value(n, "%.2f", graph * 1e3);
    snprintf(n, sizeof n, "ch08_%s_saved_pct", name);
    nb_value(n, "%.0f", 100 * graph_share_saved(eager, graph));
    snprintf(n, sizeof n, "ch08_%s_saved_ms", name);
    nb_value(n, "%.2f", (eager - graph) * 1e3);
    snprintf(n, sizeof n, "ch08_%s_per_kernel_us", name);
    nb_value(n, "%.1f", (eager - graph) / kernels * 1e6);
    snprintf(n, sizeof n, "ch08_%s_floor_us", name);
    nb_value(n, "%.1f", implied_launch_cost(eager, graph, kernels, &lc) * 1e6);
}

static int fit_max_batch(const replica *r, const gpu_spec *g, double extra, int context)
{
    resident_model rm = {&r->model, precision_uniform(DT_BF16), r->tp};
    fit_check f;
    char err[512];
    if (memory_fit(g, memory_policy_default(), &rm, 1, extra, 1, context + 1, &f, err, sizeof err) != 0)
        die(err);
    return f.max_batch;
}

static int threshold_batch(const replica *r, const gpu_spec *g, double launch, double threshold)
{
    step_shape s = decode_shape(1, CONTEXT, r->tp, precision_uniform(DT_BF16));
    launch_costs lc = launch_costs_default();
    lc.launch = launch;
    int b;
    char err[512];
    if (graph_threshold_batch(&r->model, g, &s, FUSE_NONE, &lc, threshold, r->max_batch, &b, err, sizeof err) != 0)
        die(err);
    return b;
}

int main(void)
{
    gpu_spec h100 = gpu_builtin("h100");
    capture_list vllm;
    capture_list_vllm(512, &vllm);
    double graph_bytes = capture_memory_bytes(&vllm, GRAPH_BYTES_DEFAULT);
    replica r8 = {"8b", model_builtin("llama3-8b"), 1, 0}, r70 = {"70b", model_builtin("llama3-70b"), 4, 0};
    r8.max_batch = fit_max_batch(&r8, &h100, graph_bytes, CONTEXT);
    r70.max_batch = fit_max_batch(&r70, &h100, graph_bytes, CONTEXT);
    char err[512];

    /* --- kernels per step --- */
    const char *fnames[4] = {"none", "nr", "ga", "all"};
    for (int f = FUSE_NONE; f <= FUSE_ALL; f++) {
        step_kernels k;
        step_shape s = decode_shape(1, CONTEXT, 1, precision_uniform(DT_BF16));
        if (step_kernel_count(&r8.model, &s, f, &k, err, sizeof err) != 0)
            die(err);
        char n[64];
        snprintf(n, sizeof n, "ch08_k8_%s", fnames[f]);
        nb_value(n, "%d", k.total);
        snprintf(n, sizeof n, "ch08_k8_%s_layer", fnames[f]);
        nb_value(n, "%d", k.per_layer);
    }
    graph_step s70 = step_at(&r70, &h100, 1, CONTEXT, DRIVER_LAUNCH_S, NULL);
    nb_value("ch08_k70", "%d", s70.kernels.total);
    nb_value("ch08_k70_layer", "%d", s70.kernels.per_layer);
    nb_value("ch08_k70_once", "%d", s70.kernels.once);
    nb_value("ch08_k70_comm", "%d", s70.kernels.comm);

    /* --- the published gains, and the floor they put on the launch cost --- */
    graph_step s8 = step_at(&r8, &h100, 1, CONTEXT, DRIVER_LAUNCH_S, NULL);
    int k8 = s8.kernels.total; /* LLaMA-2-7B has LLaMA-3-8B's layers: the same kernels */
    double vllm_saved = graph_share_saved(VLLM_EAGER_S, VLLM_GRAPH_S);
    published_pair("vllm", VLLM_EAGER_S, VLLM_GRAPH_S, k8);
    published_pair("sglt", SGL_TRITON_EAGER_S, SGL_TRITON_GRAPH_S, k8);
    published_pair("sglf", SGL_FI_EAGER_S, SGL_FI_GRAPH_S, k8);
    {
        /* SGLang's pair (its bench_latency: 128 prompt tokens, 8 generated) read on an H100 SXM
         * whose kernels run at the roofline; the PR does not name its GPU */
        graph_step g1 = step_at(&r8, &h100, 1, 128 + 8, DRIVER_LAUNCH_S, NULL);
        launch_costs lc = launch_costs_default();
        double host;
        double tl = launch_cost_on_gpu(SGL_TRITON_EAGER_S, SGL_TRITON_GRAPH_S, g1.gpu, k8, &lc, &host);
        if (isnan(tl))
            die("SGLang's pair does not fit an H100 at the roofline");
        nb_value("ch08_sglt_h100_gpu_ms", "%.2f", g1.gpu * 1e3);
        nb_value("ch08_sglt_h100_host_ms", "%.2f", host * 1e3);
        nb_value("ch08_sglt_h100_launch_us", "%.1f", tl * 1e6);
    }
    nb_value("ch08_py_us", "%.1f", PYTHON_LAUNCH_S * 1e6);
    nb_value("ch08_whatif_us", "%.0f", WHATIF_LAUNCH_S * 1e6);
    nb_value("ch08_whatif_host_ms", "%.0f", WHATIF_STEP_HOST_S * 1e3);
    double lcpp_eager = 1 / LCPP_EAGER_TOK_S, lcpp_graph = 1 / LCPP_GRAPH_TOK_S;
    nb_value("ch08_lcpp_eager_ms", "%.2f", lcpp_eager * 1e3);
    nb_value("ch08_lcpp_graph_ms", "%.2f", lcpp_graph * 1e3);
    nb_value("ch08_lcpp_saved_pct", "%.0f", 100 * graph_share_saved(lcpp_eager, lcpp_graph));
    nb_value("ch08_lcpp_kernels_at_5us", "%.0f", lcpp_eager / LLAMA_CPP_LAUNCH_S);
    FILE *pub = nb_data_open("08-published.tsv");
    fprintf(pub, "# published share saved at batch 1: vLLM PR #1440 and llama.cpp issue #6763 (LLaMA-2-7B), "
                 "SGLang PR #1401 (LLaMA-3-8B)\nbatch\tsaved\tlabel\tlabel_dy\n");
    fprintf(pub, "1\t%.4f\tvLLM PR #1440\t0.025\n", vllm_saved);
    fprintf(pub, "1\t%.4f\tllama.cpp #6763\t-0.005\n", graph_share_saved(lcpp_eager, lcpp_graph));
    fprintf(pub, "1\t%.4f\tSGLang #1401 (triton)\t0.0\n", graph_share_saved(SGL_TRITON_EAGER_S, SGL_TRITON_GRAPH_S));
    fprintf(pub, "1\t%.4f\tSGLang #1401 (flashinfer)\t-0.04\n", graph_share_saved(SGL_FI_EAGER_S, SGL_FI_GRAPH_S));
    fclose(pub);

    /* --- launch against GPU at batch 1 and 256 --- */
    const replica *rs[2] = {&r8, &r70};
    const int batches[2] = {1, 256};
    for (int i = 0; i < 2; i++)
        for (int j = 0; j < 2; j++) {
            if (batches[j] > rs[i]->max_batch)
                die("batch 256 does not fit at the chapter's context");
            graph_step d = step_at(rs[i], &h100, batches[j], CONTEXT, DRIVER_LAUNCH_S, NULL);
            graph_step p = step_at(rs[i], &h100, batches[j], CONTEXT, PYTHON_LAUNCH_S, NULL);
            graph_step w = step_at(rs[i], &h100, batches[j], CONTEXT, WHATIF_LAUNCH_S, NULL);
            graph_step wh = step_host_at(rs[i], &h100, batches[j], CONTEXT, WHATIF_LAUNCH_S, WHATIF_STEP_HOST_S, NULL);
            char n[64];
            snprintf(n, sizeof n, "ch08_%s_b%d_gpu_ms", rs[i]->name, batches[j]);
            nb_value(n, "%.2f", d.gpu * 1e3);
            snprintf(n, sizeof n, "ch08_%s_b%d_eager_host_ms", rs[i]->name, batches[j]);
            nb_value(n, "%.2f", d.host_eager * 1e3);
            snprintf(n, sizeof n, "ch08_%s_b%d_graph_host_ms", rs[i]->name, batches[j]);
            nb_value(n, "%.2f", d.host_graph * 1e3);
            snprintf(n, sizeof n, "ch08_%s_b%d_saved_pct", rs[i]->name, batches[j]);
            nb_value(n, "%.0f", 100 * d.saved);
            snprintf(n, sizeof n, "ch08_%s_b%d_py_host_ms", rs[i]->name, batches[j]);
            nb_value(n, "%.2f", p.host_eager * 1e3);
            snprintf(n, sizeof n, "ch08_%s_b%d_py_saved_pct", rs[i]->name, batches[j]);
            nb_value(n, "%.0f", 100 * p.saved);
            snprintf(n, sizeof n, "ch08_%s_b%d_whatif_host_ms", rs[i]->name, batches[j]);
            nb_value(n, "%.2f", w.host_eager * 1e3);
            snprintf(n, sizeof n, "ch08_%s_b%d_whatif_saved_pct", rs[i]->name, batches[j]);
            nb_value(n, "%.0f", 100 * w.saved);
            snprintf(n, sizeof n, "ch08_%s_b%d_whatif_h_saved_pct", rs[i]->name, batches[j]);
            nb_value(n, "%.0f", 100 * wh.saved);
        }
    nb_value("ch08_8b_max_batch", "%d", r8.max_batch);
    nb_value("ch08_70b_max_batch", "%d", r70.max_batch);

    /* --- where graphs stop paying (5%) at a Python-side launch and at the what-if --- */
    nb_value("ch08_8b_stop_py", "%d", threshold_batch(&r8, &h100, PYTHON_LAUNCH_S, 0.05));
    nb_value("ch08_70b_stop_py", "%d", threshold_batch(&r70, &h100, PYTHON_LAUNCH_S, 0.05));
    nb_value("ch08_8b_stop_20", "%d", threshold_batch(&r8, &h100, WHATIF_LAUNCH_S, 0.05));
    nb_value("ch08_70b_stop_20", "%d", threshold_batch(&r70, &h100, WHATIF_LAUNCH_S, 0.05));

    /* --- the figure: share saved against batch --- */
    FILE *f = nb_data_open("08-share.tsv");
    fprintf(f, "# share saved by graphs, bf16, context %d, H100 SXM; launch 4 us (driver), 20 us (what-if), "
               "%.1f us (a Python-side launch, tritonbench PR #1017); graph launch 4 us, 1 us per node; no per-step "
               "host work; '-' beyond memory\n"
               "batch\t8b_4us\t8b_20us\t8b_py\t70b_4us\t70b_20us\t70b_py\n",
            CONTEXT, PYTHON_LAUNCH_S * 1e6);
    for (int b = 1; b <= BATCH_MAX; b++) {
        fprintf(f, "%d", b);
        for (int i = 0; i < 2; i++) {
            double launches[3] = {DRIVER_LAUNCH_S, WHATIF_LAUNCH_S, PYTHON_LAUNCH_S};
            for (int l = 0; l < 3; l++) {
                if (b > rs[i]->max_batch)
                    fprintf(f, "\t-");
                else
                    fprintf(f, "\t%.5f", step_at(rs[i], &h100, b, CONTEXT, launches[l], NULL).saved);
            }
        }
        fprintf(f, "\n");
    }
    fclose(f);

    /* --- a small model on a fast GPU: where even the driver's cost shows --- */
    gpu_spec b200 = gpu_builtin("b200");
    replica r1 = {"1b", model_builtin("llama3.2-1b"), 1, 0};
    graph_step s1 = step_at(&r1, &b200, 1, CONTEXT, DRIVER_LAUNCH_S, NULL);
    nb_value("ch08_1b_kernels", "%d", s1.kernels.total);
    nb_value("ch08_1b_b200_gpu_ms", "%.2f", s1.gpu * 1e3);
    nb_value("ch08_1b_b200_host_ms", "%.2f", s1.host_eager * 1e3);
    nb_value("ch08_1b_b200_saved_pct", "%.0f", 100 * s1.saved);

    /* --- capture sizes, padding and graph memory --- */
    nb_value("ch08_capture_n", "%d", vllm.n);
    /* the list before it thinned above 256: [1, 2, 4] and every multiple of 8 up to 512 */
    int older = 3;
    for (int size = 8; size <= 512; size += 8)
        older++;
    nb_value("ch08_capture_n_older", "%d", older);
    nb_value("ch08_graph_mib", "%.0f", GRAPH_BYTES_DEFAULT / MiB);
    nb_value("ch08_graph_mem_gib", "%.2f", graph_bytes / GiB);
    nb_value("ch08_graph_mem_gb", "%.2f", graph_bytes / GB);
    int free8 = fit_max_batch(&r8, &h100, 0, CONTEXT), free70 = fit_max_batch(&r70, &h100, 0, CONTEXT);
    nb_value("ch08_8b_max_batch_eager", "%d", free8);
    nb_value("ch08_8b_seqs_lost", "%d", free8 - r8.max_batch);
    nb_value("ch08_70b_max_batch_eager", "%d", free70);
    nb_value("ch08_70b_seqs_lost", "%d", free70 - r70.max_batch);
    graph_step p257 = step_at(&r8, &h100, 257, PAD_CONTEXT, DRIVER_LAUNCH_S, &vllm);
    nb_value("ch08_pad257_to", "%d", p257.padded_tokens);
    nb_value("ch08_pad257_rows_pct", "%.1f", 100.0 * (p257.padded_tokens - 257) / 257);
    nb_value("ch08_pad257_time_pct", "%.2f", 100 * p257.pad_waste);
    graph_step p9 = step_at(&r8, &h100, 9, PAD_CONTEXT, DRIVER_LAUNCH_S, &vllm);
    nb_value("ch08_pad9_rows_pct", "%.0f", 100.0 * (p9.padded_tokens - 9) / 9);
    nb_value("ch08_pad9_time_pct", "%.2f", 100 * p9.pad_waste);
    int pad_max = fit_max_batch(&r8, &h100, graph_bytes, PAD_CONTEXT);
    FILE *pad = nb_data_open("08-padding.tsv");
    fprintf(pad, "# LLaMA-3-8B, H100 SXM, bf16, context %d, vLLM capture list up to 512: rows padded and GPU "
                 "time wasted\nbatch\tpadded\trow_waste\ttime_waste\n",
            PAD_CONTEXT);
    double worst_time = 0;
    int worst_b = 0;
    for (int b = 1; b <= BATCH_MAX && b <= pad_max; b++) {
        graph_step p = step_at(&r8, &h100, b, PAD_CONTEXT, DRIVER_LAUNCH_S, &vllm);
        fprintf(pad, "%d\t%d\t%.5f\t%.6f\n", b, p.padded_tokens, (double)(p.padded_tokens - b) / b, p.pad_waste);
        if (p.pad_waste > worst_time) {
            worst_time = p.pad_waste;
            worst_b = b;
        }
    }
    fclose(pad);
    nb_value("ch08_pad_worst_time_pct", "%.2f", 100 * worst_time);
    nb_value("ch08_pad_worst_batch", "%d", worst_b);
    return 0;
}
