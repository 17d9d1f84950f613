/* A property test of the napkin command over its own flag tables: every
 * command's flags (read from `napkin CMD --help`, the table cli_parse
 * prints) get extreme values, one flag at a time on top of a question that
 * has an answer (the base table below; a command `napkin help` lists
 * without one there is named in the log, untested), and every run must
 *   - exit 0, 1 or 2 (never a signal, never a sanitizer's report),
 *   - with status 2, name the flag on stderr; with 1, say why,
 *   - print no inf, nan or -0 on stdout,
 *   - spend under NAPKIN_CLI_MS milliseconds of CPU (default 100; 1000 when
 *     NAPKIN_BIN is the address-sanitized build, which runs several times
 *     slower).
 * NAPKIN_CLI_FUZZ=full tries every value on every flag (make fuzz); by
 * default each flag gets one value, rotating through the list, so that a
 * run of the suite stays within seconds yet every value meets a dozen flags. */
#include <criterion/criterion.h>

#include <ctype.h>
#include <fcntl.h>
#include <regex.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A question with an answer for each command: the flag under test is added after it. */
static const char *const base[][12] = {
    {"specs", NULL},
    {"roofline", "--gpu", "h100", NULL},
    {"memory", "--model", "llama3-8b", "--gpu", "h100", NULL},
    {"decode", "--model", "llama3-8b", "--gpu", "h100", NULL},
    {"spec", "--model", "llama3-70b", "--gpu", "h100", "--tp", "4", NULL},
    {"train", "--params", "7B", "--tokens", "1T", "--days", "21", "--gpu", "h100", NULL},
    {"prefill", "--model", "llama3-8b", "--gpu", "h100", NULL},
    {"serve", "--model", "llama3-8b", "--gpu", "h100", NULL},
    {"image", "--model", "qwen2-vl-7b", "--gpu", "h100", NULL},
    {"video", "--model", "wan2.1-14b", "--gpu", "h100", "--rate", "2", NULL},
    {"graphs", "--model", "llama3-8b", "--gpu", "h100", NULL},
    {"lora", "--model", "llama3-8b", "--gpu", "h100", NULL},
    /* the published sets in miniature (tests/published_fixture): a fit in milliseconds */
    {"calibrate", "--set", "tests/published_fixture/h100_sxm/trtllm", "--backend", "trtllm", "--gpu", "h100", NULL},
    {"validate", "--measured", "tests/published_fixture", "--sets", "tests/published_fixture/none", NULL},
    {"practice", "--chapter", "12", "--seed", "4711", NULL},
    {"ep", "--model", "deepseek-v3", "--gpu", "h200", "--ep", "8", "--dtype", "fp8", NULL},
};
#define NBASE (sizeof base / sizeof base[0])

static char long_value[4097];
static const char *values[] = {
    "0", "-1", "1", "2147483647", "9223372036854775808", "1e308", "5e-324", "nan", "inf",
    "8k", "1T", "", long_value, "-0", "1e-300", "0.5",
};
#define NVALUES (sizeof values / sizeof values[0])

typedef struct {
    int status;   /* exit status, or -signal */
    double cpu_ms; /* user + system */
    char out[65536], err[16384];
} result;

static void slurp(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "rb");
    size_t got = f ? fread(buf, 1, n - 1, f) : 0;
    buf[got] = '\0';
    if (f)
        fclose(f);
}

