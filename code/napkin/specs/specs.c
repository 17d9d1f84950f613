#include "specs.h"
#include "specs_tsv.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

extern const char napkin_gpus_tsv[];
extern const char napkin_models_tsv[];

/* ------------------------------------------------------------------ GPUs */

static const char *const GPU_COLUMNS[] = {"key",       "name",     "bf16_tflops", "fp16_tflops", "fp8_tflops",
                                          "int8_tops", "hbm_tb_s", "hbm_gb",      "driver_mib", "link_gb_s",
                                          "allreduce_us", "pcie_gb_s", "source", "link_source", "fp4_tflops",
                                          "node_gpus"};
/* fp4_tflops and node_gpus are optional: tables written before them still
 * parse (no fp4 rate, GPU_NODE_GPUS_DEFAULT a node). */
#define GPU_NREQUIRED 14
#define GPU_NCOLUMNS ((int)(sizeof GPU_COLUMNS / sizeof GPU_COLUMNS[0]))

static int gpu_row(spec_tsv_ctx *c, char **f, int n, void *table)
{
    gpu_table *t = table;
    gpu_spec g;
    memset(&g, 0, sizeof g);
    double v;
    if (spec_tsv_text(c, "key", f[0], g.key, sizeof g.key) || spec_tsv_text(c, "name", f[1], g.name, sizeof g.name))
        return -1;
    static const dtype rate_dtypes[] = {DT_BF16, DT_FP16, DT_FP8, DT_INT8};
    for (int i = 0; i < 4; i++) { /* TFLOP/s: from a phone's NPU to far past any accelerator */
        if (spec_tsv_number_or_none(c, GPU_COLUMNS[2 + i], f[2 + i], 1e-3, 1e6, &v))
            return -1;
        g.flops[rate_dtypes[i]] = v * TERA;
    }
    if (g.flops[DT_BF16] == 0)
        return spec_tsv_fail(c, "bf16_tflops", "every GPU needs a bf16 rate%s", "");
    if (spec_tsv_number_in(c, "hbm_tb_s", f[6], 1e-3, 1e3, &v))
        return -1;
    g.mem_bw = v * TB;
    if (spec_tsv_number_in(c, "hbm_gb", f[7], 0.1, 1e6, &v))
        return -1;
    g.mem_bytes_datasheet = v * GB;
    /* "-": the driver's figure is not known; fall back to the datasheet's */
    if (spec_tsv_number_or_none(c, "driver_mib", f[8], 100, 1e9, &v))
        return -1;
    g.mem_bytes = v > 0 ? v * MiB : g.mem_bytes_datasheet;
    if (spec_tsv_number_or_none(c, "link_gb_s", f[9], 1e-2, 1e6, &v))
        return -1;
    g.link_bw = v * GB;
    if (spec_tsv_number_or_none(c, "allreduce_us", f[10], 1e-3, 1e6, &v))
        return -1;
    g.allreduce_latency = v * 1e-6;
    if (spec_tsv_number_or_none(c, "pcie_gb_s", f[11], 1e-2, 1e5, &v))
        return -1;
    g.host_bw = v * GB;
    if (spec_tsv_text(c, "source", f[12], g.source, sizeof g.source) ||
        spec_tsv_text(c, "link_source", f[13], g.link_source, sizeof g.link_source))
        return -1;
    if (n > 14 && spec_tsv_number_or_none(c, "fp4_tflops", f[14], 1e-3, 1e6, &v))
        return -1;
    g.flops[DT_FP4] = n > 14 ? v * TERA : 0;
    /* "-": the default, one HGX board's 8; an NVL72 rack is 72, a 576-GPU NVLink domain the most */
    if (n > 15 && spec_tsv_number_or_none(c, "node_gpus", f[15], 1, 576, &v))
        return -1;
    if (n > 15 && v != floor(v))
        return spec_tsv_fail(c, "node_gpus", "'%s' is not a whole number of GPUs", f[15]);
    g.node_gpus = n > 15 && v > 0 ? (int)v : 0;
    if (spec_tsv_grow(c, (void **)&t->rows, t->n, sizeof *t->rows) != 0)
        return spec_tsv_fail(c, NULL, "out of memory%s", "");
    t->rows[t->n++] = g;
    return spec_tsv_key(c, g.key);
}

