/* The routed experts' rate classes (rates.h moe_*): the busiest GPU's work
 * under each of the MoE tables' distributions against hand counts, and a
 * fit on a synthetic moe.tsv written from known parameters, read back
 * through the published reader (published.c) and fitted as `napkin
 * calibrate` fits the real tables, recovering them within 1 %. */
#include "fit.h"
#include "moe.h"
#include "pricing.h"
#include "published.h"
#include "specs.h"
#include "transformer.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>

#include "scratch_dir.h"

TestSuite(moe_rate, .init = scratch_suite_make, .fini = scratch_suite_remove);

static void near(double got, double want, double rel)
{
    cr_expect(fabs(got - want) <= rel * fabs(want), "got %.9g, want %.9g", got, want);
}

/* Balanced, the collector's spread: 100 tokens over EP 8 of 128 experts,
 * top-8: ceil(100 / 8) = 13 tokens a GPU, each of min(8, 16) = 8 local
 * experts: 104 pairs, all 16 local experts touched; 1 token: 8 pairs, 8
 * touched.  EP 32 of 128: 4 local experts, so min(8, 4) = 4 pairs a token. */
Test(moe_rate, balanced_rank_work_by_hand)
{
    double pairs, touched;
    cr_assert_eq(moe_rank_work(128, 8, 0, 8, 100, 1, &pairs, &touched), 0);
    near(pairs, 104, 1e-15);
    near(touched, 16, 1e-15);
    cr_assert_eq(moe_rank_work(128, 8, 0, 8, 1, 1, &pairs, &touched), 0);
    near(pairs, 8, 1e-15);
    near(touched, 8, 1e-15);
    cr_assert_eq(moe_rank_work(128, 8, 0, 32, 64, 1, &pairs, &touched), 0);
    near(pairs, 2 * 4, 1e-15);
    near(touched, 4, 1e-15);
    cr_expect_eq(moe_rank_work(128, 8, 0, 3, 64, 1, &pairs, &touched), -1, "3 GPUs cannot share 128 experts");
}

/* Uniform routing (s = 0) on one GPU: T k pairs, E (1 - (1 - k/E)^T)
 * touched: 2 tokens of Mixtral's top-2 of 8: 4 pairs, 8 (1 - (3/4)^2) = 3.5. */
Test(moe_rate, uniform_rank_work_is_the_expected_touched_count)
{
    double pairs, touched;
    cr_assert_eq(moe_rank_work(8, 2, 0, 1, 2, 0, &pairs, &touched), 0);
    near(pairs, 4, 1e-15);
    near(touched, 3.5, 1e-12);
}

Test(moe_rate, power_law_maps_to_a_stated_skew)
{
    near(moe_power_law_skew(1.01), 0.9, 1e-15);
    near(moe_power_law_skew(1.2), 1.0, 1e-15);
    cr_expect(isnan(moe_power_law_skew(0.6)), "no skew stated for alpha 0.6");
}

/* The routed_experts op of Qwen3-30B-A3B (2048 hidden, 768 wide, top-8 of
 * 128) at 4 tokens on one GPU, bf16: 32 pairs, 6 x 2048 x 768 FLOPs each in
 * the GEMMs and 5 x 768 in the activation; weights of the touched experts,
 * 3 x 2048 x 768 x 2 B each; activations 32 x (2 x 2048 + 6 x 768) x 2 B. */
