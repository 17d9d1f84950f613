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

/* A row's key and line, kept for the duplicate check at the end. */
typedef struct {
    char key[SPEC_KEY_MAX];
    int line;
} key_line;

typedef struct {
    const char *file;
    int line;
    char *err;
    size_t errlen;
    size_t cap;       /* rows allocated in the table being filled */
    key_line *keys;   /* every row's key, in file order */
    size_t nkeys, capkeys;
} parse_ctx;

/* Room for one more row: capacity doubles, so n rows cost O(n) copies. */
static int grow_rows(void **rows, int n, size_t size, size_t *cap)
{
    if ((size_t)n < *cap)
        return 0;
    size_t want = *cap ? 2 * *cap : 16;
    void *grown = realloc(*rows, want * size);
    if (!grown)
        return -1;
    *rows = grown;
    *cap = want;
    return 0;
}

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

/* A number in the one syntax of flags and tables (units.h), in the table's
 * unit, within [lo, hi] of that unit: the bounds are what a real part can
 * have, so an overflow (1e300 TFLOP/s) or an underflow (5e-324) is refused
 * here, before the unit multiply, rather than printed as inf or 0 later.
 * "-" gives 0 when allow_none. */
static int parse_number(parse_ctx *c, const char *field, const char *s, int allow_none, double lo, double hi,
                        double *out)
{
    if (allow_none && strcmp(s, "-") == 0) {
        *out = 0;
        return 0;
    }
    double v;
    if (parse_plain_number(s, &v) != 0) {
        if (*s == '-' || *s == '+')
            return fail(c, field, "'%s' must be positive (write it without a sign)", s);
        return fail(c, field, "'%s' is not a number (digits, a fraction, an exponent: 989.4, 85.5e9)", s);
    }
    if (v <= 0)
        return fail(c, field, "'%s' must be positive", s);
    if (v < lo || v > hi) {
        char msg[128];
        snprintf(msg, sizeof msg, "'%%s' is outside what a real part has (%g to %g)", lo, hi);
        return fail(c, field, msg, s);
    }
    *out = v;
    return 0;
}

