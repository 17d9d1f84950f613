#include "train.h"

#include "memory.h"
#include "roofline.h"
#include "transformer.h"

#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <strings.h>

/* ------------------------------------------------------------ names */

static const char *const RECOMPUTE_NAMES[] = {"none", "selective", "full"};
static const char *const ACT_NAMES[] = {"korthikanti", "modern"};
static const char *const PIPE_NAMES[] = {"1f1b", "gpipe"};

static int parse_name(const char *s, const char *const *names, int n)
{
    for (int i = 0; s && i < n; i++)
        if (strcasecmp(s, names[i]) == 0)
            return i;
    return -1;
}

const char *recompute_name(recompute_kind r)
{
    return r >= RECOMPUTE_NONE && r <= RECOMPUTE_FULL ? RECOMPUTE_NAMES[r] : "?";
}

int recompute_parse(const char *s, recompute_kind *out)
{
    int i = parse_name(s, RECOMPUTE_NAMES, 3);
    if (i < 0)
        return -1;
    *out = (recompute_kind)i;
    return 0;
}

const char *recompute_choices(void)
{
    return "none, selective, full";
}

const char *activation_model_name(activation_model a)
{
    return a == ACT_KORTHIKANTI || a == ACT_MODERN ? ACT_NAMES[a] : "?";
}

int activation_model_parse(const char *s, activation_model *out)
{
    int i = parse_name(s, ACT_NAMES, 2);
    if (i < 0)
        return -1;
    *out = (activation_model)i;
    return 0;
}

const char *pipe_schedule_name(pipe_schedule p)
{
    return p == PIPE_1F1B || p == PIPE_GPIPE ? PIPE_NAMES[p] : "?";
}

int pipe_schedule_parse(const char *s, pipe_schedule *out)
{
    int i = parse_name(s, PIPE_NAMES, 2);
    if (i < 0)
        return -1;
    *out = (pipe_schedule)i;
    return 0;
}

/* ------------------------------------------------------------ compute */

double train_matmul_params(const model_spec *m)
{
    param_count p = model_params(m);
    /* a tied head multiplies with the embedding matrix: count it once as the head */
    return p.total - p.embedding + (m->tied_embeddings ? p.embedding : 0.0);
}

//> flop_per_token
train_flop train_flop_per_token(double params, const model_spec *shape, int seq, recompute_kind r)
{
    train_flop f = {0};
    f.dense = 6.0 * params; /* forward 2N; backward 2N for inputs, 2N for weights */
    double attn_fwd = 0.0;  /* QK^T and AV: 2 products of 2 s d FLOP per layer per token */
    if (shape)
        attn_fwd = 4.0 * shape->layers * (double)seq * shape->heads * shape->head_dim;
    f.attention = 3.0 * attn_fwd; /* the backward is twice the forward */
    f.model = f.dense + f.attention;
    if (r == RECOMPUTE_SELECTIVE)
        f.recompute = attn_fwd; /* the attention core's forward, once more */
    else if (r == RECOMPUTE_FULL)
        f.recompute = 2.0 * params + attn_fwd; /* the whole forward, once more */
    f.hardware = f.model + f.recompute;
    return f;
}
//< flop_per_token

double train_mfu(double model_flops_per_gpu, double peak)
{
    return peak > 0 ? model_flops_per_gpu / peak : NAN; /* a share, not a time */
}

double train_implied_utilisation(double flop, double peak, double gpu_hours)
{
    return peak > 0 && gpu_hours > 0 ? flop / (peak * gpu_hours * 3600.0) : NAN; /* a share, not a time */
}

/* ------------------------------------------------------------ cluster */

goodput_model goodput_model_llama3(void)
{
    goodput_model g;
    g.interruptions_per_gpu_day = 466.0 / (54.0 * 16384.0);
    g.hours_lost = 0.10 * 54.0 * 24.0 / 466.0;
    g.other = 1.0;
    return g;
}

goodput_model goodput_model_fixed(double goodput)
{
    goodput_model g = {0.0, 0.0, goodput};
    return g;
}

//> goodput
double goodput_at(const goodput_model *g, double gpus)
{
    double lost = g->interruptions_per_gpu_day * gpus * g->hours_lost / 24.0; /* share of each day */
    return lost >= 1.0 ? 0.0 : g->other * (1.0 - lost);
}
//< goodput

