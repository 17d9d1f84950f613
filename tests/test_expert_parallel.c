/* Expert parallelism (code/napkin/serving/expert_parallel.c): the all-to-all bytes
 * and times of DeepSeek-V3 against hand arithmetic, and the refusals. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "expert_parallel.h"
#include "moe.h"
#include "request.h"
#include "specs.h"

#define near(got, want)                                                                                      \
    cr_expect(fabs((double)(got) - (double)(want)) <= 1e-9 * fabs((double)(want)) + 1e-15,                       \
              #got " = %.9g, expected %.9g", (double)(got), (double)(want))

static ep_layout layout(int ep)
{
    ep_layout l = {ep, 8, 50e9, 1.0, 1.0, 2.0, 0, 0, MOE_EXCHANGE_ALLTOALL}; /* fp8 dispatch, bf16 combine, a 400 Gb/s NIC per GPU */
    return l;
}

/* One node, ep 8, 128 tokens per GPU, top 8 of 256 experts, hidden 7168.
 * Pairs leaving a GPU: 128 * 8 * 7/8 = 896; but a token's copies to one GPU
 * travel once: a GPU's 32 experts are all missed by a top-8 with
 * probability prod_{i<8} (224 - i)/(256 - i) = 0.33816850, so a token
 * reaches 8 (1 - 0.33816850) = 5.2946520 GPUs, 7/8 of them others.
 * Dispatch: 128 * 5.2946520 * 7/8 * 7168 * 1 B = 4,250,631.34 B over NVLink
 * at 450 GB/s, plus the H200 row's 4.8 us; combine in bf16: twice the
 * bytes.  58 MoE layers. */
Test(ep, one_node_by_hand)
{
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    ep_layout l = layout(8);
    ep_cost c;
    char err[256];
    cr_assert_eq(ep_step_cost(&m, &g, &l, 128, &c, err, sizeof err), 0, "%s", err);
    near(c.experts_per_gpu, 32);
    near(c.pairs_sent, 896);
    const double bytes = 4250631.340339061;
    cr_expect(fabs(c.dispatch_bytes / bytes - 1) < 1e-9, "dispatch %.2f", c.dispatch_bytes);
    cr_expect(fabs(c.combine_bytes / (2 * bytes) - 1) < 1e-9, "combine %.2f", c.combine_bytes);
    near(c.intra_share, 1);
    cr_expect(fabs(c.dispatch_time / (4.8e-6 + bytes / 450e9) - 1) < 1e-9);
    cr_expect(fabs(c.combine_time / (4.8e-6 + 2 * bytes / 450e9) - 1) < 1e-9);
    cr_expect(fabs(c.step_time / (58 * (9.6e-6 + 3 * bytes / 450e9)) - 1) < 1e-9);
}

/* Four nodes, ep 32 (8 experts a GPU): a top-8 misses a GPU with
 * probability prod_{i<8} (248 - i)/(256 - i) = 0.77291250, so a token
 * reaches 32 (1 - 0.77291250) = 7.2668 GPUs, 31/32 of them others:
 * 128 * 7.0397124 * 7168 = 6,458,964.30 B dispatched; 7 of the 31 other
 * GPUs share the node.  NVLink: 7/31 of the bytes at 450 GB/s; network:
 * 24/31 at 50 GB/s, the longer. */
Test(ep, across_nodes_the_network_dominates)
{
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    ep_layout l = layout(32);
    ep_cost c;
    char err[256];
    cr_assert_eq(ep_step_cost(&m, &g, &l, 128, &c, err, sizeof err), 0, "%s", err);
    const double bytes = 6458964.304140596;
    cr_expect(fabs(c.dispatch_bytes / bytes - 1) < 1e-9, "dispatch %.2f", c.dispatch_bytes);
    near(c.intra_share, 7.0 / 31);
    cr_expect(fabs(c.dispatch_time / (4.8e-6 + bytes * 24.0 / 31 / 50e9) - 1) < 1e-9);
    /* the busiest GPU at 1.5x the mean load sends 1.5x the bytes */
    l.imbalance = 1.5;
    ep_cost d;
    cr_assert_eq(ep_step_cost(&m, &g, &l, 128, &d, err, sizeof err), 0, "%s", err);
    cr_expect(fabs(d.dispatch_bytes / (1.5 * bytes) - 1) < 1e-9);
}

