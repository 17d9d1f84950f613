/* napkin: no-asan */
/* tools/import_measured.py on the fixture package tests/measured_fixture/
 * (CSV stand-ins of the parquet tables, so no pyarrow is needed; the script
 * runs under `python3 -S`, without site-packages, to make sure of it).
 * Every expected row below is worked by hand from the fixture rows:
 * milliseconds / 1000, all-reduce bytes = 2 x message_size (bf16
 * elements), decode context = isl + step, the median of repeated shapes,
 * and the rows the selection must drop.  The script runs as a separate
 * program, so this suite stays out of the sanitizer run. */
#include "measured.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "test_text.h"
#include "scratch_dir.h"
#include "shell_run.h"

#define FIXTURE "tests/measured_fixture"
#define FIXTURE_SYSTEM FIXTURE "/aiconfigurator_core/systems"
#define SUBSET "--systems h100_sxm --backends trtllm=1.3.0rc20,vllm=0.24.0"
#define COPYRIGHT "Copyright (c) 2025-2026 NVIDIA CORPORATION & AFFILIATES. All rights reserved."

TestSuite(import_measured, .init = scratch_suite_make, .fini = scratch_suite_remove, .timeout = 120);

/* Run a shell command from the source tree; its stdout and stderr in out. */
static int sh(const char *cmd, char *out, size_t n)
{
    const char *src = need_env("NB_SRC");
    return shell_run(fmt("cd '%s' && %s", src, cmd), out, n);
}

/* The importer, without site-packages (so without pyarrow). */
static int import(const char *args, char *out, size_t n)
{
    return sh(fmt("python3 -S tools/import_measured.py --quiet %s", args), out, n);
}

static void import_fixture(const char *outdir)
{
    char out[8192];
    int rc = import(fmt("--package-dir " FIXTURE " --out '%s' " SUBSET, outdir), out, sizeof out);
    cr_assert_eq(rc, 0, "import failed (%d):\n%s", rc, out);
}

/* The rows of a written table (everything after the "# key: value" lines). */
static const char *rows_of(const char *path)
{
    const char *text = slurp(path);
    cr_assert_not_null(text, "%s was not written", path);
    while (text[0] == '#') {
        const char *nl = strchr(text, '\n');
        cr_assert_not_null(nl);
        text = nl + 1;
    }
    return text;
}

static void expect_rows(const char *file, const char *expected)
{
    const char *got = rows_of(fmt("%s/%s", scratch_dir, file));
    cr_expect_str_eq(got, expected, "%s: rows differ\n--- got\n%s--- expected\n%s", file, got, expected);
}

Test(import_measured, gemm_keeps_the_grid_converts_ms_and_takes_the_median)
{
    import_fixture(scratch_dir);
    /* bf16 1x1024x1024 measured 0.004, 0.011, 0.006 ms: median 0.006 ms.
     * fp8 2x2048x2048 measured 0.010, 0.012 ms: median 0.011 ms.
     * 79.184951782 ms = 7.9184951782e-2 s, printed %.6e.
     * Dropped: m = 3 (not a power of two), m = 65536 (above 32768),
     * n = 128 and k = 768 (off the N/K list), dtype nvfp4. */
    expect_rows("h100_sxm/trtllm/gemm.tsv",
                "dtype\tm\tn\tk\ttime_s\n"
                "bf16\t1\t1024\t1024\t6.000000e-06\n"
                "fp8\t2\t2048\t2048\t1.100000e-05\n"
                "fp8\t4096\t8192\t4096\t1.250000e-03\n"
                "fp8_block\t32768\t65536\t51200\t7.918495e-02\n");
    expect_rows("h100_sxm/vllm/gemm.tsv", "dtype\tm\tn\tk\ttime_s\n"
                                          "bf16\t16\t4096\t4096\t2.000000e-05\n");
}

Test(import_measured, decode_context_is_isl_plus_step)
{
    import_fixture(scratch_dir);
    /* isl 1 + step 131071 = 131072; isl 1 + step 1023 = 1024.  Dropped: the
     * same shape with window 8192, head_dim 256, 64/64 heads (MHA), 32/8
     * heads at head_dim 64 (only groups of 8 kept there), beam width 4. */
    expect_rows("h100_sxm/trtllm/attention_decode.tsv",
                "batch\tcontext\theads\tkv_heads\thead_dim\tkv_dtype\ttime_s\n"
                "1\t131072\t64\t8\t64\tfp8\t1.500000e-03\n"
                "32\t1024\t32\t8\t128\tbf16\t4.560000e-05\n");
    expect_rows("h100_sxm/vllm/attention_decode.tsv",
                "batch\tcontext\theads\tkv_heads\thead_dim\tkv_dtype\ttime_s\n"
                "8\t4096\t8\t1\t128\tbf16\t2.000000e-05\n");
}

