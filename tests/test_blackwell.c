/* Blackwell's rows and the fp4 weight formats (issue 33): nvfp4 and mxfp4
 * through weight_format in bytes for a stated tensor, the B300, GB200 and
 * GB300 rows against their datasheets, fp4 math priced at the fp4 peak and
 * refused where a GPU has none (while weight-only mxfp4 is not), and the
 * NVL72 rack's 72-GPU NVLink domain reaching expert parallelism's default.
 * Every expected number is worked by hand in the comment above it. */
#include "cli_run.h"

#include "block_formats.h"
#include "expert_parallel.h"
#include "memory.h"
#include "pricing.h"
#include "specs.h"
#include "transformer.h"
#include "weight_format.h"

#include <math.h>

/* ------------------------------------------------------------ the formats */

Test(blackwell, format_names_and_math)
{
    weight_format f;
    cr_assert_eq(weight_format_parse("nvfp4", &f), 0);
    cr_expect_eq(f, WF_NVFP4);
    cr_assert_eq(weight_format_parse("mxfp4", &f), 0);
    cr_expect_eq(f, WF_MXFP4);
    cr_expect_neq(strstr(weight_format_choices(), "nvfp4, mxfp4"), NULL);
    /* nvfp4 multiplies in fp4 on the tensor cores; mxfp4 is weight-only, into bf16 */
    cr_expect_eq(weight_format_values(WF_NVFP4), DT_FP4);
    cr_expect_eq(weight_format_math(WF_NVFP4), DT_FP4);
    cr_expect_eq(weight_format_op_math(WF_NVFP4), OP_MATH_FP4);
    cr_expect_eq(weight_format_values(WF_MXFP4), DT_FP4);
    cr_expect_eq(weight_format_math(WF_MXFP4), DT_BF16);
    cr_expect_eq(weight_format_op_math(WF_MXFP4), OP_MATH_BF16);
    /* the experts' kernels: mxfp4 the W4A16 one gpt-oss runs on Hopper */
    cr_expect_eq(weight_format_moe_class(WF_MXFP4), RC_MOE_W4A16);
    cr_expect_eq(weight_format_moe_class(WF_INT4_WO), RC_MOE_INT4); /* the int4 (Marlin) kernel class */
    /* fp4 is the GEMMs' math alone: the step keeps --dtype's for attention */
    cr_expect_eq(weight_format_step_compute(WF_NVFP4, DT_FP8), DT_FP8);
    cr_expect_eq(weight_format_step_compute(WF_MXFP4, DT_FP8), DT_BF16);
    cr_expect_eq(weight_format_step_compute(WF_FP8, DT_BF16), DT_FP8);
    /* a bare fp4 is no dtype: its scales come with the format */
    dtype d;
    cr_expect_eq(dtype_parse("fp4", &d), -1);
}

/* A weight: MXFP4 4 bits + an 8-bit scale per 32 = 4.25 bits = 0.53125 B;
 * NVFP4 4 bits + an 8-bit scale per 16 = 4.5 bits = 0.5625 B. */
Test(blackwell, bytes_per_weight)
{
    cr_expect_eq(weight_format_bytes(WF_MXFP4), 0.53125);
    cr_expect_eq(weight_format_bytes(WF_NVFP4), 0.5625);
}

/* gpt-oss-120b's down_proj of one expert: 2880 outputs x 2880 inputs.
 * Values 2880 x 2880 / 2 = 4,147,200 B in either format;
 *   MXFP4 scales 2880 rows x 2880/32 = 90 blocks x 1 B = 259,200 B
 *         -> 4,406,400 B;
 *   NVFP4 scales 2880 x 2880/16 = 180 x 1 B = 518,400 B, and one fp32
 *         per-tensor scale, 4 B -> 4,665,604 B.
 * The other formats: bf16 2880 x 2880 x 2 = 16,588,800 B; fp8 8,294,400 B. */
Test(blackwell, a_stated_tensor)
{
    cr_expect_eq(weight_format_tensor_bytes(WF_MXFP4, 2880, 2880), 4406400.0);
    cr_expect_eq(weight_format_tensor_bytes(WF_NVFP4, 2880, 2880), 4665604.0);
    cr_expect_eq(weight_format_tensor_bytes(WF_BF16, 2880, 2880), 16588800.0);
    cr_expect_eq(weight_format_tensor_bytes(WF_FP8, 2880, 2880), 8294400.0);
    cr_expect(isnan(weight_format_tensor_bytes(WF_NVFP4, -1, 2880)));
}

