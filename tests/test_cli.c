/* The napkin command line, run as a reader runs it ($NAPKIN_BIN): exit
 * statuses, error messages that name the flag and the choices, help for every
 * subcommand, and the numbers of --format tsv/json checked against hand
 * arithmetic from the models' config files and the GPU datasheets. */
#include <criterion/criterion.h>

#include <ctype.h>
#include <fcntl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ running napkin */

typedef struct {
    int exited; /* 1 when it exited (not killed by a signal) */
    int status; /* exit status */
    char *out;  /* stdout */
    char *err;  /* stderr */
} run_result;

static char *slurp_fd(int fd)
{
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    cr_assert_not_null(buf);
    lseek(fd, 0, SEEK_SET);
    ssize_t n;
    while ((n = read(fd, buf + len, cap - len - 1)) > 0) {
        len += (size_t)n;
        if (cap - len < 2) {
            cap *= 2;
            buf = realloc(buf, cap);
            cr_assert_not_null(buf);
        }
    }
    buf[len] = '\0';
    close(fd);
    return buf;
}

static int temp_fd(void)
{
    char path[] = "/tmp/napkin-cli-test-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0, "mkstemp failed");
    unlink(path);
    return fd;
}

/* Run napkin with args (NULL-terminated, without argv[0]); no shell, so an
 * empty argument stays an empty argument. */
static run_result run_argv(const char *const *args)
{
    const char *bin = getenv("NAPKIN_BIN");
    cr_assert_not_null(bin, "NAPKIN_BIN is not set");
    char *argv[64];
    int n = 0;
    argv[n++] = (char *)bin;
    for (; args[n - 1] && n < 63; n++)
        argv[n] = (char *)args[n - 1];
    argv[n] = NULL;
    int out = temp_fd(), err = temp_fd();
    fflush(NULL);
    pid_t pid = fork();
    cr_assert(pid >= 0, "fork failed");
    if (pid == 0) {
        dup2(out, 1);
        dup2(err, 2);
        execv(bin, argv);
        _exit(127);
    }
    int ws;
    cr_assert(waitpid(pid, &ws, 0) == pid);
    run_result r = {WIFEXITED(ws), WIFEXITED(ws) ? WEXITSTATUS(ws) : -1, slurp_fd(out), slurp_fd(err)};
    return r;
}

#define RUN(...) run_argv((const char *const[]){__VA_ARGS__, NULL})

static void run_free(run_result *r)
{
    free(r->out);
    free(r->err);
}

/* ------------------------------------------------------------ reading tsv */

/* The value of `name` in the "name value unit" block. */
static double tsv_value(const char *tsv, const char *name)
{
    size_t n = strlen(name);
    for (const char *line = tsv; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        if (strncmp(line, name, n) == 0 && line[n] == '\t')
            return strtod(line + n + 1, NULL);
        if (*line == '\n') /* end of the values block */
            break;
    }
    cr_assert_fail("no value '%s' in:\n%s", name, tsv);
    return NAN;
}

