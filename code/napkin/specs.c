#include "specs.h"
#include "specs_tsv.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern const char napkin_gpus_tsv[];
extern const char napkin_models_tsv[];

#define MAX_FIELDS 32
#define MAX_LINE 2048

/* One TSV line split in place into fields. */
typedef struct {
    char buf[MAX_LINE];
    char *field[MAX_FIELDS];
    int n;
} tsv_row;

static int split_tabs(const char *line, size_t len, tsv_row *r)
{
    if (len >= sizeof r->buf)
        return -1;
    memcpy(r->buf, line, len);
    r->buf[len] = '\0';
    if (len && r->buf[len - 1] == '\r')
        r->buf[len - 1] = '\0';
    r->n = 0;
    char *p = r->buf;
    for (;;) {
        if (r->n == MAX_FIELDS)
            return -1;
        r->field[r->n++] = p;
        char *tab = strchr(p, '\t');
        if (!tab)
            break;
        *tab = '\0';
        p = tab + 1;
    }
    return 0;
}

typedef struct {
    const char *file;
    int line;
    char *err;
    size_t errlen;
} parse_ctx;

static int fail(parse_ctx *c, const char *field, const char *fmt, const char *value)
{
    char reason[256];
    snprintf(reason, sizeof reason, fmt, value);
    if (field)
        snprintf(c->err, c->errlen, "%s:%d: field '%s': %s", c->file, c->line, field, reason);
    else
        snprintf(c->err, c->errlen, "%s:%d: %s", c->file, c->line, reason);
    return -1;
}

/* A positive finite number; "-" gives 0 when allow_none. */
static int parse_number(parse_ctx *c, const char *field, const char *s, int allow_none, double *out)
{
    if (allow_none && strcmp(s, "-") == 0) {
        *out = 0;
        return 0;
    }
    char *end;
    errno = 0;
    double v = strtod(s, &end);
    if (*s == '\0' || *end != '\0' || errno || !isfinite(v))
        return fail(c, field, "'%s' is not a number", s);
    if (v <= 0)
        return fail(c, field, "'%s' must be positive", s);
    *out = v;
    return 0;
}

static int parse_int(parse_ctx *c, const char *field, const char *s, int min, int *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*s == '\0' || *end != '\0' || errno || v > 1000000000L)
        return fail(c, field, "'%s' is not an integer", s);
    if (v < min) {
        char msg[64];
        snprintf(msg, sizeof msg, "'%%s' must be at least %d", min);
        return fail(c, field, msg, s);
    }
    *out = (int)v;
    return 0;
}

static int copy_text(parse_ctx *c, const char *field, const char *s, char *dst, size_t cap)
{
    if (*s == '\0')
        return fail(c, field, "empty%s", "");
    if (strlen(s) >= cap)
        return fail(c, field, "longer than the limit ('%.40s...')", s);
    memcpy(dst, s, strlen(s) + 1);
    return 0;
}

/* Walk the text line by line; check the header against `columns`, hand each
 * data row to `row_fn`.  Comment (#) and blank lines are skipped. */
typedef int (*row_fn)(parse_ctx *c, tsv_row *r, void *table);

static int parse_tsv(const char *text, const char *file, const char *const *columns, int ncolumns,
                     row_fn fn, void *table, char *err, size_t errlen)
{
    parse_ctx c = {file, 0, err, errlen};
    int seen_header = 0;
    const char *p = text;
    tsv_row r;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        c.line++;
        const char *q = p;
        p = nl ? nl + 1 : p + len;
        if (len == 0 || q[0] == '#' || (len == 1 && q[0] == '\r'))
            continue;
        if (split_tabs(q, len, &r) != 0)
            return fail(&c, NULL, "line too long or too many fields%s", "");
        if (!seen_header) {
            if (r.n != ncolumns)
                return fail(&c, NULL, "header has the wrong number of columns%s", "");
            for (int i = 0; i < ncolumns; i++)
                if (strcmp(r.field[i], columns[i]) != 0)
                    return fail(&c, columns[i], "header names '%s' here", r.field[i]);
            seen_header = 1;
            continue;
        }
        if (r.n != ncolumns) {
            char msg[96];
            snprintf(msg, sizeof msg, "row has %d fields, expected %d", r.n, ncolumns);
            return fail(&c, r.n < ncolumns ? columns[r.n] : columns[ncolumns - 1], "%s", msg);
        }
        if (fn(&c, &r, table) != 0)
            return -1;
    }
    if (!seen_header) {
        c.line = c.line ? c.line : 1;
        return fail(&c, NULL, "no header row%s", "");
    }
    return 0;
}

