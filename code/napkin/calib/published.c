#include "published.h"
#include "published_internal.h"
#include "published_alltoall.h"

#include "block_formats.h"
#include "measured.h"
#include "moe.h"
#include "transformer.h"

#include <math.h>
#include <stdio.h>
#include <unistd.h>
#include <stdlib.h>
#include <string.h>

int published_load_columns(const char *dir, const char *file, const char *const *names, int n, measured_table *t,
                        int *ci, char *err, size_t errlen)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    if (measured_table_load(path, t, err, errlen) != 0)
        return -1;
    for (int i = 0; i < n; i++)
        if ((ci[i] = measured_col(t, names[i])) < 0) {
            snprintf(err, errlen, "%s: no column '%s'", file, names[i]);
            measured_table_free(t);
            return -1;
        }
    return 0;
}

int published_has_file(const char *dir, const char *file)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    FILE *f = fopen(path, "r");
    if (f)
        fclose(f);
    return f != NULL;
}

void published_elementwise_from_gemm(rate_model *m)
{
    const op_rate *g = &m->op[RC_GEMM_BF16];
    m->op[RC_ELEMENTWISE] = (op_rate){g->t0, 0, 1.0, g->byte_frac, g->blend, 0, 0};
    m->has_op[RC_ELEMENTWISE] = 1;
}

static int dtype_of(const char *s, dtype *d)
{
    if (strcmp(s, "bf16") == 0)
        *d = DT_BF16;
    else if (strcmp(s, "fp8") == 0)
        *d = DT_FP8;
    else
        return -1;
    return 0;
}

/* Which table and which rows a class comes from. */
static const char *class_file(rate_class c)
{
    switch (c) {
    case RC_GEMM_BF16:
    case RC_GEMM_FP8:
    case RC_GEMM_FP8_BLOCK:
        return "gemm.tsv";
    case RC_ATTN_DECODE_BF16:
    case RC_ATTN_DECODE_FP8:
        return "attention_decode.tsv";
    case RC_ATTN_PREFILL:
        return "attention_prefill.tsv";
    case RC_MOE_BF16:
    case RC_MOE_FP8:
    case RC_MOE_FP8_BLOCK:
    case RC_MOE_W4A16:
    case RC_MOE_INT4:
        return "moe.tsv";
    case RC_MLA_DECODE_BF16:
    case RC_MLA_DECODE_FP8:
        return "mla_decode.tsv";
    case RC_MLA_PREFILL:
        return "mla_prefill.tsv";
    case RC_GDN_DECODE:
        return "gdn_decode.tsv";
    case RC_GDN_PREFILL:
        return "gdn_prefill.tsv";
    default:
        return NULL;
    }
}

static int is_gemm_class(rate_class c)
{
    return c == RC_GEMM_BF16 || c == RC_GEMM_FP8 || c == RC_GEMM_FP8_BLOCK;
}

static int is_moe_class(rate_class c)
{
    return c == RC_MOE_BF16 || c == RC_MOE_FP8 || c == RC_MOE_FP8_BLOCK || c == RC_MOE_W4A16 || c == RC_MOE_INT4;
}

/* A MoE table's dtype: its class, the bytes of one expert weight and of one
 * activation as the step counts them (fp8: fp8 activations), and the
 * dtype whose peak the kernel computes at.  -1 for a dtype of no class. */
static int moe_dtype_of(const char *s, rate_class *c, double *eb, double *ab, dtype *compute)
{
    *ab = dtype_bytes(DT_BF16);
    *compute = DT_BF16;
    if (strcmp(s, "bf16") == 0) {
        *c = RC_MOE_BF16;
        *eb = dtype_bytes(DT_BF16);
    } else if (strcmp(s, "fp8") == 0 || strcmp(s, "fp8_block") == 0) {
        *c = s[3] ? RC_MOE_FP8_BLOCK : RC_MOE_FP8;
        *eb = *ab = dtype_bytes(DT_FP8);
        *compute = DT_FP8;
    } else if (strcmp(s, "int4_wo") == 0) {
        /* the tables' int4_wo rows are of Kimi-K2.5's shape, served from its
         * checkpoint (compressed-tensors int4, a bf16 scale per 32 weights),
         * counted as the step counts that checkpoint's experts */
        *c = RC_MOE_INT4;
        *eb = INT4_G32_BYTES_PER_WEIGHT;
    } else if (strcmp(s, "w4a16_mxfp4") == 0) {
        *c = RC_MOE_W4A16;
        *eb = block_format_bytes_per_weight(BF_MXFP4);
    } else {
        return -1;
    }
    return 0;
}