double train_gpu_seconds(const train_run *r)
{
    return compute_time(r->flop, r->peak * r->mfu); /* the FLOPs at the rate the run achieves */
}

double train_seconds_on(const train_run *r, int gpus)
{
    double gp = goodput_at(&r->goodput, gpus);
    return gpus >= 1 && gp > 0 ? train_gpu_seconds(r) / (gpus * gp) : INFINITY;
}

//> cluster
int train_cluster_for_deadline(const train_run *r, double seconds, int node_size, cluster_plan *out)
{
    if (node_size < 1)
        node_size = 1;
    /* GPUs x goodput(GPUs) must reach the GPU-seconds over the deadline */
    double need = train_gpu_seconds(r) / seconds;
    double k = r->goodput.interruptions_per_gpu_day * r->goodput.hours_lost / 24.0;
    double other = r->goodput.other;
    double exact;
    int ok = 1;
    if (k <= 0.0) {
        exact = need / other;
    } else {
        /* smallest G with other (G - k G^2) >= need; the left side peaks at G = 1/(2k) */
        double disc = 1.0 - 4.0 * k * need / other;
        ok = disc >= 0.0;
        exact = ok ? (1.0 - sqrt(disc)) / (2.0 * k) : 1.0 / (2.0 * k);
    }
    int nodes = (int)ceil(exact / node_size - 1e-9);
    if (nodes < 1)
        nodes = 1;
    out->nodes = nodes;
    out->gpus = nodes * node_size;
    out->gpus_exact = exact;
    out->goodput = goodput_at(&r->goodput, out->gpus);
    out->seconds = train_seconds_on(r, out->gpus);
    out->gpu_hours = out->gpus * out->seconds / 3600.0;
    return ok && out->seconds <= seconds * (1 + 1e-12) ? 0 : -1;
}
//< cluster

/* ------------------------------------------------------------ memory */

int pipeline_in_flight(pipe_schedule s, int pp, int microbatches)
{
    if (microbatches < 1)
        microbatches = pp;
    //> in_flight
    /* 1F1B: stage 1 runs pp forwards before its first backward frees one */
    return s == PIPE_GPIPE ? microbatches : (microbatches < pp ? microbatches : pp);
    //< in_flight
}

train_layout train_layout_default(void)
{
    train_layout l = {8192, 1, 1, 1, 1, 0, RECOMPUTE_NONE, 0, ACT_MODERN, PIPE_1F1B, 0};
    return l;
}

train_state_bytes train_state_adam_mixed(void)
{
    train_state_bytes b = {2.0, 2.0, 12.0};
    return b;
}

//> adam_state
int train_state_adam(const char *grad_dtype, const char *master_dtype, train_state_bytes *out, char *err,
                     size_t errlen)
{
    train_state_bytes b = {2.0, 0.0, 8.0}; /* bf16 weights; fp32 momentum and variance */
    if (strcmp(grad_dtype, "bf16") == 0)
        b.grads = 2.0;
    else if (strcmp(grad_dtype, "fp32") == 0)
        b.grads = 4.0;
    else {
        snprintf(err, errlen, "--grad-dtype: unknown '%s' (choices: bf16, fp32)", grad_dtype);
        return -1;
    }
    if (strcmp(master_dtype, "fp32") == 0)
        b.optimizer += 4.0; /* an fp32 copy of the weights that the update is applied to */
    else if (strcmp(master_dtype, "bf16") != 0) {
        snprintf(err, errlen, "--master-dtype: unknown '%s' (choices: fp32, bf16)", master_dtype);
        return -1;
    }
    *out = b;
    return 0;
}
//< adam_state

