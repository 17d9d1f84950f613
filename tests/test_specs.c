/* Parsing the GPU and model tables: the shipped ones, good and malformed files. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "specs.h"

static char path_buf[4096];
static const char *fixture(const char *name)
{
    const char *src = getenv("NB_SRC");
    snprintf(path_buf, sizeof path_buf, "%s/tests/specs/%s", src ? src : ".", name);
    return path_buf;
}

Test(specs, builtin_tables_hold_the_required_rows_with_sources)
{
    gpu_table g;
    model_table m;
    char err[512];
    cr_assert_eq(gpu_table_builtin(&g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(model_table_builtin(&m, err, sizeof err), 0, "%s", err);
    const char *gpus[] = {"h100", "h200", "a100", "b200", "mi300x", "l40s"};
    for (size_t i = 0; i < sizeof gpus / sizeof *gpus; i++)
        cr_assert_not_null(gpu_find(&g, gpus[i]), "missing GPU %s", gpus[i]);
    const char *models[] = {"llama3-8b", "llama3-70b", "llama2-13b", "mixtral-8x7b"};
    for (size_t i = 0; i < sizeof models / sizeof *models; i++)
        cr_assert_not_null(model_find(&m, models[i]), "missing model %s", models[i]);
    for (int i = 0; i < g.n; i++)
        cr_assert(strncmp(g.rows[i].source, "https://", 8) == 0, "GPU %s lacks a source", g.rows[i].key);
    for (int i = 0; i < m.n; i++)
        cr_assert(strncmp(m.rows[i].source, "https://", 8) == 0, "model %s lacks a source", m.rows[i].key);
    gpu_table_free(&g);
    model_table_free(&m);
}

Test(specs, builtin_values_match_the_datasheets)
{
    /* H100 SXM datasheet: 1,979 TFLOP/s bf16 with sparsity -> 989.4 dense; 3.35 TB/s; 80 GB */
    gpu_spec h = gpu_builtin("h100");
    cr_assert_float_eq(h.flops[DT_BF16], 989.4e12, 1e6);
    cr_assert_float_eq(h.flops[DT_FP8], 1978.9e12, 1e6);
    cr_assert_float_eq(h.mem_bw, 3.35e12, 1e3);
    cr_assert_float_eq(h.mem_bytes_datasheet, 80e9, 1);
    /* nvidia-smi on an H100 SXM reports 81,559 MiB = 81559 * 2^20 = 85,520,809,984 B */
    cr_assert_float_eq(h.mem_bytes, 85520809984.0, 1);
    /* NVLink 4: 900 GB/s bidirectional, 450 per direction; 4.8 us for a small all-reduce at TP 4 */
    cr_assert_float_eq(h.link_bw, 450e9, 1);
    cr_assert_float_eq(h.allreduce_latency, 4.8e-6, 1e-12);
    cr_assert_float_eq(h.host_bw, 64e9, 1);
    /* A100 has no fp8 tensor cores: rate absent */
    gpu_spec a = gpu_builtin("a100");
    cr_assert_eq(gpu_peak_flops(&a, DT_FP8), 0);
    cr_assert_float_eq(gpu_peak_flops(&a, DT_INT8), 624e12, 1e6);
    /* LLaMA-3-70B config.json: 80 layers, 8192 hidden, 64 heads, 8 KV heads, ffn 28672, vocab 128256 */
    model_spec m = model_builtin("LLAMA3-70B"); /* keys are case-insensitive */
    cr_assert_eq(m.layers, 80);
    cr_assert_eq(m.hidden, 8192);
    cr_assert_eq(m.heads, 64);
    cr_assert_eq(m.kv_heads, 8);
    cr_assert_eq(m.ffn, 28672);
    cr_assert_eq(m.vocab, 128256);
    model_spec x = model_builtin("mixtral-8x7b");
    cr_assert_eq(x.experts, 8);
    cr_assert_eq(x.experts_active, 2);
}

