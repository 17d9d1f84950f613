/* The MoE and disaggregated serving runs as napkin serve questions
 * (calib/validate_moe.h), on the rows tools/import_measured.py writes for
 * the fixture package (tests/measured_fixture/, checked row by row in
 * test_import_measured.c), plus two refusals the fixture lacks. */
#include "validate_moe.h"

#include "rates.h"
#include "transformer.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HEADER                                                                                                      \
    "id\tmodel\tsystem\tbackend\tbackend_version\tmode\tprecision\tgemm_quant\tmoe_quant\tisl\tosl\tconcurrency\t" \
    "tp\tpp\tattention_dp\tmoe_tp\tmoe_ep\tprefill_workers\tprefill_batch\tprefill_tp\tprefill_pp\t"               \
    "prefill_attention_dp\tprefill_moe_tp\tprefill_moe_ep\tdecode_workers\tdecode_batch\tdecode_tp\tdecode_pp\t"    \
    "decode_attention_dp\tdecode_moe_tp\tdecode_moe_ep\tttft_s\ttpot_s\tbenchmark_concurrency\n"
#define NO_POOLS "-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-"

/* The fixture's rows as imported, then a gpt-oss run in nvfp4 and a DeepSeek
 * run whose experts are split 8 x 8 (moe_tp x moe_ep), both on h200, two
 * disaggregated DeepSeek runs whose ids state the concurrency: one on h200
 * with its pools' layouts but no workers or batches (as the package's
 * 2026_03_25 sweeps write them), one whose c100 is not its pools' 256; the
 * package's squared layouts and a real mixed split; and one run each of
 * Kimi-K2.5 (int4 experts), GLM-5 and Qwen3.5-397B-A17B at TP 8 (the
 * package's own columns), all on h200; and a
 * gpt-oss h100 trtllm run as the package states it (attention_dp empty, the
 * benchmark's 160 requests = batch 40 x tp 4). */
