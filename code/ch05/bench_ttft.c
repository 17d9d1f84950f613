/* Chapter 5, the closed loop as a benchmark runs it: LLaMA-3.1-8B-Instruct
 * bf16 on one H100 under TensorRT-LLM, NVIDIA's measured serving runs
 * (code/specs/measured/serving_runs.tsv) against napkin serve's closed form
 * (closed_loop.h) and its replay (simulate.h), at the engine's token budget
 * and fitted per-request overhead.
 *
 * Writes 05-bench-runs.tsv (the runs of prompt 1024, output 512, tp 1: the
 * measured TTFT at each concurrency, held out or fitted on, beside the
 * closed form, the roofline's and the simulation's mean), 05-bench-curve.tsv
 * (the closed form from 1 to 128 in flight, the clock started when a
 * request is sent and, for comparison, when it is made ready),
 * 05-bench-time.tsv (every request of one simulated benchmark at 64 in
 * flight: when it was sent and its TTFT) and the values the section quotes:
 * the group's medians at each concurrency over all its runs (TTFT and the
 * departure interval, latency over concurrency), and its held-out error. */
#include "closed_loop.h"
#include "measured.h"
#include "notebook.h"
#include "rate_table.h"
#include "request.h"
#include "simulate.h"
#include "validate.h"
#include "validate_ttft.h"
#include "split.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define RUNS "code/specs/measured/serving_runs.tsv"
#define MODEL "meta-llama/Llama-3.1-8B-Instruct"
#define PROMPT 1024
#define OUTPUT 512
#define TIME_C 64 /* the benchmark whose requests the time figure shows */
#define SEED 5

static const int CONC[] = {8, 16, 32, 64, 128}; /* the concurrencies measured */
#define NC 5

static void die(const char *err)
{
    fprintf(stderr, "bench_ttft: %s\n", err);
    exit(1);
}

static double median(double *x, int n)
{
    sim_stats s;
    sim_stats_of(x, n, &s);
    return s.p50;
}

typedef struct {
    model_spec m;
    gpu_spec roof, cal;
    rate_model rates;
    const engine_defaults *engine;
} setup;

static request_estimate estimate(const setup *u, int c, int roofline, int departure_wait)
{
    request_setup s = {&u->m, roofline ? &u->roof : &u->cal, precision_uniform(DT_BF16), 1, PROMPT, OUTPUT, c, 0, 0,
                       memory_policy_default(), 0, 1};
    request_options o = {.budget = u->engine->budget, .overhead = u->engine->overhead,
                         .departure_wait = departure_wait};
    request_estimate e;
    char err[256];
    if (request_estimate_with(&s, &o, &e, err, sizeof err) != 0)
        die(err);
    if (!e.fit.fits)
        die("a measured concurrency does not fit");
    return e;
}

/* serve --simulate's replay of the benchmark at c in flight (its defaults:
 * overheads exponential around h, outputs 10 % apart, seed 1). */
static sim_result simulate(const request_estimate *e, const setup *u, int c, int keep)
{
    sim_setup s = {{c, PROMPT, OUTPUT, u->engine->budget, 0, u->engine->overhead, 0, u->engine->prefill_first}, e->costs, 0, 1, SEED,
                   SIM_SPREAD};
    sim_result r;
    char err[256];
    if (sim_run(&s, keep, &r, err, sizeof err) != 0)
        die(err);
    return r;
}

/* The group's medians at each measured concurrency, over all its runs. */
static void group_medians(const measured_table *t)
{
    int ci[7];
    static const char *const cols[] = {"model", "system", "backend", "concurrency", "osl", "ttft_s", "tpot_s"};
    for (int k = 0; k < 7; k++)
        if ((ci[k] = measured_col(t, cols[k])) < 0)
            die("serving_runs.tsv: a column is missing");
    double *ttft = malloc((size_t)t->nrows * sizeof *ttft), *dep = malloc((size_t)t->nrows * sizeof *dep);
    if (!ttft || !dep)
        die("out of memory");
    for (int j = 0; j < NC; j++) {
        int n = 0;
        for (int i = 0; i < t->nrows; i++) {
            if (strcmp(measured_cell(t, i, ci[0]), MODEL) || strcmp(measured_cell(t, i, ci[1]), "h100_sxm") ||
                strcmp(measured_cell(t, i, ci[2]), "trtllm") || measured_num(t, i, ci[3]) != CONC[j])
                continue;
            double f = measured_num(t, i, ci[5]), o = measured_num(t, i, ci[4]);
            ttft[n] = f;
            dep[n++] = (f + (o - 1) * measured_num(t, i, ci[6])) / CONC[j]; /* latency over concurrency */
        }
        if (n == 0)
            die("no run of the group at a measured concurrency");
        char name[64];
        double mt = median(ttft, n), md = median(dep, n);
        snprintf(name, sizeof name, "ch05_bench_c%d_runs", CONC[j]);
        nb_value(name, "%d", n);
        snprintf(name, sizeof name, "ch05_bench_c%d_ttft_ms", CONC[j]);
        nb_value(name, "%.0f", mt * 1e3);
        snprintf(name, sizeof name, "ch05_bench_c%d_dep_ms", CONC[j]);
        nb_value(name, "%.0f", md * 1e3);
        snprintf(name, sizeof name, "ch05_bench_c%d_ratio", CONC[j]);
        nb_value(name, "%.1f", mt / md);
    }
    free(ttft), free(dep);
}