Test(ep, refusals_name_the_problem)
{
    gpu_spec g = gpu_builtin("h200");
    model_spec dense = model_builtin("llama3-70b"), ds = model_builtin("deepseek-v3");
    ep_cost c;
    char err[256];
    ep_layout l = layout(8);
    cr_expect_eq(ep_step_cost(&dense, &g, &l, 1, &c, err, sizeof err), -1);
    cr_expect(strstr(err, "mixture of experts"), "%s", err);
    l = layout(7);
    cr_expect_eq(ep_step_cost(&ds, &g, &l, 1, &c, err, sizeof err), -1);
    cr_expect(strstr(err, "divide"), "%s", err);
    l = layout(16);
    l.net_bw = 0;
    cr_expect_eq(ep_step_cost(&ds, &g, &l, 1, &c, err, sizeof err), -1);
    cr_expect(strstr(err, "network"), "%s", err);
    l = layout(8);
    l.imbalance = 0.5;
    cr_expect_eq(ep_step_cost(&ds, &g, &l, 1, &c, err, sizeof err), -1);
}

static const op_cost *find_op(const op_cost *ops, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(ops[i].name, name) == 0)
            return &ops[i];
    return NULL;
}

/* A DeepSeek-V3 decode step on one GPU of ep 8 (fp8, 32 sequences here,
 * 256 in the group): this GPU's 32 experts, of which 32 (1 - (31/32)^256)
 * = 31.99 are touched, each 3 x 7168 x 2048 bytes, read by the routed
 * experts' one kernel (32 x 8 pairs: 6 x 7168 x 2048 FLOPs each in the
 * GEMMs, 5 x 2048 in the activation); the shared one by its own ops (32
 * tokens); a dispatch and a combine in each
 * of the 58 MoE layers, priced as ep_step_cost prices them. */
Test(ep, decode_step_on_one_gpu_of_the_group)
{
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    ep_layout l = layout(8);
    step_shape s = decode_shape(32, 4096, 1, precision_uniform(DT_FP8));
    op_cost ops[DECODER_MAX_OPS];
    char err[256];
    int n = ep_decoder_step_ops(&m, &g, &s, &l, ops, DECODER_MAX_OPS, err, sizeof err);
    cr_assert_gt(n, 0, "%s", err);
    const op_cost *routed = find_op(ops, n, "routed_experts"), *shared = find_op(ops, n, "shared_down_proj"),
                  *disp = find_op(ops, n, "ep_dispatch"), *comb = find_op(ops, n, "ep_combine");
    cr_assert(routed && shared && disp && comb);
    double touched = 32 * (1 - pow(31.0 / 32, 256));
    near(routed->weight_bytes, touched * 3 * 2048 * 7168);
    near(routed->flop, 32.0 * 8 * (6.0 * 2048 * 7168 + 5 * 2048));
    near(routed->items, touched);
    near(shared->weight_bytes, 2048.0 * 7168);
    near(shared->flop, 2.0 * 32 * 2048 * 7168);
    cr_expect_eq(op_repeats(&m, disp), 58);
    ep_cost a;
    cr_assert_eq(ep_step_cost(&m, &g, &l, 32, &a, err, sizeof err), 0);
    near(disp->comm_bytes, a.dispatch_bytes);
    step_cost c;
    cr_assert_eq(ep_decoder_step_cost(&m, &g, &s, &l, &c, err, sizeof err), 0, "%s", err);
    near(c.time_comm, 58 * (a.dispatch_time + a.combine_time));
    /* a tensor-parallel degree that does not divide the group is refused */
    s.tp = 16;
    cr_expect_eq(ep_decoder_step_ops(&m, &g, &s, &l, ops, DECODER_MAX_OPS, err, sizeof err), -1);
}

/* Weights per GPU at ep 8 in fp8: all 671,026,404,352 less 7/8 of the routed
 * experts, 58 x 256 x 3 x 7168 x 2048 = 653,908,770,816. */
Test(ep, weights_and_memory_per_gpu)
{
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    const double routed = 58.0 * 256 * 3 * 7168 * 2048;
    near(ep_weight_bytes_per_gpu(&m, DT_FP8, 8), 671026404352.0 - routed * 7 / 8);
    fit_check f;
    char err[256];
    memory_policy pol = memory_policy_default();
    cr_assert_eq(ep_memory_fit(&m, &g, precision_uniform(DT_FP8), pol, 8, 64, 8192, &f, err, sizeof err), 0, "%s",
                 err);
    double act = activation_bytes(&m, pol.activation_tokens, pol.sampled_tokens, DT_FP8, 1);
    double budget = g.mem_bytes * 0.9 - (671026404352.0 - routed * 7 / 8) - act;
    near(f.kv_budget, budget);
    cr_expect_eq(f.max_batch, (int)floor(budget / (61.0 * 576 * 8192)));
    cr_expect(f.fits);
}

/* EP 8 with TP 2 attention replicas (four of them), 64 sequences each, fp8:
 * each GPU dispatches half its replica's tokens, 32, so the expert part is
 * the tp 1, 32-sequence step's: 32 tokens, each to 5.2946520 x 7/8 other
 * GPUs (one_node_by_hand), 7168 bytes each = 1,062,657.835 B a dispatch; of its 32 experts, 32 (1 - (31/32)^256) touched by
 * the group's 32 x 8 = 256 tokens, plus the shared one; 32 x 9 pairs.  The
 * attention is the tp 2 one: o_proj 64 heads x 128 x 7168 = 58,720,256 B;
 * the attention all-reduce stays in all 61 layers, the MLP's only in the 3
 * dense ones. */
