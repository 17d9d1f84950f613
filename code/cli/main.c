/* napkin: the workbook's arithmetic on the reader's own assumptions.
 * Dispatches to one subcommand per file (see commands.h). */
#include "commands.h"

#include "cli_report.h"
#include "specs.h"
#include "text_escape.h"

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The calculator's version: bump with any change to what it prints. */
#define NAPKIN_VERSION "0.13.0"

/* Exit status when the answer could not be written (a full disk, a closed
 * pipe): not "no answer" (1), which would blame the question. */
#define EXIT_IO 3

typedef struct {
    const char *name;
    int (*run)(int argc, char **argv);
    const char *summary;
} command;

#define NAPKIN_TABLE_ROW(name, summary) {#name, cmd_##name, summary},
static const command COMMANDS[] = {NAPKIN_COMMANDS(NAPKIN_TABLE_ROW)};
#undef NAPKIN_TABLE_ROW
#define NCOMMANDS ((int)(sizeof COMMANDS / sizeof COMMANDS[0]))

static void usage(FILE *out)
{
    fprintf(out, "napkin: the arithmetic of serving LLMs, from the tables of Batching by the Numbers\n\n"
                 "usage: napkin <command> [flags]\n\ncommands:\n");
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(out, "  %-10s %s\n", COMMANDS[i].name, COMMANDS[i].summary);
    fprintf(out, "  %-10s %s\n", "help", "this list, or `napkin help <command>` for one command's flags");
    fprintf(out, "\nEvery command takes --format table|tsv|json and --help.  Exit status: 0 answered,\n"
                 "1 no answer (the model or batch does not fit), 2 a bad flag, value or choice,\n"
                 "3 the output could not be written.  With --format json an error is also a JSON\n"
                 "object on stdout: {\"error\": {\"command\", \"status\", \"message\"}}.\n"
                 "napkin --version prints the calculator's version and the tables built in;\n"
                 "napkin --batch runs one command per line of stdin (a JSON array of its words)\n"
                 "and prints one JSON object per command: {\"status\", \"stdout\", \"stderr\"}.\n"
                 "Example: napkin decode --model llama3-70b --gpu h100 --tp 4 --batch 64 --context 4096\n");
}

static const command *find(const char *name)
{
    for (int i = 0; i < NCOMMANDS; i++)
        if (strcmp(COMMANDS[i].name, name) == 0)
            return &COMMANDS[i];
    return NULL;
}

static int unknown(const char *name)
{
    fputs("napkin: unknown command '", stderr);
    text_escape_put(name, stderr);
    fputs("' (choices:", stderr);
    for (int i = 0; i < NCOMMANDS; i++)
        fprintf(stderr, "%s %s", i ? "," : "", COMMANDS[i].name);
    fprintf(stderr, ", help)\n");
    return 2;
}

static int version(void)
{
    gpu_table g;
    model_table m;
    char err[256];
    int ng = gpu_table_builtin(&g, err, sizeof err) == 0 ? g.n : -1;
    int nm = model_table_builtin(&m, err, sizeof err) == 0 ? m.n : -1;
    printf("napkin %s (Batching by the Numbers): built-in tables of %d GPUs and %d models\n", NAPKIN_VERSION, ng, nm);
    if (ng >= 0)
        gpu_table_free(&g);
    if (nm >= 0)
        model_table_free(&m);
    return 0;
}

/* --format json anywhere in the command's flags. */
static int wants_json(int argc, char **argv)
{
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--format=json") == 0)
            return 1;
        if (strcmp(argv[i], "--format") == 0 && i + 1 < argc && strcmp(argv[i + 1], "json") == 0)
            return 1;
    }
    return 0;
}

/* What a command wrote, held in memory (free both when done). */
typedef struct {
    char *out, *err;
    size_t out_len, err_len;
    int lost; /* the output could not all be held */
} held_output;

/* Runs run(argc, argv) with its stdout and stderr held in *h (the GNU C
 * library lets stdout and stderr be assigned, as its manual says).  Returns
 * its status, or -1 without running it when no memory could be had. */
static int run_held(int (*run)(int, char **), int argc, char **argv, held_output *h)
{
    memset(h, 0, sizeof *h);
    FILE *out_mem = open_memstream(&h->out, &h->out_len), *err_mem = open_memstream(&h->err, &h->err_len);
    if (!out_mem || !err_mem) {
        if (out_mem)
            fclose(out_mem);
        if (err_mem)
            fclose(err_mem);
        free(h->out);
        free(h->err);
        memset(h, 0, sizeof *h);
        return -1;
    }
    fflush(stdout);
    fflush(stderr);
    FILE *real_out = stdout, *real_err = stderr;
    stdout = out_mem;
    stderr = err_mem;
    int rc = run(argc, argv);
    stdout = real_out;
    stderr = real_err;
    h->lost = fclose(out_mem) != 0;
    h->lost |= fclose(err_mem) != 0;
    return rc;
}

/* Run a command whose answer is JSON.  Its stdout and stderr are held back,
 * in memory (a full or read-only /tmp changes nothing); on failure with
 * nothing on stdout, the error becomes a JSON object there ({"error":
 * {"command", "status", "message"}}) as well as a message on stderr, so a
 * program reading the JSON sees why there is no answer. */
