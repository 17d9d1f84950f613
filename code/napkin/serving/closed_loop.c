/* Time to first token as a closed-loop benchmark measures it: see closed_loop.h. */
#include "closed_loop.h"

#include <math.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

double step_costs_time(const step_costs *k, int decodes, int prompt_tokens)
{
    if (decodes <= 0 && prompt_tokens <= 0)
        return 0;
    /* decodes alone read the weights their tokens route to (closed_loop.h) */
    const double w = prompt_tokens <= 0 && k->decode_weight_read > 0 ? k->decode_weight_read : k->weight_read;
    return w + decodes * k->per_decode + prompt_tokens * k->per_token;
}

/* Budgets, each read in the engine's source: TensorRT-LLM's
 * BuildConfig.max_num_tokens defaults to 8192 (tensorrt_llm/builder.py)
 * [@trtllm-tuning]; vLLM's max_num_batched_tokens defaults to 8192 for its
 * OpenAI-compatible server on a GPU of 70 GiB or more that is not an A100,
 * 2048 below (vllm/engine/arg_utils.py) [@vllm-batch-defaults]; SGLang's
 * chunked_prefill_size defaults to 8192 on H100 and H200
 * (python/sglang/srt/server_args.py; older releases: 8192 from 25 GB up)
 * [@sglang-chunked-prefill-default].  The releases that served the measured
 * runs are not the ones read; their defaults are assumed unchanged.
 * Overheads: fitted on the fitting half of code/specs/measured/serving_runs.tsv
 * (napkin validate prints the fit; tests/test_closed_loop.c refits it). */
/* Scheduling: TensorRT-LLM's in-flight batching puts context chunks and
 * generation requests in one batch [@trtllm-tuning]; vLLM V1's scheduler
 * fills each step's token budget with the running decodes first, then
 * waiting prompts [@vllm-chunked-prefill]; SGLang's event loop runs a
 * prefill batch whenever prompts wait (get_new_batch_prefill before the
 * decode batch, python/sglang/srt/managers/scheduler.py) and mixes decodes
 * into it only with --enable-mixed-chunk, off by default
 * [@sglang-mixed-chunk]: prefill first. */
static const engine_defaults ENGINES[] = {
    {"trtllm", 8192, 0.09208, "TensorRT-LLM max_num_tokens", 0},
    {"vllm", 8192, 0.00782, "vLLM max_num_batched_tokens (API server, GPU >= 70 GiB)", 0},
    {"sglang", 8192, 0.0, "SGLang chunked_prefill_size (GPU 80-160 GB)", 1},
};

const engine_defaults *engine_defaults_find(const char *name)
{
    for (size_t i = 0; name && i < sizeof ENGINES / sizeof ENGINES[0]; i++)
        if (strcmp(ENGINES[i].name, name) == 0)
            return &ENGINES[i];
    return NULL;
}

const char *engine_names(void)
{
    return "trtllm, vllm, sglang";
}

int bench_requests(const bench_setup *b)
{
    return b->requests > 0 ? b->requests : CLOSED_LOOP_ROUNDS * b->concurrency;
}

int bench_budget(const bench_setup *b)
{
    return b->budget > 0 ? b->budget : CLOSED_LOOP_DEFAULT_BUDGET;
}

//> burst_ttft
double closed_loop_burst_ttft(const bench_setup *b, const step_costs *k, double *ttft)
{
    const int C = b->concurrency, P = b->prompt, B = bench_budget(b);
    int next = 0, progress = 0, decoding = 0;
    double t = 0, sum = 0;
    while (next < C) {
        /* decodes go first (not at all, prefill first); the budget's rest takes prompt tokens in order */
        int riding = b->prefill_first ? 0 : decoding;
        int room = B - riding;
        if (room < 1)
            room = 1;
        int q = 0, first = next;
        while (room > 0 && next < C) {
            int take = P - progress < room ? P - progress : room;
            progress += take;
            q += take;
            room -= take;
            if (progress == P) {
                next++;
                progress = 0;
            }
        }
        t += step_costs_time(k, riding, q);
        for (int i = first; i < next; i++) { /* their last prompt token was in this step */
            sum += t;
            if (ttft)
                ttft[i] = t;
        }
        if (b->output > 1)
            decoding += next - first;
    }
    return sum / C;
}
//< burst_ttft

