/* napkin: the workbook's arithmetic on the reader's own assumptions.
 * Dispatches to one subcommand per file (see commands.h). */
#include "commands.h"

#include "cli_report.h"
#include "specs.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* The calculator's version: bump with any change to what it prints. */
#define NAPKIN_VERSION "0.12.0"

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
                 "napkin --version prints the calculator's version and the tables built in.\n"
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
    fprintf(stderr, "napkin: unknown command '%s' (choices:", name);
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

/* Run a command whose answer is JSON.  Its stdout and stderr are held back,
 * in memory (a full or read-only /tmp changes nothing); on failure with
 * nothing on stdout, the error becomes a JSON object there ({"error":
 * {"command", "status", "message"}}) as well as a message on stderr, so a
 * program reading the JSON sees why there is no answer.  (The GNU C
 * library lets stdout and stderr be assigned, as its manual says.) */
static int run_json(const command *c, int argc, char **argv)
{
    char *out = NULL, *err = NULL;
    size_t out_len = 0, err_len = 0;
    FILE *out_mem = open_memstream(&out, &out_len), *err_mem = open_memstream(&err, &err_len);
    if (!out_mem || !err_mem) { /* out of memory: run it plainly */
        if (out_mem)
            fclose(out_mem);
        if (err_mem)
            fclose(err_mem);
        free(out);
        free(err);
        return c->run(argc, argv);
    }
    fflush(stdout);
    fflush(stderr);
    FILE *real_out = stdout, *real_err = stderr;
    stdout = out_mem;
    stderr = err_mem;
    int rc = c->run(argc, argv);
    stdout = real_out;
    stderr = real_err;
    int lost = fclose(out_mem) != 0;
    lost |= fclose(err_mem) != 0;
    if (lost && rc == 0) {
        fprintf(stderr, "napkin %s: out of memory holding the output\n", c->name);
        rc = EXIT_IO;
    }
    if (err)
        fputs(err, stderr);
    if (out)
        fputs(out, stdout);
    if (rc != 0 && (!out || !*out)) {
        char *msg = err ? err : "";
        size_t len = strlen(msg);
        while (len > 0 && msg[len - 1] == '\n')
            msg[--len] = 0;
        printf("{\"error\": {\"command\": ");
        report_json_string(c->name, stdout);
        printf(", \"status\": %d, \"message\": ", rc);
        report_json_string(msg, stdout);
        printf("}}\n");
    }
    free(out);
    free(err);
    return rc;
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
    if (strcmp(name, "--version") == 0 || strcmp(name, "version") == 0)
        return version();
    if (strcmp(name, "help") == 0 || strcmp(name, "--help") == 0 || strcmp(name, "-h") == 0) {
        if (argc > 3) {
            fprintf(stderr, "napkin help: give one command name (napkin help %s), not '%s'\n", argv[2], argv[3]);
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
    int rc = wants_json(argc - 1, argv + 1) ? run_json(c, argc - 1, argv + 1) : c->run(argc - 1, argv + 1);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "napkin %s: cannot write the output: %s\n", name, strerror(errno ? errno : EIO));
        return EXIT_IO;
    }
    return rc;
}