/* gpt-oss-120b with its experts named as released, --moe-weights mxfp4:
 * the same bytes as the release read without the flag (36 layers x 128
 * experts x (8,812,800 + 4,406,400) B = 60,914,073,600 B of experts, the
 * rest bf16; tests/test_block_formats.c), which fits one 80 GB H100 as the
 * model card (arXiv 2508.10925) says. */
Test(blackwell, gpt_oss_120b_fits_one_h100_in_mxfp4)
{
    model_spec m = model_builtin("gpt-oss-120b");
    gpu_spec h100 = gpu_builtin("h100");
    precision p = precision_uniform(DT_BF16);
    p.moe_format = WF_MXFP4;
    param_count c = model_params(&m);
    const double released = 60914073600.0 + (c.total - c.routed) * 2;
    replica_memory r;
    char err[256];
    cr_assert_eq(replica_memory_plan(&m, &h100, p, 1, memory_policy_default(), &r, err, sizeof err), 0, "%s", err);
    cr_expect(fabs(r.weights / released - 1) < 1e-12, "%.0f against %.0f", r.weights, released);
    cr_expect_lt(r.weights, 80e9);
    cr_expect_gt(r.kv_budget, 0);

    char out[OUT_MAX];
    cr_assert_eq(run("memory --model gpt-oss-120b --gpu h100 --moe-weights mxfp4 --format tsv", out, sizeof out), 0,
                 "%s", out);
    cr_expect(fabs(tsv_value(out, "weight_bytes_per_gpu") / released - 1) < 1e-12, "%s", out);
}

/* ------------------------------------------------------------ the rows */

static void expect_rel(double got, double want, double tol, const char *what)
{
    cr_expect(fabs(got / want - 1) <= tol, "%s: %.6g against %.6g", what, got, want);
}

/* HGX B300, per GPU (Blackwell Ultra datasheet): fp4 18 | 14 PFLOPS
 * sparse | dense, the dense figure quoted itself; fp8 9 and bf16 4.5
 * PFLOPS, int8 307 TOPS, sparse, halved: 4.5, 2.25 PFLOPS, 153.5 TOPS;
 * 62 TB/s over 8 GPUs = 7.75 TB/s; 288 GB; NVLink 5 1.8 TB/s both ways =
 * 900 GB/s a direction; one HGX board of 8. */
Test(blackwell, b300_row)
{
    gpu_spec g = gpu_builtin("b300");
    cr_expect_eq(gpu_peak_flops(&g, DT_FP4), 14e15);
    cr_expect_eq(gpu_peak_flops(&g, DT_FP8), 9e15 / 2);
    cr_expect_eq(gpu_peak_flops(&g, DT_BF16), 4.5e15 / 2);
    cr_expect_eq(gpu_peak_flops(&g, DT_INT8), 307e12 / 2);
    cr_expect_eq(g.mem_bw, 62e12 / 8);
    cr_expect_eq(g.mem_bytes_datasheet, 288e9);
    cr_expect_eq(g.link_bw, 1.8e12 / 2);
    cr_expect_eq(gpu_node_gpus(&g), 8);
}

/* GB200 NVL72 over its 72 GPUs (the GB200 NVL72 page): fp4 1,440, fp8 720,
 * bf16 360 PFLOPS and int8 720 POPS, sparse, halved: 10, 5, 2.5 PFLOPS
 * and 5 POPS a GPU; 576 TB/s / 72 = 8 TB/s; 13.4 TB / 72 = 186.1 GB (the
 * row: 186); NVLink 5 at 1.8 TB/s both ways a GPU (the rack's 130 TB/s /
 * 72 = 1.806, rounded), 900 GB/s a direction; all 72 in one NVLink domain. */
Test(blackwell, gb200_row)
{
    gpu_spec g = gpu_builtin("gb200");
    cr_expect_eq(gpu_peak_flops(&g, DT_FP4), 1440e15 / 72 / 2);
    cr_expect_eq(gpu_peak_flops(&g, DT_FP8), 720e15 / 72 / 2);
    cr_expect_eq(gpu_peak_flops(&g, DT_BF16), 360e15 / 72 / 2);
    cr_expect_eq(gpu_peak_flops(&g, DT_INT8), 720e15 / 72 / 2);
    cr_expect_eq(g.mem_bw, 576e12 / 72);
    expect_rel(g.mem_bytes_datasheet, 13.4e12 / 72, 0.001, "HBM");
    cr_expect_eq(g.link_bw, 1.8e12 / 2);
    expect_rel(g.link_bw, 130e12 / 72 / 2, 0.005, "NVLink a direction");
    cr_expect_eq(gpu_node_gpus(&g), 72);
}