static const char *tsv_text(const char *tsv, const char *name, char *buf, size_t len)
{
    size_t n = strlen(name);
    for (const char *line = tsv; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (strncmp(line, name, n) == 0 && line[n] == '\t') {
            const char *v = line + n + 1;
            size_t k = strcspn(v, "\t\n");
            snprintf(buf, len, "%.*s", (int)(k < len ? k : len - 1), v);
            return buf;
        }
    cr_assert_fail("no value '%s' in:\n%s", name, tsv);
    return NULL;
}

/* Field `col` (by header name) of the row whose first field is `key`, in a
 * block whose header line starts with header_first and has that column. */
static double tsv_cell(const char *tsv, const char *header_first, const char *key, const char *col)
{
    char hdr[64];
    snprintf(hdr, sizeof hdr, "%s\t", header_first);
    size_t cl = strlen(col), kl = strlen(key);
    for (const char *h = tsv; h && *h; h = strchr(h, '\n') ? strchr(h, '\n') + 1 : NULL) {
        if (strncmp(h, hdr, strlen(hdr)) != 0 || (h != tsv && h[-1] != '\n'))
            continue;
        int idx = -1, i = 0;
        for (const char *p = h; *p && *p != '\n'; i++) {
            size_t k = strcspn(p, "\t\n");
            if (k == cl && strncmp(p, col, cl) == 0)
                idx = i;
            p += k;
            if (*p == '\t')
                p++;
        }
        if (idx < 0)
            continue;
        for (const char *line = strchr(h, '\n') + 1; *line && *line != '\n';
             line = strchr(line, '\n') ? strchr(line, '\n') + 1 : "") {
            if (strncmp(line, key, kl) != 0 || line[kl] != '\t')
                continue;
            const char *p = line;
            for (int c = 0; c < idx; c++)
                p = strchr(p, '\t') + 1;
            return strtod(p, NULL);
        }
    }
    cr_assert_fail("no row '%s' with column '%s' under a header '%s'", key, col, header_first);
    return NAN;
}

static void assert_rel(double got, double want, double rel, const char *what)
{
    cr_assert(fabs(got - want) <= rel * fabs(want), "%s: got %.10g, want %.10g (relative tolerance %g)", what, got,
              want, rel);
}

/* ------------------------------------------------------------ a small JSON checker */

typedef struct {
    const char *p;
    int ok;
} json_cursor;

static void js_ws(json_cursor *c)
{
    while (*c->p == ' ' || *c->p == '\n' || *c->p == '\t' || *c->p == '\r')
        c->p++;
}

static void js_value(json_cursor *c, int depth);

static void js_string(json_cursor *c)
{
    if (*c->p != '"') {
        c->ok = 0;
        return;
    }
    for (c->p++; *c->p != '"'; c->p++) {
        unsigned char ch = (unsigned char)*c->p;
        if (ch == '\0' || ch < 0x20) { /* raw control characters are not allowed */
            c->ok = 0;
            return;
        }
        if (ch == '\\') {
            c->p++;
            if (*c->p == 'u') {
                for (int i = 1; i <= 4; i++)
                    if (!isxdigit((unsigned char)c->p[i])) {
                        c->ok = 0;
                        return;
                    }
                c->p += 4;
            } else if (!strchr("\"\\/bfnrt", *c->p) || !*c->p) {
                c->ok = 0;
                return;
            }
        }
    }
    c->p++;
}

static void js_number(json_cursor *c)
{
    const char *s = c->p;
    if (*c->p == '-')
        c->p++;
    if (!isdigit((unsigned char)*c->p)) {
        c->ok = 0;
        return;
    }
    while (isdigit((unsigned char)*c->p))
        c->p++;
    if (*c->p == '.') {
        c->p++;
        if (!isdigit((unsigned char)*c->p))
            c->ok = 0;
        while (isdigit((unsigned char)*c->p))
            c->p++;
    }
    if (*c->p == 'e' || *c->p == 'E') {
        c->p++;
        if (*c->p == '+' || *c->p == '-')
            c->p++;
        if (!isdigit((unsigned char)*c->p))
            c->ok = 0;
        while (isdigit((unsigned char)*c->p))
            c->p++;
    }
    if (c->p == s)
        c->ok = 0;
}

static void js_value(json_cursor *c, int depth)
{
    js_ws(c);
    if (depth > 32 || !c->ok) {
        c->ok = 0;
        return;
    }
    char open = *c->p;
    if (open == '{' || open == '[') {
        char close = open == '{' ? '}' : ']';
        c->p++;
        js_ws(c);
        if (*c->p == close) {
            c->p++;
            return;
        }
        for (;;) {
            if (open == '{') {
                js_ws(c);
                js_string(c);
                js_ws(c);
                if (!c->ok || *c->p != ':') {
                    c->ok = 0;
                    return;
                }
                c->p++;
            }
            js_value(c, depth + 1);
            js_ws(c);
            if (!c->ok)
                return;
            if (*c->p == ',') {
                c->p++;
                continue;
            }
            if (*c->p == close) {
                c->p++;
                return;
            }
            c->ok = 0;
            return;
        }
    } else if (open == '"')
        js_string(c);
    else if (strncmp(c->p, "true", 4) == 0)
        c->p += 4;
    else if (strncmp(c->p, "false", 5) == 0)
        c->p += 5;
    else if (strncmp(c->p, "null", 4) == 0)
        c->p += 4;
    else
        js_number(c);
}

/* One JSON value and nothing after it but white space. */
static int json_valid(const char *text)
{
    json_cursor c = {text, 1};
    js_value(&c, 0);
    js_ws(&c);
    return c.ok && *c.p == '\0';
}

/* The number after "key": in a JSON text (first occurrence). */
static double json_number(const char *text, const char *key)
{
    char pat[96];
    snprintf(pat, sizeof pat, "\"%s\": ", key);
    const char *p = strstr(text, pat);
    cr_assert_not_null(p, "no \"%s\" in JSON", key);
    return strtod(p + strlen(pat), NULL);
}

/* ------------------------------------------------------------ fixtures */

/* LLaMA-3-70B parameters by hand from its config.json (hidden 8192, 80
 * layers, 64 heads, 8 KV heads, head dim 128, ffn 28672, vocab 128256,
 * untied head):
 *   embedding and head   2 x 128256 x 8192              =  2,101,346,304
 *   attention  80 x (2 x 8192 x 64 x 128 + 2 x 8192 x 8 x 128)
 *            = 80 x (134,217,728 + 16,777,216)           = 12,079,595,520
 *   MLP        80 x 3 x 8192 x 28672                     = 56,371,445,760
 *   RMSNorm gains 80 x 2 x 8192 + 8192                   =      1,318,912
 *   total                                                = 70,553,706,496
 * (Meta's model card: 70.6 B.) */
#define LLAMA70_PARAMS 70553706496.0

#define DECODE_70B_TP4_B64 "decode", "--model", "llama3-70b", "--gpu", "h100", "--tp", "4", "--batch", "64"

/* ------------------------------------------------------------ help and dispatch */

Test(cli, top_level_help_lists_every_command)
{
    const char *forms[][2] = {{"--help", NULL}, {"help", NULL}, {"-h", NULL}};
    for (int i = 0; i < 3; i++) {
        run_result r = run_argv(forms[i]);
        cr_assert_eq(r.status, 0, "napkin %s: exit %d", forms[i][0], r.status);
        const char *names[] = {"specs", "roofline", "memory", "decode"};
        for (int k = 0; k < 4; k++)
            cr_assert(strstr(r.out, names[k]), "napkin %s does not list %s:\n%s", forms[i][0], names[k], r.out);
        run_free(&r);
    }
}

Test(cli, no_arguments_is_a_usage_error)
{
    run_result r = run_argv((const char *const[]){NULL});
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "usage"), "%s", r.err);
    run_free(&r);
}

/* Every command the top-level help lists answers --help with status 0 and a
 * usage line, and so does `napkin help <command>`. */
