/* Expert parallelism (code/napkin/expert_parallel.c): the all-to-all bytes
 * and times of DeepSeek-V3 against hand arithmetic, and the refusals. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "expert_parallel.h"
#include "specs.h"

#define near(got, want)                                                                                      \
    cr_expect(fabs((double)(got) - (double)(want)) <= 1e-9 * fabs((double)(want)) + 1e-15,                       \
              #got " = %.9g, expected %.9g", (double)(got), (double)(want))

static ep_layout layout(int ep)
{
    ep_layout l = {ep, 8, 50e9, 1.0, 1.0, 2.0}; /* fp8 dispatch, bf16 combine, a 400 Gb/s NIC per GPU */
    return l;
}

/* One node, ep 8, 128 tokens per GPU, top 8 of 256 experts, hidden 7168.
 * Pairs leaving a GPU: 128 * 8 * 7/8 = 896.  Dispatch: 896 * 7168 * 1 B =
 * 6,422,528 B over NVLink at 450 GB/s = 14.2723 us, plus the H200 row's
 * 4.8 us; combine in bf16: 12,845,056 B, 28.5446 + 4.8 us.  58 MoE layers. */
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
    near(c.dispatch_bytes, 6422528);
    near(c.combine_bytes, 12845056);
    near(c.intra_share, 1);
    near(c.dispatch_time, 4.8e-6 + 6422528 / 450e9);
    near(c.combine_time, 4.8e-6 + 12845056 / 450e9);
    near(c.step_time, 58 * (9.6e-6 + 19267584 / 450e9));
}

/* Four nodes, ep 32: pairs 128 * 8 * 31/32 = 992, 7,110,656 B dispatched;
 * 7 of the 31 other GPUs share the node.  NVLink: 7/31 of the bytes at
 * 450 GB/s = 3.568 us; network: 24/31 at 50 GB/s = 110.1 us, the longer. */
Test(ep, across_nodes_the_network_dominates)
{
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    ep_layout l = layout(32);
    ep_cost c;
    char err[256];
    cr_assert_eq(ep_step_cost(&m, &g, &l, 128, &c, err, sizeof err), 0, "%s", err);
    near(c.dispatch_bytes, 7110656);
    near(c.intra_share, 7.0 / 31);
    near(c.dispatch_time, 4.8e-6 + 7110656 * 24.0 / 31 / 50e9);
    /* the busiest GPU at 1.5x the mean load sends 1.5x the bytes */
    l.imbalance = 1.5;
    ep_cost d;
    cr_assert_eq(ep_step_cost(&m, &g, &l, 128, &d, err, sizeof err), 0, "%s", err);
    near(d.dispatch_bytes, 1.5 * 7110656);
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
 * = 31.99 are touched, plus the shared one, each 3 x 7168 x 2048 bytes;
 * 32 x (8 + 1) token-expert pairs computed; a dispatch and a combine in each
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
    const op_cost *down = find_op(ops, n, "down_proj"), *disp = find_op(ops, n, "ep_dispatch"),
                  *comb = find_op(ops, n, "ep_combine");
    cr_assert(down && disp && comb);
    double touched = 32 * (1 - pow(31.0 / 32, 256));
    near(down->weight_bytes, (touched + 1) * 2048 * 7168);
    near(down->flop, 2.0 * 32 * 9 * 2048 * 7168);
    cr_expect_eq(op_repeats(&m, disp), 58);
    ep_cost a;
    cr_assert_eq(ep_step_cost(&m, &g, &l, 32, &a, err, sizeof err), 0);
    near(disp->comm_bytes, a.dispatch_bytes);
    step_cost c;
    cr_assert_eq(ep_decoder_step_cost(&m, &g, &s, &l, &c, err, sizeof err), 0, "%s", err);
    near(c.time_comm, 58 * (a.dispatch_time + a.combine_time));
    /* tp > 1 is refused: the attention runs data-parallel */
    s.tp = 2;
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