//> moe_point
/* One row of moe.tsv (dtype tokens hidden inter topk experts moe_tp moe_ep
 * distribution time_s) as the step's own routed_experts op would count it:
 * the busiest GPU's pairs and experts touched under the row's distribution
 * (moe_rank_work; power_law_<a> through moe_power_law_skew), the expert
 * width split moe_tp ways.  *keep 0 for another class or distribution, or
 * for an expert-parallel row when tp_only (moe_tp_rows_only). */
static int moe_point_of_row(const measured_table *t, const int *c, int row, rate_class rc, const gpu_spec *g,
                            int tp_only, rate_point *p, int *keep)
{
    *keep = 0;
    rate_class cls;
    double eb, ab;
    dtype compute;
    if (moe_dtype_of(measured_cell(t, row, c[0]), &cls, &eb, &ab, &compute) != 0 || cls != rc)
        return 0;
    const double tokens = measured_num(t, row, c[1]), h = measured_num(t, row, c[2]);
    const double inter = measured_num(t, row, c[3]), topk = measured_num(t, row, c[4]);
    const double experts = measured_num(t, row, c[5]), tp = measured_num(t, row, c[6]);
    const double ep = measured_num(t, row, c[7]), time = measured_num(t, row, c[9]);
    if (!(tokens > 0 && h > 0 && inter > 0 && topk > 0 && experts > 0 && tp > 0 && ep > 0 && time > 0))
        return -1;
    if (tp_only && ep > 1)
        return 0;
    const char *dist = measured_cell(t, row, c[8]);
    double skew = 0;
    int balanced = strcmp(dist, "balanced") == 0;
    if (!balanced) {
        if (strncmp(dist, "power_law_", 10) != 0)
            return 0;
        skew = moe_power_law_skew(atof(dist + 10));
        if (!isfinite(skew))
            return 0;
    }
    double pairs, touched;
    if (moe_rank_work((int)experts, (int)topk, skew, (int)ep, tokens, balanced, &pairs, &touched) != 0)
        return 0; /* experts not dealt evenly over the GPUs: no such layout */
    op_cost op = moe_experts_op(1, pairs, touched, h, inter / tp, eb, ab, rc);
    *p = (rate_point){op.flop, op_bytes(&op), gpu_peak_flops(g, compute), g->mem_bw, time, op.items, 0, 0};
    *keep = 1;
    return 0;
}
//< moe_point

/* vLLM's MXFP4 expert kernel (OAITritonMxfp4ExpertsMonolithic) runs two
 * paths: under expert parallelism its rows carry a fixed cost its tensor-
 * parallel rows do not (h200: one token at moe_ep 2, 64 experts a GPU, 98 us
 * against 61 us at moe_ep 1 with all 128; about 68 us at moe_ep 4 and 8),
 * so one fixed cost fitted over both overstated every tensor-parallel row
 * (the 120b shape's balanced moe_ep 1 rows by a median 20 % on h200) and
 * understated the expert-parallel ones.  Every vLLM gpt-oss run measured
 * (silicon_sample.csv) serves the experts tensor-parallel (moe_ep 1), so the
 * class is fitted on the moe_ep 1 rows; an expert-parallel question under
 * vLLM is priced by them, short of that fixed cost.  TensorRT-LLM's and
 * SGLang's MXFP4 rows show no such step (one token costs the same or less
 * at moe_ep 2 as at 1) and keep every row. */
static int moe_tp_rows_only(const measured_table *t, rate_class rc)
{
    const char *backend = measured_meta(t, "backend");
    return rc == RC_MOE_W4A16 && backend && strcmp(backend, "vllm") == 0;
}