/* ------------------------------------------------------------------ GPUs */

static const char *const GPU_COLUMNS[] = {"key",       "name",     "bf16_tflops", "fp16_tflops", "fp8_tflops",
                                          "int8_tops", "hbm_tb_s", "hbm_gb",      "source"};

static int gpu_row(parse_ctx *c, tsv_row *r, void *table)
{
    gpu_table *t = table;
    gpu_spec g;
    memset(&g, 0, sizeof g);
    double v;
    if (copy_text(c, "key", r->field[0], g.key, sizeof g.key) || copy_text(c, "name", r->field[1], g.name, sizeof g.name))
        return -1;
    static const dtype rate_dtypes[] = {DT_BF16, DT_FP16, DT_FP8, DT_INT8};
    for (int i = 0; i < 4; i++) {
        if (parse_number(c, GPU_COLUMNS[2 + i], r->field[2 + i], 1, &v))
            return -1;
        g.flops[rate_dtypes[i]] = v * TERA;
    }
    if (g.flops[DT_BF16] == 0)
        return fail(c, "bf16_tflops", "every GPU needs a bf16 rate%s", "");
    if (parse_number(c, "hbm_tb_s", r->field[6], 0, &v))
        return -1;
    g.mem_bw = v * TB;
    if (parse_number(c, "hbm_gb", r->field[7], 0, &v))
        return -1;
    g.mem_bytes = v * GB;
    if (copy_text(c, "source", r->field[8], g.source, sizeof g.source))
        return -1;
    if (gpu_find(t, g.key))
        return fail(c, "key", "'%s' appears twice", g.key);
    gpu_spec *rows = realloc(t->rows, (size_t)(t->n + 1) * sizeof *rows);
    if (!rows)
        return fail(c, NULL, "out of memory%s", "");
    t->rows = rows;
    t->rows[t->n++] = g;
    return 0;
}