static const char RUNS[] =
    "# measurement: serving_runs_moe\n" HEADER
    "minimax_h100_tp4\tMiniMaxAI/MiniMax-M2.5\th100_sxm\tvllm\t0.18.0\tagg\tfp8\tfp8\tfp8\t1024\t1024\t16\t4\t1\t1\t0\t"
    "4\t" NO_POOLS "\t3.000000e-01\t1.250000e-02\t-\n"
    "qwen235_h100\tQwen/Qwen3-235B-A22B-FP8\th100_sxm\ttrtllm\t1.0.0rc3\tagg\tfp8\t-\t-\t1024\t128\t16\t8\t1\t1\t-\t-\t"
    NO_POOLS "\t9.900000e-02\t9.000000e-03\t-\n"
    "dsr1_h100_dep8\tdeepseek-ai/DeepSeek-R1\th100_sxm\ttrtllm\t1.1.0rc2\tagg\tfp8\tfp8\tfp8\t1024\t128\t4\t1\t1\t8\t1\t"
    "8\t" NO_POOLS "\t2.505000e-01\t2.025000e-02\t32\n"
    "dsr1_h100_disagg\tdeepseek-ai/DeepSeek-R1\th100_sxm\ttrtllm\t1.1.0rc2\tdisagg\tfp8\tfp8\tfp8\t1024\t128\t-\t-\t-\t-\t"
    "-\t-\t2\t1\t8\t1\t1\t8\t1\t1\t32\t1\t1\t8\t1\t8\t1.500000e+00\t4.000000e-02\t-\n"
    "dsv3_h100_tp8\tdeepseek-ai/DeepSeek-V3\th100_sxm\tsglang\t0.5.8\tagg\tfp8\tfp8\tfp8_block\t2048\t256\t16\t8\t1\t-\t"
    "8\t1\t" NO_POOLS "\t8.000000e-01\t3.012500e-02\t-\n"
    "llama8b_h100_disagg\tmeta-llama/Llama-3.1-8B-Instruct\th100_sxm\ttrtllm\t1.0.0rc3\tdisagg\t-\t-\t-\t1024\t128\t16\t"
    "2\t1\t1\t-\t-\t" NO_POOLS "\t9.900000e-02\t9.000000e-03\t-\n"
    "gptoss_h200_fp4\topenai/gpt-oss-120b\th200_sxm\ttrtllm\t1.1.0\tagg\tfp4\tnvfp4\tnvfp4\t1024\t1024\t64\t4\t1\t1\t4\t"
    "1\t" NO_POOLS "\t2.000000e-01\t1.000000e-02\t-\n"
    "dsr1_h200_tp64\tdeepseek-ai/DeepSeek-R1\th200_sxm\ttrtllm\t1.1.0\tagg\tfp8\tfp8\tfp8\t8192\t1024\t16\t64\t1\t1\t8\t"
    "8\t" NO_POOLS "\t1.000000e+00\t3.000000e-02\t-\n"
    "dsr1_h200_disagg_1024x1024_c64_tp8_ep8\tdeepseek-ai/DeepSeek-R1\th200_sxm\ttrtllm\t1.1.0\tdisagg\tfp8\tfp8\tfp8\t"
    "1024\t1024\t-\t-\t-\t-\t-\t-\t-\t-\t8\t1\t1\t8\t1\t-\t-\t1\t1\t8\t1\t8\t5.000000e-01\t2.000000e-02\t-\n"
    "dsr1_h100_disagg_c100_cfg1\tdeepseek-ai/DeepSeek-R1\th100_sxm\ttrtllm\t1.1.0rc2\tdisagg\tfp8\tfp8\tfp8\t1024\t128\t"
    "-\t-\t-\t-\t-\t-\t2\t1\t8\t1\t1\t8\t1\t1\t32\t1\t1\t8\t1\t8\t1.500000e+00\t4.000000e-02\t-\n"
    "dsr1_h200_adp64\tdeepseek-ai/DeepSeek-R1\th200_sxm\ttrtllm\t1.1.0\tagg\tfp8\tfp8\tfp8\t8192\t1024\t2\t1\t1\t64\t8\t"
    "8\t" NO_POOLS "\t1.000000e+00\t4.000000e-02\t-\n"
    "qwen235_h100_mixed\tQwen/Qwen3-235B-A22B-FP8\th100_sxm\ttrtllm\t1.0.0rc3\tagg\tfp8\tfp8_block\tfp8_block\t128\t128\t"
    "16\t4\t1\t-\t2\t2\t" NO_POOLS "\t1.000000e-01\t1.700000e-02\t-\n"
    "kimi_h200_tp8\tmoonshotai/Kimi-K2.5\th200_sxm\tvllm\t0.16.0\tagg\tint4\tint4_wo\tint4_wo\t1024\t1024\t16\t8\t1\t"
    "1\t8\t1\t" NO_POOLS "\t1.927737e-01\t1.634938e-02\t-\n"
    "glm5_h200_tp8\tzhipuai/GLM-5\th200_sxm\tsglang\tglm5-hopper\tagg\tfp8\tfp8\tfp8_block\t1024\t1024\t16\t8\t1\t"
    "1\t8\t1\t" NO_POOLS "\t3.480040e-01\t2.638931e-02\t-\n"
    "qwen35_h200_tp8\tQwen/Qwen3.5-397B-A17B\th200_sxm\tsglang\t0.5.9\tagg\tfp8\tfp8\tfp8\t1024\t1024\t16\t8\t1\t1\t"
    "8\t1\t" NO_POOLS "\t2.000000e-01\t1.500000e-02\t-\n"
    "gptoss_h100_c160_tp4\topenai/gpt-oss-120b\th100_sxm\ttrtllm\t1.3.0rc1\tagg\tfp8\tfp8\tfp8\t4000\t1000\t40\t4\t1\t-\t"
    "2\t2\t" NO_POOLS "\t1.371867e+00\t4.726231e-02\t160\n";

enum { MINIMAX, QWEN_TP8, DEP8, DISAGG, TP8, LLAMA_DISAGG, FP4, MIXED, DISAGG_ID, DISAGG_BAD, SQUARED_DP, QWEN_MIXED,
       KIMI, GLM5, QWEN35, DP_UNSTATED, NRUNS };

static gpu_table gpus;
static model_table models;
static moe_run *runs;