int train_layout_check(const model_spec *m, const train_layout *l, char *err, size_t errlen)
{
    const char *flag = NULL, *why = NULL;
    if (l->seq < 1)
        flag = "--seq", why = "must be at least 1";
    else if (l->micro_batch < 1)
        flag = "--micro-batch", why = "must be at least 1";
    else if (l->tp < 1 || m->heads % l->tp != 0)
        flag = "--tp", why = "must divide the attention heads";
    else if (m->kv_heads % l->tp != 0 && l->tp % m->kv_heads != 0)
        flag = "--tp", why = "must divide the KV heads or be a multiple of them";
    else if (l->pp < 1 || m->layers % l->pp != 0)
        flag = "--pp", why = "must divide the layers";
    else if (l->dp < 1)
        flag = "--dp", why = "must be at least 1";
    else if (l->zero < 0 || l->zero > 3)
        flag = "--zero", why = "must be 0, 1, 2 or 3";
    else if (l->microbatches < 0)
        flag = "--microbatches", why = "must not be negative";
    if (!flag)
        return 0;
    if (strcmp(flag, "--tp") == 0)
        snprintf(err, errlen, "%s %d %s of %s (%d heads, %d KV heads)", flag, l->tp, why, m->key, m->heads,
                 m->kv_heads);
    else if (strcmp(flag, "--pp") == 0)
        snprintf(err, errlen, "%s %d %s of %s (%d layers)", flag, l->pp, why, m->key, m->layers);
    else
        snprintf(err, errlen, "%s %s", flag, why);
    return -1;
}

/* Korthikanti et al. (2022), the count behind their Table 2, per layer in units of s b h bytes:
 *   attention: QKV input 2, Q and K 4, softmax 2as/h, its dropout mask as/h,
 *              dropout output 2as/h, V 2, output projection input 2, dropout mask 1
 *   MLP:       input 2, GeLU input 8, GeLU output 8, dropout mask 1
 *   norms:     two inputs, 2 each
 * Under TP the norms, the two block inputs and the two masks (10) stay whole;
 * sequence parallelism splits them too. */
//> korthikanti
static double korthikanti_layer(const model_spec *m, double s, double b, double t, int sp, recompute_kind r)
{
    double h = m->hidden, a = m->heads, sbh = s * b * h;
    double whole = 10.0 * sbh;                  /* norms, block inputs, dropout masks */
    double split = 24.0 * sbh;                  /* Q, K, V, projection input, GeLU in/out */
    double scores = 5.0 * a * s * s * b;        /* softmax, its mask, its dropout output */
    double stay = sp ? whole / t : whole;
    if (r == RECOMPUTE_FULL)
        return sp ? 2.0 * sbh / t : 2.0 * sbh; /* the layer input only */
    if (r == RECOMPUTE_SELECTIVE)
        return stay + split / t;               /* scores recomputed in the backward */
    return stay + split / t + scores / t;
}
//< korthikanti

/* The same count for a Llama-style layer, in bytes:
 *   whole under TP: RMSNorm inputs 2h + 2h, the inputs of the QKV and the
 *                   gate/up projections 2h + 2h
 *   split under TP: Q 2 q, K and V 2 kv each (after RoPE, which flash
 *                   attention's backward needs), the attention output 2 q
 *                   (input of o_proj and of flash attention's backward), a
 *                   logsumexp per head and row in fp32, 4 a; the gate and up
 *                   outputs 2 f each and their product 2 f (input of down_proj)
 * Flash attention recomputes the scores in its backward, so there is no
 * s^2 term, and selective recomputation has nothing left to drop. */
//> modern
static double modern_layer(const model_spec *m, double s, double b, int t, int sp, recompute_kind r)
{
    double h = m->hidden, sb = s * b;
    double kv_heads_here = m->kv_heads >= t ? (double)m->kv_heads / t : 1.0; /* replicated past kv_heads */
    double q = (double)m->heads / t * m->head_dim, kv = kv_heads_here * m->head_dim;
    double f = (double)m->ffn / t * m->experts_active;
    double whole = sb * 8.0 * h;
    double split = sb * (2.0 * q + 4.0 * kv + 2.0 * q + 4.0 * m->heads / t + 6.0 * f);
    if (r == RECOMPUTE_FULL)
        return sp ? 2.0 * sb * h / t : 2.0 * sb * h;
    return (sp ? whole / t : whole) + split;
}
//< modern

double train_layer_activation_bytes(const model_spec *m, const train_layout *l)
{
    if (l->act == ACT_KORTHIKANTI)
        return korthikanti_layer(m, l->seq, l->micro_batch, l->tp, l->sp, l->recompute);
    return modern_layer(m, l->seq, l->micro_batch, l->tp, l->sp, l->recompute);
}