static void run_argv(char *const argv[], const char *dir, result *r)
{
    char outp[512], errp[512];
    snprintf(outp, sizeof outp, "%s/out", dir);
    snprintf(errp, sizeof errp, "%s/err", dir);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        int o = open(outp, O_WRONLY | O_CREAT | O_TRUNC, 0600), e = open(errp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
        if (o < 0 || e < 0)
            _exit(120);
        dup2(o, 1);
        dup2(e, 2);
        const char *src = getenv("NB_SRC");
        if (src && *src && chdir(src) != 0)
            _exit(121);
        execv(argv[0], argv);
        _exit(122);
    }
    /* a wall-clock backstop far above the CPU limit: a hang is killed and reported */
    struct rusage before, ru;
    getrusage(RUSAGE_CHILDREN, &before);
    int st = 0;
    for (int waited_ms = 0;; waited_ms++) {
        pid_t w = waitpid(pid, &st, WNOHANG);
        if (w == pid)
            break;
        if (waited_ms == 20000)
            kill(pid, SIGKILL);
        struct timespec ts = {0, 1000000};
        nanosleep(&ts, NULL);
    }
    r->status = WIFEXITED(st) ? WEXITSTATUS(st) : -WTERMSIG(st);
    getrusage(RUSAGE_CHILDREN, &ru); /* what this child added to the waited-for children's time */
    r->cpu_ms = (double)(ru.ru_utime.tv_sec - before.ru_utime.tv_sec + ru.ru_stime.tv_sec - before.ru_stime.tv_sec) *
                    1e3 +
                (double)(ru.ru_utime.tv_usec - before.ru_utime.tv_usec + ru.ru_stime.tv_usec - before.ru_stime.tv_usec) /
                    1e3;
    slurp(outp, r->out, sizeof r->out);
    slurp(errp, r->err, sizeof r->err);
}

/* The flags a command's --help lists with a value (a capitalised metavar). */
static int command_flags(const char *bin, const char *cmd, char flags[][48], int max)
{
    char line[1024];
    snprintf(line, sizeof line, "'%s' %s --help", bin, cmd);
    FILE *p = popen(line, "r");
    cr_assert_not_null(p);
    int n = 0;
    while (fgets(line, sizeof line, p) && n < max) {
        char name[48], meta[48];
        if (strncmp(line, "  --", 4) != 0 || sscanf(line, " %47s %47s", name, meta) != 2)
            continue;
        if (!isupper((unsigned char)meta[0]) || strcmp(name, "--help") == 0)
            continue; /* a switch: its help text starts in lower case */
        /* the tables and files themselves are fuzzed by tests/fuzz/fuzz_tables.c */
        if (strstr(name, "-table") || strcmp(name, "--specs") == 0 || strcmp(name, "--model-config") == 0 ||
            strcmp(name, "--calibrate") == 0)
            continue;
        snprintf(flags[n++], 48, "%s", name);
    }
    pclose(p);
    return n;
}

/* inf, nan (any case) as a word, or a bare -0 / -0.0 */
static regex_t bad_number;

static void check_run(const char *const *b, const char *flag, const char *value, const char *dir, double limit_ms,
                      int *runs)
{
    const char *bin = getenv("NAPKIN_BIN");
    char *argv[24];
    int k = 0;
    argv[k++] = (char *)bin;
    for (int i = 0; b[i]; i++)
        argv[k++] = (char *)b[i];
    /* a flag the base question already sets is replaced, not repeated */
    for (int i = 2; i < k; i++)
        if (strcmp(argv[i - 1], flag) == 0) {
            memmove(&argv[i - 1], &argv[i + 1], (size_t)(k - i - 1) * sizeof *argv);
            k -= 2;
            break;
        }
    argv[k++] = (char *)flag;
    argv[k++] = (char *)value;
    argv[k] = NULL;
    static result r;
    run_argv(argv, dir, &r);
    (*runs)++;
    const char *shown = value == long_value ? "<4096 x 9>" : value;
    cr_assert(r.status >= 0 && r.status <= 2, "napkin %s ... %s '%s': exit %d\n%s", b[0], flag, shown, r.status,
              r.err);
    if (r.status == 2)
        cr_assert(strstr(r.err, flag) != NULL, "napkin %s ... %s '%s': the refusal does not name the flag:\n%s", b[0],
                  flag, shown, r.err);
    if (r.status == 1)
        cr_assert(r.err[0] || r.out[0], "napkin %s ... %s '%s': no answer and no reason", b[0], flag, shown);
    regmatch_t m;
    if (regexec(&bad_number, r.out, 1, &m, 0) == 0)
        cr_assert_fail("napkin %s ... %s '%s' prints '%.*s':\n%.2000s", b[0], flag, shown, (int)(m.rm_eo - m.rm_so),
                       r.out + m.rm_so, r.out);
    cr_assert_lt(r.cpu_ms, limit_ms, "napkin %s ... %s '%s' took %.0f ms of CPU (limit %.0f)", b[0], flag, shown,
                 r.cpu_ms, limit_ms);
}