Test(import_measured, latent_attention_keeps_deepseek_heads_and_the_newest_tables)
{
    import_fixture(scratch_dir);
    /* decode: 64 sequences, isl 1 + step 8191 = 8192 positions, 16 heads (TP 8), fp8 latent,
     * measured 0.1186, 0.1200, 0.1000 ms: median 0.1186 ms.  128 heads, 1 + 1023 = 1024.
     * Dropped: 8 heads (TP 16), an fp4 cache, fp8 MLA compute.  Prefill: 64 heads kept, 1 dropped. */
    expect_rows("h100_sxm/trtllm/mla_decode.tsv", "batch\tcontext\theads\tkv_dtype\ttime_s\n"
                                                  "1\t1024\t128\tbf16\t1.450000e-05\n"
                                                  "64\t8192\t16\tfp8\t1.186000e-04\n");
    expect_rows("h100_sxm/trtllm/mla_prefill.tsv", "batch\tprompt\theads\tkv_dtype\ttime_s\n"
                                                   "2\t4096\t64\tbf16\t1.500000e-03\n");
    /* the absorbed products: pre/post, bf16/fp8; 96 heads and op mla_other dropped; sorted by op */
    expect_rows("h100_sxm/trtllm/mla_bmm.tsv", "op\tdtype\ttokens\theads\ttime_s\n"
                                               "post\tfp8\t1\t128\t1.560000e-05\n"
                                               "pre\tbf16\t64\t16\t8.000000e-06\n");
    /* vLLM has only the module tables: its fp8_block rows (DeepSeek-V3's weights), 1 + 4096 positions */
    expect_rows("h100_sxm/vllm/mla_decode_module.tsv",
                "gemm_dtype\tkernel\tbatch\tcontext\theads\tkv_dtype\ttime_s\n"
                "fp8_block\tFLASHMLA\t8\t4097\t32\tfp8\t2.000000e-04\n");
    const char *decode = slurp(fmt("%s/h100_sxm/trtllm/mla_decode.tsv", scratch_dir));
    cr_expect(strstr(decode, "# source_file: systems/data/h100_sxm/mla/trtllm/1.3.0rc20/generation_mla_perf.csv\n"),
              "%s", decode);
    cr_expect(strstr(decode, "# kind: published\n") && strstr(decode, "3 shape(s)") == NULL &&
                  strstr(decode, "1 shape(s) appeared more than once"),
              "%s", decode);
    const char *readme = slurp(fmt("%s/README.md", scratch_dir));
    cr_expect(strstr(readme, "h100_sxm/vllm: module tables only 0.24.0, no bmm table"), "%s", readme);
    cr_expect(access(fmt("%s/h100_sxm/vllm/mla_decode.tsv", scratch_dir), F_OK) != 0);
}

Test(import_measured, gated_deltanet_keeps_qwen35_recurrent_and_chunked_kernels)
{
    import_fixture(scratch_dir);
    /* decode: batch 8, 2 key and 8 value heads a GPU (TP 8), measured 0.006, 0.008, 0.007 ms:
     * median 0.007 ms; dropped: Qwen3.5-9B's row and the convolution's kernel.  Prefill: the
     * chunked kernel at 4096 tokens, 0.5 ms; its convolution dropped. */
    expect_rows("h100_sxm/trtllm/gdn_decode.tsv", "batch\tk_heads\tv_heads\tk_dim\tv_dim\ttime_s\n"
                                                  "8\t2\t8\t128\t128\t7.000000e-06\n");
    expect_rows("h100_sxm/trtllm/gdn_prefill.tsv", "batch\tprompt\tk_heads\tv_heads\tk_dim\tv_dim\ttime_s\n"
                                                   "1\t4096\t16\t64\t128\t128\t5.000000e-04\n");
    const char *readme = slurp(fmt("%s/README.md", scratch_dir));
    cr_expect(strstr(readme, "h100_sxm/vllm: no gdn_perf table"), "%s", readme);
    cr_expect(access(fmt("%s/h100_sxm/vllm/gdn_decode.tsv", scratch_dir), F_OK) != 0);
}

