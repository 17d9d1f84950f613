/* Chapter 5 worked answers, computed through the napkin library.  The
 * exercise tests check these functions against hand derivations; main()
 * records the numbers the written solutions quote. */
#include "05-serving-queue.h"

#include "memory.h"
#include "notebook.h"
#include "queue.h"
#include "request.h"
#include "batch_vs_sequential.h"
#include "specs.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

double ex05_in_system(double lambda, double time)
{
    return lambda >= 0 && time >= 0 ? lambda * time : NAN;
}

double ex05_cache_bytes(const char *model_key, double requests, int tokens, const char *kv_dtype)
{
    model_spec m;
    dtype kv;
    if (model_lookup(model_key, &m) != 0 || dtype_parse(kv_dtype, &kv) != 0 || !(requests >= 0) || tokens < 0)
        return NAN;
    return requests * kv_bytes_per_sequence(&m, kv, tokens);
}

double ex05_mm1_time(double lambda, double mu)
{
    queue_formula f;
    return mm1_formula(lambda, mu, &f) ? NAN : f.time;
}

double ex05_md1_time(double lambda, double mu)
{
    queue_formula f;
    return md1_formula(lambda, mu, &f) ? NAN : f.time;
}

double ex05_mg1_wait(double lambda, double service, double cs2)
{
    queue_formula f;
    return mg1_formula(lambda, service, cs2, &f) ? NAN : f.wait;
}

double ex05_max_rate(double service, double cs2, double target)
{
    double r = mg1_max_rate(service, cs2, target);
    return r < 0 ? NAN : r;
}

double ex05_batch_capacity(const char *model_key, const char *gpu_key, int prompt, int output, int max_batch,
                           int kv_cap)
{
    model_spec m;
    gpu_spec g;
    if (model_lookup(model_key, &m) || gpu_lookup(gpu_key, &g) || max_batch < 1 || max_batch > 4096 || kv_cap < 0)
        return NAN;
    serve_workload w = {1, prompt, output, 1, precision_uniform(DT_BF16)};
    int largest = kv_cap > 0 && kv_cap < max_batch ? kv_cap : max_batch;
    resident_model rm = {&m, w.prec, 1};
    fit_check f;
    char why[256];
    if (memory_fit(&g, memory_policy_default(), &rm, 1, 0, largest, prompt + output, &f, why, sizeof why) ||
        !f.fits)
        return NAN; /* a capacity for batches that cannot be held is no answer */
    double *times = malloc((size_t)max_batch * sizeof *times);
    char err[256];
    if (!times || serve_batch_times(&m, &g, &w, max_batch, times, err, sizeof err)) {
        free(times);
        return NAN;
    }
    queue_config c = {1, max_batch, kv_cap, 0, times, SERVICE_FIXED, 1, 0};
    double cap = queue_capacity(&c);
    free(times);
    return cap;
}

int ex05_replicas_needed(double lambda, double capacity, double max_load)
{
    if (!(lambda >= 0) || !(capacity > 0) || !(max_load > 0) || max_load > 1)
        return -1;
    /* Each replica may carry max_load * capacity; round up, but not past an
     * exact fit (100 / 25 is 4 replicas, not 5). */
    double n = lambda / (max_load * capacity);
    return (int)ceil(n - 1e-9);
}

#ifndef NB_EXERCISE_TEST
/* Exercises 8-10: one request end to end (request.h), LLaMA-3-8B bf16 on
 * H100s at the datasheet's ceilings, prompts of 1024 and outputs of 512. */
static request_estimate e2e(const model_spec *m, const gpu_spec *g, int tp, int prompt, int c, int chunk)
{
    request_setup s = {m, g, precision_uniform(DT_BF16), tp, prompt, 512, c, chunk, 0, memory_policy_default(), 2.0, 1};
    request_estimate e;
    char err[256];
    if (request_estimate_compute(&s, &e, err, sizeof err) != 0 || !e.fit.fits) {
        fprintf(stderr, "solutions/05: %s\n", e.fit.fits ? err : "an exercise's configuration does not fit");
        exit(1);
    }
    return e;
}

