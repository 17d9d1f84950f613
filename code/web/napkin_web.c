/* The napkin commands as a WebAssembly reactor module, for the book's panels.
 *
 * One export per command, napkin_<command>(flags_json): the flags of
 * `napkin <command>` as one flat JSON object ({"model": "llama3-70b",
 * "tp": 4, "no-comm": true}), turned into the argv the CLI would get
 * ("--model llama3-70b --tp 4 --no-comm --format json") and handed to the
 * CLI's own command function, so the page prints what the CLI prints by
 * construction.  The return value is the CLI's exit status; what the command
 * writes to stdout (the JSON report) and stderr (the error message) leaves
 * through WASI fd_write on descriptors 1 and 2, which the page's loader
 * collects.  "format" may be given to ask for "table" or "tsv" instead.
 *
 * napkin_web_alloc / napkin_web_free let the caller place the JSON string in
 * the module's memory; napkin_web_max_seed tells the page the exercise seed
 * range the module takes. */
#include "commands.h"
#include "json_flags.h"
#include "practice_set.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* As main.c: the answer could not be written. */
#define EXIT_IO 3

__attribute__((export_name("napkin_web_alloc"))) void *napkin_web_alloc(size_t n)
{
    return malloc(n ? n : 1);
}

__attribute__((export_name("napkin_web_free"))) void napkin_web_free(void *p)
{
    free(p);
}

static int run_command(const char *name, int (*run)(int, char **), const char *flags_json)
{
    json_argv a;
    char err[256];
    int rc;
    if (json_flags_to_argv(name, flags_json, &a, err, sizeof err) != 0) {
        fprintf(stderr, "napkin %s: %s\n", name, err);
        rc = 2;
    } else {
        rc = run(a.argc, a.argv);
        json_argv_free(&a);
    }
    if (fflush(stdout) != 0 || ferror(stdout)) {
        fprintf(stderr, "napkin %s: cannot write the output: %s\n", name, strerror(errno ? errno : EIO));
        clearerr(stdout);
        return EXIT_IO;
    }
    return rc;
}

#define NAPKIN_WEB_EXPORT(name, summary)                                                                  \
    __attribute__((export_name("napkin_" #name))) int napkin_web_##name(const char *flags_json);         \
    int napkin_web_##name(const char *flags_json)                                                        \
    {                                                                                                    \
        return run_command(#name, cmd_##name, flags_json);                                               \
    }
NAPKIN_COMMANDS(NAPKIN_WEB_EXPORT)
#undef NAPKIN_WEB_EXPORT

/* The largest exercise seed (practice_set.h), so that the page draws "new
 * variant" seeds and reads ?seed= in the range the module takes.  A double:
 * exact for any whole number up to 2^53, and a plain Number in JavaScript. */
__attribute__((export_name("napkin_web_max_seed"))) double napkin_web_max_seed(void);
double napkin_web_max_seed(void)
{
    return (double)PRACTICE_MAX_SEED;
}
