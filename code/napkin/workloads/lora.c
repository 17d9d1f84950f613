#include "lora.h"

#include "rng.h"
#include "pricing.h"
#include "roofline.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const module_names[LORA_MODULE_COUNT] = {"q", "k", "v", "o", "gate", "up", "down"};

const char *lora_module_name(lora_module m)
{
    return m >= 0 && m < LORA_MODULE_COUNT ? module_names[m] : "?";
}

const char *lora_module_choices(void)
{
    return "q, k, v, o, gate, up, down (or all, attention)";
}

int lora_targets_parse(const char *list, lora_targets *out, char *err, size_t errlen)
{
    if (!list || !*list) {
        snprintf(err, errlen, "no target modules given (choices: %s)", lora_module_choices());
        return -1;
    }
    if (strcasecmp(list, "all") == 0) {
        *out = LORA_TARGETS_ALL;
        return 0;
    }
    if (strcasecmp(list, "attention") == 0) {
        *out = LORA_TARGETS_ATTENTION;
        return 0;
    }
    lora_targets t = 0;
    const char *p = list;
    while (*p) {
        const char *end = strchr(p, ',');
        size_t len = end ? (size_t)(end - p) : strlen(p);
        int found = -1;
        for (int m = 0; m < LORA_MODULE_COUNT; m++)
            if (strlen(module_names[m]) == len && strncasecmp(p, module_names[m], len) == 0)
                found = m;
        /* the Hugging Face names (q_proj, gate_proj, ...) are accepted too */
        for (int m = 0; found < 0 && m < LORA_MODULE_COUNT; m++) {
            size_t n = strlen(module_names[m]);
            if (len == n + 5 && strncasecmp(p, module_names[m], n) == 0 && strncasecmp(p + n, "_proj", 5) == 0)
                found = m;
        }
        if (found < 0) {
            snprintf(err, errlen, "unknown target module '%.*s' (choices: %s)", (int)len, p, lora_module_choices());
            return -1;
        }
        t |= LORA_TARGET(found);
        p += len;
        if (*p == ',')
            p++;
    }
    if (!t) {
        snprintf(err, errlen, "no target modules given (choices: %s)", lora_module_choices());
        return -1;
    }
    *out = t;
    return 0;
}

char *lora_targets_format(lora_targets t, char *buf, size_t n)
{
    size_t used = 0;
    if (n)
        buf[0] = '\0';
    for (int m = 0; m < LORA_MODULE_COUNT; m++)
        if (t & LORA_TARGET(m)) {
            int w = snprintf(buf + used, used < n ? n - used : 0, "%s%s", used ? "," : "", module_names[m]);
            if (w > 0)
                used += (size_t)w;
        }
    return buf;
}

int lora_targets_count(lora_targets t)
{
    int c = 0;
    for (int m = 0; m < LORA_MODULE_COUNT; m++)
        c += (t & LORA_TARGET(m)) != 0;
    return c;
}

//> module_shapes
lora_module_shape lora_module_shape_of(const model_spec *m, lora_module mod)
{
    const int h = m->hidden, q = m->heads * m->head_dim, kv = m->kv_heads * m->head_dim;
    const int mlp_copies = m->experts > 1 ? m->experts : 1;
    switch (mod) {
    case LORA_Q: return (lora_module_shape){h, q, 1, 1};
    case LORA_K: /* GQA: only kv_heads heads wide */
    case LORA_V: return (lora_module_shape){h, kv, 1, 1};
    case LORA_O: return (lora_module_shape){q, h, 0, 1};
    case LORA_GATE:
    case LORA_UP: return (lora_module_shape){h, m->ffn, 1, mlp_copies};
    case LORA_DOWN: return (lora_module_shape){m->ffn, h, 0, mlp_copies};
    default: return (lora_module_shape){0, 0, 0, 0};
    }
}
//< module_shapes

/* KV heads on one GPU: split, or one replicated head when tp exceeds them
 * (the same rule as the cost model's). */
static double kv_heads_on_gpu(const model_spec *m, int tp)
{
    return m->kv_heads >= tp ? (double)m->kv_heads / tp : 1.0;
}

/* A and B rows on one GPU: the sharded side of the module shrinks by tp. */
static void module_dims_per_gpu(const model_spec *m, lora_module mod, int tp, double *in_g, double *out_g)
{
    lora_module_shape s = lora_module_shape_of(m, mod);
    if (s.column_parallel) {
        *in_g = s.in;
        *out_g = mod == LORA_K || mod == LORA_V ? kv_heads_on_gpu(m, tp) * m->head_dim : (double)s.out / tp;
    } else {
        *in_g = (double)s.in / tp;
        *out_g = s.out;
    }
}