static void setup(void)
{
    char err[256];
    cr_assert_eq(gpu_table_builtin(&gpus, err, sizeof err), 0, "%s", err);
    cr_assert_eq(model_table_builtin(&models, err, sizeof err), 0, "%s", err);
    measured_table t;
    cr_assert_eq(measured_table_parse(RUNS, "runs", &t, err, sizeof err), 0, "%s", err);
    cr_assert_eq(moe_runs_read(&t, "runs", &runs, err, sizeof err), NRUNS, "%s", err);
    measured_table_free(&t);
}

static void teardown(void)
{
    free(runs);
    gpu_table_free(&gpus);
    model_table_free(&models);
}

TestSuite(validate_moe, .init = setup, .fini = teardown);

Test(validate_moe, reads_the_layout_columns_as_written)
{
    const moe_run *d = &runs[DISAGG], *m = &runs[MINIMAX];
    /* "-" is -1, the package's 0 (MiniMax's moe_tp) stays 0 */
    cr_expect_eq(m->agg.moe_tp, 0);
    cr_expect_eq(m->agg.moe_ep, 4);
    cr_expect_eq(runs[QWEN_TP8].agg.moe_tp, -1);
    cr_expect_eq(d->agg.tp, -1);
    /* the pools: prefill 2 workers of TP 8, batch 1; decode 1 worker of DEP 8, batch 32 a rank */
    cr_expect_eq(d->prefill.workers, 2);
    cr_expect_eq(d->prefill.tp, 8);
    cr_expect_eq(d->prefill.moe_tp, 8);
    cr_expect_eq(d->decode.batch, 32);
    cr_expect_eq(d->decode.attention_dp, 8);
    cr_expect_eq(d->decode.moe_ep, 8);
    cr_expect_float_eq(runs[DEP8].ttft, 0.2505, 1e-12);
    cr_expect_float_eq(runs[DEP8].tpot, 0.02025, 1e-12);
    cr_expect_eq(runs[DEP8].benchmark_concurrency, 32);
    cr_expect_eq(runs[MINIMAX].benchmark_concurrency, -1);
}

Test(validate_moe, a_dep8_run_is_an_ep8_group_of_eight_attention_ranks)
{
    moe_question q;
    cr_assert_eq(moe_run_question(&runs[DEP8], &gpus, &models, &q), 1, "%s", q.reason);
    /* R1 has V3's shape: the deepseek-v3 row */
    cr_expect_str_eq(q.model->key, "deepseek-v3");
    cr_expect_str_eq(q.calibration, "published:h100_sxm/trtllm");
    cr_expect_str_eq(q.gpu_key, "h100");
    /* tp 1 x attention_dp 8 = moe_tp 1 x moe_ep 8: serve --ep 8 --tp 1, 4 sequences per rank */
    cr_expect_eq(q.layout.attention_dp, 8);
    cr_expect_eq(q.setup.tp, 1);
    cr_expect_eq(q.options.ep.ep, 8);
    cr_expect_eq(q.options.ep.gpus_per_node, 8);
    cr_expect_eq(q.setup.concurrency, 4);
    cr_expect_eq(q.setup.prompt, 1024);
    cr_expect_eq(q.setup.output, 128);
    cr_expect_eq(q.setup.prec.weights, DT_FP8);
    /* DeepSeek's latent cache stays bf16 (the engines' "auto" KV dtype) */
    cr_expect_eq(q.setup.prec.kv, DT_BF16);
    cr_expect_eq(q.setup.prec.act, DT_BF16);
}

