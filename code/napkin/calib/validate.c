#include "validate.h"

#include "calibrate.h"
#include "closed_loop.h"
#include "measured.h"
#include "measured_set.h"
#include "published.h"
#include "published_alltoall.h"
#include "rate_table.h"
#include "request.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

static const char *const SYSTEMS[] = {"h100_sxm", "h200_sxm"};
static const char *const GPUS[] = {"h100", "h200"};
static const char *const BACKENDS[] = {"trtllm", "vllm", "sglang"};

int op_validation_meets(const op_validation *v)
{
    return v->s.median_abs_err <= VALIDATE_OP_MEDIAN && v->s.p99_abs_err <= VALIDATE_OP_P99;
}

static int add(op_validation *rows, int *n, int max, const char *fit, const char *eval, const char *cls,
               const fit_summary *s)
{
    if (*n >= max || s->points == 0)
        return 0;
    op_validation *v = &rows[(*n)++];
    v->bounded = 0;
    snprintf(v->fitted_on, sizeof v->fitted_on, "%s", fit);
    snprintf(v->evaluated_on, sizeof v->evaluated_on, "%s", eval);
    snprintf(v->op_class, sizeof v->op_class, "%s", cls);
    v->s = *s;
    return 0;
}

/* The rates r (fitted elsewhere) on every class and TP degree of the set at dir. */
static int compare(const rate_model *r, const char *dir, const char *backend, const gpu_spec *g, int half,
                   const char *fit, const char *eval, op_validation *rows, int *n, int max, char *err, size_t errlen)
{
    for (int c = 0; c < RC_COUNT; c++) {
        if (c == RC_ELEMENTWISE || !r->has_op[c])
            continue;
        rate_point *p;
        int np;
        if (published_rate_points_apart(dir, (rate_class)c, g, published_quantize_apart(backend, r), &p, &np, err,
                                        errlen) != 0)
            return -1;
        np = published_half(p, np, half);
        fit_summary s;
        op_rate_errors(&r->op[c], p, np, &s);
        free(p);
        add(rows, n, max, fit, eval, rate_class_name(c), &s);
    }
    const char *impl = published_allreduce_implementation(backend);
    for (int k = 0; k < RATE_TP_SLOTS; k++) {
        if (!r->has_allreduce[k] || half)
            continue;
        link_point *p;
        int np;
        if (published_link_points(dir, impl, rate_slot_tp(k), &p, &np, err, errlen) != 0)
            return -1;
        fit_summary s;
        link_rate_errors(&r->allreduce[k], p, np, &s);
        free(p);
        char cls[24];
        snprintf(cls, sizeof cls, "allreduce_tp%d", rate_slot_tp(k));
        add(rows, n, max, fit, eval, cls, &s);
    }
    return 0;
}

int validate_ops(const char *root, const gpu_table *gpus, op_validation *rows, int max, char *err, size_t errlen)
{
    int n = 0;
    for (int si = 0; si < 2; si++)
        if (!gpu_find(gpus, GPUS[si])) {
            snprintf(err, errlen, "the GPU table has no %s row", GPUS[si]);
            return -1;
        }
    /* each engine's rates of one system on its own tables of the other */
    for (int b = 0; b < 3; b++)
        for (int si = 0; si < 2; si++) {
            const gpu_spec *g = gpu_find(gpus, GPUS[si]), *other = gpu_find(gpus, GPUS[1 - si]);
            char dir[1024], odir[1024], fit[VALIDATE_NAME_MAX], eval[VALIDATE_NAME_MAX];
            snprintf(dir, sizeof dir, "%s/%s/%s", root, SYSTEMS[si], BACKENDS[b]);
            snprintf(odir, sizeof odir, "%s/%s/%s", root, SYSTEMS[1 - si], BACKENDS[b]);
            snprintf(fit, sizeof fit, "%s/%s", SYSTEMS[si], BACKENDS[b]);
            snprintf(eval, sizeof eval, "%s/%s", SYSTEMS[1 - si], BACKENDS[b]);
            rate_model r;
            if (published_fit(dir, BACKENDS[b], g, 0, &r, NULL, NULL, err, errlen) != 0)
                return -1;
            int first = n;
            if (compare(&r, odir, BACKENDS[b], other, 0, fit, eval, rows, &n, max, err, errlen) != 0)
                return -1;
            for (int k = first; k < n; k++)
                rows[k].bounded = 1;
        }
    /* half the shapes of each system's TensorRT-LLM set */
    for (int si = 0; si < 2; si++) {
        const gpu_spec *g = gpu_find(gpus, GPUS[si]);
        char dir[1024], fit_odd[VALIDATE_NAME_MAX], eval_even[VALIDATE_NAME_MAX];
        snprintf(dir, sizeof dir, "%s/%s/trtllm", root, SYSTEMS[si]);
        rate_model odd;
        if (published_fit(dir, "trtllm", g, 1, &odd, NULL, NULL, err, errlen) != 0)
            return -1;
        snprintf(fit_odd, sizeof fit_odd, "%s/trtllm odd rows", SYSTEMS[si]);
        snprintf(eval_even, sizeof eval_even, "%s/trtllm even rows", SYSTEMS[si]);
        if (compare(&odd, dir, "trtllm", g, 2, fit_odd, eval_even, rows, &n, max, err, errlen) != 0)
            return -1;
    }
    return n;
}