//> adapter_params
double lora_module_params(const model_spec *m, lora_module mod, int rank)
{
    lora_module_shape s = lora_module_shape_of(m, mod);
    return (double)rank * ((double)s.in + s.out); /* A: in x r, B: r x out */
}

double lora_module_params_per_gpu(const model_spec *m, lora_module mod, int rank, int tp)
{
    double in_g, out_g;
    module_dims_per_gpu(m, mod, tp, &in_g, &out_g);
    return (double)rank * (in_g + out_g);
}
//< adapter_params

int lora_config_check(const lora_config *c, char *err, size_t errlen)
{
    if (!c->model) {
        snprintf(err, errlen, "no model");
        return -1;
    }
    if (c->rank < 1 || c->rank > c->model->hidden) {
        snprintf(err, errlen, "rank %d is outside 1 .. %d (the hidden size of %s)", c->rank, c->model->hidden,
                 c->model->key);
        return -1;
    }
    if (!(c->targets & LORA_TARGETS_ALL)) {
        snprintf(err, errlen, "no target modules (choices: %s)", lora_module_choices());
        return -1;
    }
    if (c->adapter_dtype < 0 || c->adapter_dtype >= DT_COUNT) {
        snprintf(err, errlen, "bad adapter dtype");
        return -1;
    }
    step_shape probe = decode_shape(1, 1, c->tp, precision_uniform(DT_BF16));
    return step_shape_check(c->model, &probe, err, errlen);
}

int lora_adapter_size(const lora_config *c, lora_size *out, char *err, size_t errlen)
{
    if (lora_config_check(c, err, errlen) != 0)
        return -1;
    const model_spec *m = c->model;
    lora_size s = {0};
    for (int mod = 0; mod < LORA_MODULE_COUNT; mod++) {
        if (!(c->targets & LORA_TARGET(mod)))
            continue;
        double copies = lora_module_shape_of(m, mod).copies;
        s.params += m->layers * copies * lora_module_params(m, mod, c->rank);
        s.params_per_gpu += m->layers * copies * lora_module_params_per_gpu(m, mod, c->rank, c->tp);
    }
    s.bytes = s.params * dtype_bytes(c->adapter_dtype);
    s.bytes_per_gpu = s.params_per_gpu * dtype_bytes(c->adapter_dtype);
    s.base_params = model_params(m).total;
    s.base_fraction = s.params / s.base_params;
    *out = s;
    return 0;
}

int lora_tenancy_compare(const lora_config *c, precision base_prec, int tenants, lora_tenancy *out, char *err,
                         size_t errlen)
{
    lora_size s;
    if (tenants < 1) {
        snprintf(err, errlen, "tenants must be at least 1");
        return -1;
    }
    if (lora_adapter_size(c, &s, err, errlen) != 0)
        return -1;
    lora_tenancy t = {0};
    double base = weight_bytes_at(c->model, base_prec);
    t.tenants = tenants;
    t.gpus_per_deployment = c->tp;
    t.copies_deployments = tenants;
    t.copies_gpus = tenants * c->tp;
    t.copies_weight_bytes = tenants * base;
    t.adapters_deployments = 1;
    t.adapters_gpus = c->tp;
    t.adapters_weight_bytes = base + tenants * s.bytes;
    t.gpu_ratio = (double)t.copies_gpus / t.adapters_gpus;
    *out = t;
    return 0;
}

//> slots
double lora_slot_bytes_per_gpu(const lora_config *c)
{
    lora_size s;
    char err[256];
    return lora_adapter_size(c, &s, err, sizeof err) == 0 ? s.bytes_per_gpu : NAN;
}

int lora_memory_fit(const gpu_spec *g, memory_policy pol, precision base_prec, const lora_config *slot_cfg, int slots,
                    int batch, int context, fit_check *out, char *err, size_t errlen)
{
    if (slots < 0) {
        snprintf(err, errlen, "slots must not be negative");
        return -1;
    }
    if (lora_config_check(slot_cfg, err, errlen) != 0)
        return -1;
    resident_model rm = {slot_cfg->model, base_prec, slot_cfg->tp};
    double extra = slots * lora_slot_bytes_per_gpu(slot_cfg); /* every slot at the largest rank */
    return memory_fit(g, pol, &rm, 1, extra, batch, context, out, err, errlen);
}
//< slots

