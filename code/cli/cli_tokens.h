/* Token counts with a binary suffix, for flags such as --context 8k: a
 * number in the one syntax of flags and tables (units.h), then at most one
 * of k (1024 tokens) or M (1024 x 1024), either case.  The result must be a
 * whole number of tokens.  "8192", "8k", "128K", "1.5k" (1536), "1M" parse;
 * "8kb", "0.3k" (307.2), "8 k", "-8k", "" do not.  (Counts such as
 * --tokens 1T use the SI suffixes of cli_count.h: a trillion tokens of
 * training data is not a context length.) */
#ifndef NAPKIN_CLI_TOKENS_H
#define NAPKIN_CLI_TOKENS_H

/* Returns 0 and sets *out (lo <= *out <= max), or -1. */
int cli_tokens_parse(const char *s, long long lo, long long max, long long *out);

/* The suffix rule in one line, for --help. */
#define CLI_TOKENS_HELP "token counts take k = 1024 tokens and M = 1024k: 8k = 8192, 128k = 131072"

#endif