int validate_alltoall(const char *root, op_validation *rows, int max, char *err, size_t errlen)
{
    /* every system the package measured an all-to-all on (tools/measured_alltoall.py), GPU row or not */
    static const char *const A2A_SYSTEMS[] = {"b200_sxm", "b300_sxm", "gb200", "gb300", "h100_sxm", "h200_sxm"};
    int n = 0;
    for (size_t si = 0; si < sizeof A2A_SYSTEMS / sizeof A2A_SYSTEMS[0]; si++)
        for (int b = 0; b < 3; b++) {
            char dir[1024], fit[VALIDATE_NAME_MAX], eval[VALIDATE_NAME_MAX];
            snprintf(dir, sizeof dir, "%s/%s/%s", root, A2A_SYSTEMS[si], BACKENDS[b]);
            fit_summary s;
            int groups;
            if (published_alltoall_heldout(dir, &s, &groups, err, errlen) != 0)
                return -1;
            snprintf(fit, sizeof fit, "%s/%s even rows", A2A_SYSTEMS[si], BACKENDS[b]);
            snprintf(eval, sizeof eval, "%s/%s odd rows", A2A_SYSTEMS[si], BACKENDS[b]);
            int first = n;
            add(rows, &n, max, fit, eval, "alltoall", &s);
            if (n > first)
                rows[first].bounded = 1;
        }
    return n;
}

static int cmp_point(const void *x, const void *y)
{
    const rate_point *a = x, *b = y;
    if (a->flop != b->flop)
        return (a->flop > b->flop) - (a->flop < b->flop);
    if (a->bytes != b->bytes)
        return (a->bytes > b->bytes) - (a->bytes < b->bytes);
    return (a->items > b->items) - (a->items < b->items);
}

/* The shapes of a and b that count the same FLOPs, bytes and items are the
 * same kernel (the features are a function of the shape): merge the sorted
 * lists and compare their times. */
static void agreement(rate_point *a, int na, rate_point *b, int nb, fit_summary *s)
{
    if (na > 0) /* a set without the class has no points (NULL): nothing to sort */
        qsort(a, (size_t)na, sizeof *a, cmp_point);
    if (nb > 0)
        qsort(b, (size_t)nb, sizeof *b, cmp_point);
    double *e = malloc((size_t)(na < nb ? (na > 0 ? na : 1) : (nb > 0 ? nb : 1)) * sizeof *e);
    int n = 0;
    for (int i = 0, j = 0; e && i < na && j < nb;) {
        int c = cmp_point(&a[i], &b[j]);
        if (c < 0)
            i++;
        else if (c > 0)
            j++;
        else
            e[n++] = b[j++].time / a[i++].time - 1;
    }
    if (e)
        summarize_errors(e, n, s);
    else
        memset(s, 0, sizeof *s);
    free(e);
}