Test(import_measured, prefill_keeps_bf16_attention_and_window_zero)
{
    import_fixture(scratch_dir);
    /* Dropped: attn_dtype fp8, window 128. */
    expect_rows("h100_sxm/trtllm/attention_prefill.tsv",
                "batch\tprompt\theads\tkv_heads\thead_dim\tkv_dtype\ttime_s\n"
                "1\t16384\t8\t1\t128\tfp8\t2.050000e-02\n"
                "4\t2048\t16\t2\t128\tbf16\t7.500000e-04\n");
    expect_rows("h100_sxm/vllm/attention_prefill.tsv",
                "batch\tprompt\theads\tkv_heads\thead_dim\tkv_dtype\ttime_s\n"
                "2\t1024\t32\t4\t128\tbf16\t3.000000e-04\n");
}

Test(import_measured, allreduce_counts_two_bytes_per_element_and_adds_the_newest_nccl)
{
    import_fixture(scratch_dir);
    /* message_size 128 elements = 256 bytes; 536870912 = 1073741824 bytes;
     * NCCL 2.23 is newer than 2.9.1 (a string sort would pick 2.9.1, whose
     * 9.99 ms row must not appear); its all_gather and int8 rows are dropped.
     * vLLM names the implementation in a `backend` column. */
    expect_rows("h100_sxm/trtllm/allreduce.tsv",
                "implementation\ttp\tbytes\ttime_s\n"
                "nccl\t2\t16777216\t8.000000e-05\n"
                "trtllm\t2\t256\t2.600000e-06\n"
                "trtllm\t8\t1073741824\t4.007800e-03\n");
    expect_rows("h100_sxm/vllm/allreduce.tsv",
                "implementation\ttp\tbytes\ttime_s\n"
                "nccl\t2\t16777216\t8.000000e-05\n"
                "vllm_eager\t4\t2048\t2.060000e-05\n"
                "vllm_graph\t4\t2048\t4.300000e-06\n");
}

Test(import_measured, alltoall_keeps_the_newest_version_the_median_and_the_fastest_sm_budget)
{
    import_fixture(scratch_dir);
    /* trtllm 1.3.0rc11 moe_a2a_perf: LL dispatch measured 30, 34, 31 us at
     * one shape: median 31 us = 3.1e-5 s; the HT dispatch at sms 0 (120.25
     * us) and sms 20 (100.5 us): the faster, 1.005e-4 s; bfloat16 -> bf16.
     * vLLM's fixture has no moe_a2a table: no file.
     * sglang: 0.5.12 is newer than 0.5.6.post2, whose two-node row (58.07
     * us) must not appear; LL keeps 22.994 and 38.757 us at ep 8 x 1 node;
     * normal: dispatch 300 + 12.5 = 312.5 us at 20 SMs and 280 + 10 = 290
     * at 24 SMs -> 290 us; combine 400 + 20 = 420 at 20 SMs, 420 + 10 =
     * 430 at 24 -> 420 us. */
    expect_rows("h100_sxm/trtllm/alltoall.tsv",
                "implementation\tphase\tdtype\tep\tnodes\thidden\ttopk\texperts\ttokens\ttime_s\n"
                "trtllm_deepep_ht\tdispatch\tbf16\t8\t1\t4096\t6\t128\t1024\t1.005000e-04\n"
                "trtllm_deepep_ll\tcombine\tbf16\t8\t1\t7168\t8\t256\t64\t5.250000e-05\n"
                "trtllm_deepep_ll\tdispatch\tfp8\t8\t1\t7168\t8\t256\t64\t3.100000e-05\n");
    expect_rows("h100_sxm/sglang/alltoall.tsv",
                "implementation\tphase\tdtype\tep\tnodes\thidden\ttopk\texperts\ttokens\ttime_s\n"
                "deepep_ll\tcombine\tdefault\t8\t1\t7168\t8\t256\t64\t3.875700e-05\n"
                "deepep_ll\tdispatch\tdefault\t8\t1\t7168\t8\t256\t64\t2.299400e-05\n"
                "deepep_normal\tcombine\tdefault\t8\t1\t7168\t8\t256\t4096\t4.200000e-04\n"
                "deepep_normal\tdispatch\tdefault\t8\t1\t7168\t8\t256\t4096\t2.900000e-04\n");
    cr_expect_eq(access(fmt("%s/h100_sxm/vllm/alltoall.tsv", scratch_dir), F_OK), -1);
    const char *head = slurp(fmt("%s/h100_sxm/sglang/alltoall.tsv", scratch_dir));
    cr_expect(strstr(head, "# backend_version: 0.5.12\n") != NULL, "the newest version named:\n%s", head);
    cr_expect(strstr(head, "comm/sglang/0.5.12/wideep_deepep_ll_perf.csv, ") != NULL, "its source named:\n%s", head);
    const char *readme = slurp(fmt("%s/README.md", scratch_dir));
    cr_expect(strstr(readme, "- h100_sxm/sglang: sglang 0.5.12\n") != NULL, "README names the version:\n%s", readme);
}

