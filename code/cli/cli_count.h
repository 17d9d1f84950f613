/* Counts with an SI-style suffix, for flags such as --tokens 1T and
 * --params 7B: a finite positive number, optionally in e-notation, then at
 * most one of K (1e3), M (1e6), B or G (1e9), T (1e12), P (1e15), either
 * case.  "1T", "300B", "1.5e12", "7e9", "15.6T" parse; "1TB", "", "-3B",
 * "1 T" and "0" do not (B is a billion here, never a byte). */
#ifndef NAPKIN_CLI_COUNT_H
#define NAPKIN_CLI_COUNT_H

/* Returns 0 and sets *out, or -1 for text that is not such a count. */
int cli_count_parse(const char *s, double *out);

/* The same, printing "napkin <cmd>: <flag>: '<s>' is not a count (...)" and
 * returning EXIT_USAGE on failure. */
int cli_count_flag(const char *cmd, const char *flag, const char *s, double *out);

#endif