/* The runs of the figure's slice: measured, held out or not, beside the models. */
static void slice_runs(const measured_table *t, const setup *u)
{
    int ci[9];
    static const char *const cols[] = {"id", "model", "system", "backend", "isl", "osl", "tp", "concurrency", "ttft_s"};
    for (int k = 0; k < 9; k++)
        if ((ci[k] = measured_col(t, cols[k])) < 0)
            die("serving_runs.tsv: a column is missing");
    FILE *f = nb_data_open("05-bench-runs.tsv");
    fprintf(f, "# %s bf16, 1 x H100, TensorRT-LLM, prompt %d, output %d: measured TTFT (held_out 1: the"
               " overhead was not fitted on it), the closed form (calibrated, roofline) and serve --simulate's"
               " mean\nconcurrency\tmeasured\theld_out\tclosed\tclosed_roofline\tsim_mean\n",
            MODEL, PROMPT, OUTPUT);
    int found = 0;
    for (int j = 0; j < NC; j++)
        for (int i = 0; i < t->nrows; i++) {
            if (strcmp(measured_cell(t, i, ci[1]), MODEL) || strcmp(measured_cell(t, i, ci[2]), "h100_sxm") ||
                strcmp(measured_cell(t, i, ci[3]), "trtllm") || measured_num(t, i, ci[4]) != PROMPT ||
                measured_num(t, i, ci[5]) != OUTPUT || measured_num(t, i, ci[6]) != 1 ||
                measured_num(t, i, ci[7]) != CONC[j])
                continue;
            int c = CONC[j], held = run_is_held_out(measured_cell(t, i, ci[0]));
            double m = measured_num(t, i, ci[8]);
            request_estimate e = estimate(u, c, 0, 0), r = estimate(u, c, 1, 0);
            sim_result s = simulate(&e, u, c, 0);
            fprintf(f, "%d\t%.6g\t%d\t%.6g\t%.6g\t%.6g\n", c, m, held, e.ttft_closed, r.ttft_closed, s.ttft.mean);
            char name[64];
            snprintf(name, sizeof name, "ch05_bench_s%d_measured_ms", c);
            nb_value(name, "%.0f", m * 1e3);
            snprintf(name, sizeof name, "ch05_bench_s%d_closed_ms", c);
            nb_value(name, "%.0f", e.ttft_closed * 1e3);
            snprintf(name, sizeof name, "ch05_bench_s%d_roof_ms", c);
            nb_value(name, "%.0f", r.ttft_closed * 1e3);
            snprintf(name, sizeof name, "ch05_bench_s%d_sim_ms", c);
            nb_value(name, "%.0f", s.ttft.mean * 1e3);
            snprintf(name, sizeof name, "ch05_bench_s%d_dep_ms", c);
            nb_value(name, "%.0f", e.bench.departure * 1e3);
            snprintf(name, sizeof name, "ch05_bench_s%d_held_out", c);
            nb_value(name, "%s", held ? "held out" : "fitted on");
            found++;
        }
    fclose(f);
    if (found != NC)
        die("the slice does not have one run at each measured concurrency");
}

