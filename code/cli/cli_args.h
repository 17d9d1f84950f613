/* Flag parsing shared by every subcommand.
 *
 * A subcommand declares its flags in an array of cli_opt and calls cli_parse,
 * which also understands the common flags (--format, --specs, --gpu-table,
 * --model-table, --help).  Flags take their value as "--flag V" or
 * "--flag=V"; a flag given twice keeps the last value.  Every error prints
 * "napkin <cmd>: <what>" naming the flag, and cli_parse returns exit status 2.
 *
 *     int batch = 1;
 *     cli_opt opts[] = {
 *         {"--batch", OPT_POS_INT, &batch, "B", "sequences in the step (default 1)", 0},
 *     };
 *     cli_common common;
 *     int rc = cli_parse(&doc, argc, argv, opts, CLI_NOPTS(opts), &common);
 *     if (rc != CLI_GO) return rc == CLI_HELP_SHOWN ? 0 : rc;
 */
#ifndef NAPKIN_CLI_ARGS_H
#define NAPKIN_CLI_ARGS_H

#include "cli_report.h"

/* Exit statuses: 1 = the question has no answer (does not fit),
 * 2 = the question is malformed (bad flag, value or choice). */
#define EXIT_NO_FIT 1
#define EXIT_USAGE 2

typedef enum {
    OPT_FLAG,       /* no value; dest int* set to 1 */
    OPT_STRING,     /* dest const char** (points into argv) */
    OPT_POS_INT,    /* dest int*: whole number >= 1 */
    OPT_NONNEG_INT, /* dest int*: whole number >= 0 */
    OPT_POS_REAL,   /* dest double*: finite, > 0 */
    OPT_FRACTION,   /* dest double*: 0 < x <= 1 */
    OPT_TOKENS      /* dest int*: a token count >= 1, "8192" or "8k" (k = 1024; cli_tokens.h) */
} opt_kind;

typedef struct {
    const char *name;    /* "--batch" */
    opt_kind kind;
    void *dest;
    const char *metavar; /* "B" in the help; NULL for OPT_FLAG */
    const char *help;    /* one line, with the default */
    int required;
    int seen;            /* set by cli_parse */
} cli_opt;

/* Every number flag has a range its arithmetic can carry, checked here once:
 * counts stay far below INT_MAX so that sums and products of two counts
 * cannot overflow, a real is at most CLI_REAL_MAX (no product of a few of
 * them reaches inf) and at least CLI_REAL_MIN, a fraction at least
 * CLI_FRACTION_MIN (a division by one stays finite).  A flag whose
 * arithmetic carries less has a narrower bound in cli_args.c's table of
 * them, by command and flag. */
#define CLI_COUNT_MAX 16777216.0  /* 2^24 */
#define CLI_TOKENS_MAX 1073741824.0 /* 2^30 tokens = 1024M */
#define CLI_REAL_MAX 1e15
#define CLI_REAL_MIN 1e-12
#define CLI_FRACTION_MIN 1e-6

/* The range cli_parse enforces for a number flag of a command: [*lo, *hi]
 * (0, 0 for a string or a switch). */
void cli_opt_range(const char *cmd, const cli_opt *o, double *lo, double *hi);

#define CLI_NOPTS(a) ((int)(sizeof(a) / sizeof((a)[0])))

typedef struct {
    const char *name;    /* "decode" */
    const char *summary; /* one line */
    const char *usage;   /* flags after "napkin decode " */
    const char *details; /* paragraphs after the flag list, or NULL */
} cli_doc;

/* The flags every subcommand accepts. */
typedef struct {
    out_format format;       /* --format (default table) */
    const char *specs_dir;   /* --specs DIR: DIR/gpus.tsv and DIR/models.tsv */
    const char *gpu_table;   /* --gpu-table FILE (overrides --specs for GPUs) */
    const char *model_table; /* --model-table FILE */
    const char *model_config; /* --model-config FILE: a Hugging Face config.json, the model of --model */
} cli_common;

/* The model key --model-config gives (cli_specs_load adds the model under it). */
#define CLI_CONFIG_MODEL_KEY "config"

#define CLI_GO 0
#define CLI_HELP_SHOWN (-1)

/* Parse argv[1..argc-1] (argv[0] is the subcommand).  Returns CLI_GO,
 * CLI_HELP_SHOWN after printing the help to stdout, or EXIT_USAGE after
 * printing an error to stderr. */
int cli_parse(const cli_doc *doc, int argc, char **argv, cli_opt *opts, int nopts, cli_common *common);

/* The help text of a subcommand (what --help prints). */
void cli_print_help(const cli_doc *doc, const cli_opt *opts, int nopts, FILE *out);

/* A number from lo to hi (hi may be INFINITY) in the flags' one number
 * syntax (units.h), for a flag whose range no opt_kind has (0 allowed, an
 * upper bound): 0, or EXIT_USAGE naming the flag and the range. */
int cli_real_in(const char *cmd, const char *flag, const char *s, double lo, double hi, double *out);

/* "napkin <cmd>: <message>\n" on stderr; returns status, for `return cli_fail(...)`. */
int cli_fail(const char *cmd, int status, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

#endif
