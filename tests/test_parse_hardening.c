/* Adversarial tables and flags: values that would overflow or underflow,
 * shapes that would overflow an int, duplicate keys among many rows, files
 * that are not tables, one number syntax for flags and tables, an output
 * that cannot be written, and no inf, nan or -0 in any command's answer.
 * Each case is a reproducer that printed a wrong answer (or hung) before. */
#include "specs.h"
#include "test_text.h"
#include "units.h"

#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch_dir.h"
#include "shell_run.h"

static const char *GPU_HEADER = "key\tname\tbf16_tflops\tfp16_tflops\tfp8_tflops\tint8_tops\thbm_tb_s\thbm_gb\tdriver_mib"
                                "\tlink_gb_s\tallreduce_us\tpcie_gb_s\tsource\tlink_source\n";
static const char *MODEL_HEADER = "key\tname\tlayers\thidden\theads\tkv_heads\thead_dim\tffn\tvocab\texperts"
                                  "\texperts_active\ttied\tsource\n";

static int parse_gpu_row(const char *row, char *err, size_t n)
{
    char text[2048];
    snprintf(text, sizeof text, "%s%s\n", GPU_HEADER, row);
    gpu_table t;
    int rc = gpu_table_parse(text, "t.tsv", &t, err, n);
    gpu_table_free(&t);
    return rc;
}

Test(hardening, overflowing_rates_are_refused)
{
    char err[512];
    /* 1e300 TFLOP/s passed isfinite before the unit multiply and became inf */
    cr_assert_eq(parse_gpu_row("x\tX\t1e300\t1\t-\t-\t3\t80\t-\t-\t-\t-\ts\tl", err, sizeof err), -1);
    cr_assert(strstr(err, "t.tsv:2: field 'bf16_tflops'") && strstr(err, "outside"), "%s", err);
    cr_assert_eq(parse_gpu_row("x\tX\t100\t1\t-\t-\t1e300\t80\t-\t-\t-\t-\ts\tl", err, sizeof err), -1);
    cr_assert(strstr(err, "'hbm_tb_s'"), "%s", err);
    cr_assert_eq(parse_gpu_row("x\tX\t100\t1\t-\t-\t3\t1e300\t-\t-\t-\t-\ts\tl", err, sizeof err), -1);
    cr_assert(strstr(err, "'hbm_gb'"), "%s", err);
    /* 5e-324 is positive but no real part: refused for its range, not as "not positive" */
    cr_assert_eq(parse_gpu_row("x\tX\t5e-324\t1\t-\t-\t3\t80\t-\t-\t-\t-\ts\tl", err, sizeof err), -1);
    cr_assert(strstr(err, "outside what a real part has"), "%s", err);
    cr_assert_eq(parse_gpu_row("x\tX\t100\t100\t-\t-\t3\t80\t81559\t450\t4.8\t64\ts\tl", err, sizeof err), 0, "%s",
                 err);
}

Test(hardening, one_number_syntax)
{
    char err[512];
    /* digits, fraction, exponent; no sign, no spaces, no hex */
    const char *bad[] = {" 8", "+8", "0x10", "8 ", "-0", "inf", "nan", "1e", ".", ""};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        double v;
        cr_assert_eq(parse_plain_number(bad[i], &v), -1, "'%s' accepted", bad[i]);
        char row[256];
        snprintf(row, sizeof row, "x\tX\t100\t1\t-\t-\t%s\t80\t-\t-\t-\t-\ts\tl", bad[i]);
        cr_assert_eq(parse_gpu_row(row, err, sizeof err), -1, "'%s' accepted in a table", bad[i]);
    }
    double v;
    cr_assert_eq(parse_plain_number("85.5e9", &v), 0);
    cr_assert_eq(v, 85.5e9);
    cr_assert_eq(parse_plain_number(".5", &v), 0);
    cr_assert_eq(v, 0.5);
    /* one suffix letter scales the number: 8k with k = 1024 is 8192; 1.5T with T = 1e12 */
    static const double kib[] = {1024.0, 1048576.0}, si[] = {1e3, 1e12};
    cr_assert_eq(parse_suffixed_number("8k", "KM", kib, &v), 0);
    cr_assert_eq(v, 8192);
    cr_assert_eq(parse_suffixed_number("1.5T", "KT", si, &v), 0);
    cr_assert_eq(v, 1.5e12);
    cr_assert_eq(parse_suffixed_number("4096", "KM", kib, &v), 0);
    cr_assert_eq(v, 4096);
    cr_assert_eq(parse_suffixed_number("1TB", "KT", si, &v), -1, "two letters");
    cr_assert_eq(parse_suffixed_number("k", "KM", kib, &v), -1, "no digits");
    cr_assert_eq(parse_suffixed_number("+8k", "KM", kib, &v), -1, "a sign");
    long long w;
    cr_assert_eq(parse_whole_number("4096", 1000000, &w), 0);
    cr_assert_eq(w, 4096);
    cr_assert_eq(parse_whole_number("9999999999", 2147483647, &w), -1);
    cr_assert_eq(parse_whole_number("+8", 100, &w), -1);
}