static void end_to_end_answers(void)
{
    model_spec m = model_builtin("llama3-8b"), m70 = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    /* 8. cost per million tokens at 1 and at 128 in flight, $2 a GPU-hour */
    request_estimate a = e2e(&m, &g, 1, 1024, 1, 0), b = e2e(&m, &g, 1, 1024, 128, 0);
    nb_value("ch05_ex8_cost1", "%.2f", a.cost_per_m_output);
    nb_value("ch05_ex8_cost128", "%.3f", b.cost_per_m_output);
    nb_value("ch05_ex8_ratio", "%.0f", a.cost_per_m_output / b.cost_per_m_output);
    nb_value("ch05_ex8_d1_ms", "%.2f", a.decode_step * 1e3);
    nb_value("ch05_ex8_d128_ms", "%.2f", b.decode_step * 1e3);
    nb_value("ch05_ex8_tpot128_ms", "%.1f", b.tpot * 1e3);
    /* 9. a 200 ms TTFT budget: the longest prompt one H100 prefills in time, alone */
    int longest = 0;
    for (int n = 256; n <= 65536; n += 256) {
        request_setup s = {&m, &g, precision_uniform(DT_BF16), 1, n, 512, 1, 0, 0, memory_policy_default(), 0, 1};
        request_estimate e;
        char err[256];
        if (request_estimate_compute(&s, &e, err, sizeof err) != 0 || !e.fit.fits || e.ttft > 0.2)
            break;
        longest = n;
    }
    nb_value("ch05_ex9_longest", "%d", longest);
    request_estimate chunk = e2e(&m, &g, 1, 1024, 64, 256), whole = e2e(&m, &g, 1, 1024, 64, 0);
    nb_value("ch05_ex9_whole_ttft_ms", "%.0f", whole.ttft * 1e3);
    nb_value("ch05_ex9_chunk_ttft_ms", "%.0f", chunk.ttft * 1e3);
    nb_value("ch05_ex9_whole_tpot_ms", "%.1f", whole.tpot * 1e3);
    nb_value("ch05_ex9_chunk_tpot_ms", "%.1f", chunk.tpot * 1e3);
    /* 10. LLaMA-3-70B on up to 8 H100s, TPOT <= 50 ms: the cheapest degree */
    int best_tp = 0;
    double best_gs = 0;
    for (int tp = 2; tp <= 8; tp *= 2) {
        request_setup s = {&m70, &g, precision_uniform(DT_BF16), tp, 1024, 512, 1, 0, 0, memory_policy_default(), 2.0, 1};
        char err[256], name[48];
        int c = request_best_concurrency(&s, 0, 0.05, err, sizeof err);
        if (c <= 0)
            continue;
        request_estimate e = e2e(&m70, &g, tp, 1024, c, 0);
        snprintf(name, sizeof name, "ch05_ex10_c_tp%d", tp);
        nb_value(name, "%d", c);
        snprintf(name, sizeof name, "ch05_ex10_gs_tp%d", tp);
        nb_value(name, "%.2f", e.gpu_seconds_per_request);
        if (!best_tp || e.gpu_seconds_per_request < best_gs) {
            best_tp = tp;
            best_gs = e.gpu_seconds_per_request;
        }
    }
    nb_value("ch05_ex10_best_tp", "%d", best_tp);
}