Test(ep, tensor_parallel_attention_replicas_by_hand)
{
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    ep_layout l = layout(8);
    step_shape s = decode_shape(64, 4096, 2, precision_uniform(DT_FP8));
    op_cost ops[DECODER_MAX_OPS];
    char err[256];
    int n = ep_decoder_step_ops(&m, &g, &s, &l, ops, DECODER_MAX_OPS, err, sizeof err);
    cr_assert_gt(n, 0, "%s", err);
    const op_cost *routed = find_op(ops, n, "routed_experts"), *disp = find_op(ops, n, "ep_dispatch"),
                  *o = find_op(ops, n, "o_proj"), *attn_ar = find_op(ops, n, "attn_allreduce"),
                  *mlp_ar = find_op(ops, n, "mlp_allreduce");
    cr_assert(routed && disp && o && attn_ar && mlp_ar);
    cr_expect(fabs(disp->comm_bytes / (4250631.340339061 / 4) - 1) < 1e-9, "%.3f", disp->comm_bytes);
    near(disp->items, 32); /* the tokens it sends: the calibrated kernel's per-token term */
    cr_expect_eq(disp->comm_ranks, 8);
    cr_expect_eq(disp->a2a_kernel, A2A_DECODE_DISPATCH);
    cr_expect_eq(find_op(ops, n, "ep_combine")->a2a_kernel, A2A_DECODE_COMBINE);
    double touched = 32 * (1 - pow(31.0 / 32, 256));
    near(routed->weight_bytes, touched * 3 * 2048 * 7168);
    near(routed->flop, 32.0 * 8 * (6.0 * 2048 * 7168 + 5 * 2048));
    near(o->weight_bytes, 58720256);
    cr_expect_eq(op_repeats(&m, attn_ar), 61);
    cr_expect_eq(op_repeats(&m, mlp_ar), 3);
    /* Qwen3-235B-A22B has no dense layer: no MLP all-reduce at all */
    model_spec q = model_builtin("qwen3-235b-a22b");
    step_shape sq = decode_shape(64, 4096, 2, precision_uniform(DT_FP8));
    n = ep_decoder_step_ops(&q, &g, &sq, &l, ops, DECODER_MAX_OPS, err, sizeof err);
    cr_assert_gt(n, 0, "%s", err);
    cr_expect_null(find_op(ops, n, "mlp_allreduce"));
}

/* A Zipf(1) router over E = 4 experts, top 1, on ep 2: inclusion
 * 12/25, 6/25, 4/25, 3/25 (1, 1/2, 1/3, 1/4 over 25/12).  GPU 0 holds experts
 * 0 and 2: 16/25 of the pairs where the mean is 1/2, so the busiest GPU
 * carries 32/25 = 1.28 times the mean; two tokens touch (1 - (13/25)^2) +
 * (1 - (21/25)^2) = 0.7296 + 0.2944 = 1.024 of its experts. */
Test(ep, skewed_router_sets_the_busiest_gpu)
{
    double load, touched;
    cr_assert_eq(moe_zipf_hot_rank(4, 1, 1.0, 2, 2, &load, &touched), 0);
    near(load, 1.28);
    near(touched, 1.024);
    /* uniform routing: the mean load, and (E/ep)(1 - (1 - k/E)^T) */
    cr_assert_eq(moe_zipf_hot_rank(4, 1, 0.0, 2, 2, &load, &touched), 0);
    near(load, 1);
    near(touched, 2 * (1 - 0.75 * 0.75));
    cr_expect_eq(moe_zipf_hot_rank(4, 1, 1.0, 3, 2, &load, &touched), -1, "ep 3 does not divide 4 experts");
    /* in the step: DeepSeek-V3 at ep 8 with a skewed router sends the busiest
     * GPU's share, above the mean, and ep_busiest_gpu agrees */
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    ep_layout l = layout(8);
    l.routing_skew = 1;
    double imb, hot;
    char err[256];
    cr_assert_eq(ep_busiest_gpu(&m, &l, 256, &imb, &hot, err, sizeof err), 0, "%s", err);
    cr_assert_eq(moe_zipf_hot_rank(256, 8, 1.0, 8, 256, &load, &touched), 0);
    near(imb, load);
    near(hot, touched);
    cr_expect_gt(imb, 1);
    step_shape s = decode_shape(32, 4096, 1, precision_uniform(DT_FP8));
    op_cost ops[DECODER_MAX_OPS];
    int n = ep_decoder_step_ops(&m, &g, &s, &l, ops, DECODER_MAX_OPS, err, sizeof err);
    cr_assert_gt(n, 0, "%s", err);
    /* 32 tokens, each to 5.2946520 x 7/8 other GPUs (one_node_by_hand), the busiest at `load` times the mean */
    cr_expect(fabs(find_op(ops, n, "ep_dispatch")->comm_bytes / (4250631.340339061 / 4 * load) - 1) < 1e-9);
    near(find_op(ops, n, "routed_experts")->weight_bytes, touched * 3 * 2048 * 7168);
    near(find_op(ops, n, "routed_experts")->flop, 32 * 8 * load * (6.0 * 2048 * 7168 + 5 * 2048));
}