Test(cli, every_subcommand_has_help)
{
    run_result top = RUN("--help");
    const char *p = strstr(top.out, "commands:\n");
    cr_assert_not_null(p);
    p += strlen("commands:\n");
    int seen = 0;
    while (p[0] == ' ' && p[1] == ' ') {
        char name[32];
        cr_assert_eq(sscanf(p, " %31s", name), 1);
        if (strcmp(name, "help") != 0) {
            run_result r = RUN(name, "--help");
            cr_assert_eq(r.status, 0, "napkin %s --help: exit %d\n%s", name, r.status, r.err);
            cr_assert(strstr(r.out, "usage: napkin "), "napkin %s --help:\n%s", name, r.out);
            cr_assert(strstr(r.out, "--format"), "napkin %s --help does not mention --format", name);
            run_free(&r);
            run_result h = RUN("help", name);
            cr_assert_eq(h.status, 0, "napkin help %s: exit %d", name, h.status);
            run_free(&h);
            seen++;
        }
        p = strchr(p, '\n') + 1;
    }
    cr_assert_geq(seen, 4, "expected at least specs, roofline, memory, decode");
    run_free(&top);
}

Test(cli, unknown_subcommand_is_named)
{
    run_result r = RUN("frobnicate");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "frobnicate"), "%s", r.err);
    cr_assert(strstr(r.err, "decode"), "the message lists the commands: %s", r.err);
    cr_assert_str_empty(r.out);
    run_free(&r);
}

Test(cli, unknown_flag_is_named)
{
    run_result r = RUN(DECODE_70B_TP4_B64, "--bacth", "8");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--bacth"), "%s", r.err);
    cr_assert_str_empty(r.out, "nothing on stdout after an error");
    run_free(&r);
    r = RUN("specs", "stray");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "stray"), "%s", r.err);
    run_free(&r);
}

Test(cli, missing_required_flag)
{
    run_result r = RUN("decode", "--gpu", "h100");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--model"), "%s", r.err);
    run_free(&r);
    r = RUN("roofline");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "--gpu"), "%s", r.err);
    run_free(&r);
    r = RUN("memory", "--model", "llama3-8b", "--gpu");
    cr_assert_eq(r.status, 2, "a flag without its value");
    cr_assert(strstr(r.err, "--gpu"), "%s", r.err);
    run_free(&r);
}

/* ------------------------------------------------------------ bad choices */

Test(cli, unknown_model_lists_the_models)
{
    run_result r = RUN("memory", "--model", "llama9-1t", "--gpu", "h100");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "llama9-1t") && strstr(r.err, "--model"), "%s", r.err);
    cr_assert(strstr(r.err, "llama3-70b") && strstr(r.err, "llama3-8b") && strstr(r.err, "mixtral-8x7b"),
              "choices listed: %s", r.err);
    run_free(&r);
}

Test(cli, unknown_gpu_lists_the_gpus)
{
    run_result r = RUN("roofline", "--gpu", "h900");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "h900") && strstr(r.err, "--gpu"), "%s", r.err);
    cr_assert(strstr(r.err, "h100") && strstr(r.err, "h200") && strstr(r.err, "a100"), "%s", r.err);
    run_free(&r);
}

Test(cli, unknown_dtype_lists_the_dtypes)
{
    run_result r = RUN(DECODE_70B_TP4_B64, "--kv", "fp6");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "fp6") && strstr(r.err, "--kv"), "%s", r.err);
    cr_assert(strstr(r.err, "bf16") && strstr(r.err, "fp8") && strstr(r.err, "int4"), "%s", r.err);
    run_free(&r);
    r = RUN("roofline", "--gpu", "h100", "--format", "yaml");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "yaml") && strstr(r.err, "tsv") && strstr(r.err, "json"), "%s", r.err);
    run_free(&r);
}

/* The A100 has no fp8 tensor cores (datasheet): asking for its fp8 roofline
 * is a bad choice, and the message says which rates it has. */
Test(cli, dtype_without_a_rate)
{
    run_result r = RUN("roofline", "--gpu", "a100", "--dtype", "fp8");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "fp8") && strstr(r.err, "bf16"), "%s", r.err);
    run_free(&r);
}

/* ------------------------------------------------------------ bad numbers */

Test(cli, batch_context_tp_must_be_positive_whole_numbers)
{
    const char *flags[] = {"--batch", "--context", "--tp"};
    const char *bad[] = {"0", "-1", "", "abc", "1e99", "2.5", "99999999999", " 8", "8 "};
    for (int f = 0; f < 3; f++)
        for (int b = 0; b < 9; b++) {
            const char *args[] = {"decode", "--model", "llama3-70b", "--gpu", "h100", flags[f], bad[b], NULL};
            run_result r = run_argv(args);
            cr_assert(r.exited, "%s '%s' crashed", flags[f], bad[b]);
            cr_assert_eq(r.status, 2, "%s '%s': exit %d", flags[f], bad[b], r.status);
            cr_assert(strstr(r.err, flags[f]), "%s '%s': message does not name the flag: %s", flags[f], bad[b],
                      r.err);
            run_free(&r);
        }
}

Test(cli, fractions_and_reals_are_checked)
{
    const char *cases[][2] = {{"--usable", "0"}, {"--usable", "1.5"}, {"--usable", "nan"}, {"--usable", "x"}};
    for (int i = 0; i < 4; i++) {
        run_result r = RUN("memory", "--model", "llama3-8b", "--gpu", "h100", cases[i][0], cases[i][1]);
        cr_assert_eq(r.status, 2, "%s %s", cases[i][0], cases[i][1]);
        cr_assert(strstr(r.err, cases[i][0]), "%s", r.err);
        run_free(&r);
    }
    const char *intensities[] = {"0", "-3", "inf", "1e999", ""};
    for (int i = 0; i < 5; i++) {
        run_result r = RUN("roofline", "--gpu", "h100", "--intensity", intensities[i]);
        cr_assert_eq(r.status, 2, "--intensity '%s'", intensities[i]);
        cr_assert(strstr(r.err, "--intensity"), "%s", r.err);
        run_free(&r);
    }
}

