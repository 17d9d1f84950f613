/* napkin: the workbook's arithmetic on the reader's own assumptions.
 * Dispatches to one subcommand per file (see commands.h). */
#include "commands.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

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
                 "3 the output could not be written.\n"
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

int main(int argc, char **argv)
{
    if (argc < 2) {
        usage(stderr);
        return 2;
    }
    const char *name = argv[1];
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
    int rc = c->run(argc - 1, argv + 1);
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "napkin %s: cannot write the output: %s\n", name, strerror(errno ? errno : EIO));
        return EXIT_IO;
    }
    return rc;
}