/* GB300 NVL72 over its 72 GPUs (the GB300 NVL72 page): fp4 1,080 PFLOPS
 * dense = 15 a GPU; fp8 720 and bf16 360 PFLOPS sparse, halved: 5 and 2.5;
 * int8 165 TOPS dense (Blackwell Ultra datasheet); 576 TB/s / 72 = 8 TB/s;
 * 288 GB HBM3e a GPU; 72 GPUs on NVLink. */
Test(blackwell, gb300_row)
{
    gpu_spec g = gpu_builtin("gb300");
    cr_expect_eq(gpu_peak_flops(&g, DT_FP4), 1080e15 / 72);
    cr_expect_eq(gpu_peak_flops(&g, DT_FP8), 720e15 / 72 / 2);
    cr_expect_eq(gpu_peak_flops(&g, DT_BF16), 360e15 / 72 / 2);
    cr_expect_eq(gpu_peak_flops(&g, DT_INT8), 165e12);
    cr_expect_eq(g.mem_bw, 576e12 / 72);
    cr_expect_eq(g.mem_bytes_datasheet, 288e9);
    cr_expect_eq(gpu_node_gpus(&g), 72);
}

/* B200 (HGX B200: fp4 144 PFLOPS sparse over 8 GPUs = 9 dense a GPU); the
 * GPUs before Blackwell have no fp4 tensor cores. */
Test(blackwell, fp4_only_on_blackwell)
{
    gpu_spec b200 = gpu_builtin("b200");
    cr_expect_eq(gpu_peak_flops(&b200, DT_FP4), 144e15 / 8 / 2);
    static const char *const none[] = {"h100", "h200", "a100", "mi300x", "l40s"};
    for (size_t i = 0; i < sizeof none / sizeof none[0]; i++) {
        gpu_spec g = gpu_builtin(none[i]);
        cr_expect_eq(gpu_peak_flops(&g, DT_FP4), 0, "%s", none[i]);
        cr_expect_eq(gpu_node_gpus(&g), 8, "%s", none[i]);
    }
}

/* A table written before the two columns still parses: no fp4, 8 a node;
 * a fraction of a GPU does not. */
Test(blackwell, optional_columns)
{
    const char *head = "key\tname\tbf16_tflops\tfp16_tflops\tfp8_tflops\tint8_tops\thbm_tb_s\thbm_gb\tdriver_mib\t"
                       "link_gb_s\tallreduce_us\tpcie_gb_s\tsource\tlink_source";
    const char *row = "x\tX\t100\t100\t200\t200\t1\t10\t-\t-\t-\t-\ts\tl";
    char text[1024], err[256];
    gpu_table t;
    snprintf(text, sizeof text, "%s\n%s\n", head, row);
    cr_assert_eq(gpu_table_parse(text, "old.tsv", &t, err, sizeof err), 0, "%s", err);
    cr_expect_eq(gpu_peak_flops(&t.rows[0], DT_FP4), 0);
    cr_expect_eq(gpu_node_gpus(&t.rows[0]), GPU_NODE_GPUS_DEFAULT);
    gpu_table_free(&t);
    snprintf(text, sizeof text, "%s\tfp4_tflops\tnode_gpus\n%s\t400\t72\n", head, row);
    cr_assert_eq(gpu_table_parse(text, "new.tsv", &t, err, sizeof err), 0, "%s", err);
    cr_expect_eq(gpu_peak_flops(&t.rows[0], DT_FP4), 400e12);
    cr_expect_eq(gpu_node_gpus(&t.rows[0]), 72);
    gpu_table_free(&t);
    snprintf(text, sizeof text, "%s\tfp4_tflops\tnode_gpus\n%s\t400\t7.5\n", head, row);
    cr_expect_eq(gpu_table_parse(text, "bad.tsv", &t, err, sizeof err), -1);
    cr_expect_neq(strstr(err, "node_gpus"), NULL, "%s", err);
}

/* ------------------------------------------------------------ fp4 priced */

/* Llama-3-70B's first projection (q, k, v: 8192 in, 8192 + 2 x 1024 out)
 * over 8192 prefill tokens with nvfp4 weights on B200: 2 x 8192 x 8192 x
 * 10240 = 1.3744e12 FLOP, priced at the fp4 peak 9 PFLOP/s = 152.7 us; its
 * bytes (8192 x 10240 x 0.5625 B of weights, 8192 x (8192 + 10240) x 2 B
 * of bf16 activations = 349 MB) take 43.6 us at 8 TB/s, so fp4 math sets
 * it.  The same op at the step's bf16 peak would take 4x as long. */