Test(specs, good_file_parses)
{
    gpu_table g;
    char err[512];
    cr_assert_eq(gpu_table_load(fixture("good_gpus.tsv"), &g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(g.n, 2);
    const gpu_spec *t2 = gpu_find(&g, "t2");
    cr_assert_not_null(t2);
    cr_assert_float_eq(t2->flops[DT_BF16], 50.5e12, 1);
    cr_assert_eq(t2->flops[DT_FP8], 0); /* "-" */
    cr_assert_float_eq(t2->flops[DT_INT8], 101e12, 1);
    cr_assert_float_eq(t2->mem_bw, 0.5e12, 1);
    char keys[128];
    cr_assert_str_eq(gpu_keys(&g, keys, sizeof keys), "t1, t2");
    gpu_table_free(&g);
}

static void expect_gpu_error(const char *file, const char *want)
{
    gpu_table g;
    char err[512] = "";
    cr_assert_eq(gpu_table_load(fixture(file), &g, err, sizeof err), -1, "%s should fail", file);
    cr_assert(strstr(err, want) != NULL, "error '%s' lacks '%s'", err, want);
    cr_assert_eq(g.n, 0);
}

Test(specs, malformed_rows_name_file_line_and_field)
{
    expect_gpu_error("bad_number.tsv", "bad_number.tsv:3: field 'hbm_tb_s': 'fast' is not a number");
    expect_gpu_error("short_row.tsv", "short_row.tsv:3: field 'hbm_gb': row has 7 fields, expected 14");
    expect_gpu_error("duplicate.tsv", "duplicate.tsv:4: field 'key': 'x1' appears twice");
    expect_gpu_error("bad_header.tsv", "bad_header.tsv:1: field 'bf16_tflops': header names 'bf16' here");
    expect_gpu_error("no_such_file.tsv", "no_such_file.tsv: No such file");
}

Test(specs, malformed_model_rows)
{
    model_table m;
    char err[512] = "";
    cr_assert_eq(model_table_load(fixture("bad_model.tsv"), &m, err, sizeof err), -1);
    cr_assert(strstr(err, "bad_model.tsv:2: field 'kv_heads'") != NULL, "%s", err);
    cr_assert_eq(model_table_load(fixture("missing_source.tsv"), &m, err, sizeof err), -1);
    cr_assert(strstr(err, "missing_source.tsv:2: field 'source': empty") != NULL, "%s", err);
}

Test(specs, negative_and_empty_text)
{
    gpu_table g;
    char err[512] = "";
    const char *neg = "key\tname\tbf16_tflops\tfp16_tflops\tfp8_tflops\tint8_tops\thbm_tb_s\thbm_gb\tdriver_mib"
                      "\tlink_gb_s\tallreduce_us\tpcie_gb_s\tsource\tlink_source\n"
                      "n\tNeg\t-5\t1\t1\t1\t1\t1\t-\t-\t-\t-\thttps://example.invalid\thttps://example.invalid\n";
    cr_assert_eq(gpu_table_parse(neg, "neg.tsv", &g, err, sizeof err), -1);
    cr_assert(strstr(err, "neg.tsv:2: field 'bf16_tflops': '-5' must be positive") != NULL, "%s", err);
    cr_assert_eq(gpu_table_parse("# only a comment\n", "empty.tsv", &g, err, sizeof err), -1);
    cr_assert(strstr(err, "no header row") != NULL, "%s", err);
}

Test(specs, lookup_copies_a_row_or_says_no)
{
    gpu_spec g;
    model_spec m;
    /* H200 datasheet: 4.8 TB/s, 141 GB */
    cr_assert_eq(gpu_lookup("h200", &g), 0);
    cr_assert_float_eq(g.mem_bw, 4.8e12, 1e3);
    cr_assert_float_eq(g.mem_bytes_datasheet, 141e9, 1);
    /* nvidia-smi: 143,771 MiB = 150,754,820,096 B */
    cr_assert_float_eq(g.mem_bytes, 150754820096.0, 1);
    cr_assert_eq(gpu_lookup("h300", &g), -1);
    cr_assert_eq(gpu_lookup(NULL, &g), -1);
    /* LLaMA-2-13B config.json: 40 layers, 40 heads, 40 KV heads (no GQA) */
    cr_assert_eq(model_lookup("llama2-13b", &m), 0);
    cr_assert_eq(m.layers, 40);
    cr_assert_eq(m.kv_heads, 40);
    cr_assert_eq(model_lookup("gpt-5", &m), -1);
}

/* max_position is an optional last column: 4096 or "-" (unknown, 0); a
 * table without it (tests/specs/bad_model.tsv's header, 13 columns) still
 * parses; "4k" is not a whole number. */
Test(specs, max_position_column)
{
    model_table m;
    char err[512] = "";
    cr_assert_eq(model_table_load(fixture("good_models.tsv"), &m, err, sizeof err), 0, "%s", err);
    cr_assert_eq(m.n, 2);
    cr_expect_eq(m.rows[0].max_position, 4096);
    cr_expect_eq(m.rows[1].max_position, 0);
    model_table_free(&m);
    cr_assert_eq(model_table_load(fixture("bad_max_position.tsv"), &m, err, sizeof err), -1);
    cr_expect(strstr(err, "bad_max_position.tsv:2: field 'max_position'") != NULL, "%s", err);
    const char *old = "key\tname\tlayers\thidden\theads\tkv_heads\thead_dim\tffn\tvocab\texperts\texperts_active\ttied\tsource\n"
                      "m1\tModel\t4\t256\t8\t2\t32\t1024\t1000\t1\t1\t0\thttps://example.invalid/m1\n";
    cr_assert_eq(model_table_parse(old, "old.tsv", &m, err, sizeof err), 0, "%s", err);
    cr_expect_eq(m.rows[0].max_position, 0);
    model_table_free(&m);
    /* the built-in rows carry it: LLaMA-3-8B's max_position_embeddings is 8192 */
    cr_expect_eq(model_builtin("llama3-8b").max_position, 8192);
}