double lora_load_time(const gpu_spec *g, const lora_size *s)
{
    op_cost load = {.name = "adapter_load", .kind = OP_HOST_LOAD, .comm_bytes = s->bytes_per_gpu};
    return price_op(&load, g, 0, 1, NULL); /* NAN when the row has no host bandwidth */
}

//> bgmv_ops
void lora_bgmv_ops(double tokens, double in, double out, double rank, double sets, double weight_elem_bytes,
                   double act_elem_bytes, lora_op *shrink, lora_op *expand)
{
    /* shrink: v[t] = x[t] A[idx t], A is in x r; each distinct A read once */
    shrink->flop = 2 * tokens * in * rank;
    shrink->weight_bytes = sets * in * rank * weight_elem_bytes;
    shrink->act_bytes = tokens * (in + rank) * act_elem_bytes;
    /* expand: y[t] += v[t] B[idx t], B is r x out; y is read and written */
    expand->flop = 2 * tokens * rank * out;
    expand->weight_bytes = sets * rank * out * weight_elem_bytes;
    expand->act_bytes = tokens * (rank + 2 * out) * act_elem_bytes;
}
//< bgmv_ops

//> adapter_step
int lora_step_cost_compute(const gpu_spec *g, precision prec, const lora_config *c, const lora_step_shape *s,
                           lora_step_cost *out, char *err, size_t errlen)
{
    if (lora_config_check(c, err, errlen) != 0)
        return -1;
    if (s->distinct < 1 || s->distinct > s->batch || !(s->launch_s >= 0)) {
        snprintf(err, errlen, "distinct adapters %d must be 1 .. batch %d, launch cost not negative", s->distinct,
                 s->batch);
        return -1;
    }
    const model_spec *m = c->model;
    lora_step_cost r = {0};
    step_shape shape = decode_shape(s->batch, s->context, c->tp, prec);
    shape.skip_comm = s->skip_comm;
    if (decoder_step_cost(m, g, &shape, &r.base, err, errlen) != 0)
        return -1;
    const double peak = gpu_peak_flops(g, prec.compute);
    const rate_class gemm_class = rate_class_gemm(c->adapter_dtype, prec.compute);
    const double B = s->batch, D = s->distinct, rk = c->rank;
    const double wb = dtype_bytes(c->adapter_dtype), ab = dtype_bytes(prec.act);
    for (int mod = 0; mod < LORA_MODULE_COUNT; mod++) {
        if (!(c->targets & LORA_TARGET(mod)))
            continue;
        double in_g, out_g;
        module_dims_per_gpu(m, mod, c->tp, &in_g, &out_g);
        /* In a mixture a token visits experts_active experts, and the
         * adapters read are those of the experts some token touches. */
        int mlp = mod >= LORA_GATE && m->experts > 1;
        double tokens = mlp ? B * m->experts_active : B;
        /* each distinct adapter's tokens (B / D of them) touch their own experts */
        double sets = mlp ? D * moe_experts_touched(m, B / D) : D;
        lora_op sh, ex;
        lora_bgmv_ops(tokens, in_g, out_g, rk, sets, wb, ab, &sh, &ex);
        bound_kind b1, b2;
        /* shrink and expand are one kernel each, but their fixed cost is the
         * launch cost charged below (s->launch_s): fixed share 0, so it is
         * not counted twice at measured rates */
        op_cost shrink = op_lump("lora_shrink", gemm_class, sh.flop, sh.weight_bytes, 0, sh.act_bytes);
        op_cost expand = op_lump("lora_expand", gemm_class, ex.flop, ex.weight_bytes, 0, ex.act_bytes);
        double t = price_op(&shrink, g, peak, c->tp, &b1) + price_op(&expand, g, peak, c->tp, &b2);
        double f1 = sh.flop, f2 = ex.flop, w1 = sh.weight_bytes, w2 = ex.weight_bytes, a1 = sh.act_bytes,
               a2 = ex.act_bytes;
        r.compute_bound_ops += (b1 == BOUND_COMPUTE) + (b2 == BOUND_COMPUTE);
        r.flop += m->layers * (f1 + f2);
        r.weight_bytes += m->layers * (w1 + w2);
        r.act_bytes += m->layers * (a1 + a2);
        r.time_ops += m->layers * t;
        r.launches += 2 * m->layers;
    }
    r.bytes = r.weight_bytes + r.act_bytes;
    r.intensity = r.flop / r.weight_bytes;
    r.time_launch = r.launches * s->launch_s;
    r.time_adapter = r.time_ops + r.time_launch;
    r.time = r.base.time + r.time_adapter;
    r.ratio = r.time / r.base.time;
    r.adapter_share = r.time_adapter / r.time;
    r.tokens_per_s = B / r.time;
    *out = r;
    return 0;
}
//< adapter_step

