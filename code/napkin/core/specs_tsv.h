/* The spec-table parser every table shares (GPUs, models, vision, video).
 *
 * A table is tab-separated text: '#' comment lines, one header row that must
 * name `columns` in order, then data rows that each go to `fn`.  Every error
 * is "file:line: field 'x': reason" in err, like gpus.tsv and models.tsv.
 * The field helpers check one field and, on error, write that message and
 * return -1, so a row function reads
 *     if (spec_tsv_int(c, "layers", f[2], 1, &m.layers)) return -1; */
#ifndef NAPKIN_SPECS_TSV_H
#define NAPKIN_SPECS_TSV_H

#include <stddef.h>

typedef struct spec_tsv_ctx spec_tsv_ctx; /* where the parser is: file and line */

/* fields[0..n-1] of one data row (n equals the header's column count). */
typedef int (*spec_tsv_row_fn)(spec_tsv_ctx *c, char **fields, int n, void *table);

int spec_tsv_parse(const char *text, const char *file, const char *const *columns, int ncolumns,
                   spec_tsv_row_fn fn, void *table, char *err, size_t errlen);
/* The same where the columns past nrequired are optional (tables written
 * before they existed): the header names nrequired..ncolumns of them, and a
 * row may leave optional ones out at its end (n tells how many it has). */
int spec_tsv_parse_optional(const char *text, const char *file, const char *const *columns, int nrequired,
                            int ncolumns, spec_tsv_row_fn fn, void *table, char *err, size_t errlen);
/* A whole number from min to 1e9, in the one number syntax (units.h). */
int spec_tsv_int(spec_tsv_ctx *c, const char *field, const char *s, int min, int *out);
/* A whole number from min to max (max at most 1e9): a column's plausible range. */
int spec_tsv_int_in(spec_tsv_ctx *c, const char *field, const char *s, int min, int max, int *out);
/* A positive number from 1e-9 to 1e12 (of the column's unit). */
int spec_tsv_number(spec_tsv_ctx *c, const char *field, const char *s, double *out);
/* A positive number from lo to hi (of the column's unit). */
int spec_tsv_number_in(spec_tsv_ctx *c, const char *field, const char *s, double lo, double hi, double *out);
/* The same, or "-" for none (0). */
int spec_tsv_number_or_none(spec_tsv_ctx *c, const char *field, const char *s, double lo, double hi, double *out);
/* Room for row n of `size` bytes in *rows (capacity doubles, so n rows cost
 * O(n) copies); -1 with "out of memory" when there is none. */
int spec_tsv_grow(spec_tsv_ctx *c, void **rows, int n, size_t size);
/* Non-empty text shorter than cap. */
int spec_tsv_text(spec_tsv_ctx *c, const char *field, const char *s, char *dst, size_t cap);
/* Fail with reason, a printf format with one %s for value. */
int spec_tsv_fail(spec_tsv_ctx *c, const char *field, const char *reason, const char *value);
/* A whole file as a string (free it), or NULL with "path: reason" in err. */
char *spec_read_text_file(const char *path, char *err, size_t errlen);

/* A row's key, for the check that keys are unique (case-insensitive): a
 * repeat fails the parse at its line, naming the line of the first. */
int spec_tsv_key(spec_tsv_ctx *c, const char *key);

/* Rows of any table are n structs `stride` bytes apart whose key strings
 * start at first_key ("" when n is 0).  SPEC_ROWS(t) gives those three
 * arguments for a table {rows, n} whose rows have a `key`:
 *     int i = spec_key_index(SPEC_ROWS(t), key);
 * The index of the row whose key is `key` (case-insensitive), or -1 (also
 * for key NULL). */
#define SPEC_ROWS(t) ((t)->n ? (t)->rows[0].key : ""), sizeof *(t)->rows, (t)->n
int spec_key_index(const char *first_key, size_t stride, int n, const char *key);
/* "a, b, c" into buf (cut at a whole key when it is full), for the choices
 * an error message lists. */
char *spec_keys_join(const char *first_key, size_t stride, int n, char *buf, size_t cap);

#endif
