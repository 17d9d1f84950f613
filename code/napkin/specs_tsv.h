/* The spec-table parser, for tables other than GPUs and models.
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
/* A whole number from min to 1e9, in the one number syntax (units.h). */
int spec_tsv_int(spec_tsv_ctx *c, const char *field, const char *s, int min, int *out);
/* A positive number from 1e-9 to 1e12 (of the column's unit). */
int spec_tsv_number(spec_tsv_ctx *c, const char *field, const char *s, double *out);
/* Non-empty text shorter than cap. */
int spec_tsv_text(spec_tsv_ctx *c, const char *field, const char *s, char *dst, size_t cap);
/* Fail with reason, a printf format with one %s for value. */
int spec_tsv_fail(spec_tsv_ctx *c, const char *field, const char *reason, const char *value);
/* A whole file as a string (free it), or NULL with "path: reason" in err. */
char *spec_read_text_file(const char *path, char *err, size_t errlen);

#endif