Test(moe_rate, experts_op_by_hand)
{
    op_cost op = moe_experts_op(1, 32, 20, 2048, 768, 2, 2, RC_MOE_BF16);
    near(op.flop, 32.0 * (6 * 2048 * 768 + 5 * 768), 1e-15);
    near(op.weight_bytes, 20.0 * 3 * 2048 * 768 * 2, 1e-15);
    near(op.act_bytes, 32.0 * (2 * 2048 + 6 * 768) * 2, 1e-15);
    near(op.items, 20, 1e-15);
    cr_expect_eq(op.rate, RC_MOE_BF16);
    cr_expect_eq(rate_class_moe(DT_FP8, DT_FP8, 0, 0), RC_MOE_FP8_BLOCK);
    cr_expect_eq(rate_class_moe(DT_FP8, DT_FP8, 0, 1), RC_MOE_FP8);
    cr_expect_eq(rate_class_moe(DT_BF16, DT_BF16, 1, 0), RC_MOE_W4A16);
    /* int4 weight-only is its own kernel (Marlin WNA16), not the MXFP4 one */
    cr_expect_eq(rate_class_moe(DT_INT4, DT_BF16, 0, 0), RC_MOE_INT4);
    cr_expect_eq(rate_class_moe(DT_INT4, DT_BF16, 1, 0), RC_MOE_INT4);
    cr_expect_eq(rate_class_fallback(RC_MOE_INT4), RC_GEMM_BF16);
    cr_expect_str_eq(rate_class_name(RC_MOE_INT4), "moe_int4");
    cr_expect_eq(rate_class_parse("moe_int4"), RC_MOE_INT4);
    cr_expect_eq(rate_class_fallback(RC_MOE_FP8_BLOCK), RC_GEMM_FP8);
    cr_expect_eq(rate_class_fallback(RC_ATTN_PREFILL), RC_ATTN_PREFILL);
}

/* A set with no moe.tsv prices the routed experts in its GEMM class, as
 * before the MoE classes: the same time as a class-gemm_bf16 op, items dropped. */
Test(moe_rate, a_set_without_the_class_falls_back_to_its_gemm_class)
{
    gpu_spec g = gpu_builtin("h200");
    rate_model r = {0};
    r.op[RC_GEMM_BF16] = (op_rate){4e-6, 0, 0.8, 0.85, 4, 0, 0};
    r.has_op[RC_GEMM_BF16] = 1;
    g.rates = &r;
    op_cost moe = moe_experts_op(1, 64, 50, 2048, 768, 2, 2, RC_MOE_BF16);
    op_cost gemm = moe;
    gemm.rate = RC_GEMM_BF16;
    gemm.items = 0;
    const double peak = gpu_peak_flops(&g, DT_BF16);
    near(price_op(&moe, &g, peak, 1, NULL), price_op(&gemm, &g, peak, 1, NULL), 1e-15);
    cr_expect_gt(price_op(&moe, &g, peak, 1, NULL), 4e-6);
}

/* Known rates, timed on the grid the real tables have (tokens 1..16384,
 * moe_tp x moe_ep <= 8, balanced and both power laws, two shapes), written
 * as a moe.tsv, read back and fitted: every parameter within 1 %. */
Test(moe_rate, fit_recovers_known_parameters)
{
    const op_rate truth = {2.9e-5, 3.0e-7, 0.62, 0.88, 2.5, 0, 0};
    gpu_spec g = gpu_builtin("h200");
    const double peak = gpu_peak_flops(&g, DT_FP8);
    FILE *f = fopen(scratch_path("moe.tsv"), "w");
    cr_assert_not_null(f);
    fprintf(f, "# measurement: moe\n# kind: published\n"
               "dtype\ttokens\thidden\tinter\ttopk\texperts\tmoe_tp\tmoe_ep\tdistribution\ttime_s\n");
    static const int shapes[2][4] = {{2048, 768, 8, 128}, {7168, 2048, 8, 256}};
    static const int layouts[5][2] = {{1, 1}, {2, 1}, {1, 2}, {1, 8}, {2, 4}};
    static const char *const dists[3] = {"balanced", "power_law_1.01", "power_law_1.2"};
    int rows = 0;
    for (int s = 0; s < 2; s++)
        for (int l = 0; l < 5; l++)
            for (int d = 0; d < 3; d++)
                for (int t = 1; t <= 16384; t *= 2) {
                    const int *sh = shapes[s], tp = layouts[l][0], ep = layouts[l][1];
                    double pairs, touched;
                    cr_assert_eq(moe_rank_work(sh[3], sh[2], d == 0 ? 0 : moe_power_law_skew(d == 1 ? 1.01 : 1.2),
                                               ep, t, d == 0, &pairs, &touched), 0);
                    op_cost op = moe_experts_op(1, pairs, touched, sh[0], (double)sh[1] / tp, 1, 1,
                                                RC_MOE_FP8_BLOCK);
                    double time = op_rate_time(&truth, op.flop, op_bytes(&op), op.items, 0, peak, g.mem_bw);
                    fprintf(f, "fp8_block\t%d\t%d\t%d\t%d\t%d\t%d\t%d\t%s\t%.9e\n", t, sh[0], sh[1], sh[2], sh[3],
                            tp, ep, dists[d], time);
                    rows++;
                }
    fclose(f);
    rate_point *p;
    int n;
    char err[256];
    cr_assert_eq(published_rate_points(scratch_dir, RC_MOE_FP8_BLOCK, &g, &p, &n, err, sizeof err), 0, "%s", err);
    cr_assert_eq(n, rows);
    op_rate r = {3e-6, 1e-9, 0.8, 0.8, 2, 1, 1e-6};
    fit_summary sum;
    cr_assert_eq(fit_op_rate(p, n, &r, &sum, err, sizeof err), 0, "%s", err);
    free(p);
    near(r.t0, truth.t0, 0.01);
    near(r.t_item, truth.t_item, 0.01);
    near(r.flop_frac, truth.flop_frac, 0.01);
    near(r.byte_frac, truth.byte_frac, 0.01);
    near(r.blend, truth.blend, 0.01);
    cr_expect_lt(sum.worst_abs_err, 1e-3);
    /* and the other classes have no rows in it */
    cr_assert_eq(published_rate_points(scratch_dir, RC_MOE_BF16, &g, &p, &n, err, sizeof err), 0, "%s", err);
    cr_expect_eq(n, 0);
    free(p);
}

