/* tests/validate_bounds.tsv for tests/test_validate.c: the bound on every
 * error napkin validate prints, one row per (table, key, metric), and the
 * errors themselves read from `napkin validate --format json`.  Include it
 * after Criterion and jansson.
 *
 * BOUND_SPECS says which errors the table must bound and at what target
 * (napkin validate's own: op level median |error| 10 % and 99th percentile
 * 35 %, held to the odd/even rows too; TPOT 10 % per group, over the
 * held-out runs and over every run; held-out TTFT 35 % per group and 25 %
 * over all runs; a reader's set 25 %; a MoE or disaggregated group's TPOT
 * 12 %); tools/validate_bounds.py keeps the
 * same list. */
#ifndef NAPKIN_TEST_VALIDATE_BOUNDS_H
#define NAPKIN_TEST_VALIDATE_BOUNDS_H

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *table;   /* napkin validate's JSON table ("values": its top-level numbers) */
    const char *keys[6]; /* the key columns, NULL-terminated (none for "values") */
    const char *metric;
    double target;
} bound_spec;

static const bound_spec BOUND_SPECS[] = {
    {"ops", {"fitted_on", "evaluated_on", "class", NULL}, "median_abs_err", 0.10},
    {"ops", {"fitted_on", "evaluated_on", "class", NULL}, "p99_abs_err", 0.35},
    {"serving", {"model", "system", "backend", "precision", "tp", NULL}, "tpot_abs_err_calibrated", 0.10},
    {"ttft", {"model", "system", "backend", NULL}, "ttft_abs", 0.35},
    {"values", {NULL}, "ttft_abs_err", 0.25},
    {"values", {NULL}, "tpot_abs_err_held_out", 0.10},
    {"values", {NULL}, "tpot_median_abs_err", 0.10},
    {"sets", {"set", "held_out", NULL}, "median_abs_err", 0.25},
    {"moe_serving", {"model", "system", "backend", "mode", NULL}, "tpot_abs_err", 0.12},
    {"alltoall", {"set", NULL}, "median_abs_err", 0.15},
};
#define BOUND_SPEC_COUNT (sizeof BOUND_SPECS / sizeof BOUND_SPECS[0])

typedef struct {
    char table[16], key[256], metric[48], reason[512];
    double target, bound; /* bound NAN ("-"): no error today */
    int line, seen;
} bound_row;

#define BOUND_ROWS_MAX 1024

static double bound_num(const char *s)
{
    return strcmp(s, "-") == 0 ? NAN : strtod(s, NULL);
}

/* Read the table at path into rows (room for BOUND_ROWS_MAX); the row count.
 * A malformed line fails the test, naming it. */
__attribute__((unused)) static int bound_rows_read(const char *path, bound_row *rows)
{
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f, "cannot open %s", path);
    char line[2048];
    int n = 0, lineno = 0, header = 0;
    while (fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\n")] = '\0';
        if (line[0] == '#' || line[0] == '\0')
            continue;
        if (!header) {
            cr_assert_str_eq(line, "table\tkey\tmetric\ttarget\tbound\tmargin\terror\treason", "%s:%d: header",
                             path, lineno);
            header = 1;
            continue;
        }
        char *field[8], *save = NULL;
        int nf = 0;
        for (char *t = strtok_r(line, "\t", &save); t && nf < 8; t = strtok_r(NULL, "\t", &save))
            field[nf++] = t;
        cr_assert_eq(nf, 8, "%s:%d: %d fields, want 8", path, lineno, nf);
        cr_assert_lt(n, BOUND_ROWS_MAX, "%s: more than %d rows", path, BOUND_ROWS_MAX);
        bound_row *r = &rows[n++];
        memset(r, 0, sizeof *r);
        snprintf(r->table, sizeof r->table, "%s", field[0]);
        snprintf(r->key, sizeof r->key, "%s", field[1]);
        snprintf(r->metric, sizeof r->metric, "%s", field[2]);
        snprintf(r->reason, sizeof r->reason, "%s", field[7]);
        r->target = bound_num(field[3]);
        r->bound = bound_num(field[4]);
        r->line = lineno;
    }
    fclose(f);
    cr_assert(header, "%s: no header line", path);
    return n;
}

/* A JSON row's key: its key columns joined with " | " ("-" for none), as
 * tools/validate_bounds.py writes it. */
__attribute__((unused)) static void bound_key(const json_t *row, const char *const *keys, char *out, size_t n)
{
    snprintf(out, n, "%s", keys[0] ? "" : "-");
    for (int k = 0; keys[k]; k++) {
        const json_t *v = json_object_get(row, keys[k]);
        char cell[256];
        if (json_is_string(v))
            snprintf(cell, sizeof cell, "%s", json_string_value(v));
        else if (json_is_integer(v))
            snprintf(cell, sizeof cell, "%lld", (long long)json_integer_value(v));
        else
            cr_assert_fail("a key column %s that is neither text nor a whole number", keys[k]);
        size_t len = strlen(out);
        snprintf(out + len, n - len, "%s%s", k ? " | " : "", cell);
    }
}

/* The row of rows for (table, key, metric), or NULL. */
__attribute__((unused)) static bound_row *bound_find(bound_row *rows, int n, const char *table, const char *key,
                                                     const char *metric)
{
    for (int i = 0; i < n; i++)
        if (!strcmp(rows[i].table, table) && !strcmp(rows[i].key, key) && !strcmp(rows[i].metric, metric))
            return &rows[i];
    return NULL;
}

/* A metric of a JSON row as a number: NAN where it is null (nothing priced). */
__attribute__((unused)) static double bound_metric(const json_t *row, const char *metric)
{
    const json_t *v = json_object_get(row, metric);
    return json_is_number(v) ? json_number_value(v) : NAN;
}

#endif