Test(import_measured, serving_runs_keep_aggregated_dense_runs_in_seconds)
{
    import_fixture(scratch_dir);
    /* Dropped: a disagg run, a b200 run, a MoE model.  120.5 ms = 0.1205 s,
     * 6.25 ms, 2500 ms, 30.125 ms; empty precision, version and
     * gemm_quant_mode become "-". */
    expect_rows("serving_runs.tsv",
                "id\tmodel\tsystem\tbackend\tbackend_version\tprecision\tisl\tosl\tconcurrency\ttp\tpp\tttft_s\ttpot_s\tgemm_quant\n"
                "llama70b_h100_c64\tmeta-llama/Llama-3.1-70B\th100_sxm\tvllm\t-\tfp8\t2048\t512\t64\t4\t1\t"
                "2.500000e+00\t3.012500e-02\tfp8\n"
                "llama8b_h100_c16\tmeta-llama/Llama-3.1-8B-Instruct\th100_sxm\ttrtllm\t1.0.0rc3\t-\t1024\t128\t16\t2\t1\t"
                "1.205000e-01\t6.250000e-03\t-\n");
}

Test(import_measured, serving_runs_moe_keep_mixtures_and_disaggregated_runs_with_their_layout)
{
    import_fixture(scratch_dir);
    /* Kept: the four mixtures' runs on h100_sxm and both disagg runs (the
     * dense Llama one too); dropped: the dense aggregated runs and the b200
     * run.  Sorted by model, system, backend, mode, id (byte order: upper
     * case first).  An empty count is "-", the package's 0 (MiniMax's moe_tp)
     * stays 0; the disagg run's pools are its prefill_/decode_ columns,
     * workers before batch; 250.5 ms = 0.2505 s, 20.25 ms, 800 ms, 30.125 ms,
     * 1500 ms, 40 ms, 300 ms, 12.5 ms, 99 ms, 9 ms; benchmark_concurrency
     * is the "silicon_concurrency=32" of the DEP 8 run's silicon_data_source,
     * "-" where the source states none, and measured the day of its
     * "measured=2026-01-14T22:26:21Z", "-" where none. */
    const char *dash14 = "-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-\t-";
    expect_rows("serving_runs_moe.tsv",
                fmt("id\tmodel\tsystem\tbackend\tbackend_version\tmode\tprecision\tgemm_quant\tmoe_quant\tisl\tosl\t"
                    "concurrency\ttp\tpp\tattention_dp\tmoe_tp\tmoe_ep\tprefill_workers\tprefill_batch\tprefill_tp\t"
                    "prefill_pp\tprefill_attention_dp\tprefill_moe_tp\tprefill_moe_ep\tdecode_workers\tdecode_batch\t"
                    "decode_tp\tdecode_pp\tdecode_attention_dp\tdecode_moe_tp\tdecode_moe_ep\tttft_s\ttpot_s\t"
                    "benchmark_concurrency\tmeasured\n"
                    "minimax_h100_tp4\tMiniMaxAI/MiniMax-M2.5\th100_sxm\tvllm\t0.18.0\tagg\tfp8\tfp8\tfp8\t1024\t1024\t"
                    "16\t4\t1\t1\t0\t4\t%s\t3.000000e-01\t1.250000e-02\t-\t-\n"
                    "qwen235_h100\tQwen/Qwen3-235B-A22B-FP8\th100_sxm\ttrtllm\t1.0.0rc3\tagg\tfp8\t-\t-\t1024\t128\t"
                    "16\t8\t1\t1\t-\t-\t%s\t9.900000e-02\t9.000000e-03\t-\t-\n"
                    "dsr1_h100_dep8\tdeepseek-ai/DeepSeek-R1\th100_sxm\ttrtllm\t1.1.0rc2\tagg\tfp8\tfp8\tfp8\t1024\t128\t"
                    "4\t1\t1\t8\t1\t8\t%s\t2.505000e-01\t2.025000e-02\t32\t2026-01-14\n"
                    "dsr1_h100_disagg\tdeepseek-ai/DeepSeek-R1\th100_sxm\ttrtllm\t1.1.0rc2\tdisagg\tfp8\tfp8\tfp8\t1024\t"
                    "128\t-\t-\t-\t-\t-\t-\t2\t1\t8\t1\t1\t8\t1\t1\t32\t1\t1\t8\t1\t8\t1.500000e+00\t4.000000e-02\t-\t-\n"
                    "dsv3_h100_tp8\tdeepseek-ai/DeepSeek-V3\th100_sxm\tsglang\t0.5.8\tagg\tfp8\tfp8\tfp8_block\t2048\t256\t"
                    "16\t8\t1\t-\t8\t1\t%s\t8.000000e-01\t3.012500e-02\t-\t-\n"
                    "llama8b_h100_disagg\tmeta-llama/Llama-3.1-8B-Instruct\th100_sxm\ttrtllm\t1.0.0rc3\tdisagg\t-\t-\t-\t"
                    "1024\t128\t16\t2\t1\t1\t-\t-\t%s\t9.900000e-02\t9.000000e-03\t-\t-\n",
                    dash14, dash14, dash14, dash14, dash14));
    measured_table t;
    char err[256];
    cr_assert_eq(measured_table_load(fmt("%s/serving_runs_moe.tsv", scratch_dir), &t, err, sizeof err), 0, "%s",
                 err);
    cr_expect_str_eq(measured_meta(&t, "measurement"), "serving_runs_moe");
    cr_expect_str_eq(measured_meta(&t, "kind"), "published");
    cr_expect_str_eq(measured_meta(&t, "source_file"), "systems/silicon_sample.csv");
    cr_expect(strstr(measured_meta(&t, "selection"), "6 of 9 rows") != NULL, "%s", measured_meta(&t, "selection"));
    measured_table_free(&t);
}