int train_memory_plan(const model_spec *m, const gpu_spec *g, const train_layout *l, const train_state_bytes *b,
                      train_memory *out, char *err, size_t errlen)
{
    if (train_layout_check(m, l, err, errlen) != 0)
        return -1;
    param_count p = model_params(m);
    double h = m->hidden;
    double per_layer = (p.attention + p.mlp + p.router + (p.norms - h)) / m->layers;
    out->layers = m->layers / l->pp;
    //> stage_state
    /* the first stage: its layers and the embedding; alone it also has the head */
    double stage = per_layer * out->layers + p.embedding;
    if (l->pp == 1)
        stage += p.head + h;
    out->params = stage / l->tp;
    double dp = l->dp;
    out->weights = out->params * b->weights / (l->zero >= 3 ? dp : 1.0);
    out->grads = out->params * b->grads / (l->zero >= 2 ? dp : 1.0);
    out->optimizer = out->params * b->optimizer / (l->zero >= 1 ? dp : 1.0);
    //< stage_state

    //> stage_activations
    out->in_flight = pipeline_in_flight(l->schedule, l->pp, l->microbatches);
    out->act_per_layer = train_layer_activation_bytes(m, l);
    out->act_layers = out->act_per_layer * out->layers * out->in_flight;
    out->act_working = 0.0;
    if (l->recompute == RECOMPUTE_FULL) { /* the layer being rebuilt holds everything */
        train_layout whole = *l;
        whole.recompute = RECOMPUTE_NONE;
        out->act_working = train_layer_activation_bytes(m, &whole);
    }
    out->act_logits = l->pp == 1 ? 4.0 * l->seq * (double)l->micro_batch * m->vocab / l->tp : 0.0;
    out->activations = out->act_layers + out->act_working + out->act_logits;
    //< stage_activations
    out->total = out->weights + out->grads + out->optimizer + out->activations;
    /* the book's one usable-memory policy: a share of what the driver reports (memory.h) */
    memory_policy pol = memory_policy_default();
    out->capacity = policy_capacity(&pol, g) * pol.usable_fraction;
    out->fits = out->total <= out->capacity;
    return 0;
}

int train_max_micro_batch(const model_spec *m, const gpu_spec *g, const train_layout *l, const train_state_bytes *b,
                          int limit)
{
    train_layout t = *l;
    train_memory mem;
    char err[256];
    t.micro_batch = 1;
    if (train_memory_plan(m, g, &t, b, &mem, err, sizeof err) != 0)
        return -1;
    int best = 0;
    /* activations grow with the microbatch; the state does not */
    for (int mb = 1; mb <= limit; mb++) {
        t.micro_batch = mb;
        train_memory_plan(m, g, &t, b, &mem, err, sizeof err);
        if (!mem.fits)
            break;
        best = mb;
    }
    return best;
}

static int fit_before(const layout_fit *x, const layout_fit *y)
{
    int a = x->tp * x->pp, c = y->tp * y->pp;
    return a != c ? a < c : x->pp < y->pp;
}

int train_layout_search(const model_spec *m, const gpu_spec *g, int gpus, int node_size, const train_layout *base,
                        const train_state_bytes *b, layout_fit *out, int max)
{
    if (gpus < 1 || node_size < 1 || base->micro_batch < 1 || max < 0)
        return -1;
    int found = 0;
    /* 64-bit counters: doubling past any int node_size cannot wrap */
    for (long long tp = 1; tp <= node_size && tp <= gpus; tp *= 2) {
        for (long long pp = 1; pp <= m->layers && tp * pp <= gpus; pp++) {
            if (m->layers % pp != 0 || gpus % (tp * pp) != 0)
                continue;
            train_layout l = *base;
            l.tp = tp;
            l.pp = pp;
            l.dp = gpus / (tp * pp);
            if (l.microbatches > 0 && l.microbatches < pp)
                l.microbatches = pp;
            train_memory mem;
            char err[256];
            if (train_memory_plan(m, g, &l, b, &mem, err, sizeof err) != 0 || !mem.fits)
                continue;
            layout_fit f = {tp, pp, l.dp, train_max_micro_batch(m, g, &l, b, 64), mem.total};
            /* insertion into the ordered prefix that out keeps */
            int at = found < max ? found : max;
            while (at > 0 && fit_before(&f, &out[at - 1])) {
                if (at < max)
                    out[at] = out[at - 1];
                at--;
            }
            if (at < max)
                out[at] = f;
            found++;
        }
    }
    return found;
}
