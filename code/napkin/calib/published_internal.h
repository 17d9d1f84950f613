/* What the published sets' reader shares with the reader's own sets
 * (measured_set.c): calib/'s own, every other floor reads published.h or
 * measured_set.h. */
#ifndef NAPKIN_PUBLISHED_INTERNAL_H
#define NAPKIN_PUBLISHED_INTERNAL_H

#include "fit.h"
#include "measured.h"
#include "specs.h"

#include <stddef.h>

/* dir/file loaded with the columns `names` found (their indexes in ci).
 * Returns 0, or -1 with "file: reason" (the table is left empty). */
int published_load_columns(const char *dir, const char *file, const char *const *names, int n, measured_table *t,
                           int *ci, char *err, size_t errlen);
/* 1 when dir/file can be opened. */
int published_has_file(const char *dir, const char *file);
/* The one class no table measures: norms, adds and activation products are
 * streaming kernels of their own, with the GEMMs' fixed cost and byte share. */
void published_elementwise_from_gemm(rate_model *m);

/* One row of mla_decode.tsv or mla_prefill.tsv (columns batch, context or
 * prompt, heads, kv_dtype, time_s at c[0..4]) as a point of class rc
 * (RC_MLA_DECODE or RC_MLA_PREFILL), for model m's latent widths.  *keep 0:
 * a row the class does not take.  Returns 0, or -1 for a bad number. */
int published_mla_point(const measured_table *t, const int *c, int row, rate_class rc, const gpu_spec *g,
                        const model_spec *m, rate_point *p, int *keep);

/* One row of gdn_decode.tsv (batch k_heads v_heads k_dim v_dim time_s at
 * c[0..5]) or gdn_prefill.tsv (batch prompt k_heads v_heads k_dim v_dim
 * time_s at c[0..6]) as a point of class rc (RC_GDN_DECODE or
 * RC_GDN_PREFILL).  Returns 0, or -1 for a bad number. */
int published_gdn_point(const measured_table *t, const int *c, int row, rate_class rc, const gpu_spec *g,
                        rate_point *p, int *keep);

#endif
