/* What a subcommand prints, built once and rendered in the format the reader
 * asked for:
 *   table  aligned text for people, numbers through the library's fmt_* helpers;
 *   tsv    raw SI numbers: a block "name<TAB>value<TAB>unit" with a header,
 *          then each table as its own block (header line of column keys),
 *          blocks separated by one empty line, notes as "# " comment lines;
 *   json   one object: {"command", "values": {name: value}, "units":
 *          {name: unit}, <table key>: [{column: value}], "notes": [...]};
 *          raw SI numbers, null for a number that is not finite.
 * A subcommand adds named values (and section headings, which only the table
 * format shows), tables of rows, and notes; it never formats numbers itself. */
#ifndef NAPKIN_CLI_REPORT_H
#define NAPKIN_CLI_REPORT_H

#include <stdio.h>

typedef enum { FMT_TABLE, FMT_TSV, FMT_JSON } out_format;

/* "table, tsv, json" */
const char *out_format_choices(void);
/* Returns 0 and sets *out, or -1 for an unknown name. */
int out_format_parse(const char *s, out_format *out);

/* How a number is shown to people, and its unit in tsv. */
typedef enum {
    U_TEXT,         /* a string */
    U_INT,          /* a whole number */
    U_REAL,         /* a plain ratio or fraction */
    U_BYTES,        /* B */
    U_SECONDS,      /* s */
    U_FLOP,         /* FLOP (a count) */
    U_FLOPS,        /* FLOP/s */
    U_BANDWIDTH,    /* B/s */
    U_INTENSITY,    /* FLOP/B */
    U_PARAMS,       /* parameters (a count) */
    U_TOKENS,       /* tokens (a count) */
    U_TOKENS_PER_S  /* tokens/s */
} value_unit;

/* Column flag: in the table format, print this column's cells as notes under
 * the table ("key: text") instead of as a column (long sources, URLs). */
#define COL_NOTE 1

typedef struct report report;
typedef struct report_table report_table;

report *report_new(const char *command);
void report_free(report *r);

/* A heading for the values that follow (table format only). */
void report_section(report *r, const char *title);
/* Named values.  key is [a-z0-9_]+ (the tsv/json name); label is for people. */
void report_num(report *r, const char *key, const char *label, value_unit u, double v);
void report_int(report *r, const char *key, const char *label, long long v);
/* A number for tsv and json alone (the table says it in words, through
 * report_aside). */
void report_num_machine(report *r, const char *key, value_unit u, double v);
/* Words the table prints after the value of the last value added (machine-
 * only ones skipped): "8.9 ms, runs like this one: -6 % ... +9 %". */
void report_aside(report *r, const char *text);
void report_text(report *r, const char *key, const char *label, const char *s);
/* A line of explanation or a warning, shown in every format. */
void report_note(report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

/* A table; add columns first, then cells row by row, left to right. */
report_table *report_table_add(report *r, const char *key, const char *title);
void report_col(report_table *t, const char *key, const char *label, value_unit u, int flags);
void report_cell_num(report_table *t, double v);
void report_cell_int(report_table *t, long long v);
void report_cell_text(report_table *t, const char *s);

/* s as a JSON string, quotes included. */
void report_json_string(const char *s, FILE *out);

/* Render; returns 0, or 1 when writing failed. */
int report_print(const report *r, out_format f, FILE *out);

#endif