static int point_of_row(const measured_table *t, const int *c, int row, rate_class rc, const gpu_spec *g,
                        const op_rate *quantize, const model_spec *mla, rate_point *p, int *keep)
{
    *keep = 0;
    if (rate_class_is_mla(rc))
        return published_mla_point(t, c, row, rc, g, mla, p, keep);
    if (rate_class_is_gdn(rc))
        return published_gdn_point(t, c, row, rc, g, p, keep);
    const double bf16_peak = gpu_peak_flops(g, DT_BF16);
    if (is_gemm_class(rc)) {
        dtype d;
        const char *name = measured_cell(t, row, c[0]);
        const int block = strcmp(name, "fp8_block") == 0; /* fp8 values, 128 x 128 block scales */
        if (block)
            d = DT_FP8;
        else if (dtype_of(name, &d) != 0)
            return 0; /* a dtype of no class */
        if (block != (rc == RC_GEMM_FP8_BLOCK) || (!block && (d == DT_FP8) != (rc == RC_GEMM_FP8)))
            return 0;
        double m = measured_num(t, row, c[1]), n = measured_num(t, row, c[2]), k = measured_num(t, row, c[3]);
        double time = measured_num(t, row, c[4]);
        if (!(m > 0 && n > 0 && k > 0 && time > 0))
            return -1;
        op_cost op = gemm_op_cost(m, k, n, d, d, DT_BF16);
        *p = (rate_point){op.flop, op_bytes(&op), gpu_peak_flops(g, d), g->mem_bw, time, 0, 0, 0};
        if (quantize && d == DT_FP8) /* the activation's cast, timed with the GEMM: M K bf16 in, M K fp8 out */
            p->extra = fmin(op_rate_time(quantize, 0, m * k * (dtype_bytes(DT_BF16) + dtype_bytes(DT_FP8)), 0, 0,
                                         gpu_peak_flops(g, DT_BF16), g->mem_bw),
                            0.5 * time);
    } else {
        dtype kv;
        if (dtype_of(measured_cell(t, row, c[5]), &kv) != 0)
            return 0;
        if (rc == RC_ATTN_DECODE_BF16 && kv != DT_BF16)
            return 0;
        if (rc == RC_ATTN_DECODE_FP8 && kv != DT_FP8)
            return 0;
        double b = measured_num(t, row, c[0]), len = measured_num(t, row, c[1]);
        double heads = measured_num(t, row, c[2]), kvh = measured_num(t, row, c[3]);
        double hd = measured_num(t, row, c[4]), time = measured_num(t, row, c[6]);
        if (!(b > 0 && len > 0 && heads > 0 && kvh > 0 && hd > 0 && time > 0))
            return -1;
        /* The cost model prices a one-token prompt as decode attention (a
         * sequence's KV head per work item), so a one-token row of the
         * prefill table has no prefill op to be compared with. */
        if (rc == RC_ATTN_PREFILL && len < 2)
            return 0;
        op_cost a[2];
        if (rc == RC_ATTN_PREFILL)
            attention_op_costs(b, 0, len, heads, kvh, hd, kv, DT_BF16, a);
        else /* the new token is one of the `len` attended: len - 1 were cached */
            attention_op_costs(b, len - 1, 1, heads, kvh, hd, kv, DT_BF16, a);
        *p = (rate_point){a[0].flop + a[1].flop, op_bytes(&a[0]) + op_bytes(&a[1]), bf16_peak, g->mem_bw, time,
                          a[0].items + a[1].items, a[0].span, 0};
    }
    *keep = 1;
    return 0;
}

const op_rate *published_quantize_apart(const char *backend, const rate_model *m)
{
    return backend && strcmp(backend, "trtllm") == 0 && m->has_op[RC_ELEMENTWISE] ? &m->op[RC_ELEMENTWISE] : NULL;
}

int published_rate_points(const char *dir, rate_class c, const gpu_spec *g, rate_point **pts, int *n, char *err,
                          size_t errlen)
{
    return published_rate_points_apart(dir, c, g, NULL, pts, n, err, errlen);
}

