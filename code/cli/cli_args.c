#include "cli_args.h"

#include "cli_tokens.h"
#include "text_escape.h"
#include "units.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

/* The message is one line whatever it quotes: a flag's value, a path or a
 * name from a file goes through the one escaping (text_escape.h), newlines
 * and terminal escapes included. */
int cli_fail(const char *cmd, int status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    char small[1024], *msg = small;
    int n = vsnprintf(small, sizeof small, fmt, ap);
    va_end(ap);
    if (n >= (int)sizeof small && (msg = malloc((size_t)n + 1)) != NULL) {
        va_start(ap, fmt);
        vsnprintf(msg, (size_t)n + 1, fmt, ap);
        va_end(ap);
    }
    fputs("napkin ", stderr);
    text_escape_put(cmd, stderr);
    fputs(": ", stderr);
    text_escape_put(msg ? msg : small, stderr);
    fputc('\n', stderr);
    if (msg != small)
        free(msg);
    return status;
}

/* The common flags, described like a subcommand's own so the help lists them. */
static const cli_opt common_help[] = {
    {"--format", OPT_STRING, NULL, "F", "output: table (default), tsv (raw SI numbers) or json", 0, 0},
    {"--specs", OPT_STRING, NULL, "DIR", "read DIR/gpus.tsv and DIR/models.tsv instead of the built-in tables", 0, 0},
    {"--gpu-table", OPT_STRING, NULL, "FILE", "read the GPU table from FILE", 0, 0},
    {"--model-table", OPT_STRING, NULL, "FILE", "read the model table from FILE", 0, 0},
    {"--model-config", OPT_STRING, NULL, "FILE", "the model of a Hugging Face config.json instead of --model", 0, 0},
    {"--help", OPT_FLAG, NULL, NULL, "this text", 0, 0},
};

static void print_opts(const cli_opt *opts, int n, FILE *out)
{
    for (int i = 0; i < n; i++) {
        char lhs[64];
        snprintf(lhs, sizeof lhs, "%s%s%s", opts[i].name, opts[i].metavar ? " " : "",
                 opts[i].metavar ? opts[i].metavar : "");
        fprintf(out, "  %-22s %s%s\n", lhs, opts[i].help, opts[i].required ? " (required)" : "");
    }
}

void cli_print_help(const cli_doc *doc, const cli_opt *opts, int nopts, FILE *out)
{
    fprintf(out, "napkin %s: %s\n\nusage: napkin %s %s\n", doc->name, doc->summary, doc->name, doc->usage);
    if (nopts > 0) {
        fprintf(out, "\nflags:\n");
        print_opts(opts, nopts, out);
    }
    for (int i = 0; i < nopts; i++)
        if (opts[i].kind == OPT_TOKENS) {
            fprintf(out, "  (%s)\n", CLI_TOKENS_HELP);
            break;
        }
    fprintf(out, "\ncommon flags:\n");
    print_opts(common_help, CLI_NOPTS(common_help), out);
    if (doc->details)
        fprintf(out, "\n%s\n", doc->details);
}

/* Flags whose arithmetic carries less than their kind's bound, and why. */
static const struct {
    const char *cmd, *flag;
    double max;
} narrower[] = {
    /* the independent queue's simulation scans every GPU per arrival (video.h's MDC_WORK_LIMIT) */
    {"video", "--gpus", 65536},
    {"video", "--jobs", 50000}, /* 1.1 x jobs arrivals in 4 arrays of doubles: under 0.1 s */
};

void cli_opt_range(const char *cmd, const cli_opt *o, double *lo, double *hi)
{
    *lo = 0;
    *hi = 0;
    switch (o->kind) {
    case OPT_POS_INT: *lo = 1, *hi = CLI_COUNT_MAX; break;
    case OPT_NONNEG_INT: *lo = 0, *hi = CLI_COUNT_MAX; break;
    case OPT_TOKENS: *lo = 1, *hi = CLI_TOKENS_MAX; break;
    case OPT_POS_REAL: *lo = CLI_REAL_MIN, *hi = CLI_REAL_MAX; break;
    case OPT_FRACTION: *lo = CLI_FRACTION_MIN, *hi = 1; break;
    default: return;
    }
    for (size_t i = 0; i < sizeof narrower / sizeof narrower[0]; i++)
        if (strcmp(narrower[i].cmd, cmd) == 0 && strcmp(narrower[i].flag, o->name) == 0 && narrower[i].max < *hi)
            *hi = narrower[i].max;
}