/* Kimi-K2.5's routed experts are released int4 in groups of 32 (a bf16
 * scale each: 4 + 16/32 = 4.5 bits = 0.5625 B a weight) and run the int4
 * kernel's class, not the MXFP4 one gpt-oss's experts run (4.25 bits). */
Test(moe_rate, int4_experts_run_their_own_class)
{
    model_spec kimi = model_builtin("kimi-k2.5"), oss = model_builtin("gpt-oss-120b");
    precision p = precision_uniform(DT_BF16);
    cr_expect_eq(routed_rate_class(&kimi, p), RC_MOE_INT4);
    cr_expect_eq(expert_weight_bytes(&kimi, p.weights), 0.5625);
    cr_expect_eq(routed_rate_class(&oss, p), RC_MOE_W4A16);
    cr_expect_eq(expert_weight_bytes(&oss, p.weights), 0.53125);
}

/* vLLM's MXFP4 expert rows under expert parallelism time a path with a
 * fixed cost its tensor-parallel rows lack (published.c moe_tp_rows_only):
 * a vLLM table's moe_w4a16 class keeps only its moe_ep 1 rows; another
 * engine's keeps all.  Four rows, two of them at moe_ep 2: a vLLM table
 * yields 2 points, a TensorRT-LLM one 4; vLLM's bf16 rows keep moe_ep 2. */
static int points_of(const char *backend, const char *dtype, rate_class c)
{
    FILE *f = fopen(scratch_path("moe.tsv"), "w");
    cr_assert_not_null(f);
    fprintf(f, "# measurement: moe\n# kind: published\n# backend: %s\n"
               "dtype\ttokens\thidden\tinter\ttopk\texperts\tmoe_tp\tmoe_ep\tdistribution\ttime_s\n", backend);
    static const int layouts[4][3] = {{1, 1, 1}, {8, 1, 1}, {1, 1, 2}, {8, 1, 2}};
    for (int i = 0; i < 4; i++)
        fprintf(f, "%s\t%d\t2880\t2880\t4\t128\t%d\t%d\tbalanced\t1.0e-04\n", dtype, layouts[i][0], layouts[i][1],
                layouts[i][2]);
    fclose(f);
    gpu_spec g = gpu_builtin("h200");
    rate_point *p;
    int n;
    char err[256];
    cr_assert_eq(published_rate_points(scratch_dir, c, &g, &p, &n, err, sizeof err), 0, "%s", err);
    free(p);
    return n;
}

Test(moe_rate, vllm_mxfp4_class_fits_tensor_parallel_rows_only)
{
    cr_expect_eq(points_of("vllm", "w4a16_mxfp4", RC_MOE_W4A16), 2);
    cr_expect_eq(points_of("trtllm", "w4a16_mxfp4", RC_MOE_W4A16), 4);
    cr_expect_eq(points_of("vllm", "bf16", RC_MOE_BF16), 4);
}
