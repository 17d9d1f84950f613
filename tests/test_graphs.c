/* CUDA graphs: kernels per step against the op list counted by hand, the
 * share saved against hand arithmetic, padding against the capture list,
 * and the memory the captured graphs hold. */
#include <criterion/criterion.h>
#include <math.h>
#include <string.h>

#include "graphs.h"
#include "memory.h"

#define REL(a, b, tol) \
    cr_assert(fabs((a) - (b)) <= (tol) * fabs(b), "%s = %.9g, expected %.9g", #a, (double)(a), (double)(b))

static step_shape shape(int batch, int context, int tp)
{
    step_shape s = decode_shape(batch, context, tp, precision_uniform(DT_BF16));
    return s;
}

/* ---------------------------------------------------------------- kernels */

Test(graphs, llama3_8b_kernels_by_fusion)
{
    /* The op list of one layer at tp 1: attn_norm, qkv_proj, attn_score,
     * attn_value, o_proj, attn_residual, mlp_norm, gate_up_proj, act_mul,
     * down_proj, mlp_residual: 11 ops, 10 kernels (score and value are one
     * flash kernel).  Once per step: embedding, final_norm, logits: 3.
     *   none:           10 x 32 + 3 = 323
     *   norm-residual:  two residual adds fold into norms: 8 x 32 + 3 = 259
     *   gate-act:       act_mul folds into the GEMM: 9 x 32 + 3 = 291
     *   all:            7 x 32 + 3 = 227 */
    model_spec m = model_builtin("llama3-8b");
    step_shape s = shape(1, 1024, 1);
    step_kernels k;
    char err[256];
    int want[4] = {323, 259, 291, 227}, per_layer[4] = {10, 8, 9, 7};
    for (int f = FUSE_NONE; f <= FUSE_ALL; f++) {
        cr_assert_eq(step_kernel_count(&m, &s, f, &k, err, sizeof err), 0, "%s", err);
        cr_assert_eq(k.total, want[f], "fusion %s: %d", fusion_name(f), k.total);
        cr_assert_eq(k.per_layer, per_layer[f]);
        cr_assert_eq(k.once, 3);
        cr_assert_eq(k.comm, 0);
        cr_assert_eq(k.layers, 32);
    }
}

Test(graphs, tp_collectives_are_kernels)
{
    /* LLaMA-3-70B at tp 4: each layer adds attn_allreduce and mlp_allreduce,
     * 12 kernels a layer; once per step: embedding, embed_allreduce,
     * final_norm, logits, logits_gather = 5.  12 x 80 + 5 = 965, of which
     * 2 x 80 + 2 = 162 collectives.  With skip_comm the list loses them:
     * 10 x 80 + 3 = 803. */
    model_spec m = model_builtin("llama3-70b");
    step_shape s = shape(1, 1024, 4);
    step_kernels k;
    char err[256];
    cr_assert_eq(step_kernel_count(&m, &s, FUSE_NONE, &k, err, sizeof err), 0, "%s", err);
    cr_assert_eq(k.total, 965);
    cr_assert_eq(k.comm, 162);
    cr_assert_eq(k.once, 5);
    s.skip_comm = 1;
    cr_assert_eq(step_kernel_count(&m, &s, FUSE_NONE, &k, err, sizeof err), 0);
    cr_assert_eq(k.total, 803);
}

Test(graphs, moe_router_is_a_kernel)
{
    /* Mixtral 8x7B: a dense layer's 10 kernels, plus the router's GEMM, with the
     * MLP's three (gate_up, activation, down) one grouped-GEMM kernel of the
     * routed experts: 10 + 1 - 3 + 1 = 9 a layer, 9 x 32 + 3 = 291 */
    model_spec m = model_builtin("mixtral-8x7b");
    step_shape s = shape(1, 1024, 1);
    step_kernels k;
    char err[256];
    cr_assert_eq(step_kernel_count(&m, &s, FUSE_NONE, &k, err, sizeof err), 0, "%s", err);
    cr_assert_eq(k.total, 291);
}

Test(graphs, fusion_names_round_trip_and_bad_input)
{
    int f = -1;
    for (int i = FUSE_NONE; i <= FUSE_ALL; i++) {
        cr_assert_eq(fusion_parse(fusion_name(i), &f), 0);
        cr_assert_eq(f, i);
    }
    cr_assert_eq(fusion_parse("everything", &f), -1);
    model_spec m = model_builtin("llama3-8b");
    step_shape s = shape(1, 1024, 1);
    step_kernels k;
    char err[256] = "";
    cr_assert_eq(step_kernel_count(&m, &s, 7, &k, err, sizeof err), -1);
    cr_assert(strstr(err, "norm-residual") != NULL, "%s", err);
    s.tp = 3; /* does not split 32 heads */
    cr_assert_eq(step_kernel_count(&m, &s, FUSE_NONE, &k, err, sizeof err), -1);
}

/* ---------------------------------------------------------------- host cost */

Test(graphs, host_cost_by_hand)
{
    launch_costs lc = {4e-6, 5e-6, 1e-6, 0};
    /* 323 x 4 us = 1292 us; 5 + 323 x 1 = 328 us */
    REL(host_time_eager(323, &lc), 1292e-6, 1e-12);
    REL(host_time_graph(323, &lc), 328e-6, 1e-12);
    cr_assert_eq(step_wall_time(2e-3, 1e-3), 2e-3);
    cr_assert_eq(step_wall_time(1e-3, 2e-3), 2e-3);
    REL(graph_share_saved(10e-3, 7.5e-3), 0.25, 1e-12);
    launch_costs bad = {-1e-6, 0, 0, 0};
    char err[128];
    cr_assert_eq(launch_costs_check(&bad, err, sizeof err), -1);
    launch_costs d = launch_costs_default();
    cr_assert_eq(launch_costs_check(&d, err, sizeof err), 0);
    /* inside the published 2.6-7.5 us per launch and at most twice the
     * 0.58 us per replayed node (ocannl issue #488, CUDA 13.3) */
    cr_assert(d.launch >= 2.6e-6 && d.launch <= 7.5e-6);
    cr_assert(d.node >= 0.58e-6 && d.node <= 2 * 0.58e-6);
}

/* The batch-1 step of LLaMA-3-8B reads every weight but the embedding table
 * (only its one row): 32 layers x 218,103,808 projection weights +
 * 32 x 8192 + 4096 norm gains + the untied head 525,336,576 + one 4096 row
 * = 7,504,928,768 weights, 15,009,857,536 B in bf16.  At context 1 the KV
 * and activations add well under 0.1%, so the GPU time is that over the HBM
 * bandwidth (3.35 TB/s on an H100: 4.4806 ms). */
static double llama3_8b_batch1_weight_time(const gpu_spec *g)
{
    return 15009857536.0 / g->mem_bw;
}

Test(graphs, share_saved_gpu_bound_is_zero)
{
    /* Default costs: eager host 323 x 4 us = 1.292 ms, under the 4.48 ms the
     * GPU needs: the GPU sets the pace both ways and graphs save nothing. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = shape(1, 1, 1);
    launch_costs lc = launch_costs_default();
    graph_step r;
    char err[256];
    cr_assert_eq(graph_step_cost(&m, &g, &s, FUSE_NONE, &lc, NULL, &r, err, sizeof err), 0, "%s", err);
    REL(r.gpu, llama3_8b_batch1_weight_time(&g), 1e-3);
    REL(r.host_eager, 1292e-6, 1e-12);
    REL(r.host_graph, 327e-6, 1e-12); /* 4 + 323 x 1 us */
    cr_assert_eq(r.saved, 0.0);
    cr_assert_eq(r.padded_tokens, 1);
    cr_assert_eq(r.pad_waste, 0.0);
}

Test(graphs, share_saved_host_bound_eager)
{
    /* At 20 us per launch (an eager framework's per-op cost) the eager host
     * needs 323 x 20 = 6.46 ms, more than the GPU's 4.4806 ms; the graph's
     * host needs 4 + 323 = 327 us, less.  Saved = 1 - 4.4806 / 6.46 = 0.3064. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = shape(1, 1, 1);
    launch_costs lc = {20e-6, 4e-6, 1e-6, 0};
    graph_step r;
    char err[256];
    cr_assert_eq(graph_step_cost(&m, &g, &s, FUSE_NONE, &lc, NULL, &r, err, sizeof err), 0, "%s", err);
    REL(r.step_eager, 6.46e-3, 1e-12);
    REL(r.step_graph, llama3_8b_batch1_weight_time(&g), 1e-3);
    REL(r.saved, 1 - llama3_8b_batch1_weight_time(&g) / 6.46e-3, 2e-3);
}

Test(graphs, share_saved_host_bound_both_ways_at_two_batches)
{
    /* 100 us per launch, 50 us per node: eager host 32.3 ms, graph host
     * 100 + 323 x 50 = 16,250 us; both above the GPU at batch 1 (4.5 ms) and
     * at batch 16 of 1024 tokens (KV 16 x 1024 x 131,072 B = 2.1 GB more:
     * about 5.2 ms).  Saved = 1 - 16.25 / 32.3 = 0.496904 at both. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    launch_costs lc = {100e-6, 100e-6, 50e-6, 0};
    int batches[2] = {1, 16};
    for (int i = 0; i < 2; i++) {
        step_shape s = shape(batches[i], 1024, 1);
        graph_step r;
        char err[256];
        cr_assert_eq(graph_step_cost(&m, &g, &s, FUSE_NONE, &lc, NULL, &r, err, sizeof err), 0, "%s", err);
        cr_assert(r.gpu < 6e-3, "batch %d gpu %g", batches[i], r.gpu);
        REL(r.saved, 1 - 16.25 / 32.3, 1e-9);
    }
}

Test(graphs, fusion_shrinks_the_eager_host_time)
{
    /* all fusions: 227 kernels x 20 us = 4.54 ms; the GPU's 4.4806 ms is
     * now close behind: saved = 1 - 4.4806 / 4.54 = 0.0131 */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = shape(1, 1, 1);
    launch_costs lc = {20e-6, 4e-6, 1e-6, 0};
    graph_step r;
    char err[256];
    cr_assert_eq(graph_step_cost(&m, &g, &s, FUSE_ALL, &lc, NULL, &r, err, sizeof err), 0, "%s", err);
    REL(r.host_eager, 4.54e-3, 1e-12);
    REL(r.saved, 1 - llama3_8b_batch1_weight_time(&g) / 4.54e-3, 0.1);
}

/* ---------------------------------------------------------------- capture sizes */

Test(graphs, vllm_capture_list)
{
    /* [1, 2, 4] + range(8, 256, 8) (8..248: 31 sizes) + range(256, 513, 16)
     * (256..512: 17 sizes) = 51 sizes up to 512; up to 256: 3 + 31 + 1 = 35. */
    capture_list c;
    cr_assert_eq(capture_list_vllm(512, &c), 51);
    cr_assert_eq(c.sizes[0], 1);
    cr_assert_eq(c.sizes[2], 4);
    cr_assert_eq(c.sizes[3], 8);
    cr_assert_eq(c.sizes[33], 248);
    cr_assert_eq(c.sizes[34], 256);
    cr_assert_eq(c.sizes[35], 272);
    cr_assert_eq(c.sizes[50], 512);
    cr_assert_eq(capture_list_vllm(256, &c), 35);
    cr_assert_eq(capture_list_vllm(3, &c), 2); /* 1, 2 */
}

Test(graphs, padding_against_the_capture_list)
{
    capture_list c;
    capture_list_vllm(512, &c);
    /* 1 -> 1, 3 -> 4, 5 -> 8, 9 -> 16, 250 -> 256, 257 -> 272, 512 -> 512,
     * 513 -> none (eager) */
    int in[] = {1, 3, 5, 9, 250, 257, 512, 513}, out[] = {1, 4, 8, 16, 256, 272, 512, 0};
    for (int i = 0; i < 8; i++)
        cr_assert_eq(capture_padded_tokens(&c, in[i]), out[i], "%d -> %d", in[i], capture_padded_tokens(&c, in[i]));
}

Test(graphs, reader_capture_list_parse)
{
    capture_list c;
    char err[256];
    cr_assert_eq(capture_list_parse("8,1,4,4", &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.n, 3);
    cr_assert_eq(c.sizes[0], 1);
    cr_assert_eq(c.sizes[1], 4);
    cr_assert_eq(c.sizes[2], 8);
    cr_assert_eq(capture_padded_tokens(&c, 5), 8);
    cr_assert_eq(capture_padded_tokens(&c, 9), 0);
    const char *bad[] = {"", "1,,2", "1,2,", "0", "-4", "3x", "a"};
    for (int i = 0; i < 7; i++)
        cr_assert_eq(capture_list_parse(bad[i], &c, err, sizeof err), -1, "'%s' accepted", bad[i]);
}

Test(graphs, graph_memory)
{
    /* 51 graphs x 26 MiB = 1326 MiB */
    capture_list c;
    capture_list_vllm(512, &c);
    REL(capture_memory_bytes(&c, GRAPH_BYTES_DEFAULT), 1326.0 * 1024 * 1024, 1e-12);
}

Test(graphs, graph_memory_comes_out_of_the_kv_budget)
{
    /* 1326 MiB of graphs leave 1,390,411,776 B less for KV; at 131,072 B of
     * KV per token (LLaMA-3-8B bf16: 2 x 32 x 8 x 128 x 2) that is 10,608
     * tokens, two sequences of 4096 (10,608 / 4096 = 2.59, so 2 or 3 fewer
     * depending on where the floor falls). */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    resident_model rm = {&m, precision_uniform(DT_BF16), 1};
    capture_list c;
    capture_list_vllm(512, &c);
    fit_check without, with;
    char err[256];
    memory_policy pol = memory_policy_default();
    cr_assert_eq(memory_fit(&g, pol, &rm, 1, 0, 1, 4096, &without, err, sizeof err), 0, "%s", err);
    cr_assert_eq(memory_fit(&g, pol, &rm, 1, capture_memory_bytes(&c, GRAPH_BYTES_DEFAULT), 1, 4096, &with, err,
                            sizeof err),
                 0, "%s", err);
    REL(without.kv_budget - with.kv_budget, 1390411776.0, 1e-12);
    int lost = without.max_batch - with.max_batch;
    cr_assert(lost == 2 || lost == 3, "lost %d sequences", lost);
}

Test(graphs, padded_step_equals_the_step_when_unpadded)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = shape(24, 4096, 4);
    step_cost c;
    double t;
    char err[256];
    cr_assert_eq(decoder_step_cost(&m, &g, &s, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(padded_step_time(&m, &g, &s, 24, &t, err, sizeof err), 0, "%s", err);
    REL(t, c.time, 1e-12);
    cr_assert_eq(padded_step_time(&m, &g, &s, 23, &t, err, sizeof err), -1);
}

Test(graphs, padding_waste_compute_bound)
{
    /* Capture list {512, 1024}; a step of 600 sequences at context 1 pads to
     * 1024 rows.  At 600 rows the projections are past the H100's ridge
     * (about 295), so nearly every op's time grows with the rows: the padded
     * step costs about 1024 / 600 = 1.7067 times the real one (the
     * memory-bound weight reads of the real step keep it a little lower). */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = shape(600, 1, 1);
    capture_list c;
    char err[256];
    cr_assert_eq(capture_list_parse("512,1024", &c, err, sizeof err), 0);
    launch_costs lc = launch_costs_default();
    graph_step r;
    cr_assert_eq(graph_step_cost(&m, &g, &s, FUSE_NONE, &lc, &c, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.padded_tokens, 1024);
    REL(r.pad_waste, 1024.0 / 600 - 1, 0.05);
    /* graphs can lose: the padded replay is slower than the eager real step */
    cr_assert(r.saved < 0, "saved %g", r.saved);
}

Test(graphs, padding_waste_memory_bound_by_hand)
{
    /* Batch 9 pads to 16 at context 1024: every op stays memory-bound (16
     * rows is far below the ridge), the weights are read once either way and
     * attention runs the 9 real sequences, so the 7 dummy rows cost only
     * their activation bytes.  Per row and layer (bf16): attn_norm 2 x 4096
     * x 2 = 16,384; qkv (4096 + 6144) x 2 = 20,480; o_proj 8192 x 2 = 16,384;
     * two residuals 3 x 4096 x 2 = 24,576 each; mlp_norm 16,384; gate_up
     * (4096 + 28,672) x 2 = 65,536; act_mul 3 x 14,336 x 2 = 86,016; down
     * (14,336 + 4096) x 2 = 36,864: 307,200 B, x 32 layers = 9,830,400.
     * Once: the embedding row and its output 16,384, final_norm 16,384,
     * logits 4096 x 2 in + 128,256 x 4 fp32 out = 521,216: 553,984.
     * 7 x (9,830,400 + 553,984) = 72,690,688 B, 21.7 us at 3.35 TB/s. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = shape(9, 1024, 1);
    capture_list c;
    capture_list_vllm(512, &c);
    launch_costs lc = launch_costs_default();
    graph_step r;
    char err[256];
    cr_assert_eq(graph_step_cost(&m, &g, &s, FUSE_NONE, &lc, &c, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.padded_tokens, 16);
    REL(r.gpu_padded - r.gpu, 72690688.0 / g.mem_bw, 1e-6);
    cr_assert(r.pad_waste > 0 && r.pad_waste < 0.01, "waste %g", r.pad_waste);
}

Test(graphs, beyond_the_list_runs_eager)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = shape(600, 128, 1);
    capture_list c;
    capture_list_vllm(512, &c);
    launch_costs lc = {20e-6, 4e-6, 1e-6, 0};
    graph_step r;
    char err[256];
    cr_assert_eq(graph_step_cost(&m, &g, &s, FUSE_NONE, &lc, &c, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.padded_tokens, 0);
    cr_assert_eq(r.step_graph, r.step_eager);
    cr_assert_eq(r.saved, 0.0);
}

Test(graphs, speculative_tokens_pad_as_tokens)
{
    /* 9 sequences verifying 1 + 3 tokens: 36 tokens, padded to 40 */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = shape(9, 1024, 1);
    s.new_tokens = 4;
    capture_list c;
    capture_list_vllm(512, &c);
    launch_costs lc = launch_costs_default();
    graph_step r;
    char err[256];
    cr_assert_eq(graph_step_cost(&m, &g, &s, FUSE_NONE, &lc, &c, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.tokens, 36);
    cr_assert_eq(r.padded_tokens, 40);
}

/* ---------------------------------------------------------------- where graphs stop paying */

Test(graphs, threshold_batch_extremes)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = shape(1, 1024, 1);
    int b = -1;
    char err[256];
    /* default costs: saved 0 already at batch 1 (see share_saved_gpu_bound_is_zero) */
    launch_costs lc = launch_costs_default();
    cr_assert_eq(graph_threshold_batch(&m, &g, &s, FUSE_NONE, &lc, 0.05, 64, &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b, 1);
    /* host-bound both ways through batch 16: saved 0.497 >= 0.4 throughout */
    launch_costs slow = {100e-6, 100e-6, 50e-6, 0};
    cr_assert_eq(graph_threshold_batch(&m, &g, &s, FUSE_NONE, &slow, 0.4, 16, &b, err, sizeof err), 0);
    cr_assert_eq(b, 0);
    cr_assert_eq(graph_threshold_batch(&m, &g, &s, FUSE_NONE, &slow, 1.5, 16, &b, err, sizeof err), -1);
}

Test(graphs, threshold_batch_by_hand)
{
    /* 20 us launches: eager host 6.46 ms; the graph's host 0.327 ms is below
     * the GPU.  Saved falls below 5% once GPU > 0.95 x 6.46 = 6.137 ms.  At
     * context 4096 each sequence adds 32 layers x 2 (K, V) x 8 x 128 x 2 B x 4098 positions (4097 read, 1 written) = 537 MB
     * of KV reads (K and V of every layer), 0.1603 ms at 3.35 TB/s, on top
     * of the 4.48 ms of weights: (6.137 - 4.481) / 0.1603 = 10.3, so the
     * 11th sequence tips it (activations nudge it, not by a whole sequence). */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = shape(1, 4096, 1);
    launch_costs lc = {20e-6, 4e-6, 1e-6, 0};
    int b = -1;
    char err[256];
    cr_assert_eq(graph_threshold_batch(&m, &g, &s, FUSE_NONE, &lc, 0.05, 256, &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b, 11);
}

/* ---------------------------------------------------------------- the measured sequence */

Test(graphs, kernel_sequence_bookkeeping)
{
    /* The sequence the step_graph kernel launches: as many kernels as the
     * count, in launch order, bytes summing to the step's (decoder_step_cost). */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    int batches[2] = {1, 64};
    for (int f = FUSE_NONE; f <= FUSE_ALL; f++)
        for (int i = 0; i < 2; i++) {
            step_shape s = shape(batches[i], 1024, 1);
            step_kernel seq[1024];
            char err[256];
            int n = step_kernel_sequence(&m, &s, f, seq, 1024, err, sizeof err);
            int want[4] = {323, 259, 291, 227};
            cr_assert_eq(n, want[f], "%s", err);
            cr_assert_str_eq(seq[0].name, "embedding");
            cr_assert_eq(seq[0].layer, -1);
            cr_assert_str_eq(seq[1].name, "attn_norm");
            cr_assert_eq(seq[1].layer, 0);
            cr_assert_str_eq(seq[n - 1].name, "logits");
            cr_assert_str_eq(seq[n - 2].name, "final_norm");
            cr_assert_eq(seq[n - 3].layer, 31);
            step_cost c;
            cr_assert_eq(decoder_step_cost(&m, &g, &s, &c, err, sizeof err), 0);
            double sum = 0;
            for (int k = 0; k < n; k++)
                sum += seq[k].bytes;
            REL(sum, c.bytes, 1e-12);
        }
    /* too small a list */
    step_shape s = shape(1, 1024, 1);
    step_kernel few[8];
    char err[256];
    cr_assert_eq(step_kernel_sequence(&m, &s, FUSE_NONE, few, 8, err, sizeof err), -1);
}

Test(graphs, kernel_sequence_with_collectives)
{
    /* 70B tp 4: embedding, embed_allreduce first; 162 collectives in all */
    model_spec m = model_builtin("llama3-70b");
    step_shape s = shape(1, 1024, 4);
    static step_kernel seq[2048];
    char err[256];
    int n = step_kernel_sequence(&m, &s, FUSE_NONE, seq, 2048, err, sizeof err);
    cr_assert_eq(n, 965, "%s", err);
    cr_assert_str_eq(seq[1].name, "embed_allreduce");
    cr_assert_str_eq(seq[n - 1].name, "logits_gather");
    int comm = 0;
    for (int k = 0; k < n; k++)
        comm += seq[k].comm;
    cr_assert_eq(comm, 162);
}

/* ---------------------------------------------------------------- the chapter's operating points */

/* Per real sequence of LLaMA-3-8B in bf16, memory-bound (batch under the
 * ridge): activations 32 x 323,584 B a layer (the padded rows' 307,200 plus
 * attention's Q in and output out, 2 x 8192) + 553,984 B once = 10,908,672 B,
 * and KV 32 layers x 2 (K, V) x (context + 2 positions: all read, one
 * written) x 2048 B.  The weights: 15,009,849,344 B (all but the one
 * embedding row, which is counted per token above). */
static double llama3_8b_step_bytes(int batch, int context)
{
    double kv = 32.0 * 2 * (context + 2) * 2048;
    return 15009849344.0 + batch * (10908672.0 + kv);
}

Test(graphs, step_bytes_by_hand)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    int b[3] = {1, 64, 257}, ctx[3] = {1024, 512, 512};
    for (int i = 0; i < 3; i++) {
        step_shape s = shape(b[i], ctx[i], 1);
        step_cost c;
        char err[256];
        cr_assert_eq(decoder_step_cost(&m, &g, &s, &c, err, sizeof err), 0);
        REL(c.bytes, llama3_8b_step_bytes(b[i], ctx[i]), 1e-12);
    }
}

Test(graphs, chapter_threshold_at_the_implied_launch_cost)
{
    /* vLLM PR #1440's 12 ms eager step over 323 kernels: 37.15 us a launch,
     * 12 ms of eager host.  Below 5% once the GPU passes 11.4 ms, i.e.
     * 38.19e9 B at 3.35 TB/s: (38.19e9 - 15,009,849,344) / 145,388,544 B per
     * 1024-token sequence = 159.4, so batch 160 (all memory-bound: 160 rows
     * are under the ridge). */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = shape(1, 1024, 1);
    launch_costs lc = {0.012 / 323, 4e-6, 1e-6, 0};
    int b;
    char err[256];
    cr_assert_eq(graph_threshold_batch(&m, &g, &s, FUSE_NONE, &lc, 0.05, 433, &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(b, 160);
    double at = llama3_8b_step_bytes(160, 1024) / g.mem_bw, before = llama3_8b_step_bytes(159, 1024) / g.mem_bw;
    cr_assert(at > 11.4e-3 && before < 11.4e-3);
}

Test(graphs, chapter_padding_of_batch_257)
{
    /* 257 -> 272 at context 512: 15 dummy rows x 10,384,384 B (no
     * attention) = 155,765,760 B, over a real step of
     * 15,009,849,344 + 257 x (10,908,672 + 67,371,008) = 35,127,727,104 B:
     * waste 0.4434% */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = shape(257, 512, 1);
    capture_list c;
    capture_list_vllm(512, &c);
    launch_costs lc = launch_costs_default();
    graph_step r;
    char err[256];
    cr_assert_eq(graph_step_cost(&m, &g, &s, FUSE_NONE, &lc, &c, &r, err, sizeof err), 0, "%s", err);
    cr_assert_eq(r.padded_tokens, 272);
    REL(r.pad_waste, 155765760.0 / 35127727104.0, 1e-9);
}

Test(graphs, per_step_host_work_is_checked_and_paid_both_ways)
{
    char err[256];
    launch_costs bad = {4e-6, 4e-6, 1e-6, -1e-3};
    cr_assert_eq(launch_costs_check(&bad, err, sizeof err), -1);
    cr_assert(strstr(err, "per-step") != NULL, "%s", err);
    /* 8B at batch 1, 1024-token context, 20 us a launch: eager 323 x 20 us = 6.46 ms of
     * launches over a 4.52 ms GPU step, graph 4 + 323 us of host under it.  2 ms of
     * per-step host work adds to both: saved 1 - (2 + gpu) / (2 + 6.46) */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = shape(1, 1024, 1);
    launch_costs lc = {20e-6, 4e-6, 1e-6, 0}, lh = {20e-6, 4e-6, 1e-6, 2e-3};
    graph_step a, b;
    cr_assert_eq(graph_step_cost(&m, &g, &s, FUSE_NONE, &lc, NULL, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(graph_step_cost(&m, &g, &s, FUSE_NONE, &lh, NULL, &b, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(b.step_eager - a.step_eager, 2e-3, 1e-12);
    cr_assert_float_eq(b.step_graph - a.step_graph, 2e-3, 1e-12);
    cr_assert_float_eq(b.step_eager, 2e-3 + 323 * 20e-6, 1e-9);
    cr_assert_float_eq(b.saved, 1 - (2e-3 + a.gpu) / (2e-3 + 323 * 20e-6), 1e-9);
}
