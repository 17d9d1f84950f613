/* napkin --batch, which the browser tests use to ask the CLI thousands of
 * questions in one process: for each command, the reply line must hold
 * exactly the exit status, stdout and stderr of the same command run on its
 * own (the reference here: a separate process per command, as a reader runs
 * it), including refusals, --format json errors and help; a line that is not
 * a command gets an error line and the lines after it are still answered. */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

static const char *const COMMANDS[][16] = {
    {"decode", "--model", "llama3-8b", "--gpu", "h100", "--batch", "64", "--format", "json"},
    {"decode", "--model", "llama3-70b", "--gpu", "h100", "--tp", "4", "--batch", "32", "--context", "4096"},
    {"decode", "--model", "llama3-70b", "--gpu", "h100", "--batch", "4096", "--context", "8192", "--format", "json"},
    {"decode", "--model", "no-such-model", "--gpu", "h100", "--format", "json"},
    {"decode", "--gpu", "h100", "--batch", "-1"},
    {"practice", "--chapter", "12", "--seed", "4711", "--format", "tsv"},
    {"practice", "--chapter", "12", "--seed", "0", "--part", "12.1(a)", "--answer", "80", "--format", "json"},
    {"serve", "--model", "llama3-8b", "--gpu", "h100", "--format", "tsv"},
    {"spec", "--alpha", "0.8", "--gamma", "4", "--format", "json"},
    {"help", "decode"},
    {"nosuchcommand"},
};
#define N_COMMANDS ((int)(sizeof COMMANDS / sizeof COMMANDS[0]))

static char *slurp(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert(f != NULL, "%s", path);
    static char buf[1 << 20];
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return strdup(buf);
}

/* The command's words, each in single quotes for sh (none holds a quote). */
static void quoted(const char *const *words, char *out, size_t n)
{
    out[0] = '\0';
    for (int i = 0; words[i]; i++) {
        cr_assert(strchr(words[i], '\'') == NULL);
        strncat(out, " '", n - strlen(out) - 1);
        strncat(out, words[i], n - strlen(out) - 1);
        strncat(out, "'", n - strlen(out) - 1);
    }
}

static int shell(const char *cmd)
{
    int st = system(cmd);
    return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

Test(cli_batch, each_reply_is_what_the_command_alone_prints)
{
    const char *bin = getenv("NAPKIN_BIN");
    cr_assert(bin != NULL, "NAPKIN_BIN is not set");
    char dir[] = "/tmp/napkin-batch-XXXXXX";
    cr_assert(mkdtemp(dir) != NULL);
    char path[512], cmd[4096], words[2048];

    /* the batch's input: every command, with two bad lines among them */
    snprintf(path, sizeof path, "%s/in.jsonl", dir);
    FILE *in = fopen(path, "w");
    cr_assert(in != NULL);
    for (int i = 0; i < N_COMMANDS; i++) {
        json_t *a = json_array();
        for (int w = 0; COMMANDS[i][w]; w++)
            json_array_append_new(a, json_string(COMMANDS[i][w]));
        char *line = json_dumps(a, JSON_COMPACT);
        fprintf(in, "%s\n", line);
        free(line);
        json_decref(a);
        if (i == 2)
            fputs("not json\n[1, 2]\n", in);
    }
    fclose(in);
    snprintf(cmd, sizeof cmd, "'%s' --batch < '%s/in.jsonl' > '%s/out.jsonl'", bin, dir, dir);
    cr_assert_eq(shell(cmd), 0, "napkin --batch exited non-zero");
    snprintf(path, sizeof path, "%s/out.jsonl", dir);
    char *out = slurp(path);

    int line_no = 0, cmd_no = 0;
    for (char *line = strtok(out, "\n"); line; line = strtok(NULL, "\n"), line_no++) {
        json_error_t err;
        json_t *r = json_loads(line, 0, &err);
        cr_assert(r != NULL, "reply %d is not JSON: %s", line_no + 1, line);
        if (line_no == 3 || line_no == 4) { /* the two bad lines */
            cr_expect(json_is_string(json_object_get(r, "error")), "line %d: %s", line_no + 1, line);
            json_decref(r);
            continue;
        }
        cr_assert(cmd_no < N_COMMANDS, "more replies than commands");
        quoted(COMMANDS[cmd_no], words, sizeof words);
        snprintf(cmd, sizeof cmd, "'%s' %s > '%s/alone.out' 2> '%s/alone.err'", bin, words, dir, dir);
        int status = shell(cmd);
        snprintf(path, sizeof path, "%s/alone.out", dir);
        char *alone_out = slurp(path);
        snprintf(path, sizeof path, "%s/alone.err", dir);
        char *alone_err = slurp(path);
        cr_expect_eq(json_integer_value(json_object_get(r, "status")), status, "napkin%s: exit status", words);
        cr_expect_str_eq(json_string_value(json_object_get(r, "stdout")), alone_out, "napkin%s: stdout", words);
        cr_expect_str_eq(json_string_value(json_object_get(r, "stderr")), alone_err, "napkin%s: stderr", words);
        free(alone_out);
        free(alone_err);
        json_decref(r);
        cmd_no++;
    }
    cr_expect_eq(cmd_no, N_COMMANDS, "a reply for every command");
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    shell(cmd);
}

/* A NUL byte inside a line: the line is refused (an error reply), not run
 * up to the NUL, and the next line is still answered.  The first line,
 * read up to its NUL, would be a whole command (roofline of the H100). */
Test(cli_batch, a_line_with_a_nul_byte_is_refused)
{
    const char *bin = getenv("NAPKIN_BIN");
    cr_assert(bin != NULL, "NAPKIN_BIN is not set");
    char dir[] = "/tmp/napkin-batch-XXXXXX";
    cr_assert(mkdtemp(dir) != NULL);
    char path[512], cmd[4096];
    snprintf(path, sizeof path, "%s/in.jsonl", dir);
    FILE *in = fopen(path, "wb");
    cr_assert(in != NULL);
    static const char lines[] = "[\"roofline\", \"--gpu\", \"h100\"]\0, \"--format\", \"json\"]\n"
                                "[\"roofline\", \"--gpu\", \"h100\", \"--format\", \"tsv\"]\n";
    fwrite(lines, 1, sizeof lines - 1, in);
    fclose(in);
    snprintf(cmd, sizeof cmd, "'%s' --batch < '%s/in.jsonl' > '%s/out.jsonl'", bin, dir, dir);
    cr_assert_eq(shell(cmd), 0, "napkin --batch exited non-zero");
    snprintf(path, sizeof path, "%s/out.jsonl", dir);
    char *out = slurp(path);
    char *second = strchr(out, '\n');
    cr_assert_not_null(second, "one reply for two lines:\n%s", out);
    *second++ = '\0';
    json_error_t err;
    json_t *r = json_loads(out, 0, &err);
    cr_assert_not_null(r, "not JSON: %s", out);
    cr_expect_str_eq(json_string_value(json_object_get(r, "error")), "a line must not hold a NUL byte", "%s", out);
    cr_expect_null(json_object_get(r, "status"), "the line ran: %s", out);
    json_decref(r);
    r = json_loads(second, 0, &err);
    cr_assert_not_null(r, "not JSON: %s", second);
    cr_expect_eq(json_integer_value(json_object_get(r, "status")), 0, "%s", second);
    json_decref(r);
    free(out);
    snprintf(cmd, sizeof cmd, "rm -rf '%s'", dir);
    shell(cmd);
}