static int run_json(const command *c, int argc, char **argv)
{
    held_output h;
    int rc = run_held(c->run, argc, argv, &h);
    if (rc < 0) /* out of memory: run it plainly */
        return c->run(argc, argv);
    if (h.lost && rc == 0) {
        fprintf(stderr, "napkin %s: out of memory holding the output\n", c->name);
        rc = EXIT_IO;
    }
    if (h.err)
        fputs(h.err, stderr);
    if (h.out)
        fputs(h.out, stdout);
    if (rc != 0 && (!h.out || !*h.out)) {
        char *msg = h.err ? h.err : "";
        size_t len = strlen(msg);
        while (len > 0 && msg[len - 1] == '\n')
            msg[--len] = 0;
        printf("{\"error\": {\"command\": ");
        report_json_string(c->name, stdout);
        printf(", \"status\": %d, \"message\": ", rc);
        report_json_string(msg, stdout);
        printf("}}\n");
    }
    free(h.out);
    free(h.err);
    return rc;
}

/* napkin CMD FLAGS...: one command, argv[0] being "napkin". */
static int dispatch(int argc, char **argv)
{
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0)
        return version();
    if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        if (argc > 3) {
            char *one = text_escape_dup(argv[2]), *more = text_escape_dup(argv[3]);
            fprintf(stderr, "napkin help: give one command name (napkin help %s), not '%s'\n", one ? one : "?",
                    more ? more : "?");
            free(one);
            free(more);
            return 2;
        }
        if (argc > 2) { /* napkin help decode == napkin decode --help */
            const command *c = find(argv[2]);
            if (!c)
                return unknown(argv[2]);
            char help_flag[] = "--help";
            char *help_argv[] = {argv[2], help_flag, NULL};
            return c->run(2, help_argv);
        }
        usage(stdout);
        return 0;
    }
    const command *c = find(name);
    if (!c)
        return unknown(name);
    return wants_json(argc - 1, argv + 1) ? run_json(c, argc - 1, argv + 1) : c->run(argc - 1, argv + 1);
}

/* One --batch line, a JSON array of the command's words, run with its
 * output held in memory; the reply object, or NULL with why in *why. */
static json_t *batch_one(json_t *words, const char **why)
{
    size_t n = json_array_size(words);
    if (!json_is_array(words) || n == 0 || n > 512) {
        *why = "each line must be a JSON array of the command's words: [\"decode\", \"--model\", \"llama3-8b\"]";
        return NULL;
    }
    char **argv = calloc(n + 2, sizeof *argv);
    if (!argv) {
        *why = "out of memory";
        return NULL;
    }
    argv[0] = strdup("napkin");
    int ok = argv[0] != NULL;
    for (size_t i = 0; i < n && ok; i++) {
        const char *w = json_string_value(json_array_get(words, i));
        ok = w && (argv[i + 1] = strdup(w)) != NULL;
    }
    json_t *reply = NULL;
    held_output h = {0};
    int rc = ok ? run_held(dispatch, (int)n + 1, argv, &h) : 0;
    if (!ok)
        *why = "every word must be a string";
    else if (rc < 0)
        *why = "out of memory";
    else if (h.lost)
        *why = "out of memory holding the output";
    else if (!(reply = json_pack("{s:i, s:s%, s:s%}", "status", rc, "stdout", h.out ? h.out : "", h.out_len, "stderr",
                                 h.err ? h.err : "", h.err_len)))
        *why = "the output is not UTF-8";
    free(h.out);
    free(h.err);
    for (size_t i = 0; i <= n; i++)
        free(argv[i]);
    free(argv);
    return reply;
}

/* napkin --batch: one command per line on stdin, each a JSON array of its
 * words (["decode", "--model", "llama3-8b", "--format", "json"]); one line
 * per command on stdout, {"status": N, "stdout": "...", "stderr": "..."}, or
 * {"error": "..."} for a line that is not a command.  It serves the test
 * tools, which ask the CLI thousands of questions and would otherwise start
 * it for each; the commands already run many times in one process in the
 * page's WebAssembly build. */
static int batch(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        json_error_t jerr;
        const char *why = NULL;
        /* the whole line is the command: a NUL inside it would end the text
         * early and run the words before it, so the line is refused */
        int nul = memchr(line, '\0', (size_t)len) != NULL;
        if (nul)
            why = "a line must not hold a NUL byte";
        json_t *words = nul ? NULL : json_loadb(line, (size_t)len, 0, &jerr);
        json_t *reply = words ? batch_one(words, &why) : NULL;
        if (!reply)
            reply = json_pack("{s:s}", "error", why ? why : "each line must be one JSON array");
        char *text = json_dumps(reply, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (text)
            puts(text);
        fflush(stdout); /* the reader waits for this line before it sends the next */
        free(text);
        json_decref(reply);
        json_decref(words);
    }
    free(line);
    return 0;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    int rc = argc == 2 && strcmp(argv[1], "--batch") == 0 ? batch() : dispatch(argc, argv);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fputs("napkin ", stderr);
        text_escape_put(argv[1], stderr);
        fprintf(stderr, ": cannot write the output: %s\n", strerror(errno ? errno : EIO));
        return EXIT_IO;
    }
    return rc;
}