Test(cli_props, every_flag_with_extreme_values, .timeout = 1800)
{
    const char *bin = getenv("NAPKIN_BIN");
    cr_assert(bin && *bin, "NAPKIN_BIN is not set");
    memset(long_value, '9', sizeof long_value - 1);
    cr_assert_eq(regcomp(&bad_number, "(^|[^[:alnum:]_])([iI][nN][fF]|[nN][aA][nN])($|[^[:alnum:]_])|(^|[ \t:,[(])-0(\\.0*)?($|[ \t,)%\n]|\\])",
                         REG_EXTENDED),
                 0);
    const char *ms = getenv("NAPKIN_CLI_MS");
    double limit_ms = ms && *ms ? atof(ms) : strstr(bin, "/asan/") ? 1000 : 100;
    const char *mode = getenv("NAPKIN_CLI_FUZZ");
    int full = mode && strcmp(mode, "full") == 0;
    char dir[] = "/tmp/napkin-cli-props-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    int runs = 0;
    size_t rot = 0;
    for (size_t c = 0; c < NBASE; c++) {
        char flags[64][48];
        int nf = command_flags(bin, base[c][0], flags, 64);
        if (strcmp(base[c][0], "specs") != 0)
            cr_assert_gt(nf, 0, "no flags read from napkin %s --help", base[c][0]);
        for (int f = 0; f < nf; f++) {
            if (full) {
                for (size_t v = 0; v < NVALUES; v++)
                    check_run(base[c], flags[f], values[v], dir, limit_ms, &runs);
            } else {
                check_run(base[c], flags[f], values[rot++ % NVALUES], dir, limit_ms, &runs);
            }
        }
    }
    char p[600];
    snprintf(p, sizeof p, "%s/out", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/err", dir);
    unlink(p);
    rmdir(dir);
    regfree(&bad_number);
    cr_log_info("%d runs of napkin", runs);
}

/* The base questions themselves have answers, so what a flag changes is what is tested. */
Test(cli_props, the_base_questions_are_answered)
{
    const char *bin = getenv("NAPKIN_BIN");
    cr_assert(bin && *bin, "NAPKIN_BIN is not set");
    char line[512];
    snprintf(line, sizeof line, "'%s' help", bin);
    FILE *help = popen(line, "r");
    cr_assert_not_null(help);
    while (fgets(line, sizeof line, help)) {
        char name[64];
        if (strncmp(line, "  ", 2) != 0 || line[2] == ' ' || line[2] == '-' || sscanf(line, " %63s", name) != 1 ||
            strcmp(name, "help") == 0)
            continue;
        size_t c = 0;
        while (c < NBASE && strcmp(base[c][0], name) != 0)
            c++;
        if (c == NBASE)
            cr_log_warn("napkin %s has no base question in tests/test_cli_props.c: its flags are not fuzzed", name);
    }
    pclose(help);
    char dir[] = "/tmp/napkin-cli-props-XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    static result r;
    for (size_t c = 0; c < NBASE; c++) {
        char *argv[16];
        int k = 0;
        argv[k++] = (char *)bin;
        for (int i = 0; base[c][i]; i++)
            argv[k++] = (char *)base[c][i];
        argv[k] = NULL;
        run_argv(argv, dir, &r);
        cr_expect_eq(r.status, 0, "napkin %s: exit %d\n%s", base[c][0], r.status, r.err);
    }
    char p[600];
    snprintf(p, sizeof p, "%s/out", dir);
    unlink(p);
    snprintf(p, sizeof p, "%s/err", dir);
    unlink(p);
    rmdir(dir);
}
