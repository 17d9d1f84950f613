#include "graphs.h"

#include "pricing.h"

#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const FUSION_NAMES[] = {"none", "norm-residual", "gate-act", "all"};

const char *fusion_name(int fusion)
{
    return fusion >= FUSE_NONE && fusion <= FUSE_ALL ? FUSION_NAMES[fusion] : "?";
}

int fusion_parse(const char *s, int *out)
{
    for (int f = FUSE_NONE; f <= FUSE_ALL; f++)
        if (s && strcasecmp(s, FUSION_NAMES[f]) == 0) {
            *out = f;
            return 0;
        }
    return -1;
}

const char *fusion_choices(void)
{
    return "none, norm-residual, gate-act, all";
}

//> op_kernels
int op_kernels(const op_cost *op, int fusion)
{
    /* flash attention: attn_score and attn_value are one kernel */
    if (strcmp(op->name, "attn_value") == 0)
        return 0;
    /* the residual add runs inside the RMSNorm that follows it
     * (mlp_norm, the next layer's attn_norm, or final_norm) */
    if ((fusion & FUSE_NORM_RESIDUAL) && op->kind == OP_ELEMENTWISE && strstr(op->name, "residual"))
        return 0;
    /* SiLU(gate) * up in the gate_up GEMM's epilogue */
    if ((fusion & FUSE_GATE_ACT) && strcmp(op->name, "act_mul") == 0)
        return 0;
    return 1;
}
//< op_kernels

static int fusion_check(int fusion, char *err, size_t errlen)
{
    if (fusion < FUSE_NONE || fusion > FUSE_ALL) {
        snprintf(err, errlen, "unknown fusion setting %d (choices: %s)", fusion, fusion_choices());
        return -1;
    }
    return 0;
}

int step_kernel_count(const model_spec *m, const step_shape *s, int fusion, step_kernels *out, char *err,
                      size_t errlen)
{
    if (fusion_check(fusion, err, errlen) != 0 || step_shape_check(m, s, err, errlen) != 0)
        return -1;
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(m, s, ops, DECODER_MAX_OPS);
    step_kernels k = {0};
    k.layers = m->layers;
    for (int i = 0; i < n; i++) {
        int kernels = op_kernels(&ops[i], fusion);
        if (ops[i].per_layer)
            k.per_layer += kernels;
        else
            k.once += kernels;
        if (op_is_comm(&ops[i]))
            k.comm += kernels * op_repeats(m, &ops[i]);
    }
    k.total = k.per_layer * k.layers + k.once;
    *out = k;
    return 0;
}

/* Append one kernel, or fold an op into its neighbour. */
static void sequence_op(const op_cost *op, int layer, int fusion, step_kernel *seq, int *n, double *pending)
{
    double bytes = op_bytes(op);
    if (op_kernels(op, fusion) == 0) {
        if (strstr(op->name, "residual") || *n == 0)
            *pending += bytes; /* into the norm that follows */
        else
            seq[*n - 1].bytes += bytes; /* into the kernel it runs inside */
        return;
    }
    step_kernel k = {op->name, layer, bytes + *pending, op_is_comm(op)};
    *pending = 0;
    seq[(*n)++] = k;
}

//> kernel_sequence
int step_kernel_sequence(const model_spec *m, const step_shape *s, int fusion, step_kernel *out, int max,
                         char *err, size_t errlen)
{
    step_kernels count;
    if (step_kernel_count(m, s, fusion, &count, err, errlen) != 0)
        return -1;
    if (count.total > max) {
        snprintf(err, errlen, "a step of %d kernels does not fit a list of %d", count.total, max);
        return -1;
    }
    op_cost ops[DECODER_MAX_OPS];
    int n_ops = decoder_step_ops(m, s, ops, DECODER_MAX_OPS), n = 0;
    double pending = 0;
    /* the ops before the layers: the embedding and its all-reduce */
    int first_tail = -1;
    for (int i = 0; i < n_ops; i++)
        if (!ops[i].per_layer) {
            if (strcmp(ops[i].name, "final_norm") == 0) {
                first_tail = i;
                break;
            }
            sequence_op(&ops[i], -1, fusion, out, &n, &pending);
        }
    for (int layer = 0; layer < m->layers; layer++)
        for (int i = 0; i < n_ops; i++)
            if (ops[i].per_layer)
                sequence_op(&ops[i], layer, fusion, out, &n, &pending);
    for (int i = first_tail; i >= 0 && i < n_ops; i++)
        if (!ops[i].per_layer)
            sequence_op(&ops[i], -1, fusion, out, &n, &pending);
    if (n != count.total || pending != 0) {
        snprintf(err, errlen, "kernel sequence: %d kernels against a count of %d", n, count.total);
        return -1;
    }
    return n;
}
//< kernel_sequence

launch_costs launch_costs_default(void)
{
    launch_costs lc = {4e-6, 4e-6, 1e-6, 0.0};
    return lc;
}