int published_rate_points_apart(const char *dir, rate_class c, const gpu_spec *g, const op_rate *quantize,
                                rate_point **pts, int *n, char *err, size_t errlen)
{
    *pts = NULL;
    *n = 0;
    const char *file = class_file(c);
    if (!file) {
        snprintf(err, errlen, "no measured table holds class %s", rate_class_name(c));
        return -1;
    }
    static const char *const gemm_cols[] = {"dtype", "m", "n", "k", "time_s"};
    static const char *const dec_cols[] = {"batch", "context", "heads", "kv_heads", "head_dim", "kv_dtype", "time_s"};
    static const char *const pre_cols[] = {"batch", "prompt", "heads", "kv_heads", "head_dim", "kv_dtype", "time_s"};
    static const char *const moe_cols[] = {"dtype", "tokens", "hidden", "inter", "topk",
                                           "experts", "moe_tp", "moe_ep", "distribution", "time_s"};
    static const char *const mla_dec_cols[] = {"batch", "context", "heads", "kv_dtype", "time_s"};
    static const char *const mla_pre_cols[] = {"batch", "prompt", "heads", "kv_dtype", "time_s"};
    static const char *const gdn_dec_cols[] = {"batch", "k_heads", "v_heads", "k_dim", "v_dim", "time_s"};
    static const char *const gdn_pre_cols[] = {"batch", "prompt", "k_heads", "v_heads", "k_dim", "v_dim", "time_s"};
    const char *const *names = c == RC_ATTN_PREFILL                                    ? pre_cols
                               : c == RC_GDN_DECODE                                    ? gdn_dec_cols
                               : c == RC_GDN_PREFILL                                   ? gdn_pre_cols
                               : is_gemm_class(c)                                      ? gemm_cols
                               : c == RC_MLA_DECODE_BF16 || c == RC_MLA_DECODE_FP8     ? mla_dec_cols
                               : c == RC_MLA_PREFILL                                   ? mla_pre_cols
                               : is_moe_class(c)                                       ? moe_cols
                                                                                       : dec_cols;
    int ncol = names == gemm_cols || rate_class_is_mla(c) ? 5 : names == moe_cols ? 10 : c == RC_GDN_DECODE ? 6 : 7;
    if ((names == moe_cols || rate_class_is_gdn(c)) && !published_has_file(dir, file))
        return 0; /* a set that measured no MoE (or linear-attention) kernel: no points, no error */
    /* the latent attention tables are there only for engines that measured them (not vLLM's
     * module-only tables, not a reader's set): a set without one has no point of the class */
    model_spec mla = {0};
    if (rate_class_is_mla(c)) {
        if (!published_has_file(dir, file))
            return 0;
        mla = model_builtin("deepseek-v3"); /* the tables measure DeepSeek-V3's latent widths */
    }
    measured_table t;
    int ci[10];
    if (published_load_columns(dir, file, names, ncol, &t, ci, err, errlen) != 0)
        return -1;
    rate_point *p = malloc((size_t)(t.nrows > 0 ? t.nrows : 1) * sizeof *p);
    if (!p) {
        measured_table_free(&t);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int k = 0;
    for (int r = 0; r < t.nrows; r++) {
        int keep;
        int bad = names == moe_cols ? moe_point_of_row(&t, ci, r, c, g, moe_tp_rows_only(&t, c), &p[k], &keep)
                                    : point_of_row(&t, ci, r, c, g, quantize, &mla, &p[k], &keep);
        if (bad != 0) {
            snprintf(err, errlen, "%s/%s: data row %d: a size or time that is not a positive number", dir, file,
                     r + 1);
            free(p);
            measured_table_free(&t);
            return -1;
        }
        k += keep;
    }
    measured_table_free(&t);
    *pts = p;
    *n = k;
    return 0;
}

int published_link_points(const char *dir, const char *implementation, int tp, link_point **pts, int *n, char *err,
                          size_t errlen)
{
    *pts = NULL;
    *n = 0;
    static const char *const names[] = {"implementation", "tp", "bytes", "time_s"};
    measured_table t;
    int ci[4];
    if (published_load_columns(dir, "allreduce.tsv", names, 4, &t, ci, err, errlen) != 0)
        return -1;
    link_point *p = malloc((size_t)(t.nrows > 0 ? t.nrows : 1) * sizeof *p);
    if (!p) {
        measured_table_free(&t);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    int k = 0;
    for (int r = 0; r < t.nrows; r++) {
        if (strcmp(measured_cell(&t, r, ci[0]), implementation) != 0 || measured_num(&t, r, ci[1]) != tp)
            continue;
        double bytes = measured_num(&t, r, ci[2]), time = measured_num(&t, r, ci[3]);
        if (!(bytes > 0 && time > 0)) {
            snprintf(err, errlen, "%s/allreduce.tsv: data row %d: bytes and time must be positive numbers", dir,
                     r + 1);
            free(p);
            measured_table_free(&t);
            return -1;
        }
        p[k++] = (link_point){bytes, time};
    }
    measured_table_free(&t);
    *pts = p;
    *n = k;
    return 0;
}

const char *published_allreduce_implementation(const char *backend)
{
    if (strcmp(backend, "trtllm") == 0)
        return "trtllm";
    if (strcmp(backend, "vllm") == 0)
        return "vllm_graph";
    if (strcmp(backend, "sglang") == 0)
        return "sglang_graph";
    return "nccl";
}

int published_half(rate_point *pts, int n, int half)
{
    if (half == 0)
        return n;
    int k = 0;
    for (int i = 0; i < n; i++)
        if (i % 2 == half - 1)
            pts[k++] = pts[i];
    return k;
}

int published_fit(const char *dir, const char *backend, const gpu_spec *g, int every_other, rate_model *out,
                  fit_summary sums[RC_COUNT], fit_summary link_sums[RATE_TP_SLOTS], char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    snprintf(out->gpu, sizeof out->gpu, "%s", g->key);
    gpu_spec bare = *g;
    bare.rates = NULL;
    if (sums)
        memset(sums, 0, RC_COUNT * sizeof sums[0]);
    /* bf16 GEMMs first: their fixed cost and byte share make the elementwise rate, which prices the
     * fp8 cast an engine's table may time with its fp8 GEMMs (published_quantize_apart) */
    static const rate_class ORDER[] = {RC_GEMM_BF16,       RC_GEMM_FP8,       RC_ATTN_DECODE_BF16, RC_ATTN_DECODE_FP8,
                                       RC_ATTN_PREFILL,    RC_MOE_BF16,       RC_MOE_FP8,          RC_MOE_FP8_BLOCK,
                                       RC_MOE_W4A16,       RC_MOE_INT4,       RC_MLA_DECODE_BF16, RC_MLA_DECODE_FP8,  RC_MLA_PREFILL,
                                       RC_GEMM_FP8_BLOCK,  RC_GDN_DECODE,     RC_GDN_PREFILL};
    _Static_assert(sizeof ORDER / sizeof ORDER[0] == RC_COUNT - 1, "every class a table measures");
    for (size_t o = 0; o < sizeof ORDER / sizeof ORDER[0]; o++) {
        rate_class c = ORDER[o];
        rate_point *p;
        int n;
        if (published_rate_points_apart(dir, c, &bare, published_quantize_apart(backend, out), &p, &n, err,
                                        errlen) != 0)
            return -1;
        n = published_half(p, n, every_other);
        /* TensorRT-LLM's linear-attention decode table has ten shapes: half of them (a held-out
         * fit) cannot fit the class's five parameters, so that half has no such class */
        if (n == 0 || (rate_class_is_gdn(c) && n < 6)) {
            free(p);
            continue;
        }
        op_rate r = {3e-6, 1e-9, 0.8, 0.8, 2, 1, 1e-6};
        fit_summary s;
        if (fit_op_rate(p, n, &r, &s, err, errlen) != 0) {
            free(p);
            return -1;
        }
        free(p);
        out->op[c] = r;
        out->has_op[c] = 1;
        if (sums)
            sums[c] = s;
        if (c == RC_GEMM_BF16)
            published_elementwise_from_gemm(out);
    }
    const char *impl = published_allreduce_implementation(backend);
    for (int s = 0; s < RATE_TP_SLOTS; s++) {
        if (link_sums)
            memset(&link_sums[s], 0, sizeof link_sums[s]);
        link_point *p;
        int n;
        if (published_link_points(dir, impl, rate_slot_tp(s), &p, &n, err, errlen) != 0)
            return -1;
        if (n < 4) {
            free(p);
            continue;
        }
        fit_summary fs;
        if (fit_link_rate(p, n, &out->allreduce[s], &fs, err, errlen) != 0) {
            free(p);
            return -1;
        }
        free(p);
        out->has_allreduce[s] = 1;
        if (link_sums)
            link_sums[s] = fs;
    }
    /* the engine's all-to-all kernels, where the set measured them */
    return published_alltoall_fit(dir, backend, every_other, out, NULL, err, errlen);
}