/* 64 attention heads split over 3 GPUs do not divide: a malformed question. */
Test(cli, tp_that_does_not_divide_the_heads)
{
    run_result r = RUN("decode", "--model", "llama3-70b", "--gpu", "h100", "--tp", "3");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "3") && strstr(r.err, "heads"), "%s", r.err);
    run_free(&r);
}

/* 70.55e9 parameters x 2 bytes = 141 GB of bf16 weights; an 80 GB H100 at
 * tp 1 cannot hold them: no answer (1), and the message points at --tp. */
Test(cli, model_that_does_not_fit)
{
    run_result r = RUN("decode", "--model", "llama3-70b", "--gpu", "h100", "--tp", "1");
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "tp"), "%s", r.err);
    cr_assert_str_empty(r.out);
    run_free(&r);
    r = RUN("memory", "--model", "llama3-405b", "--gpu", "h100", "--tp", "2");
    cr_assert_eq(r.status, 1, "405B in bf16 is 811 GB: two 80 GB GPUs cannot hold it");
    run_free(&r);
}

/* Extreme values give an answer or a clear refusal, never a crash. */
Test(cli, extreme_inputs_do_not_crash)
{
    const char *const cases[][16] = {
        {DECODE_70B_TP4_B64, "--context", "2147483647", NULL},
        {"decode", "--model", "llama3-70b", "--gpu", "h100", "--tp", "4", "--batch", "2147483647", NULL},
        {"decode", "--model", "llama3-8b", "--gpu", "h100", "--activation-tokens", "2147483647", NULL},
        {"decode", "--model", "llama3-8b", "--gpu", "h100", "--usable", "1e-300", NULL},
        {"memory", "--model", "llama3.2-1b", "--gpu", "b200", "--tp", "32", "--context", "1", NULL},
        {"roofline", "--gpu", "h100", "--intensity", "1e308", NULL},
        {"roofline", "--gpu", "h100", "--intensity", "1e-308", NULL},
        {"decode", "--model=llama3-8b", "--gpu=h100", "--format=json", "--batch=1", NULL},
        {"decode", "--\xff\xfe", NULL},
        {"specs", "--gpus=1", NULL},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        run_result r = run_argv(cases[i]);
        cr_assert(r.exited, "case %zu (%s %s ...) was killed by a signal", i, cases[i][0], cases[i][1]);
        cr_assert(r.status >= 0 && r.status <= 2, "case %zu: exit %d\n%s", i, r.status, r.err);
        if (r.status != 0)
            cr_assert(strlen(r.err) > 0, "case %zu: a refusal says why", i);
        run_free(&r);
    }
}

/* ------------------------------------------------------------ numbers: memory */