int validate_engine_agreement(const char *root, const gpu_table *gpus, op_validation *rows, int max, char *err,
                              size_t errlen)
{
    int n = 0;
    for (int si = 0; si < 2; si++) {
        const gpu_spec *g = gpu_find(gpus, GPUS[si]);
        if (!g) {
            snprintf(err, errlen, "the GPU table has no %s row", GPUS[si]);
            return -1;
        }
        /* TensorRT-LLM's points of each class, read once for both other engines */
        char da[1024], na[VALIDATE_NAME_MAX];
        snprintf(da, sizeof da, "%s/%s/trtllm", root, SYSTEMS[si]);
        snprintf(na, sizeof na, "%s/trtllm", SYSTEMS[si]);
        rate_point *pa[RC_COUNT] = {NULL};
        int ka[RC_COUNT] = {0}, rc = 0;
        for (int c = 0; c < RC_COUNT && rc == 0; c++)
            if (c != RC_ELEMENTWISE)
                rc = published_rate_points(da, (rate_class)c, g, &pa[c], &ka[c], err, errlen);
        for (int b = 1; b < 3 && rc == 0; b++)
            for (int c = 0; c < RC_COUNT && rc == 0; c++) {
                if (c == RC_ELEMENTWISE)
                    continue;
                char db[1024], nb[VALIDATE_NAME_MAX];
                snprintf(db, sizeof db, "%s/%s/%s", root, SYSTEMS[si], BACKENDS[b]);
                snprintf(nb, sizeof nb, "%s/%s", SYSTEMS[si], BACKENDS[b]);
                rate_point *pb;
                int kb;
                if ((rc = published_rate_points(db, (rate_class)c, g, &pb, &kb, err, errlen)) != 0)
                    break;
                fit_summary s;
                agreement(pa[c], ka[c], pb, kb, &s);
                free(pb);
                add(rows, &n, max, na, nb, rate_class_name(c), &s);
            }
        for (int c = 0; c < RC_COUNT; c++)
            free(pa[c]);
        if (rc != 0)
            return -1;
    }
    return n;
}

int validate_measured_set(const char *dir, const gpu_spec *base, fit_summary *a, fit_summary *b, char *err,
                          size_t errlen)
{
    calibration c;
    gpu_spec d;
    if (calibration_load(dir, &c, err, errlen) != 0 ||
        calibrated_gpu(&c, strcmp(c.kind, "cpu") == 0 ? NULL : base, DT_FP32, &d, err, errlen) != 0)
        return -1;
    rate_model m;
    if (measured_set_fit(dir, &d, 1, &m, NULL, a, err, errlen) != 0 ||
        measured_set_fit(dir, &d, 2, &m, NULL, b, err, errlen) != 0)
        return -1;
    return 0;
}

/* ---------------------------------------------------------------- serving */

/* The model table row a measured model name stands for (Llama 3.1 has the
 * shapes of Llama 3), or NULL: the one table of measured names, the dense
 * runs' and the mixtures'. */
const char *serving_model_key(const char *name)
{
    static const struct {
        const char *suffix, *key;
    } MAP[] = {
        {"Llama-3.1-8B-Instruct-FP8", "llama3-8b"}, {"Llama-3.1-8B-Instruct", "llama3-8b"},
        {"Llama-3.1-8B", "llama3-8b"},               {"Llama-3.1-70B", "llama3-70b"},
        {"Qwen3-32B", "qwen3-32b"},
        /* the mixtures (serving_runs_moe.tsv); R1 has V3's shape (models.tsv's row says so) */
        {"DeepSeek-V3", "deepseek-v3"}, {"DeepSeek-R1", "deepseek-v3"},
        {"Qwen3-235B-A22B-FP8", "qwen3-235b-a22b"}, {"Qwen3-235B-A22B", "qwen3-235b-a22b"},
        {"gpt-oss-120b", "gpt-oss-120b"},
        /* GLM-5's attention as dense MLA (models.tsv's row says so); Kimi-K2.5's experts int4 as released */
        {"MiniMax-M2.5", "minimax-m2.5"}, {"GLM-5", "glm-5"}, {"Kimi-K2.5", "kimi-k2.5"},
        {"Qwen3.5-397B-A17B", "qwen3.5-397b-a17b"},
    };
    const char *slash = strrchr(name, '/');
    const char *base = slash ? slash + 1 : name;
    for (size_t i = 0; i < sizeof MAP / sizeof MAP[0]; i++)
        if (strcasecmp(base, MAP[i].suffix) == 0)
            return MAP[i].key;
    return NULL;
}