/* sha256 of a file, by the system's sha256sum (independent of the script). */
static const char *sha256_of(const char *path)
{
    char out[256];
    cr_assert_eq(sh(fmt("sha256sum '%s'", path), out, sizeof out), 0, "%s", out);
    out[64] = '\0';
    return fmt("%s", out);
}

static void expect_provenance(const char *file, const char *measurement, const char *backend,
                              const char *backend_version, const char *source, const char *timing)
{
    measured_table t;
    char err[256];
    const char *path = fmt("%s/%s", scratch_dir, file);
    cr_assert_eq(measured_table_load(path, &t, err, sizeof err), 0, "%s", err);
    const struct { const char *key, *want; } keys[] = {
        { "measurement", measurement },
        { "kind", "published" },
        { "system", "h100_sxm" },
        { "device", "NVIDIA H100 80GB HBM3" },
        { "backend", backend },
        { "backend_version", backend_version },
        { "source_package", "aiconfigurator-core 0.12.0" },
        { "source_file", source },
        { "source_sha256", sha256_of(fmt("%s/%s/%s", need_env("NB_SRC"), FIXTURE "/aiconfigurator_core", source)) },
        { "timing", timing },
        { "licence", "Apache-2.0 (code/specs/measured/LICENSE, NOTICE)" },
        { "copyright", COPYRIGHT },
        { "units", "time_s seconds; bytes bytes" },
    };
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        const char *v = measured_meta(&t, keys[i].key);
        cr_expect(v && strcmp(v, keys[i].want) == 0, "%s: %s is '%s', expected '%s'", file, keys[i].key,
                  v ? v : "(absent)", keys[i].want);
    }
    const char *sel = measured_meta(&t, "selection");
    cr_expect(sel && *sel, "%s: no selection", file);
    measured_table_free(&t);
}