Test(hardening, shapes_that_would_overflow_are_refused)
{
    /* heads = head_dim = 65536 made qkv_proj 0 FLOP through int overflow */
    char text[1024], err[512];
    snprintf(text, sizeof text, "%sm\tM\t2\t4096\t65536\t65536\t65536\t14336\t1000\t1\t1\t0\ts\n", MODEL_HEADER);
    model_table t;
    cr_assert_eq(model_table_parse(text, "m.tsv", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "m.tsv:2: field 'head_dim'"), "%s", err);
    snprintf(text, sizeof text, "%sm\tM\t2\t4096\t32\t8\t128\t99999999999\t1000\t1\t1\t0\ts\n", MODEL_HEADER);
    cr_assert_eq(model_table_parse(text, "m.tsv", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "'ffn'"), "%s", err);
}

Test(hardening, duplicates_among_many_rows)
{
    /* 40,000 rows took 5 s when each row scanned every earlier one */
    size_t n = 40000, cap = strlen(GPU_HEADER) + n * 80 + 256;
    char *text = malloc(cap);
    size_t used = (size_t)snprintf(text, cap, "%s", GPU_HEADER);
    for (size_t i = 0; i < n; i++)
        used += (size_t)snprintf(text + used, cap - used, "g%zu\tG\t100\t1\t-\t-\t3\t80\t-\t-\t-\t-\ts\tl\n", i);
    gpu_table t;
    char err[512];
    cr_assert_eq(gpu_table_parse(text, "big.tsv", &t, err, sizeof err), 0, "%s", err);
    cr_assert_eq(t.n, (int)n);
    gpu_table_free(&t);
    /* the same key again on the last line (line 40,002), first on line 2; case does not matter */
    snprintf(text + used, cap - used, "G0\tG\t100\t1\t-\t-\t3\t80\t-\t-\t-\t-\ts\tl\n");
    cr_assert_eq(gpu_table_parse(text, "big.tsv", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "big.tsv:40002: field 'key': 'G0' appears twice (first on line 2)"), "%s", err);
    free(text);
}

Test(hardening, files_that_are_not_tables)
{
    char dir[SCRATCH_DIR_SIZE], path[4096], err[512];
    scratch_dir_make(dir, "hard");
    gpu_table t;
    /* a directory said ":1: no header row" */
    cr_assert_eq(gpu_table_load(dir, &t, err, sizeof err), -1);
    cr_assert(strstr(err, "is a directory"), "%s", err);
    /* a NUL byte silently dropped every row after it */
    snprintf(path, sizeof path, "%s/nul.tsv", dir);
    char with_nul[1024];
    int len = snprintf(with_nul, sizeof with_nul, "%sa\tA\t100\t1\t-\t-\t3\t80\t-\t-\t-\t-\ts\tl\n", GPU_HEADER);
    with_nul[len - 5] = '\0';
    write_bytes(path, with_nul, (size_t)len);
    cr_assert_eq(gpu_table_load(path, &t, err, sizeof err), -1);
    cr_assert(strstr(err, "nul.tsv:2: a NUL byte"), "%s", err);
    /* a UTF-8 byte-order mark is accepted */
    snprintf(path, sizeof path, "%s/bom.tsv", dir);
    char bom[1024];
    len = snprintf(bom, sizeof bom, "\xEF\xBB\xBF%sa\tA\t100\t1\t-\t-\t3\t80\t-\t-\t-\t-\ts\tl\n", GPU_HEADER);
    write_bytes(path, bom, (size_t)len);
    cr_assert_eq(gpu_table_load(path, &t, err, sizeof err), 0, "%s", err);
    cr_assert_eq(t.n, 1);
    gpu_table_free(&t);
    /* /dev/zero read until memory ran out */
    cr_assert_eq(gpu_table_load("/dev/zero", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "larger than"), "%s", err);
    scratch_dir_remove(dir);
}