/* The median of n relative errors and of their sizes (fit.h's summary);
 * NAN for none. */
static void medians(double *e, int n, double *signed_median, double *abs_median)
{
    fit_summary s;
    summarize_errors(e, n, &s);
    *signed_median = n > 0 ? s.median_err : NAN;
    if (abs_median)
        *abs_median = n > 0 ? s.median_abs_err : NAN;
}

const rate_model *serving_engine_rates(engine_rates *cache, int *n, int max, const char *system, const char *backend,
                                  const char *gpu_key)
{
    for (int k = 0; k < *n; k++)
        if (strcmp(cache[k].system, system) == 0 && strcmp(cache[k].backend, backend) == 0)
            return cache[k].have ? &cache[k].rates : NULL;
    if (*n >= max)
        return NULL;
    engine_rates *c = &cache[(*n)++];
    snprintf(c->system, sizeof c->system, "%s", system);
    snprintf(c->backend, sizeof c->backend, "%s", backend);
    char name[64], e[256];
    snprintf(name, sizeof name, "published:%s/%s", system, backend);
    c->have = rate_model_builtin(name, &c->rates, e, sizeof e) == 0 || rate_model_default(gpu_key, &c->rates) == 0;
    return c->have ? &c->rates : NULL;
}

int serving_price_run(const request_setup *s, const request_options *o, const rate_model *rates,
                      double bench_overhead, double ttft, double tpot, serving_errors *out)
{
    request_setup q = *s;
    gpu_spec roof = *s->gpu, cal = *s->gpu;
    roof.rates = NULL;
    cal.rates = rates;
    request_estimate er, ec;
    char e[256];
    q.gpu = &roof;
    if (request_estimate_with(&q, o, &er, e, sizeof e) != 0)
        return -1;
    if (er.running < 1)
        return 0;
    q.gpu = &cal;
    if (request_estimate_with(&q, o, &ec, e, sizeof e) != 0)
        return -1;
    /* the answer `serve --engine` gives: the same with the engine's fitted overhead */
    request_estimate eb;
    request_options ob = *o;
    ob.overhead = bench_overhead;
    if (request_estimate_with(&q, &ob, &eb, e, sizeof e) != 0)
        return -1;
    /* the answer `serve` gives without --engine: the layout, links and MTP of the question, none of the
     * engine's schedule (prefill first, prompts mixed into decode steps) and no overhead */
    request_estimate ep;
    request_options op = *o;
    op.prefill_first = op.mixed_steps = 0;
    op.overhead = 0;
    if (request_estimate_with(&q, &op, &ep, e, sizeof e) != 0)
        return -1;
    double e2e = ttft + (s->output - 1) * tpot;
    out->tpot_roofline = er.tpot / tpot - 1;
    out->tpot = ec.tpot / tpot - 1;
    out->ttft_closed = ec.ttft_closed / ttft - 1;
    out->e2e = ec.e2e / e2e - 1;
    out->ttft_bench = eb.ttft_closed / ttft - 1;
    out->e2e_bench = eb.e2e / e2e - 1;
    out->tpot_plain = ep.tpot / tpot - 1;
    out->ttft_plain = ep.ttft_closed / ttft - 1;
    out->e2e_plain = ep.e2e / e2e - 1;
    return 1;
}