int main(void)
{
    /* 1. Little. */
    nb_value("ch05_ex_l", "%.0f", ex05_in_system(40, 6));
    model_spec m8;
    if (model_lookup("llama3-8b", &m8))
        return 1;
    nb_value("ch05_ex_l_kv_gb", "%.1f", ex05_in_system(40, 6) * kv_bytes_per_sequence(&m8, DT_BF16, 1500) / GB);
    nb_value("ch05_ex_l_doubled", "%.0f", ex05_in_system(40, 12));
    nb_value("ch05_ex_kv_per_token", "%.0f", kv_bytes_per_token(&m8, DT_BF16));

    /* 2. M/M/1 against M/D/1: S = 0.2 s, lambda 4/s. */
    nb_value("ch05_ex_rho", "%.1f", 4 * 0.2);
    nb_value("ch05_ex_mm1", "%.2f", ex05_mm1_time(4, 5));
    nb_value("ch05_ex_md1", "%.2f", ex05_md1_time(4, 5));
    nb_value("ch05_ex_mm1_wait", "%.2f", ex05_mg1_wait(4, 0.2, 1));
    nb_value("ch05_ex_md1_wait", "%.2f", ex05_mg1_wait(4, 0.2, 0));

    /* 3. The knee: S = 1 s, fixed. */
    nb_value("ch05_ex_rate_w2", "%.3f", ex05_max_rate(1, 0, 2));
    nb_value("ch05_ex_rate_w5", "%.3f", ex05_max_rate(1, 0, 5));
    nb_value("ch05_ex_rate_w2_mm1", "%.3f", ex05_max_rate(1, 1, 2));
    nb_value("ch05_ex_rate_w5_mm1", "%.3f", ex05_max_rate(1, 1, 5));

    /* 4. Variable output lengths: S = 2 s, cs2 = 0.5, lambda = 0.4. */
    nb_value("ch05_ex_pk_fixed", "%.1f", ex05_mg1_wait(0.4, 2, 0));
    nb_value("ch05_ex_pk_half", "%.1f", ex05_mg1_wait(0.4, 2, 0.5));
    nb_value("ch05_ex_pk_exp", "%.1f", ex05_mg1_wait(0.4, 2, 1));

    /* 5. A batch server's capacity, datasheet H100. */
    double cap64 = ex05_batch_capacity("llama3-8b", "h100", 512, 256, 64, 0);
    double cap16 = ex05_batch_capacity("llama3-8b", "h100", 512, 256, 64, 16);
    double cap1 = ex05_batch_capacity("llama3-8b", "h100", 512, 256, 1, 0);
    nb_value("ch05_ex_cap64", "%.1f", cap64);
    nb_value("ch05_ex_cap16", "%.1f", cap16);
    nb_value("ch05_ex_cap1", "%.2f", cap1);
    {
        gpu_spec h100;
        if (gpu_lookup("h100", &h100))
            return 1;
        serve_workload w = {64, 512, 256, 1, precision_uniform(DT_BF16)};
        serve_result b;
        char err[256];
        if (serve_one_batch(&m8, &h100, &w, &b, err, sizeof err)) {
            fprintf(stderr, "%s\n", err);
            return 1;
        }
        nb_value("ch05_ex_prefill_tokens", "%d", w.requests * w.prompt);
        nb_value("ch05_ex_prefill_s", "%.2f", b.prefill);
        nb_value("ch05_ex_step64_ms", "%.1f", 1e3 * b.decode / (w.output - 1));
        nb_value("ch05_ex_s64", "%.2f", b.total);
        nb_value("ch05_ex_stream_gb", "%.1f", (weight_bytes(&m8, DT_BF16) - 2.0 * m8.vocab * m8.hidden) / GB);
    }

    /* 6. Replicas for 100 requests/s at no more than 80% of capacity. */
    nb_value("ch05_ex_replicas", "%d", ex05_replicas_needed(100, cap64, 0.8));
    nb_value("ch05_ex_replicas_cap16", "%d", ex05_replicas_needed(100, cap16, 0.8));
    nb_value("ch05_ex_replicas_one", "%d", ex05_replicas_needed(100, cap1, 0.8));
    end_to_end_answers();
    return 0;
}
#endif