/* The tables' number syntax (units.h): "0.9", "85.5e9"; no sign, no spaces. */
static int parse_real(const char *s, double *out)
{
    return parse_plain_number(s, out);
}

int cli_real_in(const char *cmd, const char *flag, const char *s, double lo, double hi, double *out)
{
    double x;
    if (parse_real(s, &x) == 0 && x >= lo && x <= hi) {
        *out = x;
        return 0;
    }
    if (isinf(hi))
        return cli_fail(cmd, EXIT_USAGE, "%s: '%s' is not a number >= %g", flag, s, lo);
    return cli_fail(cmd, EXIT_USAGE, "%s: '%s' is not a number from %g to %g", flag, s, lo, hi);
}

/* Whole numbers in the tables' syntax (units.h): "4096" yes; "4k", "1e3",
 * "", " 8", "+8", "0x10" no; a number outside the range is called that. */
static int set_count(const char *cmd, const cli_opt *o, const char *v, double lo, double hi)
{
    long long n;
    int ok = o->kind == OPT_TOKENS ? cli_tokens_parse(v, 0, LLONG_MAX / 2, &n) == 0
                                   : parse_whole_number(v, LLONG_MAX, &n) == 0;
    double x;
    if (!ok && parse_real(v, &x) == 0 && x > hi) /* "1e30", 20 digits: a number, but too large */
        ok = 1, n = LLONG_MAX;
    if (!ok && o->kind == OPT_TOKENS)
        return cli_fail(cmd, EXIT_USAGE, "%s: '%s' is not a token count from %.0f to %.0f (%s)", o->name, v, lo, hi,
                        CLI_TOKENS_HELP);
    if (!ok)
        return cli_fail(cmd, EXIT_USAGE, "%s: '%s' is not a whole number (digits only, from %.0f to %.0f)", o->name,
                        v, lo, hi);
    if ((double)n < lo || (double)n > hi)
        return cli_fail(cmd, EXIT_USAGE, "%s: %s is out of range: from %.0f to %.0f", o->name, v, lo, hi);
    *(int *)o->dest = (int)n;
    return 0;
}

static int set_real(const char *cmd, const cli_opt *o, const char *v, double lo, double hi)
{
    double x;
    if (parse_real(v, &x) != 0)
        return cli_fail(cmd, EXIT_USAGE, "%s: '%s' is not a number (like 0.5 or 85e9)", o->name, v);
    if (!(x >= lo && x <= hi)) {
        if (o->kind == OPT_FRACTION)
            return cli_fail(cmd, EXIT_USAGE, "%s: %s is out of range: a fraction from %g to 1", o->name, v, lo);
        return cli_fail(cmd, EXIT_USAGE, "%s: %s is out of range: from %g to %g", o->name, v, lo, hi);
    }
    *(double *)o->dest = x;
    return 0;
}

static int set_value(const char *cmd, cli_opt *o, const char *v)
{
    double lo, hi;
    cli_opt_range(cmd, o, &lo, &hi);
    switch (o->kind) {
    case OPT_FLAG:
        *(int *)o->dest = 1;
        return 0;
    case OPT_STRING:
        if (!*v)
            return cli_fail(cmd, EXIT_USAGE, "%s: the value is empty", o->name);
        *(const char **)o->dest = v;
        return 0;
    case OPT_POS_INT:
    case OPT_NONNEG_INT:
    case OPT_TOKENS:
        return set_count(cmd, o, v, lo, hi);
    case OPT_POS_REAL:
    case OPT_FRACTION:
        return set_real(cmd, o, v, lo, hi);
    }
    return cli_fail(cmd, EXIT_USAGE, "%s: unhandled flag kind", o->name);
}