int main(void)
{
    setup u;
    u.m = model_builtin("llama3-8b");
    u.roof = gpu_builtin("h100");
    u.cal = gpu_builtin_calibrated("h100", "published:h100_sxm/trtllm", &u.rates);
    u.engine = engine_defaults_find("trtllm");
    if (!u.engine)
        die("no trtllm engine row");
    measured_table t;
    char err[512];
    if (measured_table_load(RUNS, &t, err, sizeof err) != 0)
        die(err);
    nb_value("ch05_bench_overhead_ms", "%.0f", u.engine->overhead * 1e3);
    nb_value("ch05_bench_budget", "%d", u.engine->budget);
    nb_value("ch05_bench_prompt", "%d", PROMPT);
    nb_value("ch05_bench_output", "%d", OUTPUT);
    group_medians(&t);
    slice_runs(&t, &u);
    measured_table_free(&t);

    /* the closed form's parts at 8 and TIME_C in flight */
    request_estimate e8 = estimate(&u, 8, 0, 0), w8 = estimate(&u, 8, 0, 1), e64 = estimate(&u, TIME_C, 0, 0);
    nb_value("ch05_bench_prefill_ms", "%.1f", e8.ttft * 1e3);
    nb_value("ch05_bench_s8_wait_ms", "%.0f", w8.ttft_closed * 1e3);
    nb_value("ch05_bench_time_c", "%d", TIME_C);
    nb_value("ch05_bench_t_burst_ms", "%.0f", e64.bench.burst * 1e3);
    nb_value("ch05_bench_t_steady_ms", "%.0f", e64.bench.steady * 1e3);
    nb_value("ch05_bench_t_step_ms", "%.1f", e64.bench.step * 1e3);
    nb_value("ch05_bench_t_arrivals", "%.2f", e64.bench.arrivals);
    nb_value("ch05_bench_t_requests", "%d", CLOSED_LOOP_ROUNDS * TIME_C);

    FILE *f = nb_data_open("05-bench-curve.tsv");
    fprintf(f, "# the closed form, calibrated, at the engine's budget and overhead; departure_wait: the clock"
               " started when the request is made ready\nconcurrency\tclosed\tdeparture_wait\tprefill\n");
    for (int c = 1; c <= 128; c += c < 8 ? 1 : 4) {
        request_estimate a = estimate(&u, c, 0, 0), b = estimate(&u, c, 0, 1);
        fprintf(f, "%d\t%.6g\t%.6g\t%.6g\n", c, a.ttft_closed, b.ttft_closed, a.ttft);
    }
    fclose(f);

    /* one benchmark at TIME_C, request by request */
    sim_result s = simulate(&e64, &u, TIME_C, 1);
    int n = CLOSED_LOOP_ROUNDS * TIME_C;
    double burst = 0, steady = 0;
    f = nb_data_open("05-bench-time.tsv");
    fprintf(f, "# serve --simulate at %d in flight, %d requests: when each was sent and its TTFT; the closed"
               " form's burst and steady means beside each\nsent\tttft\tburst\tclosed_burst\tclosed_steady\n",
            TIME_C, n);
    for (int i = 0; i < n; i++) {
        double x = s.requests[i].first - s.requests[i].sent;
        fprintf(f, "%.6g\t%.6g\t%d\t%.6g\t%.6g\n", s.requests[i].sent, x, i < TIME_C, e64.bench.burst,
                e64.bench.steady);
        if (i < TIME_C)
            burst += x / TIME_C;
        else
            steady += x / (n - TIME_C);
    }
    fclose(f);
    nb_value("ch05_bench_t_sim_burst_ms", "%.0f", burst * 1e3);
    nb_value("ch05_bench_t_sim_steady_ms", "%.0f", steady * 1e3);
    nb_value("ch05_bench_t_sim_p99_ms", "%.0f", s.ttft.p99 * 1e3);
    nb_value("ch05_bench_t_sim_p50_ms", "%.0f", s.ttft.p50 * 1e3);
    nb_value("ch05_bench_t_makespan_s", "%.1f", s.makespan);
    sim_result_free(&s);

    /* the group's held-out error (napkin validate's table) */
    gpu_table gt;
    model_table mt;
    ttft_validation *v = malloc(sizeof *v);
    if (!v || gpu_table_builtin(&gt, err, sizeof err) || model_table_builtin(&mt, err, sizeof err) ||
        validate_ttft(RUNS, &gt, &mt, v, err, sizeof err))
        die(v ? err : "out of memory");
    int g = -1;
    for (int k = 0; k < v->ng; k++)
        if (!strcmp(v->g[k].model, MODEL) && !strcmp(v->g[k].system, "h100_sxm") && !strcmp(v->g[k].backend, "trtllm"))
            g = k;
    if (g < 0)
        die("no validation group for the runs");
    nb_value("ch05_bench_val_runs", "%d", v->g[g].answered);
    nb_value("ch05_bench_val_abs_pct", "%.0f", 100 * v->g[g].ttft_abs);
    nb_value("ch05_bench_val_bias_pct", "%+.0f", 100 * v->g[g].ttft_bias);
    nb_value("ch05_bench_val_roof_abs_pct", "%.0f", 100 * v->g[g].ttft_roof_abs);
    nb_value("ch05_bench_val_all_abs_pct", "%.1f", 100 * v->ttft_abs);
    nb_value("ch05_bench_val_all_runs", "%d", v->answered);
    nb_value("ch05_bench_val_all_roof_pct", "%.1f", 100 * v->ttft_roof_abs);
    free(v);
    return 0;
}