Test(import_measured, moe_keeps_our_shapes_one_swiglu_kernel_and_the_newest_version_holding_them)
{
    import_fixture(scratch_dir);
    /* moe/trtllm/1.3.0rc23 times only a 1024/2688/22/512 shape, none of
     * ours: the importer falls back to 1.3.0rc20.  Its rows, kept or not:
     *  - bf16 2048/768/8/128, 1 token: cutlass 0.040, 0.050, 0.090 ms, median
     *    0.050 ms = 5e-5 s; the nongated kernel's 0.010 ms is another
     *    activation's kernel and is dropped;
     *  - fp8_block 7168/2048/8/256: 256 tokens on moe_tp 2 x moe_ep 4 = 8 GPUs,
     *    1.25 ms; 16384 tokens (the largest power of two kept), 12.5 ms;
     *    dropped: 3 tokens (not a power of two), 32768 (above 16384),
     *    moe_tp 2 x moe_ep 8 = 16 GPUs (beyond a node), hidden 6144 (no model
     *    of ours);
     *  - w4a16_mxfp4 2880/2880/4/128, 8 tokens, 0.0625 ms; nvfp4 dropped. */
    expect_rows("h100_sxm/trtllm/moe.tsv",
                "dtype\ttokens\thidden\tinter\ttopk\texperts\tmoe_tp\tmoe_ep\tdistribution\ttime_s\n"
                "bf16\t1\t2048\t768\t8\t128\t1\t1\tbalanced\t5.000000e-05\n"
                "fp8_block\t256\t7168\t2048\t8\t256\t2\t4\tpower_law_1.01\t1.250000e-03\n"
                "fp8_block\t16384\t7168\t2048\t8\t256\t1\t8\tpower_law_1.2\t1.250000e-02\n"
                "w4a16_mxfp4\t8\t2880\t2880\t4\t128\t1\t1\tbalanced\t6.250000e-05\n");
    expect_provenance("h100_sxm/trtllm/moe.tsv", "moe", "trtllm", "1.3.0rc20",
                      "systems/data/h100_sxm/moe/trtllm/1.3.0rc20/moe_perf.csv",
                      "no collection_meta.yaml; no timing method stated");
    measured_table t;
    char err[256];
    cr_assert_eq(measured_table_load(fmt("%s/h100_sxm/trtllm/moe.tsv", scratch_dir), &t, err, sizeof err), 0, "%s",
                 err);
    cr_expect_str_eq(measured_meta(&t, "kernel_source"),
                     "bf16 moe_torch_flow_cutlass; fp8_block moe_torch_flow_cutlass; w4a16_mxfp4 moe_torch_flow");
    measured_table_free(&t);
    /* The fixture has no vLLM MoE table: no moe.tsv, and no failure. */
    cr_expect(access(fmt("%s/h100_sxm/vllm/moe.tsv", scratch_dir), F_OK) != 0);
}

Test(import_measured, every_table_carries_its_provenance)
{
    import_fixture(scratch_dir);
    expect_provenance("h100_sxm/trtllm/gemm.tsv", "gemm", "trtllm", "1.3.0rc20",
                      "systems/data/h100_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.csv",
                      "collection_meta.yaml provenance: collected; no timing method stated");
    /* The fixture's attention yaml names a timing method; it is repeated. */
    expect_provenance("h100_sxm/trtllm/attention_decode.tsv", "attention_decode", "trtllm", "1.3.0rc20",
                      "systems/data/h100_sxm/attention/trtllm/1.3.0rc20/generation_attention_perf.csv",
                      "collection_meta.yaml provenance: collected; timing: timing_method=cuda_graph_replay");
    expect_provenance("h100_sxm/vllm/attention_prefill.tsv", "attention_prefill", "vllm", "0.24.0",
                      "systems/data/h100_sxm/attention/vllm/0.24.0/context_attention_perf.csv",
                      "collection_meta.yaml provenance: legacy; no timing method stated");

    /* All-reduce names both its sources, in order, and their hashes. */
    measured_table t;
    char err[256];
    cr_assert_eq(measured_table_load(fmt("%s/h100_sxm/vllm/allreduce.tsv", scratch_dir), &t, err, sizeof err), 0, "%s",
                 err);
    const char *root = fmt("%s/" FIXTURE "/aiconfigurator_core", need_env("NB_SRC"));
    const char *custom = "systems/data/h100_sxm/comm/vllm/0.24.0/custom_allreduce_perf.csv";
    const char *nccl = "systems/data/h100_sxm/comm/nccl/2.23/nccl_perf.csv";
    cr_expect_str_eq(measured_meta(&t, "source_file"), fmt("%s, %s", custom, nccl));
    cr_expect_str_eq(measured_meta(&t, "source_sha256"),
                     fmt("%s, %s", sha256_of(fmt("%s/%s", root, custom)), sha256_of(fmt("%s/%s", root, nccl))));
    cr_expect_str_eq(measured_meta(&t, "kind"), "published");
    cr_expect_str_eq(measured_meta(&t, "nccl_version"), "2.23");
    /* That folder has no collection_meta.yaml: the timing line says so. */
    cr_expect(strstr(measured_meta(&t, "timing"), "custom: no collection_meta.yaml") != NULL, "%s",
              measured_meta(&t, "timing"));
    measured_table_free(&t);

    cr_assert_eq(measured_table_load(fmt("%s/serving_runs.tsv", scratch_dir), &t, err, sizeof err), 0, "%s", err);
    cr_expect_str_eq(measured_meta(&t, "measurement"), "serving_runs");
    cr_expect_str_eq(measured_meta(&t, "kind"), "published");
    cr_expect_str_eq(measured_meta(&t, "copyright"), COPYRIGHT);
    cr_expect(strstr(measured_meta(&t, "note"), "closed-loop TTFT") != NULL);
    measured_table_free(&t);
}