//> steady_state
/* The mean step when requests reach the engine at rate X, spread at random
 * (the clients' overheads vary, so their requests drift apart): a step
 * carries the prompts that arrived during the one before, m = X T of them
 * on average, and the decodes of the requests that started in the last
 * O - 1 steps, n = m (O - 1).  T = w + n c_dec + m P c_tok gives
 * T = w / (1 - X (P c_tok + (O - 1) c_dec)); infinite past saturation. */
static double steady_step(const bench_setup *b, const step_costs *k, double X)
{
    double den = 1 - X * (b->prompt * k->per_token + (b->output - 1) * k->per_decode);
    return den > 0 ? k->weight_read / den : INFINITY;
}

/* The steady state at rate X.  The prompts a step carries are a Poisson
 * count of mean X T_prev, so the step time T_next = a + beta Poisson(X T_prev)
 * (beta = P c_tok) has variance V = beta^2 X T / (1 - (beta X)^2).  A request
 * lands in a step chosen in proportion to its length (mean E[T^2] / T) and
 * waits for the rest of it, half on average; then its own step carries the
 * decodes, its prompt and the others that arrived in the step it landed in. */
static void steady_at(const bench_setup *b, const step_costs *k, double X, bench_ttft *r)
{
    const double beta = b->prompt * k->per_token;
    double T = steady_step(b, k, X);
    double m = X * T, n = m * (b->output - 1);
    double V = beta * beta * X * T / (1 - beta * beta * X * X);
    double landed = T + V / T; /* E[T^2] / E[T] */
    r->step = T;
    r->arrivals = m;
    r->decodes = n;
    r->engine = landed / 2 + k->weight_read + n * k->per_decode + beta + beta * X * landed;
    r->cycle = b->overhead + r->engine + (b->output - 1) * T;
}

/* The steady state of the closed loop: the rate X at which C clients, each
 * cycling through its overhead, its TTFT and O - 1 steps, keep the engine
 * busy (C = X cycle, Little's law on the clients).  X cycle grows with X,
 * so bisection finds it. */
static void closed_loop_steady(const bench_setup *b, const step_costs *k, bench_ttft *r)
{
    const double per = b->prompt * k->per_token + (b->output - 1) * k->per_decode;
    double lo = 0, hi = per > 0 ? 1 / per : 1e9;
    for (int i = 0; i < 200; i++) {
        double X = 0.5 * (lo + hi);
        steady_at(b, k, X, r);
        if (X * r->cycle < b->concurrency)
            lo = X;
        else
            hi = X;
    }
    steady_at(b, k, lo, r);
    r->rate = lo;
}

/* A prefill-first engine's steady state: every round a cohort (closed_loop.h). */
static void cohort_steady(const bench_setup *b, const step_costs *k, double burst_engine, double prefill_end,
                          bench_ttft *r)
{
    const int C = b->concurrency, O = b->output;
    const double d = step_costs_time(k, C, 0);
    r->engine = burst_engine;
    r->decodes = C;
    r->arrivals = C;
    r->step = O > 1 ? d + (prefill_end - burst_engine) / (O - 1) : d;
    r->cycle = b->overhead + prefill_end + (O - 1) * d;
    r->rate = C / r->cycle;
}
//< steady_state

int closed_loop_bench_ttft(const bench_setup *b, const step_costs *k, bench_ttft *out)
{
    const int C = b->concurrency, N = bench_requests(b);
    if (C < 1 || N < C || bench_budget(b) < 1 || b->prompt < 1 || b->output < 1 || !(b->overhead >= 0) ||
        !(k->weight_read > 0) || !(k->per_token >= 0) || !(k->per_decode >= 0) || !(k->decode_weight_read >= 0))
        return -1;
    const double h = b->overhead;
    bench_ttft r = {0};
    const double burst = closed_loop_burst_ttft(b, k, NULL);
    if (b->prefill_first) {
        double *t = malloc((size_t)C * sizeof *t);
        if (!t)
            return -1;
        closed_loop_burst_ttft(b, k, t);
        cohort_steady(b, k, burst, t[C - 1], &r); /* the last prompt ends the round's prefill */
        free(t);
    } else
        closed_loop_steady(b, k, &r);
    r.departure = r.cycle / C;
    r.burst = h + burst;
    r.steady = h + (b->departure_wait ? r.departure : 0) + r.engine;
    r.mean = (C * r.burst + (N - C) * r.steady) / N;
    *out = r;
    return 0;
}