int gpu_table_parse(const char *text, const char *filename, gpu_table *out, char *err, size_t errlen)
{
    out->rows = NULL;
    out->n = 0;
    if (parse_tsv(text, filename, GPU_COLUMNS, 9, gpu_row, out, err, errlen) != 0) {
        gpu_table_free(out);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- models */

static const char *const MODEL_COLUMNS[] = {"key",   "name",    "layers",  "hidden",         "heads",
                                            "kv_heads", "head_dim", "ffn", "vocab", "experts",
                                            "experts_active", "tied", "source"};

static int model_row(parse_ctx *c, tsv_row *r, void *table)
{
    model_table *t = table;
    model_spec m;
    memset(&m, 0, sizeof m);
    if (copy_text(c, "key", r->field[0], m.key, sizeof m.key) || copy_text(c, "name", r->field[1], m.name, sizeof m.name))
        return -1;
    int *ints[] = {&m.layers, &m.hidden, &m.heads, &m.kv_heads, &m.head_dim, &m.ffn, &m.vocab, &m.experts, &m.experts_active};
    for (int i = 0; i < 9; i++)
        if (parse_int(c, MODEL_COLUMNS[2 + i], r->field[2 + i], 1, ints[i]))
            return -1;
    if (parse_int(c, "tied", r->field[11], 0, &m.tied_embeddings))
        return -1;
    if (m.tied_embeddings > 1)
        return fail(c, "tied", "'%s' must be 0 or 1", r->field[11]);
    if (m.heads % m.kv_heads != 0)
        return fail(c, "kv_heads", "'%s' must divide the attention heads", r->field[5]);
    if (m.experts_active > m.experts)
        return fail(c, "experts_active", "'%s' exceeds the number of experts", r->field[10]);
    if (copy_text(c, "source", r->field[12], m.source, sizeof m.source))
        return -1;
    if (model_find(t, m.key))
        return fail(c, "key", "'%s' appears twice", m.key);
    model_spec *rows = realloc(t->rows, (size_t)(t->n + 1) * sizeof *rows);
    if (!rows)
        return fail(c, NULL, "out of memory%s", "");
    t->rows = rows;
    t->rows[t->n++] = m;
    return 0;
}

int model_table_parse(const char *text, const char *filename, model_table *out, char *err, size_t errlen)
{
    out->rows = NULL;
    out->n = 0;
    if (parse_tsv(text, filename, MODEL_COLUMNS, 13, model_row, out, err, errlen) != 0) {
        model_table_free(out);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ file, misc */

static char *read_file(const char *path, char *err, size_t errlen)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    size_t cap = 4096, len = 0;
    char *buf = malloc(cap);
    size_t got;
    while (buf && (got = fread(buf + len, 1, cap - len - 1, f)) > 0) {
        len += got;
        if (cap - len - 1 == 0) {
            char *bigger = realloc(buf, cap * 2);
            if (!bigger) {
                free(buf);
                buf = NULL;
                break;
            }
            buf = bigger;
            cap *= 2;
        }
    }
    fclose(f);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    buf[len] = '\0';
    return buf;
}

int gpu_table_load(const char *path, gpu_table *out, char *err, size_t errlen)
{
    char *text = read_file(path, err, errlen);
    if (!text) {
        out->rows = NULL;
        out->n = 0;
        return -1;
    }
    int rc = gpu_table_parse(text, path, out, err, errlen);
    free(text);
    return rc;
}

int model_table_load(const char *path, model_table *out, char *err, size_t errlen)
{
    char *text = read_file(path, err, errlen);
    if (!text) {
        out->rows = NULL;
        out->n = 0;
        return -1;
    }
    int rc = model_table_parse(text, path, out, err, errlen);
    free(text);
    return rc;
}

int gpu_table_builtin(gpu_table *out, char *err, size_t errlen)
{
    return gpu_table_parse(napkin_gpus_tsv, "code/specs/gpus.tsv", out, err, errlen);
}

int model_table_builtin(model_table *out, char *err, size_t errlen)
{
    return model_table_parse(napkin_models_tsv, "code/specs/models.tsv", out, err, errlen);
}

void gpu_table_free(gpu_table *t)
{
    free(t->rows);
    t->rows = NULL;
    t->n = 0;
}

void model_table_free(model_table *t)
{
    free(t->rows);
    t->rows = NULL;
    t->n = 0;
}

const gpu_spec *gpu_find(const gpu_table *t, const char *key)
{
    for (int i = 0; key && i < t->n; i++)
        if (strcasecmp(t->rows[i].key, key) == 0)
            return &t->rows[i];
    return NULL;
}

const model_spec *model_find(const model_table *t, const char *key)
{
    for (int i = 0; key && i < t->n; i++)
        if (strcasecmp(t->rows[i].key, key) == 0)
            return &t->rows[i];
    return NULL;
}

static char *join_keys(const char *first_key, size_t stride, int n, char *buf, size_t cap)
{
    size_t used = 0;
    buf[0] = '\0';
    for (int i = 0; i < n; i++) {
        const char *k = first_key + (size_t)i * stride;
        int w = snprintf(buf + used, cap - used, "%s%s", i ? ", " : "", k);
        if (w < 0 || (size_t)w >= cap - used)
            break;
        used += (size_t)w;
    }
    return buf;
}

char *gpu_keys(const gpu_table *t, char *buf, size_t n)
{
    return join_keys(t->n ? t->rows[0].key : "", sizeof(gpu_spec), t->n, buf, n);
}

char *model_keys(const model_table *t, char *buf, size_t n)
{
    return join_keys(t->n ? t->rows[0].key : "", sizeof(model_spec), t->n, buf, n);
}

int gpu_lookup(const char *key, gpu_spec *out)
{
    gpu_table t;
    char err[512];
    if (!key || gpu_table_builtin(&t, err, sizeof err) != 0)
        return -1;
    const gpu_spec *g = gpu_find(&t, key);
    if (g)
        *out = *g;
    gpu_table_free(&t);
    return g ? 0 : -1;
}

int model_lookup(const char *key, model_spec *out)
{
    model_table t;
    char err[512];
    if (!key || model_table_builtin(&t, err, sizeof err) != 0)
        return -1;
    const model_spec *m = model_find(&t, key);
    if (m)
        *out = *m;
    model_table_free(&t);
    return m ? 0 : -1;
}

gpu_spec gpu_builtin(const char *key)
{
    gpu_table t;
    char err[512], keys[512];
    if (gpu_table_builtin(&t, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    const gpu_spec *g = gpu_find(&t, key);
    if (!g) {
        fprintf(stderr, "unknown GPU '%s' (choices: %s)\n", key, gpu_keys(&t, keys, sizeof keys));
        exit(1);
    }
    gpu_spec copy = *g;
    gpu_table_free(&t);
    return copy;
}

model_spec model_builtin(const char *key)
{
    model_table t;
    char err[512], keys[512];
    if (model_table_builtin(&t, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    const model_spec *m = model_find(&t, key);
    if (!m) {
        fprintf(stderr, "unknown model '%s' (choices: %s)\n", key, model_keys(&t, keys, sizeof keys));
        exit(1);
    }
    model_spec copy = *m;
    model_table_free(&t);
    return copy;
}

double gpu_peak_flops(const gpu_spec *g, dtype compute)
{
    return (compute >= 0 && compute < DT_COUNT) ? g->flops[compute] : 0;
}

/* ------------------------------------------- the parser, for other tables */

/* Other modules' tables (code/specs/video_models.tsv, ...) share this parser
 * and its file:line: field messages; see specs_tsv.h. */
struct spec_tsv_adapter {
    spec_tsv_row_fn fn;
    void *table;
};

static int adapt_row(parse_ctx *c, tsv_row *r, void *arg)
{
    struct spec_tsv_adapter *a = arg;
    return a->fn((spec_tsv_ctx *)c, r->field, r->n, a->table);
}

int spec_tsv_parse(const char *text, const char *file, const char *const *columns, int ncolumns,
                   spec_tsv_row_fn fn, void *table, char *err, size_t errlen)
{
    struct spec_tsv_adapter a = {fn, table};
    return parse_tsv(text, file, columns, ncolumns, adapt_row, &a, err, errlen);
}

int spec_tsv_int(spec_tsv_ctx *c, const char *field, const char *s, int min, int *out)
{
    return parse_int((parse_ctx *)c, field, s, min, out);
}

int spec_tsv_number(spec_tsv_ctx *c, const char *field, const char *s, double *out)
{
    return parse_number((parse_ctx *)c, field, s, 0, out);
}

int spec_tsv_text(spec_tsv_ctx *c, const char *field, const char *s, char *dst, size_t cap)
{
    return copy_text((parse_ctx *)c, field, s, dst, cap);
}

int spec_tsv_fail(spec_tsv_ctx *c, const char *field, const char *reason, const char *value)
{
    return fail((parse_ctx *)c, field, reason, value);
}

char *spec_read_text_file(const char *path, char *err, size_t errlen)
{
    return read_file(path, err, errlen);
}