int serving_residuals(const measured_table *t, const char *name, const gpu_table *gpus, const model_table *models,
                      serving_residual **out, char *err, size_t errlen)
{
    static const char *const names[] = {"id", "model", "system", "backend", "precision", "isl",
                                        "osl", "concurrency", "tp", "pp", "ttft_s", "tpot_s"};
    enum { ID, MODEL, SYSTEM, BACKEND, PRECISION, ISL, OSL, CONC, TP, PP, TTFT, TPOT, NCOLS };
    int c[NCOLS];
    *out = NULL;
    for (int i = 0; i < NCOLS; i++)
        if ((c[i] = measured_col(t, names[i])) < 0) {
            snprintf(err, errlen, "%s: no column '%s'", name, names[i]);
            return -1;
        }
    serving_residual *v = malloc((size_t)(t->nrows > 0 ? t->nrows : 1) * sizeof *v);
    if (!v) {
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    engine_rates cache[16];
    int ncache = 0, n = 0;
    for (int r = 0; r < t->nrows; r++) {
        const char *key = serving_model_key(measured_cell(t, r, c[MODEL]));
        const model_spec *m = key ? model_find(models, key) : NULL;
        if (!m || measured_num(t, r, c[PP]) != 1)
            continue;
        serving_residual *x = &v[n++];
        memset(x, 0, sizeof *x);
        snprintf(x->id, sizeof x->id, "%s", measured_cell(t, r, c[ID]));
        snprintf(x->model, sizeof x->model, "%s", measured_cell(t, r, c[MODEL]));
        snprintf(x->model_key, sizeof x->model_key, "%s", key);
        snprintf(x->system, sizeof x->system, "%s", measured_cell(t, r, c[SYSTEM]));
        snprintf(x->backend, sizeof x->backend, "%s", measured_cell(t, r, c[BACKEND]));
        snprintf(x->precision, sizeof x->precision, "%s", measured_cell(t, r, c[PRECISION]));
        x->tp = (int)measured_num(t, r, c[TP]);
        x->prompt = (int)measured_num(t, r, c[ISL]);
        x->output = (int)measured_num(t, r, c[OSL]);
        x->concurrency = (int)measured_num(t, r, c[CONC]);
        x->tpot_err_roofline = x->tpot_err = x->ttft_closed_err = x->e2e_err = NAN;
        x->ttft_bench_err = x->e2e_bench_err = NAN;
        x->tpot_plain_err = x->ttft_plain_err = x->e2e_plain_err = NAN;
        const char *gpu_key = strcmp(x->system, "h200_sxm") == 0 ? "h200" : "h100";
        const gpu_spec *row = gpu_find(gpus, gpu_key);
        /* the kernel tables of the engine that served the runs (never the runs themselves) */
        const rate_model *rates = row ? serving_engine_rates(cache, &ncache, 16, x->system, x->backend, gpu_key) : NULL;
        if (!rates)
            continue;
        snprintf(x->calibration, sizeof x->calibration, "%s", rates->name);
        /* "fp8": fp8 weights, GEMMs and KV cache (the engines' fp8 recipes); the activations between
         * ops stay bf16 */
        precision prec = precision_uniform(DT_BF16);
        if (strcmp(x->precision, "fp8") == 0)
            prec.weights = prec.compute = prec.kv = DT_FP8;
        /* memory planned as the engine plans it by default (memory.h) */
        memory_policy pol;
        resident_model rm = {m, prec, x->tp};
        memory_policy_engine(x->backend, row, &rm, &pol);
        request_setup s = {m, row, prec, x->tp, x->prompt, x->output, x->concurrency, 0, 0, pol, 0, 1};
        /* scheduled as the engine schedules by default (closed_loop.h) */
        const engine_defaults *eng = engine_defaults_find(x->backend);
        request_options o = {.prefill_first = eng && eng->prefill_first, .mixed_steps = eng && !eng->prefill_first};
        serving_errors e;
        if (serving_price_run(&s, &o, rates, eng ? eng->overhead : 0, measured_num(t, r, c[TTFT]), measured_num(t, r, c[TPOT]), &e) != 1)
            continue;
        x->priced = 1;
        x->tpot_err_roofline = e.tpot_roofline;
        x->tpot_err = e.tpot;
        x->ttft_closed_err = e.ttft_closed;
        x->e2e_err = e.e2e;
        x->ttft_bench_err = e.ttft_bench;
        x->e2e_bench_err = e.e2e_bench;
        x->tpot_plain_err = e.tpot_plain;
        x->ttft_plain_err = e.ttft_plain;
        x->e2e_plain_err = e.e2e_plain;
    }
    if (n == 0) {
        free(v);
        v = NULL;
    }
    *out = v;
    err[0] = 0;
    return n;
}

/* The groups into rows; with `all`, every answered run's calibrated TPOT error too (*all malloc'd,
 * *n_all of them). */
static int serving_pass(const char *runs_path, const gpu_table *gpus, const model_table *models,
                        serving_validation *rows, int max, double **all, int *n_all, char *err, size_t errlen);

int validate_serving(const char *runs_path, const gpu_table *gpus, const model_table *models,
                     serving_validation *rows, int max, char *err, size_t errlen)
{
    return serving_pass(runs_path, gpus, models, rows, max, NULL, NULL, err, errlen);
}

int validate_serving_overall(const char *runs_path, const gpu_table *gpus, const model_table *models,
                             serving_validation *rows, int max, serving_overall *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    double *all = NULL;
    int n_all = 0;
    int ng = serving_pass(runs_path, gpus, models, rows, max, &all, &n_all, err, errlen);
    for (int g = 0; g < ng; g++)
        out->runs += rows[g].runs;
    out->answered = n_all;
    if (ng >= 0)
        summarize_errors(all, n_all, &out->tpot);
    free(all);
    return ng;
}

static int serving_pass(const char *runs_path, const gpu_table *gpus, const model_table *models,
                        serving_validation *rows, int max, double **all, int *n_all, char *err, size_t errlen)
{
    measured_table t;
    if (measured_table_load(runs_path, &t, err, errlen) != 0)
        return -1;
    serving_residual *v;
    int n = serving_residuals(&t, runs_path, gpus, models, &v, err, errlen);
    measured_table_free(&t);
    if (n < 0)
        return -1;
    int ng = 0;
    int *group = malloc((size_t)(n > 0 ? n : 1) * sizeof *group);
    double *e1 = malloc((size_t)(n > 0 ? n : 1) * 3 * sizeof *e1);
    if (!group || !e1) {
        free(group);
        free(e1);
        free(v);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    /* assign each run to its group */
    for (int r = 0; r < n; r++) {
        const serving_residual *x = &v[r];
        int g = -1;
        for (int k = 0; k < ng; k++)
            if (strcmp(rows[k].model, x->model) == 0 && strcmp(rows[k].system, x->system) == 0 &&
                strcmp(rows[k].backend, x->backend) == 0 && strcmp(rows[k].precision, x->precision) == 0 &&
                rows[k].tp == x->tp)
                g = k;
        if (g < 0 && ng < max) {
            g = ng++;
            memset(&rows[g], 0, sizeof rows[g]);
            snprintf(rows[g].model, sizeof rows[g].model, "%s", x->model);
            snprintf(rows[g].model_key, sizeof rows[g].model_key, "%s", x->model_key);
            snprintf(rows[g].system, sizeof rows[g].system, "%s", x->system);
            snprintf(rows[g].backend, sizeof rows[g].backend, "%s", x->backend);
            snprintf(rows[g].precision, sizeof rows[g].precision, "%s", x->precision);
            rows[g].tp = x->tp;
            snprintf(rows[g].calibration, sizeof rows[g].calibration, "%s", x->calibration);
        }
        group[r] = g;
        if (g >= 0)
            rows[g].runs++;
    }
    double *tr = e1, *tc = e1 + n, *fc = e1 + 2 * n;
    if (all) {
        *n_all = 0;
        if (!(*all = malloc((size_t)(n > 0 ? n : 1) * sizeof **all))) {
            free(group);
            free(e1);
            free(v);
            snprintf(err, errlen, "out of memory");
            return -1;
        }
    }
    for (int g = 0; g < ng; g++) {
        serving_validation *s = &rows[g];
        int k = 0;
        for (int r = 0; r < n; r++) {
            if (group[r] != g || !v[r].priced)
                continue;
            tr[k] = v[r].tpot_err_roofline;
            tc[k] = v[r].tpot_err;
            fc[k] = v[r].ttft_closed_err;
            if (all)
                (*all)[(*n_all)++] = tc[k];
            k++;
        }
        s->priced = k;
        medians(tr, k, &s->tpot_err_roofline, NULL);
        medians(tc, k, &s->tpot_err_calibrated, &s->tpot_abs_err_calibrated);
        medians(fc, k, &s->ttft_err_calibrated, &s->ttft_abs_err_calibrated);
    }
    err[0] = 0;
    free(group);
    free(e1);
    free(v);
    return ng;
}