int launch_costs_check(const launch_costs *lc, char *err, size_t errlen)
{
    if (!(lc->launch >= 0 && isfinite(lc->launch)) || !(lc->graph_launch >= 0 && isfinite(lc->graph_launch)) ||
        !(lc->node >= 0 && isfinite(lc->node)) || !(lc->step_host >= 0 && isfinite(lc->step_host))) {
        snprintf(err, errlen, "launch, graph launch, per-node and per-step host costs must be finite and not negative");
        return -1;
    }
    return 0;
}

//> host_cost
double host_time_eager(int kernels, const launch_costs *lc)
{
    return kernels * lc->launch;
}

double host_time_graph(int kernels, const launch_costs *lc)
{
    return lc->graph_launch + kernels * lc->node;
}

double step_wall_time(double gpu, double host)
{
    /* the host enqueues the step while the GPU runs it: the slower one sets the pace */
    return gpu > host ? gpu : host;
}

double graph_share_saved(double t_eager, double t_graph)
{
    return 1.0 - t_graph / t_eager;
}
//< host_cost

//> implied_launch
double implied_launch_cost(double t_eager, double t_graph, int kernels, const launch_costs *lc)
{
    if (kernels < 1 || !(t_graph <= t_eager))
        return NAN;
    /* eager - graph = max(gpu, K tl) - max(gpu, tg + K tn) (the per-step host work H cancels).
     * A saving means the eager step was host-bound, K tl > gpu, so
     * eager - graph = K tl - max(gpu, tg + K tn) <= K tl - tg - K tn: a floor on tl. */
    return (t_eager - t_graph + lc->graph_launch) / kernels + lc->node;
}

double launch_cost_on_gpu(double t_eager, double t_graph, double gpu, int kernels, const launch_costs *lc,
                          double *step_host)
{
    *step_host = NAN;
    if (kernels < 1 || !(t_graph <= t_eager) || !(gpu >= lc->graph_launch + kernels * lc->node) || gpu > t_graph)
        return NAN;
    double h = t_graph - gpu, launch = (t_eager - h) / kernels;
    if (!(kernels * launch > gpu)) /* a host-bound eager step is what a saving needs */
        return NAN;
    *step_host = h;
    return launch;
}
//< implied_launch

/* ---------------------------------------------------------------- capture sizes */

static int cmp_int(const void *a, const void *b)
{
    int x = *(const int *)a, y = *(const int *)b;
    return (x > y) - (x < y);
}

/* Sort and merge repeats. */
static void capture_normalise(capture_list *c)
{
    qsort(c->sizes, (size_t)c->n, sizeof c->sizes[0], cmp_int);
    int w = 0;
    for (int i = 0; i < c->n; i++)
        if (w == 0 || c->sizes[i] != c->sizes[w - 1])
            c->sizes[w++] = c->sizes[i];
    c->n = w;
}

static void capture_push(capture_list *c, int size, int max_size)
{
    if (size <= max_size && c->n < CAPTURE_MAX_SIZES)
        c->sizes[c->n++] = size;
}

//> vllm_capture_sizes
int capture_list_vllm(int max_size, capture_list *out)
{
    capture_list c = {0};
    int head[] = {1, 2, 4};
    for (int i = 0; i < 3; i++)
        capture_push(&c, head[i], max_size);
    for (int s = 8; s < 256; s += 8) /* range(8, 256, 8) */
        capture_push(&c, s, max_size);
    /* range(256, max_size + 1, 16), up to the list's room (s never nears INT_MAX) */
    for (int s = 256; s <= max_size && c.n < CAPTURE_MAX_SIZES; s += 16)
        capture_push(&c, s, max_size);
    *out = c;
    return c.n;
}
//< vllm_capture_sizes

int capture_list_parse(const char *text, capture_list *out, char *err, size_t errlen)
{
    capture_list c = {0};
    const char *p = text ? text : "";
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        char item[32];
        if (len == 0 || len >= sizeof item) {
            snprintf(err, errlen, "capture sizes: empty or overlong entry in '%s' (want sizes like 1,2,4,8)", text);
            return -1;
        }
        memcpy(item, p, len);
        item[len] = '\0';
        char *stop;
        errno = 0;
        long v = strtol(item, &stop, 10);
        if (*stop != '\0' || errno != 0 || v < 1 || v > INT_MAX || !isdigit((unsigned char)item[0])) {
            snprintf(err, errlen, "capture sizes: '%s' is not a whole number >= 1", item);
            return -1;
        }
        if (c.n == CAPTURE_MAX_SIZES) {
            snprintf(err, errlen, "capture sizes: more than %d entries", CAPTURE_MAX_SIZES);
            return -1;
        }
        c.sizes[c.n++] = (int)v;
        p += len;
        if (*p == ',') {
            p++;
            if (!*p) {
                snprintf(err, errlen, "capture sizes: trailing comma in '%s'", text);
                return -1;
            }
        }
    }
    if (c.n == 0) {
        snprintf(err, errlen, "capture sizes: the list is empty (want sizes like 1,2,4,8)");
        return -1;
    }
    capture_normalise(&c);
    *out = c;
    return 0;
}

