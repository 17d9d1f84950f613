/* The MoE and disaggregated serving runs as napkin serve questions
 * (calib/validate_moe.h), on the rows tools/import_measured.py writes for
 * the fixture package (tests/measured_fixture/, checked row by row in
 * test_import_measured.c), plus two refusals the fixture lacks. */
#include "validate_moe.h"

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
    "decode_attention_dp\tdecode_moe_tp\tdecode_moe_ep\tttft_s\ttpot_s\n"
#define NO_POOLS "-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-"

/* The fixture's rows as imported, then a gpt-oss run in nvfp4 and a DeepSeek
 * run whose experts are split 8 x 8 (moe_tp x moe_ep), both on h200. */
static const char RUNS[] =
    "# measurement: serving_runs_moe\n" HEADER
    "minimax_h100_tp4\tMiniMaxAI/MiniMax-M2.5\th100_sxm\tvllm\t0.18.0\tagg\tfp8\tfp8\tfp8\t1024\t1024\t16\t4\t1\t1\t0\t"
    "4\t" NO_POOLS "\t3.000000e-01\t1.250000e-02\n"
    "qwen235_h100\tQwen/Qwen3-235B-A22B-FP8\th100_sxm\ttrtllm\t1.0.0rc3\tagg\tfp8\t-\t-\t1024\t128\t16\t8\t1\t1\t-\t-\t"
    NO_POOLS "\t9.900000e-02\t9.000000e-03\n"
    "dsr1_h100_dep8\tdeepseek-ai/DeepSeek-R1\th100_sxm\ttrtllm\t1.1.0rc2\tagg\tfp8\tfp8\tfp8\t1024\t128\t4\t1\t1\t8\t1\t"
    "8\t" NO_POOLS "\t2.505000e-01\t2.025000e-02\n"
    "dsr1_h100_disagg\tdeepseek-ai/DeepSeek-R1\th100_sxm\ttrtllm\t1.1.0rc2\tdisagg\tfp8\tfp8\tfp8\t1024\t128\t-\t-\t-\t-\t"
    "-\t-\t2\t1\t8\t1\t1\t8\t1\t1\t32\t1\t1\t8\t1\t8\t1.500000e+00\t4.000000e-02\n"
    "dsv3_h100_tp8\tdeepseek-ai/DeepSeek-V3\th100_sxm\tsglang\t0.5.8\tagg\tfp8\tfp8\tfp8_block\t2048\t256\t16\t8\t1\t-\t"
    "8\t1\t" NO_POOLS "\t8.000000e-01\t3.012500e-02\n"
    "llama8b_h100_disagg\tmeta-llama/Llama-3.1-8B-Instruct\th100_sxm\ttrtllm\t1.0.0rc3\tdisagg\t-\t-\t-\t1024\t128\t16\t"
    "2\t1\t1\t-\t-\t" NO_POOLS "\t9.900000e-02\t9.000000e-03\n"
    "gptoss_h200_fp4\topenai/gpt-oss-120b\th200_sxm\ttrtllm\t1.1.0\tagg\tfp4\tnvfp4\tnvfp4\t1024\t1024\t64\t4\t1\t1\t4\t"
    "1\t" NO_POOLS "\t2.000000e-01\t1.000000e-02\n"
    "dsr1_h200_tp64\tdeepseek-ai/DeepSeek-R1\th200_sxm\ttrtllm\t1.1.0\tagg\tfp8\tfp8\tfp8\t8192\t1024\t16\t64\t1\t1\t8\t"
    "8\t" NO_POOLS "\t1.000000e+00\t3.000000e-02\n";

enum { MINIMAX, QWEN_TP8, DEP8, DISAGG, TP8, LLAMA_DISAGG, FP4, MIXED, NRUNS };

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
    /* a TensorRT-LLM run stating fp8 experts: per tensor */
    cr_assert_eq(moe_run_question(&runs[DEP8], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect_eq(q.setup.prec.moe_format, WF_FP8);
    /* a run without expert columns resolves the same way (moe_tp = tp) */
    cr_assert_eq(moe_run_question(&runs[QWEN_TP8], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect_str_eq(q.model->key, "qwen3-235b-a22b");
    cr_expect_eq(q.layout.moe_tp, 8);
    cr_expect_eq(q.options.ep.ep, 0);
}

/* tp 64 with the experts split moe-tp 8 x moe-ep 8 (= 64 GPUs, one attention rank) */
Test(validate_moe, a_mixed_expert_split_is_asked_with_its_layout)
{
    moe_question q;
    cr_assert_eq(moe_run_question(&runs[MIXED], &gpus, &models, &q), 1, "%s", q.reason);
    cr_expect(q.layout.tp == 64 && q.layout.attention_dp == 1 && q.layout.moe_tp == 8 && q.layout.moe_ep == 8);
    cr_expect_eq(q.options.layout.moe_ep, 8);
    cr_expect_eq(q.options.ep.ep, 8);
}

Test(validate_moe, what_the_library_cannot_state_is_refused_with_its_reason)
{
    static const struct {
        int run;
        const char *reason;
    } cases[] = {
        {MINIMAX, "model not in models.tsv: MiniMaxAI/MiniMax-M2.5"},
        {DISAGG, "disaggregated pools not yet"},
        {LLAMA_DISAGG, "disaggregated pools not yet"},
        {FP4, "fp4 weights (issue 33)"},
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
     * than an H100's 80 GB, so the DEP 8 and TP 8 runs on h100 do not fit;
     * Qwen3-235B's 235 GB over 8 (29 GB a GPU) does, and so does DeepSeek-R1
     * over 64 H200s (10.5 GB a GPU): two answers. */
    cr_expect_eq(v.answered, 2);
    cr_expect_eq(v.ngroups, 8); /* (model, system, engine, mode) */
    int fit = 0, disagg = 0;
    for (int i = 0; i < v.nrefusals; i++) {
        fit += strcmp(v.refusals[i].reason, "does not fit") == 0 ? v.refusals[i].runs : 0;
        disagg += strcmp(v.refusals[i].reason, "disaggregated pools not yet") == 0 ? v.refusals[i].runs : 0;
    }
    cr_expect_eq(fit, 2);
    cr_expect_eq(disagg, 2);
    for (int g = 0; g < v.ngroups; g++)
        if (strcmp(v.groups[g].model, "Qwen/Qwen3-235B-A22B-FP8") == 0 ||
            (strcmp(v.groups[g].model, "deepseek-ai/DeepSeek-R1") == 0 && strcmp(v.groups[g].system, "h200_sxm") == 0 &&
             strcmp(v.groups[g].backend, "trtllm") == 0 && strcmp(v.groups[g].mode, "agg") == 0)) {
            cr_expect_eq(v.groups[g].answered, 1);
            cr_expect(v.groups[g].tpot_abs_err >= 0, "an answered group has its TPOT error");
        } else
            cr_expect(v.groups[g].answered == 0 && isnan(v.groups[g].tpot_abs_err), "%s", v.groups[g].model);
    moe_validation_free(&v);
}