Test(blackwell, nvfp4_gemm_at_the_fp4_peak)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec b200 = gpu_builtin("b200");
    precision p = precision_uniform(DT_BF16);
    p.weights = DT_FP4;
    p.weights_format = p.moe_format = WF_NVFP4;
    cr_assert_eq(p.compute, DT_BF16, "fp4 leaves the step's compute to attention");
    step_shape s = prefill_shape(1, 0, 8192, 1, p);
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    cr_assert_gt(n, 0);
    const op_cost *qkv = NULL;
    for (int i = 0; i < n; i++)
        if (ops[i].kind == OP_PROJECTION && !qkv)
            qkv = &ops[i];
    cr_assert_not_null(qkv);
    const double flop = 2.0 * 8192 * 8192 * 10240;
    cr_expect_eq(qkv->flop, flop);
    cr_expect_eq(qkv->math, OP_MATH_FP4);
    cr_expect_eq(qkv->weight_bytes, 8192.0 * 10240 * 0.5625);
    const double t = price_op(qkv, &b200, gpu_peak_flops(&b200, DT_BF16), 1, NULL);
    expect_rel(t, flop / 9e15, 1e-12, "qkv at the fp4 peak");
}

/* On H100 (no fp4 tensor cores) nvfp4's fp4 math is refused naming the
 * flag, exit 2; mxfp4, weight-only into bf16 (as Hopper serves gpt-oss),
 * is accepted; on B200 nvfp4 is. */
Test(blackwell, fp4_math_refused_where_there_is_none)
{
    char out[OUT_MAX];
    cr_expect_eq(run("serve --model llama3-70b --gpu h100 --tp 2 --weights nvfp4", out, sizeof out), 2, "%s", out);
    cr_expect_neq(strstr(out, "--weights nvfp4"), NULL, "%s", out);
    cr_expect_neq(strstr(out, "fp4"), NULL, "%s", out);
    cr_expect_eq(run("decode --model gpt-oss-120b --gpu h100 --moe-weights nvfp4", out, sizeof out), 2, "%s", out);
    cr_expect_neq(strstr(out, "--moe-weights nvfp4"), NULL, "%s", out);
    cr_expect_eq(run("serve --model llama3-70b --gpu h100 --tp 2 --weights mxfp4", out, sizeof out), 0, "%s", out);
    cr_expect_eq(run("decode --model gpt-oss-120b --gpu h100 --moe-weights mxfp4", out, sizeof out), 0, "%s", out);
    cr_expect_eq(run("serve --model llama3-70b --gpu b200 --weights nvfp4", out, sizeof out), 0, "%s", out);
    cr_expect_eq(run("memory --model llama3-8b --gpu h100 --dtype fp4", out, sizeof out), 2, "%s", out);
    cr_expect_neq(strstr(out, "--dtype fp4"), NULL, "%s", out);
}

/* ------------------------------------------------------------ NVLink domain */

/* DeepSeek-V3 over 64 GPUs of expert parallelism: on GB200 all 64 sit in
 * the rack's 72-GPU NVLink domain, so every peer is on NVLink (share 1);
 * on H200, 8 a node, 7 of the 63 peers are: 7/63 = 0.1111.  The flag
 * still overrides the row. */
Test(blackwell, nvlink_domain_reaches_the_ep_default)
{
    precision p = precision_uniform(DT_FP8);
    gpu_spec gb200 = gpu_builtin("gb200"), h200 = gpu_builtin("h200");
    cr_expect_eq(ep_links_default(64, p, &gb200).gpus_per_node, 72);
    cr_expect_eq(ep_links_default(64, p, &h200).gpus_per_node, 8);

    char out[OUT_MAX];
    cr_assert_eq(run("ep --model deepseek-v3 --gpu gb200 --dtype fp8 --ep 64 --format tsv", out, sizeof out), 0, "%s",
                 out);
    cr_expect_eq(tsv_value(out, "intra_node_share"), 1.0);
    cr_assert_eq(run("ep --model deepseek-v3 --gpu h200 --dtype fp8 --ep 64 --format tsv", out, sizeof out), 0, "%s",
                 out);
    expect_rel(tsv_value(out, "intra_node_share"), 7.0 / 63, 1e-12, "h200");
    cr_assert_eq(run("ep --model deepseek-v3 --gpu gb200 --dtype fp8 --ep 64 --gpus-per-node 8 --format tsv", out,
                     sizeof out), 0, "%s", out);
    expect_rel(tsv_value(out, "intra_node_share"), 7.0 / 63, 1e-12, "gb200 at --gpus-per-node 8");
}