//> padded_tokens
int capture_padded_tokens(const capture_list *c, int tokens)
{
    for (int i = 0; i < c->n; i++)
        if (c->sizes[i] >= tokens)
            return c->sizes[i];
    return 0; /* beyond the largest graph: eager */
}
//< padded_tokens

double capture_memory_bytes(const capture_list *c, double per_graph)
{
    return c->n * per_graph;
}

/* ---------------------------------------------------------------- the step */

//> padded_step
int padded_step_time(const model_spec *m, const gpu_spec *g, const step_shape *s, int padded_tokens,
                     double *out, char *err, size_t errlen)
{
    step_cost real;
    if (decoder_step_cost(m, g, s, &real, err, errlen) != 0)
        return -1;
    if (padded_tokens < s->batch * s->new_tokens) {
        snprintf(err, errlen, "a step of %d tokens cannot be padded down to %d", s->batch * s->new_tokens,
                 padded_tokens);
        return -1;
    }
    /* Every op but attention depends only on the rows it runs: take those
     * from a step of padded_tokens one-token rows, attention from the real one. */
    step_shape pad = *s;
    pad.batch = padded_tokens;
    pad.new_tokens = 1;
    op_cost ops_real[DECODER_MAX_OPS], ops_pad[DECODER_MAX_OPS];
    int n = decoder_step_ops(m, s, ops_real, DECODER_MAX_OPS);
    int np = decoder_step_ops(m, &pad, ops_pad, DECODER_MAX_OPS);
    if (n != np || n < 0) {
        snprintf(err, errlen, "padded step: op lists differ");
        return -1;
    }
    double peak = gpu_peak_flops(g, s->prec.compute), t = 0;
    for (int i = 0; i < n; i++) {
        const op_cost *op = ops_real[i].kind == OP_ATTENTION ? &ops_real[i] : &ops_pad[i];
        t += op_repeats(m, op) * price_op(op, g, peak, s->tp, NULL);
    }
    *out = t;
    return 0;
}
//< padded_step

//> graph_step
int graph_step_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, int fusion,
                    const launch_costs *lc, const capture_list *capture, graph_step *out, char *err,
                    size_t errlen)
{
    graph_step r = {0};
    step_cost c;
    if (launch_costs_check(lc, err, errlen) != 0 || step_kernel_count(m, s, fusion, &r.kernels, err, errlen) != 0 ||
        decoder_step_cost(m, g, s, &c, err, errlen) != 0)
        return -1;
    r.tokens = s->batch * s->new_tokens;
    r.gpu = c.time;
    r.host_eager = host_time_eager(r.kernels.total, lc);
    r.host_graph = host_time_graph(r.kernels.total, lc);
    r.step_eager = lc->step_host + step_wall_time(r.gpu, r.host_eager);
    r.padded_tokens = capture ? capture_padded_tokens(capture, r.tokens) : r.tokens;
    if (r.padded_tokens == 0) { /* no graph this large: the step runs eagerly */
        r.gpu_padded = r.gpu;
        r.step_graph = r.step_eager;
    } else {
        if (padded_step_time(m, g, s, r.padded_tokens, &r.gpu_padded, err, errlen) != 0)
            return -1;
        r.step_graph = lc->step_host + step_wall_time(r.gpu_padded, r.host_graph);
    }
    r.saved = graph_share_saved(r.step_eager, r.step_graph);
    r.pad_waste = r.gpu_padded / r.gpu - 1.0;
    *out = r;
    return 0;
}
//< graph_step

/* 1 when the share saved at `batch` (a graph of exactly that size) is below the threshold. */
static int saves_less(const model_spec *m, const gpu_spec *g, const step_shape *s, int fusion, const launch_costs *lc,
                      double threshold, int batch, int *below, char *err, size_t errlen)
{
    step_shape sb = *s;
    sb.batch = batch;
    graph_step r;
    if (graph_step_cost(m, g, &sb, fusion, lc, NULL, &r, err, errlen) != 0)
        return -1;
    *below = r.saved < threshold;
    return 0;
}

//> threshold_batch
int graph_threshold_batch(const model_spec *m, const gpu_spec *g, const step_shape *s, int fusion,
                          const launch_costs *lc, double threshold, int batch_max, int *out, char *err,
                          size_t errlen)
{
    if (!(threshold > 0 && threshold < 1) || batch_max < 1) {
        snprintf(err, errlen, "threshold must lie between 0 and 1 and batch_max be at least 1");
        return -1;
    }
    /* GPU time grows with the batch and host time does not, so the share
     * saved, 1 - max(gpu, host_graph) / max(gpu, host_eager), only falls:
     * bisect for the first batch below the threshold. */
    int below;
    if (saves_less(m, g, s, fusion, lc, threshold, batch_max, &below, err, errlen) != 0)
        return -1;
    if (!below) {
        *out = 0;
        return 0;
    }
    int lo = 1, hi = batch_max; /* the answer lies in [lo, hi] */
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (saves_less(m, g, s, fusion, lc, threshold, mid, &below, err, errlen) != 0)
            return -1;
        if (below)
            hi = mid;
        else
            lo = mid + 1;
    }
    *out = lo;
    return 0;
}
//< threshold_batch