//> distinct
double lora_expected_distinct_uniform(int adapters, int batch)
{
    if (adapters < 1 || batch < 0)
        return NAN;
    double n = adapters;
    return n * (1.0 - pow(1.0 - 1.0 / n, batch));
}

double lora_expected_distinct(const double *p, int adapters, int batch)
{
    double e = 0; /* adapter i appears at least once with probability 1 - (1 - p_i)^B */
    for (int i = 0; i < adapters; i++)
        e += 1.0 - pow(1.0 - p[i], batch);
    return e;
}
//< distinct

int lora_zipf_probs(int adapters, double s, double *p)
{
    if (adapters < 1 || !(s >= 0))
        return -1;
    double sum = 0;
    for (int i = 0; i < adapters; i++)
        sum += p[i] = pow(i + 1.0, -s);
    for (int i = 0; i < adapters; i++)
        p[i] /= sum;
    return 0;
}

/* The first index whose cumulative probability exceeds u. */
static int draw_index(const double *cdf, int n, double u)
{
    int lo = 0, hi = n - 1;
    while (lo < hi) {
        int mid = lo + (hi - lo) / 2;
        if (cdf[mid] > u)
            hi = mid;
        else
            lo = mid + 1;
    }
    return lo;
}

//> simulate
int lora_distinct_simulate(int adapters, double s, int batch, int slots, int trials, unsigned long long seed,
                           lora_batch_sim *out, char *err, size_t errlen)
{
    if (adapters < 1 || !(s >= 0) || batch < 1 || slots < 0 || trials < 2) {
        snprintf(err, errlen, "a simulation needs adapters and batch >= 1, Zipf s >= 0, slots >= 0, trials >= 2");
        return -1;
    }
    double *cdf = malloc((size_t)adapters * sizeof *cdf);
    int *seen = malloc((size_t)adapters * sizeof *seen), *resident = malloc((size_t)adapters * sizeof *resident);
    if (!cdf || !seen || !resident) {
        free(cdf), free(seen), free(resident);
        snprintf(err, errlen, "out of memory for %d adapters", adapters);
        return -1;
    }
    lora_zipf_probs(adapters, s, cdf);
    for (int i = 1; i < adapters; i++)
        cdf[i] += cdf[i - 1];
    cdf[adapters - 1] = 1.0;
    for (int i = 0; i < adapters; i++)
        seen[i] = resident[i] = -1;
    rng_state r = rng_make(seed);
    double sum = 0, sum2 = 0, asum = 0, asum2 = 0;
    for (int t = 0; t < trials; t++) {
        int distinct = 0, in_slots = 0, admitted = 0;
        for (int q = 0; q < batch; q++) {
            int a = draw_index(cdf, adapters, rng_uniform(&r));
            if (seen[a] != t)
                seen[a] = t, distinct++;
            /* in queue order: runs if its adapter is resident or a slot is free */
            if (resident[a] == t)
                admitted++;
            else if (in_slots < slots)
                resident[a] = t, in_slots++, admitted++;
        }
        sum += distinct, sum2 += (double)distinct * distinct;
        asum += admitted, asum2 += (double)admitted * admitted;
    }
    free(cdf), free(seen), free(resident);
    lora_batch_sim o;
    o.mean = sum / trials;
    o.stddev = sqrt(fmax(0.0, (sum2 - trials * o.mean * o.mean) / (trials - 1)));
    o.stderr_ = o.stddev / sqrt((double)trials);
    o.admitted = slots > 0 ? asum / trials : batch;
    o.admitted_stddev = slots > 0 ? sqrt(fmax(0.0, (asum2 - trials * o.admitted * o.admitted) / (trials - 1))) : 0;
    *out = o;
    return 0;
}
//< simulate

double lora_expected_distinct_zipf(int adapters, double s, int batch)
{
    if (adapters < 1 || !(s >= 0) || batch < 0)
        return NAN;
    double *p = malloc((size_t)adapters * sizeof *p);
    if (!p)
        return NAN;
    lora_zipf_probs(adapters, s, p);
    double e = lora_expected_distinct(p, adapters, batch);
    free(p);
    return e;
}
