/* The calculator on a reader's own model and habits: --model-config,
 * token suffixes (--context 8k), --version, JSON errors, spec's warnings
 * about the draft, decode's warning past the model's maximum position.
 * Expected numbers are derived by hand in the comments. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include <unistd.h>

/* The parser itself, compiled in: the suites link the library, not the CLI. */
#include "cli/cli_tokens.c"

#define OUT_MAX 65536

/* Run `napkin <args>`; stdout into out, stderr into err (either may be
 * NULL to fold it into the other); returns the exit status. */
static int run2(const char *args, char *out, char *err)
{
    const char *bin = getenv("NAPKIN_BIN"), *build = getenv("NB_BUILD");
    cr_assert(bin && build, "NAPKIN_BIN and NB_BUILD must be set");
    char errfile[4096], cmd[8192];
    snprintf(errfile, sizeof errfile, "%s/test-cli-reader.%d.err", build, (int)getpid());
    snprintf(cmd, sizeof cmd, "cd '%s' && '%s' %s 2>%s", getenv("NB_SRC"), bin, args, err ? errfile : "&1");
    FILE *p = popen(cmd, "r");
    cr_assert(p != NULL);
    size_t got = fread(out, 1, OUT_MAX - 1, p);
    out[got] = '\0';
    int st = pclose(p);
    if (err) {
        FILE *f = fopen(errfile, "r");
        size_t n = f ? fread(err, 1, OUT_MAX - 1, f) : 0;
        err[n] = '\0';
        if (f)
            fclose(f);
        remove(errfile);
    }
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

static int run(const char *args, char *out)
{
    return run2(args, out, NULL);
}

static double tsv_value(const char *out, const char *name)
{
    size_t len = strlen(name);
    for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (strncmp(line, name, len) == 0 && line[len] == '\t')
            return strtod(line + len + 1, NULL);
    cr_assert_fail("no value %s in output:\n%s", name, out);
    return NAN;
}

/* The config of a table model answers exactly as the row does: LLaMA-3-8B's
 * KV per token is 2 x 32 x 8 x 128 x 2 B = 131,072 and its bf16 weights
 * 8,030,261,248 x 2 B = 16,060,522,496 B. */
Test(cli_reader, model_config_answers_like_its_row)
{
    static char a[OUT_MAX], b[OUT_MAX];
    cr_assert_eq(run("memory --model-config tests/configs/llama3-8b.json --gpu h100 --context 8192 --format tsv", a), 0,
                 "%s", a);
    cr_assert_eq(run("memory --model llama3-8b --gpu h100 --context 8192 --format tsv", b), 0, "%s", b);
    cr_expect_eq(tsv_value(a, "kv_bytes_per_token"), 131072.0);
    cr_expect_eq(tsv_value(a, "weight_bytes_per_gpu"), 16060522496.0);
    cr_expect_eq(tsv_value(a, "max_batch"), tsv_value(b, "max_batch"));
    cr_expect_eq(tsv_value(a, "kv_budget_bytes"), tsv_value(b, "kv_budget_bytes"));
    cr_assert_eq(run("decode --model-config tests/configs/mixtral-8x7b.json --gpu h100 --tp 2 --format tsv", a), 0,
                 "%s", a);
    cr_assert_eq(run("decode --model mixtral-8x7b --gpu h100 --tp 2 --format tsv", b), 0, "%s", b);
    cr_expect_eq(tsv_value(a, "step_time"), tsv_value(b, "step_time"));
}

Test(cli_reader, model_config_errors)
{
    static char out[OUT_MAX];
    cr_expect_eq(run("decode --model-config tests/configs/unknown-arch.json --gpu h100", out), 2);
    cr_expect(strstr(out, "--model-config: tests/configs/unknown-arch.json: key 'num_hidden_layers' is missing") != NULL,
              "%s", out);
    cr_expect_eq(run("decode --model llama3-8b --model-config tests/configs/llama3-8b.json --gpu h100", out), 2);
    cr_expect(strstr(out, "give --model or --model-config, not both") != NULL, "%s", out);
    cr_expect_eq(run("decode --model-config tests/configs/no-such.json --gpu h100", out), 2);
    cr_expect(strstr(out, "no-such.json: cannot be read") != NULL, "%s", out);
    /* spec's target and train's model come from the config too */
    cr_expect_eq(run("spec --model-config tests/configs/llama3-70b.json --gpu h100 --tp 8 --format tsv", out), 0, "%s",
                 out);
    cr_expect_eq(run("train --model-config tests/configs/llama3-8b.json --tokens 1T --days 21 --gpu h100", out), 0,
                 "%s", out);
}

/* k = 1024 tokens: 8k = 8,192, 128k = 131,072, 1.5k = 1,536. */
Test(cli_reader, token_suffixes)
{
    long long t;
    cr_expect_eq(cli_tokens_parse("8k", 1, 1 << 30, &t), 0);
    cr_expect_eq(t, 8192);
    cr_expect_eq(cli_tokens_parse("128K", 1, 1 << 30, &t), 0);
    cr_expect_eq(t, 131072);
    cr_expect_eq(cli_tokens_parse("1.5k", 1, 1 << 30, &t), 0);
    cr_expect_eq(t, 1536);
    cr_expect_eq(cli_tokens_parse("1M", 1, 1 << 30, &t), 0);
    cr_expect_eq(t, 1048576);
    cr_expect_eq(cli_tokens_parse("4096", 1, 1 << 30, &t), 0);
    cr_expect_eq(t, 4096);
    static const char *bad[] = {"0.3k", "8kb", "8 k", "-8k", "", "k", "0", "1e40k", "8T"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++)
        cr_expect_eq(cli_tokens_parse(bad[i], 1, 1 << 30, &t), -1, "'%s' parsed", bad[i]);

    static char a[OUT_MAX], b[OUT_MAX];
    cr_assert_eq(run("memory --model llama3-8b --gpu h100 --context 32k --format tsv", a), 0, "%s", a);
    cr_expect_eq(tsv_value(a, "context"), 32768.0);
    cr_assert_eq(run("memory --model llama3-8b --gpu h100 --context 32768 --format tsv", b), 0, "%s", b);
    cr_expect_eq(tsv_value(a, "max_batch"), tsv_value(b, "max_batch"));
    cr_expect_eq(run("decode --model llama3-8b --gpu h100 --context 0.3k", a), 2);
    cr_expect(strstr(a, "--context: '0.3k' is not a token count") != NULL, "%s", a);
    cr_expect_eq(run("decode --help", a), 0);
    cr_expect(strstr(a, "k = 1024 tokens") != NULL, "--help does not state the suffix:\n%s", a);
    cr_expect_eq(run("train --model llama3-8b --seq 8k --micro-batch 1 --tp 8 --pp 1 --dp 1 --format tsv", a), 0, "%s",
                 a);
}

Test(cli_reader, version)
{
    static char out[OUT_MAX];
    cr_expect_eq(run("--version", out), 0);
    /* code/specs/gpus.tsv: 9 rows (6, then B300, GB200, GB300); models.tsv: 18 (chapter 13's 13, then
     * Qwen3-30B-A3B, MiniMax-M2.5, GLM-5, Kimi-K2.5, Qwen3.5-397B-A17B) */
    cr_expect(strncmp(out, "napkin ", 7) == 0 && strstr(out, "built-in tables of 9 GPUs and 18 models"), "%s", out);
}

/* An error under --format json: a JSON object on stdout naming the command,
 * the status and the message; the message on stderr too. */
Test(cli_reader, json_errors)
{
    static char out[OUT_MAX], err[OUT_MAX];
    cr_expect_eq(run2("decode --model llama3-8b --gpu h100 --batch 0 --format json", out, err), 2);
    cr_expect(strstr(out, "{\"error\": {\"command\": \"decode\", \"status\": 2, \"message\": \"napkin decode: --batch: "
                          "0 is out of range: from 1 to") == out, "stdout:\n%s", out);
    cr_expect(strstr(err, "napkin decode: --batch: 0 is out of range") != NULL, "stderr:\n%s", err);
    /* does not fit: exit 1, the same shape */
    cr_expect_eq(run2("decode --model llama3-70b --gpu h100 --format=json", out, err), 1);
    cr_expect(strstr(out, "\"status\": 1") != NULL && strstr(out, "does not fit") != NULL, "stdout:\n%s", out);
    /* an answer is left alone: one object, no error */
    cr_expect_eq(run2("decode --model llama3-8b --gpu h100 --format json", out, err), 0);
    cr_expect(strstr(out, "\"error\"") == NULL && out[0] == '{', "%s", out);
}

Test(cli_reader, spec_warns_about_the_draft)
{
    static char out[OUT_MAX];
    /* LLaMA-3-70B drafting for LLaMA-3-8B: 70.6 B against 8.03 B */
    cr_expect_eq(run("spec --model llama3-8b --draft llama3-70b --gpu h100 --tp 8", out), 0, "%s", out);
    cr_expect(strstr(out, "warning: the draft llama3-70b (70.6 B parameters) is not smaller than the target llama3-8b") !=
                  NULL, "%s", out);
    /* LLaMA-2-13B's 32,000 tokens against LLaMA-3-70B's 128,256 */
    cr_expect_eq(run("spec --model llama3-70b --draft llama2-13b --gpu h100 --tp 8", out), 0, "%s", out);
    cr_expect(strstr(out, "vocabulary of 32000 tokens, the target llama3-70b 128256") != NULL, "%s", out);
    cr_expect_eq(run("spec --model llama3-70b --draft llama3-8b --gpu h100 --tp 8", out), 0, "%s", out);
    cr_expect(strstr(out, "warning") == NULL, "a sound draft warned:\n%s", out);
}

/* LLaMA-3-8B's max_position_embeddings is 8,192: 8k is fine, 8k + 1 is not. */
Test(cli_reader, decode_warns_past_max_position)
{
    static char out[OUT_MAX];
    cr_expect_eq(run("decode --model llama3-8b --gpu h100 --context 8193", out), 0, "%s", out);
    cr_expect(strstr(out, "warning: context 8193 exceeds llama3-8b's maximum position, 8192 tokens") != NULL, "%s", out);
    cr_expect_eq(run("decode --model llama3-8b --gpu h100 --context 8k", out), 0, "%s", out);
    cr_expect(strstr(out, "maximum position") == NULL, "%s", out);
}