/* Split "--flag=value"; returns the length of the flag name. */
static size_t flag_name_len(const char *arg)
{
    const char *eq = strchr(arg, '=');
    return eq ? (size_t)(eq - arg) : strlen(arg);
}

static cli_opt *find_opt(cli_opt *opts, int n, const char *arg, size_t len)
{
    for (int i = 0; i < n; i++)
        if (strlen(opts[i].name) == len && strncmp(opts[i].name, arg, len) == 0)
            return &opts[i];
    return NULL;
}

int cli_parse(const cli_doc *doc, int argc, char **argv, cli_opt *opts, int nopts, cli_common *common)
{
    const char *cmd = doc->name;
    const char *format = NULL;
    int help = 0;
    *common = (cli_common){FMT_TABLE, NULL, NULL, NULL, NULL};
    cli_opt commons[] = {
        {"--format", OPT_STRING, &format, "F", "", 0, 0},
        {"--specs", OPT_STRING, &common->specs_dir, "DIR", "", 0, 0},
        {"--gpu-table", OPT_STRING, &common->gpu_table, "FILE", "", 0, 0},
        {"--model-table", OPT_STRING, &common->model_table, "FILE", "", 0, 0},
        {"--model-config", OPT_STRING, &common->model_config, "FILE", "", 0, 0},
        {"--help", OPT_FLAG, &help, NULL, "", 0, 0},
        {"-h", OPT_FLAG, &help, NULL, "", 0, 0},
    };
    for (int i = 0; i < nopts; i++)
        opts[i].seen = 0;

    for (int i = 1; i < argc; i++) {
        const char *arg = argv[i];
        if (arg[0] != '-' || arg[1] == '\0')
            return cli_fail(cmd, EXIT_USAGE, "unexpected argument '%s' (flags start with --; see napkin %s --help)",
                            arg, cmd);
        size_t len = flag_name_len(arg);
        cli_opt *o = find_opt(opts, nopts, arg, len);
        if (!o)
            o = find_opt(commons, CLI_NOPTS(commons), arg, len);
        if (!o)
            return cli_fail(cmd, EXIT_USAGE, "unknown flag '%.*s' (see napkin %s --help)", (int)len, arg, cmd);
        const char *value = NULL;
        if (arg[len] == '=') {
            if (o->kind == OPT_FLAG)
                return cli_fail(cmd, EXIT_USAGE, "%s takes no value", o->name);
            value = arg + len + 1;
        } else if (o->kind != OPT_FLAG) {
            /* A following flag is not a value: "--model --gpu h100" lacks one. */
            if (i + 1 >= argc || strncmp(argv[i + 1], "--", 2) == 0)
                return cli_fail(cmd, EXIT_USAGE, "%s needs a value (%s)", o->name, o->metavar);
            value = argv[++i];
        }
        int rc = set_value(cmd, o, value);
        if (rc)
            return rc;
        o->seen = 1;
    }
    if (help) {
        cli_print_help(doc, opts, nopts, stdout);
        return CLI_HELP_SHOWN;
    }
    if (format && out_format_parse(format, &common->format) != 0)
        return cli_fail(cmd, EXIT_USAGE, "unknown format '%s' for --format (choices: %s)", format,
                        out_format_choices());
    /* --model-config stands for --model: the model read from the file. */
    if (common->model_config) {
        cli_opt *m = find_opt(opts, nopts, "--model", strlen("--model"));
        if (m && m->seen)
            return cli_fail(cmd, EXIT_USAGE, "give --model or --model-config, not both");
        if (m) {
            *(const char **)m->dest = CLI_CONFIG_MODEL_KEY;
            m->seen = 1;
        }
    }
    for (int i = 0; i < nopts; i++)
        if (opts[i].required && !opts[i].seen)
            return cli_fail(cmd, EXIT_USAGE, "missing required flag %s %s (see napkin %s --help)", opts[i].name,
                            opts[i].metavar ? opts[i].metavar : "", cmd);
    return CLI_GO;
}