Test(cli, memory_llama70b_tp4_by_hand)
{
    /* --activation-tokens 0: no activation reserve, so the KV budget is plain
     * usable memory less weights. */
    run_result r = RUN("memory", "--model", "llama3-70b", "--gpu", "h100", "--tp", "4", "--context", "4096",
                       "--activation-tokens", "0", "--format", "tsv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* KV per token: 2 (K,V) x 80 layers x 8 KV heads x 128 head dim x 2 B = 327,680 B */
    assert_rel(tsv_value(r.out, "kv_bytes_per_token"), 327680, 0, "KV per token");
    /* split over 4 GPUs: 2 KV heads each: 327,680 / 4 = 81,920 B */
    assert_rel(tsv_value(r.out, "kv_bytes_per_token_per_gpu"), 81920, 0, "KV per token per GPU");
    /* one sequence of 4096 tokens: 327,680 x 4096 = 1,342,177,280 B (1.34 GB) */
    assert_rel(tsv_value(r.out, "kv_bytes_per_sequence"), 1342177280.0, 0, "KV per sequence");
    /* weights: 70,553,706,496 params x 2 B / 4 = 35,276,853,248 B (about 35.3 GB) */
    assert_rel(tsv_value(r.out, "weight_bytes_per_gpu"), LLAMA70_PARAMS * 2 / 4, 1e-9, "weights per GPU");
    /* usable: 0.90 (vLLM's default) x the 81,559 MiB the driver reports (85,520,809,984 B)
     * = 76,968,728,985.6 B; left for KV: - 35,276,853,248 = 41,691,875,737.6 B */
    assert_rel(tsv_value(r.out, "hbm_bytes"), 85520809984.0, 1e-12, "driver-reported memory");
    assert_rel(tsv_value(r.out, "hbm_datasheet_bytes"), 80e9, 1e-12, "datasheet memory");
    assert_rel(tsv_value(r.out, "usable_bytes"), 76968728985.6, 1e-12, "usable");
    assert_rel(tsv_value(r.out, "kv_budget_bytes"), 41691875737.6, 1e-9, "left for KV");
    /* tokens of KV: 41,691,875,737.6 / 81,920 = 508,934.03 -> 508,934 */
    assert_rel(tsv_value(r.out, "kv_token_capacity"), 508934, 0, "KV token capacity");
    /* sequences of 4096: 508,934.03 / 4096 = 124.25 -> 124 */
    cr_assert_eq((int)tsv_value(r.out, "max_batch"), 124);
    run_free(&r);
    /* The datasheet's 80 GB instead: 72e9 - 35,276,853,248 = 36,723,146,752 B -> 448,280.6
     * tokens -> 109 sequences; the driver's figure holds 14% more. */
    r = RUN("memory", "--model", "llama3-70b", "--gpu", "h100", "--tp", "4", "--context", "4096",
            "--activation-tokens", "0", "--hbm", "80e9", "--format", "tsv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_rel(tsv_value(r.out, "kv_budget_bytes"), 36723146752.0, 1e-9, "left for KV, datasheet memory");
    cr_assert_eq((int)tsv_value(r.out, "max_batch"), 109);
    run_free(&r);
}

/* LLaMA-2-13B has no GQA: 40 KV heads.  KV per token = 2 x 40 x 40 x 128 x 2
 * = 819,200 B, 2.5x LLaMA-3-70B's despite being a fifth of the size. */
Test(cli, memory_mha_model)
{
    run_result r = RUN("memory", "--model", "llama2-13b", "--gpu", "a100", "--format", "tsv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_rel(tsv_value(r.out, "kv_bytes_per_token"), 819200, 0, "LLaMA-2-13B KV per token");
    run_free(&r);
}

/* tp 16 > 8 KV heads: each GPU keeps one (replicated) KV head per layer:
 * 2 x 80 x 1 x 128 x 2 = 40,960 B per token, not 327,680 / 16 = 20,480. */
Test(cli, memory_kv_heads_replicated_past_tp)
{
    run_result r = RUN("memory", "--model", "llama3-70b", "--gpu", "h100", "--tp", "16", "--format", "tsv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_rel(tsv_value(r.out, "kv_bytes_per_token_per_gpu"), 40960, 0, "replicated KV per GPU");
    run_free(&r);
}

/* int4 weights are half a byte: 70,553,706,496 x 0.5 / 2 GPUs = 17,638,426,624 B;
 * fp8 KV halves 327,680 to 163,840 B per token. */
Test(cli, memory_mixed_precision)
{
    run_result r = RUN("memory", "--model", "llama3-70b", "--gpu", "h100", "--tp", "2", "--weights", "int4", "--kv",
                       "fp8", "--format", "tsv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_rel(tsv_value(r.out, "weight_bytes_per_gpu"), LLAMA70_PARAMS * 0.5 / 2, 1e-9, "int4 weights per GPU");
    assert_rel(tsv_value(r.out, "kv_bytes_per_token"), 163840, 0, "fp8 KV per token");
    char buf[16];
    cr_assert_str_eq(tsv_text(r.out, "weights_dtype", buf, sizeof buf), "int4");
    cr_assert_str_eq(tsv_text(r.out, "kv_dtype", buf, sizeof buf), "fp8");
    run_free(&r);
}

/* ------------------------------------------------------------ numbers: roofline */

Test(cli, roofline_ridges_from_datasheets)
{
    /* H100 SXM: 989.4 TFLOP/s dense bf16 / 3.35 TB/s = 295.3 FLOP/B */
    run_result r = RUN("roofline", "--gpu", "h100", "--format", "tsv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_rel(tsv_value(r.out, "ridge"), 295.34, 1e-4, "H100 bf16 ridge");
    assert_rel(tsv_value(r.out, "peak_flops"), 989.4e12, 1e-9, "H100 bf16 peak");
    run_free(&r);
    /* H200: the same 989.4 TFLOP/s over 4.8 TB/s = 206.1 FLOP/B */
    r = RUN("roofline", "--gpu", "h200", "--format", "tsv");
    assert_rel(tsv_value(r.out, "ridge"), 206.125, 1e-4, "H200 bf16 ridge");
    run_free(&r);
    /* H100 fp8: 1978.9 / 3.35 = 590.7 FLOP/B, twice the bf16 ridge */
    r = RUN("roofline", "--gpu", "h100", "--dtype", "fp8", "--format", "tsv");
    assert_rel(tsv_value(r.out, "ridge"), 590.7, 1e-3, "H100 fp8 ridge");
    run_free(&r);
}

Test(cli, roofline_attainable_at_an_intensity)
{
    /* 100 FLOP/B on an H100: below the 295 ridge, so 100 x 3.35e12 = 335 TFLOP/s, memory-bound */
    run_result r = RUN("roofline", "--gpu", "h100", "--intensity", "100", "--format", "tsv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    assert_rel(tsv_value(r.out, "attainable_flops"), 335e12, 1e-9, "attainable at 100 FLOP/B");
    char buf[16];
    cr_assert_str_eq(tsv_text(r.out, "bound", buf, sizeof buf), "memory");
    run_free(&r);
    /* 1000 FLOP/B: above the ridge, the 989.4 TFLOP/s peak, compute-bound */
    r = RUN("roofline", "--gpu", "h100", "--intensity", "1000", "--format", "tsv");
    assert_rel(tsv_value(r.out, "attainable_flops"), 989.4e12, 1e-9, "attainable at 1000 FLOP/B");
    cr_assert_str_eq(tsv_text(r.out, "bound", buf, sizeof buf), "compute");
    run_free(&r);
}

/* ------------------------------------------------------------ numbers: decode */

Test(cli, decode_llama70b_h100_tp4_batch64)
{
    run_result r = RUN(DECODE_70B_TP4_B64, "--context", "4096", "--format", "tsv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *o = r.out;
    assert_rel(tsv_value(o, "kv_bytes_per_token"), 327680, 0, "KV per token");
    assert_rel(tsv_value(o, "kv_bytes_per_token_per_gpu"), 81920, 0, "KV per token per GPU");
    assert_rel(tsv_value(o, "weight_bytes_per_gpu"), 35.28e9, 1e-3, "weights per GPU (70.55e9 x 2 / 4)");
    assert_rel(tsv_value(o, "ridge"), 989.4 / 3.35, 1e-9, "H100 bf16 ridge");

    /* Weights read per step per GPU: everything but the embedding table, of
     * which only the 64 rows of the step's tokens are read:
     * (70,553,706,496 - 1,050,673,152) x 2 / 4 = 34.75e9 B. */
    assert_rel(tsv_value(o, "step_weight_bytes"), 34.75e9, 2e-3, "weight bytes per step");
    /* KV read per step per GPU: 64 sequences x 4097 cached positions (the
     * context and the new token) x 81,920 B = 21.48e9 B. */
    assert_rel(tsv_value(o, "step_kv_bytes"), 21.48e9, 2e-3, "KV bytes per step");
    /* Memory-bound: 64 FLOP per weight byte is far below the 295 ridge.  The
     * step cannot beat (34.75e9 + 21.48e9) B / 3.35e12 B/s = 16.8 ms, and the
     * activations add only a few percent. */
    char buf[16];
    cr_assert_str_eq(tsv_text(o, "bound", buf, sizeof buf), "memory");
    double t = tsv_value(o, "step_time");
    /* Communication at TP 4 over NVLink 4 (450 GB/s a direction, 4.8 us a collective):
     * 161 all-reduces (2 per layer and the embedding's) of 64 x 8192 x 2 B = 1,048,576 B,
     * each 4.8 us + 2 x 3/4 x 1,048,576 / 450e9 = 8.295 us: 1.3355 ms; and a gather of the
     * fp32 logits, 64 x 128,256 x 4 = 32,833,536 B: 4.8 us + 3/4 x 32.8 MB / 450e9 = 59.5 us.
     * In all 1.3951 ms. */
    double tcomm = tsv_value(o, "time_comm");
    assert_rel(tcomm, 1.3951e-3, 1e-4, "communication time");
    double tnet = t - tcomm;
    cr_assert(tnet >= 16.78e-3 && tnet <= 16.78e-3 * 1.10, "step time less communication %.4g s outside [16.8, 18.5] ms", tnet);
    /* Sum of per-op rooflines lies between the larger and the sum of the two terms. */
    double tm = tsv_value(o, "time_memory"), tc = tsv_value(o, "time_compute");
    cr_assert(tnet >= fmax(tm, tc) * (1 - 1e-12) && tnet <= (tm + tc) * (1 + 1e-12));
    /* --no-comm is the pure roofline: the same step less exactly the collectives */
    run_result pure = RUN(DECODE_70B_TP4_B64, "--context", "4096", "--no-comm", "--format", "tsv");
    cr_assert_eq(pure.status, 0, "%s", pure.err);
    assert_rel(tsv_value(pure.out, "step_time"), tnet, 1e-9, "--no-comm step");
    cr_assert_eq(tsv_value(pure.out, "time_comm"), 0);
    run_free(&pure);
    /* time_memory is bytes over bandwidth */
    assert_rel(tm, tsv_value(o, "step_bytes") / 3.35e12, 1e-9, "memory time");
    /* Rates from the hand step time: 16.787 ms of bytes (+ up to 4% of
     * activations) and 1.3951 ms of collectives, 18.18 to 18.87 ms: a user
     * sees 53.0 to 55.0 tokens/s, the batch of 64 gets 3,392 to 3,520. */
    double user = tsv_value(o, "tokens_per_s_per_user"), agg = tsv_value(o, "tokens_per_s");
    cr_assert(user >= 1 / 18.87e-3 && user <= 1 / 18.18e-3, "per-user %g tokens/s", user);
    cr_assert(agg >= 64 / 18.87e-3 && agg <= 64 / 18.18e-3, "aggregate %g tokens/s", agg);
    cr_assert_eq((int)tsv_value(o, "batch"), 64);
    run_free(&r);
}

Test(cli, decode_op_table)
{
    run_result r = RUN(DECODE_70B_TP4_B64, "--format", "tsv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *o = r.out;
    /* The ops transformer.h names are all there. */
    const char *names[] = {"\nqkv_proj\t", "\nattn_score\t", "\nattn_value\t", "\no_proj\t",
                           "\ngate_up_proj\t", "\ndown_proj\t", "\nlogits\t"};
    for (int i = 0; i < 7; i++)
        cr_assert(strstr(o, names[i]), "no op%s", names[i]);
    /* qkv_proj on one of 4 GPUs: 64 tokens through 8192 x (16 q + 2 k + 2 v heads) x 128
     *   = 8192 x 2560; FLOP = 2 x 64 x 8192 x 2560 = 2,684,354,560;
     *   weights 8192 x 2560 x 2 B = 41,943,040 B; once per layer: 80. */
    assert_rel(tsv_cell(o, "op", "qkv_proj", "flop"), 2684354560.0, 1e-12, "qkv_proj FLOP");
    assert_rel(tsv_cell(o, "op", "qkv_proj", "weight_bytes"), 41943040.0, 1e-12, "qkv_proj weights");
    assert_rel(tsv_cell(o, "op", "qkv_proj", "count"), 80, 0, "qkv_proj per layer");
    /* A projection at batch 64 in bf16 does about 64 FLOP per byte (2 FLOP per
     * weight element per token, 2 B per element), a little less with activations. */
    double qi = tsv_cell(o, "op", "qkv_proj", "intensity");
    cr_assert(qi > 55 && qi <= 64, "qkv_proj intensity %g", qi);
    /* logits: 2 x 64 x 8192 x (128256 / 4) = 33,621,540,864 FLOP, once per step */
    assert_rel(tsv_cell(o, "op", "logits", "flop"), 33621540864.0, 1e-12, "logits FLOP");
    assert_rel(tsv_cell(o, "op", "logits", "count"), 1, 0, "logits once");
    /* Attention at decode reads the cache for a couple of FLOP per byte, so it is memory-bound. */
    cr_assert(tsv_cell(o, "op", "attn_score", "intensity") < 20);
    run_free(&r);
}

/* The op table and the summary both match the hand count of the step: per
 * GPU and sequence, projections 2 * 69,501,714,432 / 4 = 34,750,857,216 FLOP
 * (every weight but the embedding and the norm gains), attention 80 * (2 *
 * 2*16*128*4097 + 5*16*4097) = 2,711,230,720, norms, residual adds and
 * SiLU-mul 9,453,568: 37,471,541,504 FLOP, * 64 = 2,398,178,656,256.  Bytes:
 * weights 34,750,857,216 + gains 161*8192*2 = 2,637,824 + 64 embedding rows
 * 1,048,576; KV 2 * 80 * 64 * (4097 * 512 + 512) = 21,485,322,240;
 * activations 64 * 26,817,792 (80 * 332,800 a layer + 193,792 once, the
 * fp32 logits included): 57,956,204,544 B. */
Test(cli, decode_ops_add_up_to_the_step)
{
    run_result r = RUN(DECODE_70B_TP4_B64, "--format", "tsv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *h = strstr(r.out, "\nop\t");
    cr_assert_not_null(h);
    double flop = 0, bytes = 0, comm = 0, time_sum = 0;
    int rows = 0;
    for (const char *line = strchr(h + 1, '\n') + 1; *line; line = strchr(line, '\n') + 1) {
        /* op, x, FLOP, weights, KV, activations, link bytes, intensity ("-" for a collective), time, bound */
        char name[32], inten[32], bound[16];
        double count, f, wb, kb, ab, cb, time;
        int got = sscanf(line, "%31s %lf %lf %lf %lf %lf %lf %31s %lf %15s", name, &count, &f, &wb, &kb, &ab, &cb,
                         inten, &time, bound);
        cr_assert_eq(got, 10, "op line: %.60s", line);
        flop += count * f;
        bytes += count * (wb + kb + ab);
        comm += count * cb;
        time_sum += count * time;
        rows++;
    }
    cr_assert_geq(rows, 5);
    assert_rel(flop, 2398178656256.0, 1e-12, "the op table's FLOP");
    assert_rel(tsv_value(r.out, "step_flop"), 2398178656256.0, 1e-12, "the summary's FLOP");
    assert_rel(bytes, 57956204544.0, 1e-12, "the op table's bytes");
    assert_rel(tsv_value(r.out, "step_bytes"), 57956204544.0, 1e-12, "the summary's bytes");
    /* link bytes: 161 all-reduces of 64 x 8192 x 2 = 1,048,576 B and the fp32 logits gathered,
     * 64 x 128,256 x 4 = 32,833,536 B: 201,654,272 B */
    assert_rel(comm, 201654272.0, 1e-12, "the op table's link bytes");
    assert_rel(tsv_value(r.out, "comm_bytes"), 201654272.0, 1e-12, "the summary's link bytes");
    assert_rel(time_sum, tsv_value(r.out, "step_time"), 1e-9, "op times add up to the step time");
    run_free(&r);
}

/* At batch 1024 on a B200 in fp8, compute overtakes memory: the projections
 * do about 2 x 1024 / 1 = 2048 FLOP per weight byte, far above the fp8 ridge of
 * 4500 / 8 = 562.  (Short context keeps the attention's share small.) */
Test(cli, decode_large_batch_is_compute_bound)
{
    run_result r = RUN("decode", "--model", "llama3-8b", "--gpu", "b200", "--dtype", "fp8", "--batch", "1024",
                       "--context", "128", "--format", "tsv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    char buf[16];
    cr_assert_str_eq(tsv_text(r.out, "bound", buf, sizeof buf), "compute");
    assert_rel(tsv_value(r.out, "ridge"), 4500.0 / 8.0, 1e-9, "B200 fp8 ridge");
    run_free(&r);
}

/* With no activation reserve, 124 sequences of 4096 fit (memory test above);
 * 125 is refused with status 1 and the message names 124. */
Test(cli, decode_batch_that_does_not_fit)
{
    run_result ok = RUN("decode", "--model", "llama3-70b", "--gpu", "h100", "--tp", "4", "--activation-tokens", "0",
                        "--batch", "124");
    cr_assert_eq(ok.status, 0, "%s", ok.err);
    run_free(&ok);
    run_result r = RUN("decode", "--model", "llama3-70b", "--gpu", "h100", "--tp", "4", "--activation-tokens", "0",
                       "--batch", "125");
    cr_assert_eq(r.status, 1);
    cr_assert(strstr(r.err, "124"), "the message names the largest batch: %s", r.err);
    cr_assert(strstr(r.err, "--batch"), "%s", r.err);
    cr_assert_str_empty(r.out);
    run_free(&r);
}

/* ------------------------------------------------------------ formats */

Test(cli, json_is_one_valid_object)
{
    const char *const cmds[][16] = {
        {DECODE_70B_TP4_B64, "--format", "json", NULL},
        {"memory", "--model", "mixtral-8x7b", "--gpu", "h100", "--tp", "2", "--format", "json", NULL},
        {"roofline", "--gpu", "a100", "--intensity", "10", "--format", "json", NULL},
        {"specs", "--format", "json", NULL},
    };
    for (int i = 0; i < 4; i++) {
        run_result r = run_argv(cmds[i]);
        cr_assert_eq(r.status, 0, "%s: %s", cmds[i][0], r.err);
        cr_assert(json_valid(r.out), "%s --format json is not valid JSON:\n%s", cmds[i][0], r.out);
        cr_assert_eq(r.out[0], '{');
        run_free(&r);
    }
    run_result r = run_argv(cmds[0]);
    /* same hand numbers as the tsv: 327,680 B per token; 64 sequences */
    assert_rel(json_number(r.out, "kv_bytes_per_token"), 327680, 0, "json KV per token");
    assert_rel(json_number(r.out, "batch"), 64, 0, "json batch");
    cr_assert(strstr(r.out, "\"ops\": ["), "the op table is an array");
    cr_assert(strstr(r.out, "\"op\": \"qkv_proj\""));
    run_free(&r);
}

/* Names in a reader's own table may hold quotes and backslashes: the JSON
 * must escape them, and the tsv must not be broken by them. */
Test(cli, json_escapes_text_from_tables)
{
    const char *src = getenv("NB_SRC");
    cr_assert_not_null(src, "NB_SRC is not set");
    char path[4096], dir[] = "/tmp/napkin-cli-specs-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/code/specs/models.tsv", src);
    FILE *in = fopen(path, "r");
    cr_assert_not_null(in, "cannot read %s", path);
    snprintf(path, sizeof path, "%s/models.tsv", dir);
    FILE *out = fopen(path, "w");
    cr_assert_not_null(out);
    char line[4096];
    while (fgets(line, sizeof line, in))
        fputs(line, out);
    fclose(in);
    fputs("odd-1b\tQuote\"Back\\slash\x01 model\t16\t2048\t32\t8\t64\t8192\t128256\t1\t1\t1\thttps://example.org/"
          "config.json\t-\n",
          out);
    fclose(out);

    run_result r = RUN("specs", "--models", "--model-table", path, "--format", "json");
    cr_assert_eq(r.status, 0, "%s", r.err);
    cr_assert(json_valid(r.out), "not valid JSON:\n%s", r.out);
    /* the control byte is shown as every printer shows it (text_escape.h), then JSON escapes that backslash */
    cr_assert(strstr(r.out, "\"Quote\\\"Back\\\\slash\\\\x01 model\""), "escaped name missing:\n%s", r.out);
    run_free(&r);

    /* the reader's model is usable by name */
    r = RUN("memory", "--model", "odd-1b", "--gpu", "l40s", "--model-table", path, "--format", "tsv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* 2 x 16 layers x 8 KV heads x 64 x 2 B = 32,768 B per token */
    assert_rel(tsv_value(r.out, "kv_bytes_per_token"), 32768, 0, "own model KV per token");
    run_free(&r);
    unlink(path);
    rmdir(dir);
}

Test(cli, malformed_table_names_file_and_line)
{
    char dir[] = "/tmp/napkin-cli-bad-XXXXXX", path[4096];
    cr_assert_not_null(mkdtemp(dir));
    snprintf(path, sizeof path, "%s/gpus.tsv", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fputs("key\tname\tbf16_tflops\tfp16_tflops\tfp8_tflops\tint8_tops\thbm_tb_s\thbm_gb\tdriver_mib\tlink_gb_s"
          "\tallreduce_us\tpcie_gb_s\tsource\tlink_source\n"
          "x1\tX One\tlots\t1\t1\t1\t1\t1\t-\t-\t-\t-\tnowhere\tnowhere\n",
          f);
    fclose(f);
    run_result r = RUN("roofline", "--gpu", "x1", "--gpu-table", path);
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "gpus.tsv:2"), "message names file:line: %s", r.err);
    run_free(&r);
    r = RUN("specs", "--specs", "/nonexistent-napkin-dir");
    cr_assert_eq(r.status, 2);
    cr_assert(strstr(r.err, "/nonexistent-napkin-dir"), "%s", r.err);
    run_free(&r);
    unlink(path);
    rmdir(dir);
}

Test(cli, specs_tsv_by_hand)
{
    run_result r = RUN("specs", "--format", "tsv");
    cr_assert_eq(r.status, 0, "%s", r.err);
    const char *o = r.out;
    /* H100: 989.4e12 / 3.35e12 = 295.3 FLOP/B; 80 GB on the datasheet, 81,559 MiB from the driver */
    assert_rel(tsv_cell(o, "key", "h100", "ridge_bf16"), 295.34, 1e-4, "H100 ridge");
    assert_rel(tsv_cell(o, "key", "h100", "mem_datasheet_bytes"), 80e9, 0, "H100 datasheet memory");
    assert_rel(tsv_cell(o, "key", "h100", "mem_bytes"), 81559.0 * 1048576, 0, "H100 driver memory");
    assert_rel(tsv_cell(o, "key", "h100", "link_bw"), 450e9, 0, "H100 NVLink per direction");
    assert_rel(tsv_cell(o, "key", "l40s", "mem_bw"), 0.864e12, 1e-12, "L40S bandwidth");
    /* LLaMA-3-70B: parameters by hand (fixture above), KV 327,680 B per token */
    assert_rel(tsv_cell(o, "key", "llama3-70b", "params_total"), LLAMA70_PARAMS, 1e-9, "LLaMA-3-70B params");
    assert_rel(tsv_cell(o, "key", "llama3-70b", "kv_bytes_per_token_bf16"), 327680, 0, "LLaMA-3-70B KV");
    /* Mixtral 8x7B: Mistral AI quotes 46.7 B total and 12.9 B active parameters */
    assert_rel(tsv_cell(o, "key", "mixtral-8x7b", "params_total"), 46.7e9, 2e-3, "Mixtral total");
    assert_rel(tsv_cell(o, "key", "mixtral-8x7b", "params_active"), 12.9e9, 5e-3, "Mixtral active");
    /* every row carries its source */
    cr_assert(strstr(o, "huggingface.co/meta-llama/Meta-Llama-3-70B"));
    cr_assert(strstr(o, "nvidia.com"));
    run_free(&r);

    run_result g = RUN("specs", "--gpus", "--format", "tsv");
    cr_assert(strstr(g.out, "h100") && !strstr(g.out, "llama3-70b"), "--gpus shows only GPUs");
    run_free(&g);
}

Test(cli, table_format_is_for_people)
{
    run_result r = RUN(DECODE_70B_TP4_B64);
    cr_assert_eq(r.status, 0, "%s", r.err);
    /* formatted through fmt_*: units, not raw SI numbers */
    cr_assert(strstr(r.out, "GB"), "%s", r.out);
    cr_assert(strstr(r.out, "ms"), "%s", r.out);
    cr_assert(strstr(r.out, "qkv_proj"));
    cr_assert_null(strstr(r.out, "327680"), "raw numbers belong to tsv/json");
    run_free(&r);
}