/* ---------------------------------------------------------------- the CLI */

static int run(const char *args, char *out, size_t n)
{
    const char *bin = getenv("NAPKIN_BIN");
    cr_assert(bin != NULL, "NAPKIN_BIN is not set");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' %s", bin, args);
    return shell_run(cmd, out, n);
}

Test(hardening, cli_io_errors_and_help)
{
    char out[8192];
    /* a full disk exited 1 ("no answer") with no message */
    const char *bin = getenv("NAPKIN_BIN");
    char cmd[4096];
    snprintf(cmd, sizeof cmd, "'%s' specs 2>&1 >/dev/full", bin); /* stderr to the pipe, stdout to a full disk */
    int rc = shell_run(cmd, out, sizeof out);
    cr_assert_eq(rc, 3, "status %d: %s", rc, out);
    cr_assert(strstr(out, "cannot write the output: No space left on device"), "%s", out);
    cr_assert_eq(run("help decode --bogus", out, sizeof out), 2, "%s", out);
    cr_assert_eq(run("decode --model llama3-8b --gpu h100 --batch +8", out, sizeof out), 2, "%s", out);
    cr_assert_eq(run("decode --model llama3-8b --gpu h100 --batch 0x10", out, sizeof out), 2, "%s", out);
    cr_assert_eq(run("decode --model llama3-8b --gpu h100 --usable ' 0.5'", out, sizeof out), 2, "%s", out);
}

/* Every number in every answer is a number: no inf, nan or -0 in any format. */
static int has_bad_number(const char *s)
{
    for (const char *p = s; *p; p++) {
        int start = p == s || !((p[-1] >= 'a' && p[-1] <= 'z') || (p[-1] >= 'A' && p[-1] <= 'Z') || p[-1] == '_');
        if (start && (!strncmp(p, "inf", 3) || !strncmp(p, "nan", 3) || !strncmp(p, "-nan", 4)) &&
            !((p[3] >= 'a' && p[3] <= 'z') || p[3] == '_'))
            return 1;
        if (start && !strncmp(p, "-0", 2) && !(p[2] >= '0' && p[2] <= '9') && p[2] != '.' && p[2] != 'x')
            return 1;
        if (start && !strncmp(p, "-0.0", 4)) {
            const char *q = p + 1;
            while (*q == '0' || *q == '.')
                q++;
            if (!(*q >= '1' && *q <= '9'))
                return 1;
        }
    }
    return 0;
}

Test(hardening, no_inf_nan_or_negative_zero_in_any_answer)
{
    const char *cmds[] = {
        "specs",
        "roofline --gpu h100",
        "roofline --gpu a100 --dtype int8",
        "roofline --gpu l40s --intensity 1e-9",
        "memory --model llama3-70b --gpu h100 --tp 8",
        "memory --model llama3.2-1b --gpu b200 --context 1",
        "decode --model llama3-70b --gpu h100 --tp 4 --batch 64",
        "decode --model llama3-8b --gpu h100 --batch 1 --context 1",
        "decode --model mixtral-8x7b --gpu h200 --tp 2 --batch 8 --no-comm",
        "decode --model llama3-405b --gpu b200 --tp 8 --dtype fp8 --batch 16 --context 128",
        "spec --alpha 0.8",
        "spec --alpha 0.01 --c 1",
        "spec --alpha 1 --gamma 64 --c 0",
        "spec --alpha 0.5 --draft llama3-8b --draft-tp 1 --batch 4",
    };
    const char *formats[] = {"table", "tsv", "json"};
    char args[512], out[262144];
    for (size_t i = 0; i < sizeof cmds / sizeof cmds[0]; i++)
        for (int f = 0; f < 3; f++) {
            snprintf(args, sizeof args, "%s --format %s", cmds[i], formats[f]);
            int rc = run(args, out, sizeof out);
            cr_assert(rc == 0 || rc == 1, "%s: exit %d\n%s", args, rc, out);
            cr_assert(!has_bad_number(out), "%s printed inf, nan or -0:\n%s", args, out);
        }
}