int gpu_table_parse(const char *text, const char *filename, gpu_table *out, char *err, size_t errlen)
{
    out->rows = NULL;
    out->n = 0;
    if (spec_tsv_parse_optional(text, filename, GPU_COLUMNS, GPU_NREQUIRED, GPU_NCOLUMNS, gpu_row, out, err, errlen) !=
        0) {
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
static int arch_item(spec_tsv_ctx *c, model_spec *m, const char *item)
{
    int a[5] = {0}, n = 0;
    const char *eq = strchr(item, '=');
    size_t nlen = eq ? (size_t)(eq - item) : strlen(item);
    if (nlen == 5 && strncmp(item, "sinks", 5) == 0 && !eq) {
        m->sinks = 1;
        return 0;
    }
    if (nlen == 9 && strncmp(item, "attn_gate", 9) == 0 && !eq) {
        m->attn_gate = 1;
        return 0;
    }
    if (!eq)
        return spec_tsv_fail(c, "arch", "'%s' is not name=value (or sinks)", item);
    if (nlen == 7 && strncmp(item, "experts", 7) == 0 &&
        (strcmp(eq + 1, "mxfp4") == 0 || strcmp(eq + 1, "int4g32") == 0)) {
        m->expert_format = eq[1] == 'm' ? EXPERTS_MXFP4 : EXPERTS_INT4_G32;
        return 0;
    }
    char buf[64];
    snprintf(buf, sizeof buf, "%s", eq + 1);
    char *save = NULL;
    for (char *tok = strtok_r(buf, "/", &save); tok; tok = strtok_r(NULL, "/", &save)) {
        if (n == 5 || spec_tsv_int_in(c, "arch", tok, 0, 10000000, &a[n]))
            return n == 5 ? spec_tsv_fail(c, "arch", "'%s' has too many numbers", item) : -1;
        n++;
    }
    struct { const char *name; int count; int *dst[5]; } kinds[] = {
        {"mla", 5, {&m->q_lora_rank, &m->kv_lora_rank, &m->qk_nope_dim, &m->qk_rope_dim, &m->v_head_dim}},
        {"moe_ffn", 1, {&m->moe_ffn}},
        {"shared", 1, {&m->shared_experts}},
        {"dense", 1, {&m->dense_layers}},
        {"window", 2, {&m->window, &m->window_layers}},
        {"mtp", 1, {&m->mtp_layers}},
        {"linear", 5, {&m->linear_layers, &m->linear_k_heads, &m->linear_v_heads, &m->linear_k_dim, &m->linear_v_dim}},
        {"linear_conv", 1, {&m->linear_conv}},
        {"linear_state", 1, {&m->linear_state_bytes}},
        {"dsa", 3, {&m->dsa_heads, &m->dsa_dim, &m->dsa_topk}},
    };
    for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++)
        if (strlen(kinds[k].name) == nlen && strncmp(item, kinds[k].name, nlen) == 0) {
            if (n != kinds[k].count)
                return spec_tsv_fail(c, "arch", "'%s' needs as many numbers as mla=q/kv/nope/rope/v, window=tokens/layers, "
                                       "linear=layers/k_heads/v_heads/k_dim/v_dim, dsa=heads/dim/topk or one", item);
            for (int i = 0; i < n; i++)
                *kinds[k].dst[i] = a[i];
            return 0;
        }
    return spec_tsv_fail(c, "arch", "'%s' is not one of mla, moe_ffn, shared, dense, window, mtp, linear, linear_conv, linear_state, dsa, sinks, attn_gate, experts=mxfp4, experts=int4g32", item);
}

/* The arch column: "-" or comma-separated items, checked against the row. */
static int parse_arch(spec_tsv_ctx *c, model_spec *m, const char *s)
{
    if (strcmp(s, "-") == 0)
        return 0;
    char buf[256];
    if (strlen(s) >= sizeof buf)
        return spec_tsv_fail(c, "arch", "longer than the limit ('%.40s...')", s);
    snprintf(buf, sizeof buf, "%s", s);
    char *save = NULL;
    for (char *item = strtok_r(buf, ",", &save); item; item = strtok_r(NULL, ",", &save))
        if (arch_item(c, m, item))
            return -1;
    if (m->kv_lora_rank > 0 && (m->qk_rope_dim < 1 || m->qk_nope_dim < 1 || m->v_head_dim < 1 ||
                                m->qk_nope_dim + m->qk_rope_dim != m->head_dim))
        return spec_tsv_fail(c, "arch", "'%s': mla needs nope, rope and v widths >= 1 with nope + rope = head_dim", s);
    if (m->dense_layers >= m->layers || m->window_layers > m->layers)
        return spec_tsv_fail(c, "arch", "'%s': dense and window layers must be fewer than the layers", s);
    if ((m->window > 0) != (m->window_layers > 0))
        return spec_tsv_fail(c, "arch", "'%s': a window needs both its tokens and its layers", s);
    if (m->linear_layers > 0) {
        if (m->linear_layers >= m->layers || m->window_layers > 0 || m->kv_lora_rank > 0)
            return spec_tsv_fail(c, "arch", "'%s': linear layers must be fewer than the layers, beside no window or mla", s);
        if (m->linear_k_heads < 1 || m->linear_v_heads < 1 || m->linear_k_dim < 1 || m->linear_v_dim < 1 ||
            m->linear_v_heads % m->linear_k_heads != 0)
            return spec_tsv_fail(c, "arch", "'%s': linear needs heads and dims >= 1, value heads a multiple of key heads", s);
        if (m->linear_state_bytes == 0)
            m->linear_state_bytes = 4; /* fp32, the state dtype of the released configs (mamba_ssm_dtype) */
        if (m->linear_state_bytes != 2 && m->linear_state_bytes != 4)
            return spec_tsv_fail(c, "arch", "'%s': linear_state is 2 or 4 bytes a value", s);
    } else if (m->linear_conv || m->linear_state_bytes) {
        return spec_tsv_fail(c, "arch", "'%s': linear_conv and linear_state need linear=", s);
    }
    if (m->dsa_heads > 0 && (m->kv_lora_rank <= 0 || m->dsa_dim < 1 || m->dsa_topk < 1))
        return spec_tsv_fail(c, "arch", "'%s': dsa (sparse attention) needs mla, and heads, dim and topk >= 1", s);
    if (m->experts == 1 && (m->moe_ffn || m->shared_experts || m->dense_layers || m->expert_format))
        return spec_tsv_fail(c, "arch", "'%s': moe_ffn, shared, dense and experts= are for a mixture of experts", s);
    return 0;
}

static int model_row(spec_tsv_ctx *c, char **f, int n, void *table)
{
    model_table *t = table;
    model_spec m;
    memset(&m, 0, sizeof m);
    if (spec_tsv_text(c, "key", f[0], m.key, sizeof m.key) || spec_tsv_text(c, "name", f[1], m.name, sizeof m.name))
        return -1;
    int *ints[] = {&m.layers, &m.hidden, &m.heads, &m.kv_heads, &m.head_dim, &m.ffn, &m.vocab, &m.experts, &m.experts_active};
    /* Bounds a real model stays far inside; with them every product the cost
     * model forms (heads x head_dim, hidden x ffn x experts, ...) fits in a
     * double exactly and every shape in an int. */
    static const int max_of[] = {MODEL_LAYERS_MAX, 1000000, 100000, 100000, 100000, 10000000, 100000000, 100000, 100000};
    for (int i = 0; i < 9; i++)
        if (spec_tsv_int_in(c, MODEL_COLUMNS[2 + i], f[2 + i], 1, max_of[i], ints[i]))
            return -1;
    if (spec_tsv_int_in(c, "tied", f[11], 0, 1, &m.tied_embeddings))
        return -1;
    if ((long long)m.heads * m.head_dim > 1000000)
        return spec_tsv_fail(c, "head_dim", "'%s' times the heads exceeds a million (no real model is that wide)",
                    f[6]);
    if (m.heads % m.kv_heads != 0)
        return spec_tsv_fail(c, "kv_heads", "'%s' must divide the attention heads", f[5]);
    if (m.experts_active > m.experts)
        return spec_tsv_fail(c, "experts_active", "'%s' exceeds the number of experts", f[10]);
    if (spec_tsv_text(c, "source", f[12], m.source, sizeof m.source))
        return -1;
    if (n > MODEL_NREQUIRED && strcmp(f[13], "-") != 0 &&
        spec_tsv_int_in(c, "max_position", f[13], 1, 100000000, &m.max_position))
        return -1;
    if (n > MODEL_NREQUIRED + 1 && parse_arch(c, &m, f[14]))
        return -1;
    if (spec_tsv_grow(c, (void **)&t->rows, t->n, sizeof *t->rows) != 0)
        return spec_tsv_fail(c, NULL, "out of memory%s", "");
    t->rows[t->n++] = m;
    return spec_tsv_key(c, m.key);
}

int model_table_parse(const char *text, const char *filename, model_table *out, char *err, size_t errlen)
{
    out->rows = NULL;
    out->n = 0;
    if (spec_tsv_parse_optional(text, filename, MODEL_COLUMNS, MODEL_NREQUIRED, MODEL_NCOLUMNS, model_row, out, err, errlen) != 0) {
        model_table_free(out);
        return -1;
    }
    return 0;
}

/* ------------------------------------------------------------ file, misc */

int gpu_table_load(const char *path, gpu_table *out, char *err, size_t errlen)
{
    char *text = spec_read_text_file(path, err, errlen);
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
    char *text = spec_read_text_file(path, err, errlen);
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

int gpu_node_gpus(const gpu_spec *g)
{
    return g->node_gpus > 0 ? g->node_gpus : GPU_NODE_GPUS_DEFAULT;
}

double gpu_peak_flops(const gpu_spec *g, dtype compute)
{
    return (compute >= 0 && compute < DT_COUNT) ? g->flops[compute] : 0;
}

static int contains_ci(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    if (n == 0)
        return 0;
    for (; *hay; hay++) {
        size_t i = 0;
        while (i < n && hay[i] && tolower((unsigned char)hay[i]) == tolower((unsigned char)needle[i]))
            i++;
        if (i == n)
            return 1;
    }
    return 0;
}

const gpu_spec *gpu_match_device_name(const gpu_table *t, const char *device_name)
{
    const gpu_spec *best = NULL;
    for (int i = 0; i < t->n; i++)
        if (contains_ci(device_name, t->rows[i].key) && (!best || strlen(t->rows[i].key) > strlen(best->key)))
            best = &t->rows[i];
    return best;
}