static int parse_int(parse_ctx *c, const char *field, const char *s, int min, int max, int *out)
{
    long long v;
    if (parse_whole_number(s, 1000000000LL, &v) != 0)
        return fail(c, field, "'%s' is not a whole number (digits only)", s);
    if (v < min || v > max) {
        char msg[96];
        snprintf(msg, sizeof msg, "'%%s' must be from %d to %d", min, max);
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

static int note_key(parse_ctx *c, const char *key)
{
    if (c->nkeys == c->capkeys) {
        size_t want = c->capkeys ? 2 * c->capkeys : 16;
        key_line *grown = realloc(c->keys, want * sizeof *grown);
        if (!grown)
            return fail(c, NULL, "out of memory%s", "");
        c->keys = grown;
        c->capkeys = want;
    }
    snprintf(c->keys[c->nkeys].key, SPEC_KEY_MAX, "%s", key);
    c->keys[c->nkeys++].line = c->line;
    return 0;
}

static int by_key_then_line(const void *a, const void *b)
{
    const key_line *x = a, *y = b;
    int k = strcasecmp(x->key, y->key);
    return k ? k : (x->line > y->line) - (x->line < y->line);
}

/* Keys are case-insensitive and unique: sort once (n log n) instead of
 * scanning every earlier row for each new one.  The message names the
 * earliest line that repeats a key, and where that key first appeared. */
static int check_duplicate_keys(parse_ctx *c)
{
    if (c->nkeys < 2)
        return 0; /* qsort's base must not be NULL, even for no rows */
    qsort(c->keys, c->nkeys, sizeof *c->keys, by_key_then_line);
    size_t at = 0, first = 0;
    for (size_t i = 0, run = 0; i < c->nkeys; i++) {
        if (i == 0 || strcasecmp(c->keys[i].key, c->keys[i - 1].key) != 0)
            run = i; /* the first row of this key, in file order */
        else if (!at || c->keys[i].line < c->keys[at].line) {
            at = i;
            first = run;
        }
    }
    if (!at)
        return 0;
    c->line = c->keys[at].line;
    char msg[96];
    snprintf(msg, sizeof msg, "'%%s' appears twice (first on line %d)", c->keys[first].line);
    return fail(c, "key", msg, c->keys[at].key);
}

/* Walk the text line by line; check the header against `columns`, hand each
 * data row to `row_fn`.  Comment (#) and blank lines are skipped; a UTF-8
 * byte-order mark before the first line is skipped too. */
typedef int (*row_fn)(parse_ctx *c, tsv_row *r, void *table);

static int parse_rows(parse_ctx *c, const char *text, const char *const *columns, int nrequired, int ncolumns, row_fn fn,
                      void *table);

static int parse_tsv(const char *text, const char *file, const char *const *columns, int nrequired, int ncolumns,
                     row_fn fn, void *table, char *err, size_t errlen)
{
    parse_ctx c = {file, 0, err, errlen, 0, NULL, 0, 0};
    if (strncmp(text, "\xEF\xBB\xBF", 3) == 0)
        text += 3;
    int rc = parse_rows(&c, text, columns, nrequired, ncolumns, fn, table);
    if (rc == 0)
        rc = check_duplicate_keys(&c);
    free(c.keys);
    return rc;
}

/* The header names the first nrequired..ncolumns columns in order (columns
 * past nrequired are optional, for tables written before they existed);
 * every row has as many fields as the header, or leaves out optional ones
 * at its end. */
static int parse_rows(parse_ctx *c, const char *text, const char *const *columns, int nrequired, int ncolumns,
                      row_fn fn, void *table)
{
    int seen_header = 0;
    const char *p = text;
    tsv_row r;
    while (*p) {
        const char *nl = strchr(p, '\n');
        size_t len = nl ? (size_t)(nl - p) : strlen(p);
        c->line++;
        const char *q = p;
        p = nl ? nl + 1 : p + len;
        if (len == 0 || q[0] == '#' || (len == 1 && q[0] == '\r'))
            continue;
        if (split_tabs(q, len, &r) != 0)
            return fail(c, NULL, "line too long or too many fields%s", "");
        if (!seen_header) {
            if (r.n < nrequired || r.n > ncolumns)
                return fail(c, NULL, "header has the wrong number of columns%s", "");
            ncolumns = r.n;
            for (int i = 0; i < ncolumns; i++)
                if (strcmp(r.field[i], columns[i]) != 0)
                    return fail(c, columns[i], "header names '%s' here", r.field[i]);
            seen_header = 1;
            continue;
        }
        /* a row may leave out optional columns at its end (a row added to a
         * copy of an older table) */
        if (r.n != ncolumns && !(r.n >= nrequired && r.n < ncolumns && nrequired < ncolumns)) {
            char msg[96];
            snprintf(msg, sizeof msg, "row has %d fields, expected %d", r.n, ncolumns);
            return fail(c, r.n < ncolumns ? columns[r.n] : columns[ncolumns - 1], "%s", msg);
        }
        if (fn(c, &r, table) != 0)
            return -1;
    }
    if (!seen_header) {
        c->line = c->line ? c->line : 1;
        return fail(c, NULL, "no header row%s", "");
    }
    return 0;
}

/* ------------------------------------------------------------------ GPUs */

static const char *const GPU_COLUMNS[] = {"key",       "name",     "bf16_tflops", "fp16_tflops", "fp8_tflops",
                                          "int8_tops", "hbm_tb_s", "hbm_gb",      "driver_mib", "link_gb_s",
                                          "allreduce_us", "pcie_gb_s", "source", "link_source"};
#define GPU_NCOLUMNS ((int)(sizeof GPU_COLUMNS / sizeof GPU_COLUMNS[0]))

static int gpu_row(parse_ctx *c, tsv_row *r, void *table)
{
    gpu_table *t = table;
    gpu_spec g;
    memset(&g, 0, sizeof g);
    double v;
    if (copy_text(c, "key", r->field[0], g.key, sizeof g.key) || copy_text(c, "name", r->field[1], g.name, sizeof g.name))
        return -1;
    static const dtype rate_dtypes[] = {DT_BF16, DT_FP16, DT_FP8, DT_INT8};
    for (int i = 0; i < 4; i++) { /* TFLOP/s: from a phone's NPU to far past any accelerator */
        if (parse_number(c, GPU_COLUMNS[2 + i], r->field[2 + i], 1, 1e-3, 1e6, &v))
            return -1;
        g.flops[rate_dtypes[i]] = v * TERA;
    }
    if (g.flops[DT_BF16] == 0)
        return fail(c, "bf16_tflops", "every GPU needs a bf16 rate%s", "");
    if (parse_number(c, "hbm_tb_s", r->field[6], 0, 1e-3, 1e3, &v))
        return -1;
    g.mem_bw = v * TB;
    if (parse_number(c, "hbm_gb", r->field[7], 0, 0.1, 1e6, &v))
        return -1;
    g.mem_bytes_datasheet = v * GB;
    /* "-": the driver's figure is not known; fall back to the datasheet's */
    if (parse_number(c, "driver_mib", r->field[8], 1, 100, 1e9, &v))
        return -1;
    g.mem_bytes = v > 0 ? v * MiB : g.mem_bytes_datasheet;
    if (parse_number(c, "link_gb_s", r->field[9], 1, 1e-2, 1e6, &v))
        return -1;
    g.link_bw = v * GB;
    if (parse_number(c, "allreduce_us", r->field[10], 1, 1e-3, 1e6, &v))
        return -1;
    g.allreduce_latency = v * 1e-6;
    if (parse_number(c, "pcie_gb_s", r->field[11], 1, 1e-2, 1e5, &v))
        return -1;
    g.host_bw = v * GB;
    if (copy_text(c, "source", r->field[12], g.source, sizeof g.source) ||
        copy_text(c, "link_source", r->field[13], g.link_source, sizeof g.link_source))
        return -1;
    if (grow_rows((void **)&t->rows, t->n, sizeof *t->rows, &c->cap) != 0)
        return fail(c, NULL, "out of memory%s", "");
    t->rows[t->n++] = g;
    return note_key(c, g.key);
}

int gpu_table_parse(const char *text, const char *filename, gpu_table *out, char *err, size_t errlen)
{
    out->rows = NULL;
    out->n = 0;
    if (parse_tsv(text, filename, GPU_COLUMNS, GPU_NCOLUMNS, GPU_NCOLUMNS, gpu_row, out, err, errlen) != 0) {
        gpu_table_free(out);
        return -1;
    }
    return 0;
}

/* ---------------------------------------------------------------- models */

static const char *const MODEL_COLUMNS[] = {"key",   "name",    "layers",  "hidden",         "heads",
                                            "kv_heads", "head_dim", "ffn", "vocab", "experts",
                                            "experts_active", "tied", "source", "max_position", "arch"};
/* max_position (the config's max_position_embeddings; "-" = unknown) and
 * arch (the shapes of later models; "-" = none) are optional: tables
 * written before they existed still parse. */
#define MODEL_NREQUIRED 13
#define MODEL_NCOLUMNS ((int)(sizeof MODEL_COLUMNS / sizeof MODEL_COLUMNS[0]))

/* One "name=value" item of the arch column. */
static int arch_item(parse_ctx *c, model_spec *m, const char *item)
{
    int a[5] = {0}, n = 0;
    const char *eq = strchr(item, '=');
    size_t nlen = eq ? (size_t)(eq - item) : strlen(item);
    if (nlen == 5 && strncmp(item, "sinks", 5) == 0 && !eq) {
        m->sinks = 1;
        return 0;
    }
    if (!eq)
        return fail(c, "arch", "'%s' is not name=value (or sinks)", item);
    if (strcmp(eq + 1, "mxfp4") == 0 && nlen == 7 && strncmp(item, "experts", 7) == 0) {
        m->expert_format = EXPERTS_MXFP4;
        return 0;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%s", eq + 1);
    char *save = NULL;
    for (char *tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (n == 5 || parse_int(c, "arch", tok, 0, 10000000, &a[n]))
            return n == 5 ? fail(c, "arch", "'%s' has too many numbers", item) : -1;
        n++;
    }
    struct { const char *name; int count; int *dst[5]; } kinds[] = {
        {"mla", 5, {&m->q_lora_rank, &m->kv_lora_rank, &m->qk_nope_dim, &m->qk_rope_dim, &m->v_head_dim}},
        {"moe_ffn", 1, {&m->moe_ffn}},
        {"shared", 1, {&m->shared_experts}},
        {"dense", 1, {&m->dense_layers}},
        {"window", 2, {&m->window, &m->window_layers}},
        {"mtp", 1, {&m->mtp_layers}},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (strlen(kinds[k].name) == nlen && strncmp(item, kinds[k].name, nlen) == 0) {
            if (n != kinds[k].count)
                return fail(c, "arch", "'%s' needs as many numbers as mla=q/kv/nope/rope/v, window=tokens/layers "
                                       "or one", item);
            for (int i = 0; i < n; i++)
                *kinds[k].dst[i] = a[i];
            return 0;
        }
    return fail(c, "arch", "'%s' is not one of mla, moe_ffn, shared, dense, window, mtp, sinks, experts=mxfp4", item);
}

/* The arch column: "-" or comma-separated items, checked against the row. */
static int parse_arch(parse_ctx *c, model_spec *m, const char *s)
{
    if (strcmp(s, "-") == 0)
        return 0;
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return fail(c, "arch", "longer than the limit ('%.40s...')", s);
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save))
        if (arch_item(c, m, item))
            return -1;
    if (m->kv_lora_rank > 0 && (m->qk_rope_dim < 1 || m->qk_nope_dim < 1 || m->v_head_dim < 1 ||
                                m->qk_nope_dim + m->qk_rope_dim != m->head_dim))
        return fail(c, "arch", "'%s': mla needs nope, rope and v widths >= 1 with nope + rope = head_dim", s);
    if (m->dense_layers >= m->layers || m->window_layers > m->layers)
        return fail(c, "arch", "'%s': dense and window layers must be fewer than the layers", s);
    if ((m->window > 0) != (m->window_layers > 0))
        return fail(c, "arch", "'%s': a window needs both its tokens and its layers", s);
    if (m->experts == 1 && (m->moe_ffn || m->shared_experts || m->dense_layers || m->expert_format))
        return fail(c, "arch", "'%s': moe_ffn, shared, dense and experts=mxfp4 are for a mixture of experts", s);
    return 0;
}

static int model_row(parse_ctx *c, tsv_row *r, void *table)
{
    model_table *t = table;
    model_spec m;
    memset(&m, 0, sizeof m);
    if (copy_text(c, "key", r->field[0], m.key, sizeof m.key) || copy_text(c, "name", r->field[1], m.name, sizeof m.name))
        return -1;
    int *ints[] = {&m.layers, &m.hidden, &m.heads, &m.kv_heads, &m.head_dim, &m.ffn, &m.vocab, &m.experts, &m.experts_active};
    /* Bounds a real model stays far inside; with them every product the cost
     * model forms (heads x head_dim, hidden x ffn x experts, ...) fits in a
     * double exactly and every shape in an int. */
    static const int max_of[] = {10000, 1000000, 100000, 100000, 100000, 10000000, 100000000, 100000, 100000};
    for (int i = 0; i < 9; i++)
        if (parse_int(c, MODEL_COLUMNS[2 + i], r->field[2 + i], 1, max_of[i], ints[i]))
            return -1;
    if (parse_int(c, "tied", r->field[11], 0, 1, &m.tied_embeddings))
        return -1;
    if ((long long)m.heads * m.head_dim > 1000000)
        return fail(c, "head_dim", "'%s' times the heads exceeds a million (no real model is that wide)",
                    r->field[6]);
    if (m.heads % m.kv_heads != 0)
        return fail(c, "kv_heads", "'%s' must divide the attention heads", r->field[5]);
    if (m.experts_active > m.experts)
        return fail(c, "experts_active", "'%s' exceeds the number of experts", r->field[10]);
    if (copy_text(c, "source", r->field[12], m.source, sizeof m.source))
        return -1;
    if (r->n > MODEL_NREQUIRED && strcmp(r->field[13], "-") != 0 &&
        parse_int(c, "max_position", r->field[13], 1, 100000000, &m.max_position))
        return -1;
    if (r->n > MODEL_NREQUIRED + 1 && parse_arch(c, &m, r->field[14]))
        return -1;
    if (grow_rows((void **)&t->rows, t->n, sizeof *t->rows, &c->cap) != 0)
        return fail(c, NULL, "out of memory%s", "");
    t->rows[t->n++] = m;
    return note_key(c, m.key);
}

int model_table_parse(const char *text, const char *filename, model_table *out, char *err, size_t errlen)
{
    out->rows = NULL;
    out->n = 0;
    if (parse_tsv(text, filename, MODEL_COLUMNS, MODEL_NREQUIRED, MODEL_NCOLUMNS, model_row, out, err, errlen) != 0) {
        model_table_free(out);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ file, misc */

/* Tables are a few kB; anything past this is not a table (/dev/zero, a
 * wrong path) and is refused before it can exhaust memory. */
#define TABLE_MAX_BYTES (16u << 20)

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
        if (len > TABLE_MAX_BYTES)
            break;
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
    int read_error = ferror(f) ? errno : 0;
    fclose(f);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        return NULL;
    }
    if (read_error || len > TABLE_MAX_BYTES) {
        if (read_error == EISDIR)
            snprintf(err, errlen, "%s: is a directory, not a table", path);
        else if (read_error)
            snprintf(err, errlen, "%s: %s", path, strerror(read_error));
        else
            snprintf(err, errlen, "%s: larger than %u MiB: not a table", path, TABLE_MAX_BYTES >> 20);
        free(buf);
        return NULL;
    }
    /* A NUL would end the text early and hide every row after it. */
    const char *nul = memchr(buf, '\0', len);
    if (nul) {
        int line = 1;
        for (const char *q = buf; q < nul; q++)
            line += *q == '\n';
        snprintf(err, errlen, "%s:%d: a NUL byte: not a text table", path, line);
        free(buf);
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
    int i = spec_key_index(SPEC_ROWS(t), key);
    return i < 0 ? NULL : &t->rows[i];
}

const model_spec *model_find(const model_table *t, const char *key)
{
    int i = spec_key_index(SPEC_ROWS(t), key);
    return i < 0 ? NULL : &t->rows[i];
}

char *gpu_keys(const gpu_table *t, char *buf, size_t n)
{
    return spec_keys_join(SPEC_ROWS(t), buf, n);
}

char *model_keys(const model_table *t, char *buf, size_t n)
{
    return spec_keys_join(SPEC_ROWS(t), buf, n);
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
    return parse_tsv(text, file, columns, ncolumns, ncolumns, adapt_row, &a, err, errlen);
}

int spec_tsv_int(spec_tsv_ctx *c, const char *field, const char *s, int min, int *out)
{
    return parse_int((parse_ctx *)c, field, s, min, 1000000000, out);
}

int spec_tsv_int_in(spec_tsv_ctx *c, const char *field, const char *s, int min, int max, int *out)
{
    return parse_int((parse_ctx *)c, field, s, min, max, out);
}

int spec_tsv_number(spec_tsv_ctx *c, const char *field, const char *s, double *out)
{
    /* no real table field is below a billionth or above a trillion of its unit */
    return parse_number((parse_ctx *)c, field, s, 0, 1e-9, 1e12, out);
}

int spec_tsv_number_in(spec_tsv_ctx *c, const char *field, const char *s, double lo, double hi, double *out)
{
    return parse_number((parse_ctx *)c, field, s, 0, lo, hi, out);
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

int spec_tsv_key(spec_tsv_ctx *c, const char *key)
{
    return note_key((parse_ctx *)c, key);
}

/* ---------------------------------------------- rows by key, for any table */

int spec_key_index(const char *first_key, size_t stride, int n, const char *key)
{
    for (int i = 0; key && i < n; i++)
        if (strcasecmp(first_key + (size_t)i * stride, key) == 0)
            return i;
    return -1;
}

char *spec_keys_join(const char *first_key, size_t stride, int n, char *buf, size_t cap)
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