Test(import_measured, licence_and_notice_sit_beside_the_tables)
{
    import_fixture(scratch_dir);
    const char *src = need_env("NB_SRC");
    cr_expect_str_eq(slurp(fmt("%s/LICENSE", scratch_dir)),
                     slurp(fmt("%s/" FIXTURE "/aiconfigurator_core-0.12.0.dist-info/licenses/LICENSE", src)));
    cr_expect_str_eq(slurp(fmt("%s/NOTICE", scratch_dir)),
                     "These tables are derived from aiconfigurator-core 0.12.0, Copyright (c) 2025-2026 NVIDIA "
                     "CORPORATION & AFFILIATES. All rights reserved, Apache-2.0; selected rows converted to TSV, "
                     "units converted to seconds and bytes.\n");
    const char *readme = slurp(fmt("%s/README.md", scratch_dir));
    cr_assert_not_null(readme);
    cr_expect(strstr(readme, "never on the reader's GPU") && strstr(readme, "figures/measured/"), "%s", readme);
}

Test(import_measured, a_rerun_writes_the_same_bytes)
{
    import_fixture(scratch_dir);
    const char *again = fmt("%s/again", scratch_dir);
    import_fixture(again);
    char out[4096];
    const char *files[] = { "h100_sxm/trtllm/gemm.tsv", "h100_sxm/trtllm/attention_decode.tsv",
                            "h100_sxm/trtllm/mla_decode.tsv", "h100_sxm/vllm/mla_prefill_module.tsv",
                            "h100_sxm/vllm/allreduce.tsv", "serving_runs.tsv", "serving_runs_moe.tsv", "README.md",
                            "NOTICE" };
    for (size_t i = 0; i < sizeof files / sizeof files[0]; i++)
        cr_expect_eq(sh(fmt("cmp '%s/%s' '%s/%s'", scratch_dir, files[i], again, files[i]), out, sizeof out), 0, "%s",
                     out);
}

/* A copy of the fixture to break. */
static const char *fixture_copy(void)
{
    char out[4096];
    const char *copy = fmt("%s/pkg", scratch_dir);
    cr_assert_eq(sh(fmt("cp -r " FIXTURE " '%s'", copy), out, sizeof out), 0, "%s", out);
    return copy;
}

Test(import_measured, a_missing_table_exits_2_and_names_it)
{
    char out[8192];
    /* The fixture holds only h100_sxm, and only trtllm and vllm: the
     * default selection wants sglang too, and h200_sxm. */
    int rc = import(fmt("--package-dir " FIXTURE " --out '%s/o'", scratch_dir), out, sizeof out);
    cr_expect_eq(rc, 2, "exit %d:\n%s", rc, out);
    cr_expect(strstr(out, "missing table systems/data/h100_sxm/gemm/sglang/0.5.14/gemm_perf.parquet") != NULL, "%s",
              out);
    rc = import(fmt("--package-dir " FIXTURE " --out '%s/o' --backends trtllm=1.3.0rc20", scratch_dir), out,
                sizeof out);
    cr_expect_eq(rc, 2, "exit %d:\n%s", rc, out);
    cr_expect(strstr(out, "missing table systems/data/h200_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.parquet") != NULL,
              "%s", out);

    const char *copy = fixture_copy();
    cr_assert_eq(sh(fmt("rm '%s/aiconfigurator_core/systems/data/h100_sxm/comm/nccl/2.23/nccl_perf.csv' "
                        "'%s/aiconfigurator_core/systems/data/h100_sxm/comm/nccl/2.9.1/nccl_perf.csv'",
                        copy, copy),
                    out, sizeof out),
                 0, "%s", out);
    rc = import(fmt("--package-dir '%s' --out '%s/o' " SUBSET, copy, scratch_dir), out, sizeof out);
    cr_expect_eq(rc, 2, "exit %d:\n%s", rc, out);
    cr_expect(strstr(out, "missing table systems/data/h100_sxm/comm/nccl/2.23/nccl_perf.parquet") != NULL, "%s",
              out);
}