/* EP 8 with TP 2 in fp8: the routed experts 1/8, the shared ones
 * (58 x 3 x 7168 x 2048 = 2,554,331,136) whole, the rest (671,026,404,352 -
 * 653,908,770,816 - 2,554,331,136 = 14,563,302,400) halved. */
Test(ep, weights_with_tensor_parallel_replicas)
{
    model_spec m = model_builtin("deepseek-v3");
    const double routed = 653908770816.0, shared = 2554331136.0, rest = 14563302400.0;
    near(ep_tp_weight_bytes_per_gpu(&m, DT_FP8, 8, 2), rest / 2 + shared + routed / 8);
    near(ep_tp_weight_bytes_per_gpu(&m, DT_FP8, 8, 1), ep_weight_bytes_per_gpu(&m, DT_FP8, 8));
    fit_check f;
    char err[256];
    resident_model rm = {&m, precision_uniform(DT_FP8), 2};
    gpu_spec g = gpu_builtin("h200");
    cr_assert_eq(memory_fit(&g, memory_policy_default(), &rm, 1, 0, 16, 8192, &f, err, sizeof err), 0, "%s", err);
    cr_expect(!f.fits, "the whole model on two H200s does not fit");
    double budget = f.kv_budget + (671026404352.0 / 2 - (rest / 2 + shared + routed / 8));
    cr_assert_eq(ep_fit_adjust(&m, precision_uniform(DT_FP8), 8, 2, 16, 8192, &f, err, sizeof err), 0, "%s", err);
    near(f.kv_budget, budget);
    cr_expect_eq(f.max_batch, (int)floor(budget / (61.0 * 576 * 8192)), "MLA's latent, whole on each GPU");
    cr_expect(f.fits);
    cr_expect_eq(ep_fit_adjust(&m, precision_uniform(DT_FP8), 8, 3, 16, 8192, &f, err, sizeof err), -1);
}

/* A request on one attention replica of an EP 8 group (tp 1): the closed
 * loop of request.h with p the prompt's prefill and d the mean of the decode
 * steps at the first and last contexts, each priced as one GPU of the group
 * (ep_decoder_step_cost): e2e = C p + (o - 1) d, GPU-seconds per request
 * tp e2e / C = e2e / C. */
Test(ep, a_request_on_an_attention_replica)
{
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    const precision p8 = precision_uniform(DT_FP8);
    request_setup s = {&m, &g, p8, 1, 4096, 512, 32, 0, 0, memory_policy_default(), 0, 1};
    request_options o = {.ep = layout(8)};
    request_estimate e;
    char err[256];
    cr_assert_eq(request_estimate_with(&s, &o, &e, err, sizeof err), 0, "%s", err);
    step_shape pf = prefill_shape(1, 0, 4096, 1, p8), lo = decode_shape(32, 4096, 1, p8),
               hi = decode_shape(32, 4096 + 510, 1, p8);
    pf.logits_last = 1;
    step_cost cp, cl, ch;
    cr_assert_eq(ep_decoder_step_cost(&m, &g, &pf, &o.ep, &cp, err, sizeof err), 0, "%s", err);
    cr_assert_eq(ep_decoder_step_cost(&m, &g, &lo, &o.ep, &cl, err, sizeof err), 0, "%s", err);
    cr_assert_eq(ep_decoder_step_cost(&m, &g, &hi, &o.ep, &ch, err, sizeof err), 0, "%s", err);
    const double d = (cl.time + ch.time) / 2, e2e = 32 * cp.time + 511 * d;
    near(e.prefill_time, cp.time);
    near(e.decode_step, d);
    near(e.e2e, e2e);
    near(e.gpu_seconds_per_request, e2e / 32);
    cr_expect(e.fit.fits);
    /* memory: one GPU of the group holds ep_weight_bytes_per_gpu of weights */
    near(e.fit.weights, ep_weight_bytes_per_gpu(&m, DT_FP8, 8));
    /* a pipeline with EP is refused */
    s.pp = 2;
    cr_expect_eq(request_estimate_with(&s, &o, &e, err, sizeof err), -1);
}