Test(validate_moe, a_tp8_run_splits_the_experts_like_the_rest)
{
    moe_question q;
    cr_assert_eq(moe_run_question(&runs[TP8], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect_str_eq(q.calibration, "published:h100_sxm/sglang");
    cr_expect_eq(q.setup.tp, 8);
    cr_expect_eq(q.layout.moe_tp, 8);
    cr_expect_eq(q.layout.moe_ep, 1);
    cr_expect_eq(q.options.ep.ep, 0);
    cr_expect_eq(q.setup.concurrency, 16);
    /* fp8_block experts are fp8 weights, asked in their format (--moe-weights fp8_block), the GEMMs
     * in the gemm_quant column's per-tensor fp8 (--weights fp8) */
    cr_expect_eq(q.setup.prec.weights, DT_FP8);
    cr_expect_eq(q.setup.prec.moe_format, WF_FP8_BLOCK);
    cr_expect_eq(q.setup.prec.weights_format, WF_FP8);
    /* a run stating fp8 experts of a mixture released in fp8: the checkpoint's block-scaled fp8 */
    cr_assert_eq(moe_run_question(&runs[DEP8], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect_eq(q.setup.prec.moe_format, WF_FP8_BLOCK);
    /* a run without expert columns resolves the same way (moe_tp = tp) */
    cr_assert_eq(moe_run_question(&runs[QWEN_TP8], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect_str_eq(q.model->key, "qwen3-235b-a22b");
    cr_expect_eq(q.layout.moe_tp, 8);
    cr_expect_eq(q.options.ep.ep, 0);
}

/* gpt-oss-120b's fp4 runs on H200 load the checkpoint as released (no fp4
 * tensor cores on Hopper): experts MXFP4 at 4.25 bits into bf16 math (the
 * moe_w4a16 class), attention and the dense GEMMs bf16, the cache bf16. */
Test(validate_moe, gpt_oss_fp4_on_hopper_runs_as_released)
{
    moe_question q;
    cr_assert_eq(moe_run_question(&runs[FP4], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect_str_eq(q.model->key, "gpt-oss-120b");
    cr_expect_eq(q.setup.prec.weights, DT_BF16);
    cr_expect_eq(q.setup.prec.compute, DT_BF16);
    cr_expect_eq(q.setup.prec.kv, DT_BF16);
    cr_expect_eq(q.model->expert_format, EXPERTS_MXFP4);
    cr_expect_eq(rate_class_moe(q.setup.prec.weights, q.setup.prec.compute, q.model->expert_format == EXPERTS_MXFP4, 0),
                 RC_MOE_W4A16);
    /* 4.25 bits: an expert weight is 0.53125 B */
    cr_expect_eq(expert_weight_bytes(q.model, q.setup.prec.weights), 0.53125);
    /* nvfp4 for a model not released in fp4 stays refused */
    moe_run r = runs[TP8];
    snprintf(r.gemm_quant, sizeof r.gemm_quant, "nvfp4");
    snprintf(r.moe_quant, sizeof r.moe_quant, "nvfp4");
    cr_expect_eq(moe_run_question(&r, &gpus, &models, &q), 0);
    cr_expect_str_eq(q.reason, "fp4 weights of a model not released in fp4 (issue 33)");
}

/* attention_dp empty, batch 40, tp 4, and the benchmark's 160 requests
 * (40 x 4): four data-parallel attention ranks of one GPU with 40 sequences
 * each, the experts 2 x 2 over the same 4 GPUs.  Where the benchmark's
 * concurrency equals the batch (or is unstated), tp stays tensor parallel. */
Test(validate_moe, attention_dp_read_from_the_benchmark_concurrency)
{
    moe_question q;
    cr_assert_eq(moe_run_question(&runs[DP_UNSTATED], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect_eq(q.layout.tp, 1);
    cr_expect_eq(q.layout.attention_dp, 4);
    cr_expect(q.layout.moe_tp == 2 && q.layout.moe_ep == 2);
    cr_expect_eq(q.setup.tp, 1);
    cr_expect_eq(q.setup.concurrency, 40);
    moe_run r = runs[DP_UNSTATED];
    r.benchmark_concurrency = 40;
    cr_assert_eq(moe_run_question(&r, &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect(q.layout.tp == 4 && q.layout.attention_dp == 1, "tp %d dp %d", q.layout.tp, q.layout.attention_dp);
    r.benchmark_concurrency = -1;
    cr_assert_eq(moe_run_question(&r, &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect(q.layout.tp == 4 && q.layout.attention_dp == 1);
}

/* tp 64 with the experts split moe-tp 8 x moe-ep 8 is the package's squared
 * writing of TP 8 x EP 8 on one 8-GPU node (its twin states tp 8, moe-tp 1,
 * moe-ep 8 with the same TPOT): asked as the twin states it. */
Test(validate_moe, a_squared_layout_is_read_as_its_twin_states_it)
{
    moe_question q;
    cr_assert_eq(moe_run_question(&runs[MIXED], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect(q.layout.tp == 8 && q.layout.attention_dp == 1 && q.layout.moe_tp == 1 && q.layout.moe_ep == 8);
    cr_expect_eq(q.options.layout.moe_ep, 8);
    cr_expect_eq(q.options.ep.ep, 8);
    cr_expect_eq(q.setup.concurrency, 16);
    /* attention-dp 64 at 2 a rank: DEP 8 at 2 x 8 = 16 a rank */
    cr_assert_eq(moe_run_question(&runs[SQUARED_DP], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect(q.layout.tp == 1 && q.layout.attention_dp == 8 && q.layout.moe_tp == 1 && q.layout.moe_ep == 8);
    cr_expect_eq(q.setup.concurrency, 16);
    /* tp 4 with moe-tp 2 x moe-ep 2 fits a node as written: a real mixed split, kept */
    cr_assert_eq(moe_run_question(&runs[QWEN_MIXED], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect(q.layout.tp == 4 && q.layout.attention_dp == 1 && q.layout.moe_tp == 2 && q.layout.moe_ep == 2);
}

/* The fixture's disaggregated run as serve --disaggregate --prefill-workers 2
 * --prefill-tp 8 --decode-attention-dp 8 --decode-moe-ep 8 --decode-batch
 * 32 states it: prefill 2 workers of TP 8 (the experts split 8 ways like
 * the rest), a prompt a step; decode 1 worker of DEP 8 (tp 1 x 8 attention
 * ranks = moe_tp 1 x moe_ep 8), 32 sequences a rank, so 32 x 8 x 1 = 256
 * requests in flight; 16 + 8 = 24 GPUs span three nodes of 8, so the KV
 * crosses the network. */
Test(validate_moe, a_disaggregated_run_is_asked_with_its_pools)
{
    moe_question q;
    cr_assert_eq(moe_run_question(&runs[DISAGG], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect_eq(q.disagg, 1);
    cr_expect_str_eq(q.calibration, "published:h100_sxm/trtllm");
    const disagg_plan *p = &q.plan;
    cr_expect_eq(p->prefill.workers, 2);
    cr_expect_eq(p->prefill.batch, 1);
    cr_expect(p->prefill.layout.tp == 8 && p->prefill.layout.attention_dp == 1 && p->prefill.layout.moe_tp == 8 &&
              p->prefill.layout.moe_ep == 1);
    cr_expect_eq(p->decode.workers, 1);
    cr_expect_eq(p->decode.batch, 32);
    cr_expect(p->decode.layout.tp == 1 && p->decode.layout.attention_dp == 8 && p->decode.layout.moe_tp == 1 &&
              p->decode.layout.moe_ep == 8);
    cr_expect_eq(p->base.prompt, 1024);
    cr_expect_eq(p->base.output, 128);
    cr_expect_eq(p->base.prec.weights, DT_FP8);
    cr_expect_eq(p->base.prec.kv, DT_BF16);
    cr_expect_eq(p->opt.ep.gpus_per_node, 8);
    cr_expect_float_eq(p->opt.ep.net_bw, 50e9, 1);
    /* priced on the GPU row as serve prices it (H200: DeepSeek's 84 GB a GPU does not fit an H100) */
    disagg_plan h = *p;
    h.base.gpu = gpu_find(&gpus, "h200");
    disagg_pools_result r;
    char err[256];
    cr_assert_eq(disagg_pools_estimate(&h, &r, err, sizeof err), 0, "%s", err);
    cr_expect_eq(r.concurrency, 256);
    cr_expect_eq(r.gpus, 24);
    cr_expect_eq(r.kv_over_nvlink, 0);
}

/* A run that states its pools' layouts but no workers or batches (as
 * DeepSeek-R1's 2026_03_25 sweep writes them) is refused: its id's c64 is
 * workers x batch x ranks, one worker of 8 a rank or 8 workers of 1 alike. */
Test(validate_moe, a_run_without_workers_or_batches_is_refused)
{
    moe_question q;
    cr_expect_eq(moe_run_question(&runs[DISAGG_ID], &gpus, &models, &q), 0);
    cr_expect(strstr(q.reason, "no workers or batches stated for either pool") == q.reason, "%s", q.reason);
    /* one stated count is enough to ask it: the batch then from the id, c64 over 8 DEP ranks */
    moe_run r = runs[DISAGG_ID];
    r.decode.workers = 1;
    cr_assert_eq(moe_run_question(&r, &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect_eq(q.plan.decode.batch, 8);
}

/* Multi-token prediction where the runs used it (validate_moe.c run_mtp):
 * DeepSeek-R1 under TensorRT-LLM measured 2026-01-14 at attention-DP 1
 * with expert parallelism (the squared tp 64 run reads as TP 8 x EP 8)
 * gets one drafted token at DeepSeek's stated 0.875; the same run measured
 * another day, at DEP 8, of DeepSeek-V3 or of another engine does not. */
Test(validate_moe, the_r1_sweep_of_2026_01_14_is_asked_with_mtp)
{
    moe_question q;
    moe_run r = runs[MIXED];
    snprintf(r.measured, sizeof r.measured, "2026-01-14");
    cr_assert_eq(moe_run_question(&r, &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect(q.layout.tp == 8 && q.layout.attention_dp == 1 && q.layout.moe_ep == 8);
    cr_expect_eq(q.options.mtp_steps, 1);
    cr_expect_float_eq(q.options.mtp_accept, 0.875, 1e-12);
    cr_expect_str_eq(runs[MIXED].measured, "-", "a table without the column reads -");
    moe_run other[4] = {runs[MIXED], runs[SQUARED_DP], runs[MIXED], runs[MIXED]};
    snprintf(other[0].measured, sizeof other[0].measured, "2026-01-28");
    snprintf(other[1].measured, sizeof other[1].measured, "2026-01-14");
    snprintf(other[2].measured, sizeof other[2].measured, "2026-01-14");
    snprintf(other[2].model, sizeof other[2].model, "deepseek-ai/DeepSeek-V3");
    snprintf(other[3].measured, sizeof other[3].measured, "2026-01-14");
    snprintf(other[3].backend, sizeof other[3].backend, "sglang");
    for (int i = 0; i < 4; i++) {
        cr_assert_eq(moe_run_question(&other[i], &gpus, &models, &q), 1, "%d: %s", i, q.reason);
        cr_expect_eq(q.options.mtp_steps, 0, "case %d", i);
    }
}

/* MiniMax-M2.5 at tp 4 with its experts over moe_ep 4 (the package's
 * moe_tp 0: not given): four GPUs, EP 4, fp8 weights and GQA cache. */
Test(validate_moe, a_minimax_run_is_its_own_row_at_ep4)
{
    moe_question q;
    cr_assert_eq(moe_run_question(&runs[MINIMAX], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect_str_eq(q.model->key, "minimax-m2.5");
    cr_expect_str_eq(q.calibration, "published:h100_sxm/vllm");
    cr_expect(q.layout.tp == 4 && q.layout.moe_tp == 1 && q.layout.moe_ep == 4);
    cr_expect_eq(q.options.ep.ep, 4);
    cr_expect_eq(q.setup.prec.weights, DT_FP8);
    cr_expect_eq(q.setup.prec.kv, DT_FP8);
}

/* Kimi-K2.5's int4_wo columns name its checkpoint: routed experts int4
 * (the model's experts=int4g32), everything else bf16, the latent cache
 * bf16; GLM-5 in fp8_block with its latent cache bf16, as DeepSeek's. */
Test(validate_moe, kimi_and_glm_runs_are_asked_as_released)
{
    moe_question q;
    cr_assert_eq(moe_run_question(&runs[KIMI], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect_str_eq(q.model->key, "kimi-k2.5");
    cr_expect_eq(q.model->expert_format, EXPERTS_INT4_G32);
    cr_expect_eq(q.setup.prec.weights, DT_BF16);
    cr_expect_eq(q.setup.prec.compute, DT_BF16);
    cr_expect_eq(q.setup.prec.kv, DT_BF16);
    cr_expect(q.layout.tp == 8 && q.layout.moe_tp == 8 && q.layout.moe_ep == 1);
    cr_expect_eq(q.setup.concurrency, 16);
    cr_assert_eq(moe_run_question(&runs[GLM5], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect_str_eq(q.model->key, "glm-5");
    cr_expect_str_eq(q.calibration, "published:h200_sxm/sglang");
    cr_expect_eq(q.setup.prec.weights, DT_FP8);
    cr_expect_eq(q.setup.prec.kv, DT_BF16);
    /* int4_wo for a model whose checkpoint is not int4: asked in the stated format (--moe-weights
     * int4_wo, group 128), not the model's own */
    moe_run r = runs[GLM5];
    snprintf(r.moe_quant, sizeof r.moe_quant, "int4_wo");
    cr_assert_eq(moe_run_question(&r, &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect_eq(q.setup.prec.moe_format, WF_INT4_WO);
}

Test(validate_moe, what_the_library_cannot_state_is_refused_with_its_reason)
{
    static const struct {
        int run;
        const char *reason;
    } cases[] = {
        {LLAMA_DISAGG, "no tp stated for the pool: --prefill-"},
        {DISAGG_BAD, "the id's concurrency is not decode batch x attention ranks x workers"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        moe_question q;
        cr_expect_eq(moe_run_question(&runs[cases[i].run], &gpus, &models, &q), 0, "%s", runs[cases[i].run].id);
        cr_expect_str_eq(q.reason, cases[i].reason, "%s", runs[cases[i].run].id);
    }
}

Test(validate_moe, groups_count_answers_and_refusals)
{
    char path[] = "/tmp/napkin_moe_runsXXXXXX", err[256];
    int fd = mkstemp(path);
    cr_assert_geq(fd, 0);
    FILE *f = fdopen(fd, "w");
    fputs(RUNS, f);
    fclose(f);
    moe_validation v;
    int rc = validate_moe(path, &gpus, &models, &v, err, sizeof err);
    unlink(path);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect_eq(v.runs, NRUNS);
    /* DeepSeek-V3 in fp8 is 671e9 bytes of weights, 84 GB a GPU over 8: more
     * than an H100's 80 GB, so the DEP 8 and TP 8 runs on h100 do not fit,
     * nor does the disaggregated run's TP 8 prefill pool on h100;
     * Qwen3-235B's 235 GB over 8 (29 GB a GPU) and over 4 (59 GB) does, and
     * so does DeepSeek-R1 over 8 H200s (84 GB of 141), its two squared runs
     * read as TP 8 x EP 8 and DEP 8: four answers (the disaggregated run on
     * H200s states no workers or batches and is refused).  MiniMax-M2.5's 229 GB in
     * fp8 over 4 H100s (57 GB a GPU), GLM-5's 743 GB over 8 H200s (93 GB)
     * and Kimi-K2.5's 594 GB (int4 experts) over 8 H200s (74 GB) fit: three
     * more, and gpt-oss-120b as released (65 GB) over 4 H200s in fp4 and 4
     * H100s in fp8: two more.  Qwen3.5-397B in fp8 over 8 H200s (397 GB,
     * 50 GB a GPU, beside 15 full-attention layers' KV and the Gated
     * DeltaNet state) fits: one more.  The H200 disaggregated run states no
     * workers or batches: refused. */
    cr_expect_eq(v.answered, 10);
    cr_expect_eq(v.ngroups, 13); /* (model, system, engine, mode) */
    int fit = 0, disagg = 0;
    for (int i = 0; i < v.nrefusals; i++) {
        fit += strcmp(v.refusals[i].reason, "does not fit") == 0 ? v.refusals[i].runs : 0;
        disagg += strstr(v.refusals[i].reason, "disaggregated") != NULL ? v.refusals[i].runs : 0;
    }
    cr_expect_eq(fit, 3);
    cr_expect_eq(disagg, 0, "no disaggregated run is refused for being one");
    for (int g = 0; g < v.ngroups; g++)
        if (strcmp(v.groups[g].model, "MiniMaxAI/MiniMax-M2.5") == 0 ||
            strcmp(v.groups[g].model, "moonshotai/Kimi-K2.5") == 0 || strcmp(v.groups[g].model, "zhipuai/GLM-5") == 0 ||
            strcmp(v.groups[g].model, "Qwen/Qwen3.5-397B-A17B") == 0 ||
            strcmp(v.groups[g].model, "openai/gpt-oss-120b") == 0)
            cr_expect_eq(v.groups[g].answered, 1, "%s", v.groups[g].model);
        else if (strcmp(v.groups[g].model, "Qwen/Qwen3-235B-A22B-FP8") == 0 ||
            (strcmp(v.groups[g].model, "deepseek-ai/DeepSeek-R1") == 0 && strcmp(v.groups[g].system, "h200_sxm") == 0 &&
             strcmp(v.groups[g].backend, "trtllm") == 0 && strcmp(v.groups[g].mode, "agg") == 0)) {
            cr_expect_eq(v.groups[g].answered, 2);
            cr_expect(v.groups[g].tpot_abs_err >= 0, "an answered group has its TPOT error");
        } else
            cr_expect(v.groups[g].answered == 0 && isnan(v.groups[g].tpot_abs_err), "%s", v.groups[g].model);
    moe_validation_free(&v);
}

/* MiniMax-M2.5's 2026_04_06 vLLM rows on h100 write tp 4 x attention-dp 4
 * with moe-ep 16 at a quarter of the benchmark's concurrency a rank, where
 * their ids say "_tp4_ep4_" and their TPOT repeats, within 1 %, the
 * 2026_03_25 twin stated plainly as TEP 4 at the whole concurrency
 * (validate_moe.c run_pool_as_id): asked as TP 4 with the experts over
 * EP 4 (moe-tp 4 / 4 = 1), holding 4 x 4 = 16 sequences on one rank.  An id
 * that agrees with the columns, or a run whose benchmark concurrency is
 * not batch x ranks, keeps the columns' DEP 16. */
Test(validate_moe, attention_dp_the_id_and_its_twin_do_not_state_is_read_as_the_id)
{
    moe_question q;
    moe_run r = runs[MINIMAX];
    snprintf(r.id, sizeof r.id, "2026_04_06_minimax_m2_5_h100_sxm_vllm_fp8_agg_1024x1024_c16_tp4_ep4_1377");
    r.agg = (moe_pool){-1, 4, 4, 1, 4, 1, 16};
    r.benchmark_concurrency = 16;
    cr_assert_eq(moe_run_question(&r, &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect(q.layout.tp == 4 && q.layout.attention_dp == 1 && q.layout.moe_tp == 1 && q.layout.moe_ep == 4,
              "tp %d dp %d moe %d x %d", q.layout.tp, q.layout.attention_dp, q.layout.moe_tp, q.layout.moe_ep);
    cr_expect_eq(q.options.ep.ep, 4);
    cr_expect_eq(q.setup.concurrency, 16);
    /* the 2026_03_25 id's spelling, "_tp4_0_ep4_0_", reads the same */
    snprintf(r.id, sizeof r.id, "minimax_c16_tp4_0_ep4_0_235");
    cr_assert_eq(moe_run_question(&r, &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect(q.layout.attention_dp == 1 && q.layout.moe_ep == 4 && q.setup.concurrency == 16);
    /* the id agrees with the columns: DEP 16 as written, 4 a rank */
    snprintf(r.id, sizeof r.id, "minimax_c16_tp4_ep16_1");
    cr_assert_eq(moe_run_question(&r, &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect(q.layout.attention_dp == 4 && q.layout.moe_ep == 16 && q.setup.concurrency == 4);
    /* the benchmark's concurrency is not 4 a rank x 4 ranks: the columns kept */
    snprintf(r.id, sizeof r.id, "minimax_c16_tp4_ep4_1");
    r.benchmark_concurrency = 4;
    cr_assert_eq(moe_run_question(&r, &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect(q.layout.attention_dp == 4 && q.layout.moe_ep == 16 && q.setup.concurrency == 4);
}