Test(import_measured, a_missing_column_exits_2_and_names_it)
{
    char out[8192];
    const char *copy = fixture_copy();
    const char *gemm = fmt("%s/aiconfigurator_core/systems/data/h100_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.csv", copy);
    cr_assert_eq(sh(fmt("sed -i '1s/,latency$/,latency_ms/' '%s'", gemm), out, sizeof out), 0, "%s", out);
    int rc = import(fmt("--package-dir '%s' --out '%s/o' " SUBSET, copy, scratch_dir), out, sizeof out);
    cr_expect_eq(rc, 2, "exit %d:\n%s", rc, out);
    cr_expect(strstr(out, "systems/data/h100_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.csv: missing column latency") !=
                  NULL,
              "%s", out);
}

Test(import_measured, a_cell_that_is_not_a_number_exits_2)
{
    char out[8192];
    const char *copy = fixture_copy();
    const char *gemm = fmt("%s/aiconfigurator_core/systems/data/h100_sxm/gemm/trtllm/1.3.0rc20/gemm_perf.csv", copy);
    cr_assert_eq(sh(fmt("sed -i '2s/,0.004$/,fast/' '%s'", gemm), out, sizeof out), 0, "%s", out);
    int rc = import(fmt("--package-dir '%s' --out '%s/o' " SUBSET, copy, scratch_dir), out, sizeof out);
    cr_expect_eq(rc, 2, "exit %d:\n%s", rc, out);
    cr_expect(strstr(out, "column latency: 'fast' is not a number") != NULL, "%s", out);
}

Test(import_measured, parquet_without_pyarrow_says_what_to_install)
{
    char out[8192];
    const char *copy = fixture_copy();
    const char *dir = fmt("%s/aiconfigurator_core/systems/data/h100_sxm/gemm/trtllm/1.3.0rc20", copy);
    cr_assert_eq(sh(fmt("echo PAR1 > '%s/gemm_perf.parquet'", dir), out, sizeof out), 0, "%s", out);
    int rc = import(fmt("--package-dir '%s' --out '%s/o' " SUBSET, copy, scratch_dir), out, sizeof out);
    cr_expect_eq(rc, 2, "exit %d:\n%s", rc, out);
    cr_expect(strstr(out, "needs pyarrow (pip install pyarrow)") != NULL, "%s", out);
}

Test(import_measured, a_wheel_without_licence_file_takes_the_apache_text_given)
{
    char out[8192];
    const char *copy = fixture_copy();
    cr_assert_eq(sh(fmt("rm -r '%s/aiconfigurator_core-0.12.0.dist-info/licenses'", copy), out, sizeof out), 0, "%s",
                 out);
    int rc = import(fmt("--package-dir '%s' --out '%s/o' " SUBSET " --licence-text /nonexistent/Apache-2.0", copy,
                        scratch_dir),
                    out, sizeof out);
    cr_expect_eq(rc, 2, "exit %d:\n%s", rc, out);
    cr_expect(strstr(out, "--licence-text /nonexistent/Apache-2.0: no such file") != NULL, "%s", out);

    const char *text = fmt("%s/apache.txt", scratch_dir);
    const char *body = "Apache License\nVersion 2.0, January 2004\nhttp://www.apache.org/licenses/\n";
    write_bytes(text, body, strlen(body));
    rc = import(fmt("--package-dir '%s' --out '%s/o' " SUBSET " --licence-text '%s'", copy, scratch_dir, text), out,
                sizeof out);
    cr_assert_eq(rc, 0, "exit %d:\n%s", rc, out);
    cr_expect_str_eq(slurp(fmt("%s/o/LICENSE", scratch_dir)), body);
}

Test(import_measured, bad_flags_exit_2_and_name_the_flag)
{
    char out[8192];
    int rc = import("--package-dir " FIXTURE " --backends trtllm", out, sizeof out);
    cr_expect_eq(rc, 2, "exit %d:\n%s", rc, out);
    cr_expect(strstr(out, "--backends") != NULL, "%s", out);
    rc = import("--package-dir " FIXTURE " --systems 'H100 SXM'", out, sizeof out);
    cr_expect_eq(rc, 2, "exit %d:\n%s", rc, out);
    cr_expect(strstr(out, "--systems") != NULL, "%s", out);
    rc = import("--no-such-flag", out, sizeof out);
    cr_expect_eq(rc, 2, "exit %d:\n%s", rc, out);
    rc = import(fmt("--package-dir '%s/nowhere'", scratch_dir), out, sizeof out);
    cr_expect_eq(rc, 2, "exit %d:\n%s", rc, out);
    cr_expect(strstr(out, "--package-dir") != NULL, "%s", out);
}
