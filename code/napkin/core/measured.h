/* Reading a measured TSV back (the format provenance.h describes): the
 * provenance as key/value pairs, then named columns of text cells.  Chapter
 * programs and the GEMM twin read the committed sets with it. */
#ifndef NAPKIN_MEASURED_H
#define NAPKIN_MEASURED_H


#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    int nmeta;
    char **meta_key, **meta_value;
    int ncols;
    char **cols;
    int nrows;
    char **cells; /* nrows * ncols, row-major */
} measured_table;

/* Parse TSV text; `filename` names it in messages.  Every data row must have
 * as many cells as the header row.  Returns 0, or -1 with "file:line: reason"
 * in err (the table is left empty). */
int measured_table_parse(const char *text, const char *filename, measured_table *t, char *err, size_t errlen);
int measured_table_load(const char *path, measured_table *t, char *err, size_t errlen);
void measured_table_free(measured_table *t);

/* Provenance value for key, or NULL. */
const char *measured_meta(const measured_table *t, const char *key);
/* Column index of name, or -1. */
int measured_col(const measured_table *t, const char *name);
const char *measured_cell(const measured_table *t, int row, int col);
/* The cell as a number; NAN when it is not one (or out of range). */
double measured_num(const measured_table *t, int row, int col);
/* First row whose column `col` equals `value`, or -1. */
int measured_find_row(const measured_table *t, int col, const char *value);

/* A bandwidth.tsv's read ceiling (kernels/bandwidth.cu): the median gb_s
 * of its "read" row, in bytes/s; NAN when there is no such row or its
 * value is not a positive number. */
double measured_read_bandwidth(const measured_table *t);


#ifdef __cplusplus
}
#endif

#endif
