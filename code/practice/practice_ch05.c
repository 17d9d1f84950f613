/* Chapter 5's exercise variants: 5.1 (Little's law in an interview), 5.2
 * (fixed against random service), 5.3 (where is the knee?), 5.4 (variable
 * output lengths), 5.5 and 5.6 (what a batch server carries, and how many
 * replicas), 5.8 (cost per million tokens), 5.9 (a TTFT budget) and 5.10
 * (choosing the parallelism); 5.7 asks for reasons only.  The printed
 * numbers are seed 0; other seeds draw from the lists below, which keep one
 * server between half and nine tenths busy (the regime where the service
 * time's variance matters and the queue is stable), the 5.1 cache inside one
 * server of eight H100s, every batch of 5.5 inside one H100, and in 5.10 a
 * target every degree meets with a cheapest degree that is not the fastest. */
#include "practice_chapters.h"
#include "practice_set.h"
#include "practice_draw.h"

#include "memory.h"
#include "queue.h"
#include "request.h"
#include "rng.h"
#include "batch_vs_sequential.h"
#include "specs.h"

#include <math.h>

static double mg1(double lambda, double service, double cs2, int time)
{
    queue_formula f;
    if (mg1_formula(lambda, service, cs2, &f) != 0)
        return NAN;
    return time ? f.time : f.wait;
}

static const double ex1_rate[] = {10, 20, 25, 40, 50, 80, 100};
static const double ex1_latency[] = {2, 3, 4, 5, 6, 8, 10};
static const double ex1_tokens[] = {500, 1000, 1500, 2000, 3000, 4000};

static int exercise_1(practice_set *s, rng_state *r)
{
    model_spec m;
    if (model_lookup("llama3-8b", &m) != 0)
        return -1;
    gpu_spec h100 = gpu_builtin("h100");
    double kv = kv_bytes_per_token(&m, DT_BF16);
    double lambda = 40, w = 6, tokens = 1500;
    for (int attempt = 0; attempt < 64; attempt++) {
        lambda = practice_pick(r, s->seed, ex1_rate, PRACTICE_COUNT(ex1_rate), 3);
        w = practice_pick(r, s->seed, ex1_latency, PRACTICE_COUNT(ex1_latency), 4);
        tokens = practice_pick(r, s->seed, ex1_tokens, PRACTICE_COUNT(ex1_tokens), 2);
        /* the doubled load's cache still fits one server of eight GPUs */
        if (2 * lambda * w * tokens * kv <= 8 * h100.mem_bytes)
            break;
        lambda = 40, w = 6, tokens = 1500;
    }
    practice_add_input(s, "ch05_ex1_rate", lambda, "%g", PRACTICE_RANGE_OF(ex1_rate));
    practice_add_input(s, "ch05_ex1_latency", w, "%g", PRACTICE_RANGE_OF(ex1_latency));
    practice_add_input(s, "ch05_ex1_tokens", tokens, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex1_tokens));
    double l = lambda * w;
    practice_part *p = practice_add_part(s, "5.1(a)", 1, "requests in flight", "requests", JUDGE_RELATIVE, l,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, lambda / w, "Little's law multiplies: in flight = rate x time in system");
    double gb = l * tokens * kv / 1e9;
    p = practice_add_part(s, "5.1(b)", 1, "GB of KV cache they hold", "GB", JUDGE_RELATIVE, gb, JUDGE_HAND_TOL);
    practice_add_slip(p, gb * m.heads / m.kv_heads, "that counts the 32 attention heads; the cache has 8 KV heads");
    practice_add_slip(p, gb * 2, "bf16 is 2 bytes, and K and V are counted once each");
    p = practice_add_part(s, "5.1(c)", 1, "requests in flight after the deploy", "requests", JUDGE_RELATIVE, 2 * l,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, l, "latency doubled at the same traffic: Little's law doubles what is in flight");
    return 0;
}

static const double ex2_service[] = {0.1, 0.125, 0.2, 0.25, 0.4, 0.5};
static const double ex2_rate[] = {1, 2, 3, 4, 5, 6, 8};

static void exercise_2(practice_set *s, rng_state *r)
{
    double sv = 0.2, lambda = 4;
    for (int attempt = 0; attempt < 64; attempt++) {
        sv = practice_pick(r, s->seed, ex2_service, PRACTICE_COUNT(ex2_service), 2);
        lambda = practice_pick(r, s->seed, ex2_rate, PRACTICE_COUNT(ex2_rate), 3);
        if (lambda * sv >= 0.5 - 1e-12 && lambda * sv <= 0.9 + 1e-12)
            break;
        sv = 0.2, lambda = 4;
    }
    practice_add_input(s, "ch05_ex2_service", sv, "%g", PRACTICE_RANGE_OF(ex2_service));
    practice_add_input(s, "ch05_ex2_rate", lambda, "%g", PRACTICE_RANGE_OF(ex2_rate));
    queue_formula f;
    mm1_formula(lambda, 1 / sv, &f);
    practice_part *p = practice_add_part(s, "5.2(a)", 2, "utilisation", "a fraction", JUDGE_RELATIVE, f.rho,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, 1 / (lambda * sv), "that is capacity over load; utilisation is load over capacity");
    double mm1_w = mg1(lambda, sv, 1, 0), md1_w = mg1(lambda, sv, 0, 0);
    double mm1_t = mg1(lambda, sv, 1, 1), md1_t = mg1(lambda, sv, 0, 1);
    p = practice_add_part(s, "5.2(b1)", 2, "M/M/1 time in system", "s", JUDGE_RELATIVE, mm1_t, JUDGE_HAND_TOL);
    practice_add_slip(p, mm1_w, "that is the wait; the time in system adds the service");
    practice_add_slip(p, md1_t, "that is fixed service (M/D/1); exponential service waits twice as long");
    p = practice_add_part(s, "5.2(b2)", 2, "M/D/1 time in system", "s", JUDGE_RELATIVE, md1_t, JUDGE_HAND_TOL);
    practice_add_slip(p, md1_w, "that is the wait; the time in system adds the service");
    practice_add_slip(p, mm1_t, "that is exponential service (M/M/1); fixed service waits half as long");
    p = practice_add_part(s, "5.2(c1)", 2, "M/M/1 wait", "s", JUDGE_RELATIVE, mm1_w, JUDGE_HAND_TOL);
    practice_add_slip(p, mm1_t, "that is the time in system; the wait leaves out the service");
    p = practice_add_part(s, "5.2(c2)", 2, "M/D/1 wait", "s", JUDGE_RELATIVE, md1_w, JUDGE_HAND_TOL);
    practice_add_slip(p, md1_t, "that is the time in system; the wait leaves out the service");
}

static const double ex3_service[] = {0.5, 1, 2};
static const double ex3_near[] = {1.5, 2, 3};
static const double ex3_far[] = {4, 5, 10};

/* 5.3: one server of fixed service S, mean time targets of k S; the same
 * with exponential service of mean S. */
static void exercise_3(practice_set *s, rng_state *r)
{
    double sv = PRACTICE_DRAW(s, r, "ch05_ex3_service", ex3_service, 1, "%g");
    double near = practice_pick(r, s->seed, ex3_near, PRACTICE_COUNT(ex3_near), 1) * sv;
    double far = practice_pick(r, s->seed, ex3_far, PRACTICE_COUNT(ex3_far), 1) * sv;
    practice_add_input(s, "ch05_ex3_near", near, "%g", practice_least(ex3_service, PRACTICE_COUNT(ex3_service)) * practice_least(ex3_near, PRACTICE_COUNT(ex3_near)),
                       practice_greatest(ex3_service, PRACTICE_COUNT(ex3_service)) * practice_greatest(ex3_near, PRACTICE_COUNT(ex3_near)));
    practice_add_input(s, "ch05_ex3_far", far, "%g", practice_least(ex3_service, PRACTICE_COUNT(ex3_service)) * practice_least(ex3_far, PRACTICE_COUNT(ex3_far)),
                       practice_greatest(ex3_service, PRACTICE_COUNT(ex3_service)) * practice_greatest(ex3_far, PRACTICE_COUNT(ex3_far)));
    const double rate[4] = {mg1_max_rate(sv, 0, near), mg1_max_rate(sv, 0, far), mg1_max_rate(sv, 1, near),
                            mg1_max_rate(sv, 1, far)};
    static const char *const ids[4] = {"5.3(a1)", "5.3(a2)", "5.3(b1)", "5.3(b2)"};
    static const char *const whats[4] = {"fixed service: rate for the first target", "fixed service: rate for the second target",
                                         "exponential service: rate for the first target",
                                         "exponential service: rate for the second target"};
    for (int i = 0; i < 4; i++) {
        practice_part *p = practice_add_part(s, ids[i], 3, whats[i], "requests/s", JUDGE_RELATIVE, rate[i], JUDGE_HAND_TOL);
        practice_add_slip(p, rate[i ^ 2], i < 2 ? "that is exponential service (M/M/1); this server takes exactly its time"
                                               : "that is fixed service (M/D/1); exponential service waits twice as long");
    }
    for (int i = 0; i < 2; i++) {
        double rho = rate[2 * i] * sv;
        practice_part *p = practice_add_part(s, i == 0 ? "5.3(c1)" : "5.3(c2)", 3,
                                             i == 0 ? "over-provision for the first target, fixed service"
                                                    : "over-provision for the first target, exponential service",
                                             "%", JUDGE_RELATIVE, 100 * (1 - rho), JUDGE_HAND_TOL);
        practice_add_slip(p, 100 * rho, "that is the utilisation; the over-provision is the capacity left unused");
    }
}

static const double ex4_service[] = {1, 1.5, 2, 2.5, 3, 4};
static const double ex4_cs2[] = {0.25, 0.5, 0.75, 1.5, 2};
static const double ex4_rate[] = {0.1, 0.2, 0.25, 0.3, 0.4, 0.5};

static void exercise_4(practice_set *s, rng_state *r)
{
    double sv = 2, cs2 = 0.5, lambda = 0.4;
    for (int attempt = 0; attempt < 64; attempt++) {
        sv = practice_pick(r, s->seed, ex4_service, PRACTICE_COUNT(ex4_service), 2);
        cs2 = practice_pick(r, s->seed, ex4_cs2, PRACTICE_COUNT(ex4_cs2), 1);
        lambda = practice_pick(r, s->seed, ex4_rate, PRACTICE_COUNT(ex4_rate), 4);
        if (lambda * sv >= 0.5 - 1e-12 && lambda * sv <= 0.9 + 1e-12)
            break;
        sv = 2, cs2 = 0.5, lambda = 0.4;
    }
    practice_add_input(s, "ch05_ex4_service", sv, "%g", PRACTICE_RANGE_OF(ex4_service));
    practice_add_input(s, "ch05_ex4_cs2", cs2, "%g", PRACTICE_RANGE_OF(ex4_cs2));
    practice_add_input(s, "ch05_ex4_rate", lambda, "%g", PRACTICE_RANGE_OF(ex4_rate));
    double w = mg1(lambda, sv, cs2, 0), fixed = mg1(lambda, sv, 0, 0), expo = mg1(lambda, sv, 1, 0);
    practice_part *p = practice_add_part(s, "5.4(a)", 4, "mean wait before service", "s", JUDGE_RELATIVE, w,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, mg1(lambda, sv, cs2, 1), "that is the time in system; the wait leaves out the service");
    practice_add_slip(p, mg1(lambda, sv, sqrt(cs2), 0), "that uses the coefficient of variation; the formula takes its square");
    p = practice_add_part(s, "5.4(b1)", 4, "mean wait, fixed service times", "s", JUDGE_RELATIVE, fixed,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, w, "that keeps the variation; fixed service has none");
    p = practice_add_part(s, "5.4(b2)", 4, "mean wait, exponential service times", "s", JUDGE_RELATIVE, expo,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, w, "exponential service has a squared coefficient of variation of 1");
}

/* 5.5: a replica that runs batches to completion, LLaMA-3-8B bf16 on one
 * H100 at datasheet rates: s(n), the time of a batch of n; -1 when it does
 * not fit (the default policy at prompt + output).  A batch's requests
 * share its weight reads, so n / s(n) grows with n and the capacity under a
 * limit is the limit's batch (test_practice_ch05.c checks it against
 * queue_capacity over every n): three batches instead of every one, since
 * the page builds the variant for each answer it judges. */
static double batch_time(const model_spec *m, int prompt, int output, int n)
{
    gpu_spec g = gpu_builtin("h100");
    serve_workload w = {1, prompt, output, 1, precision_uniform(DT_BF16)};
    resident_model rm = {m, w.prec, 1};
    fit_check f;
    serve_result r;
    char err[256];
    if (memory_fit(&g, memory_policy_default(), &rm, 1, 0, n, prompt + output, &f, err, sizeof err) != 0 ||
        !f.fits || serve_batch(m, &g, &w, n, &r, err, sizeof err) != 0)
        return -1;
    return r.total;
}

static const double ex5_prompt[] = {256, 512, 1024};
static const double ex5_output[] = {128, 256, 512};
static const double ex5_batch[] = {32, 64, 128};
static const double ex5_cap[] = {8, 16, 24};
/* a batch's time and a capacity estimated by hand (prefill at the peak, each
 * decode step the weights and the cache over the bandwidth) land within a few
 * percent of the step model's */
#define EX5_TOL 0.05
static const char *const ex5_note = "an estimate, to 5%";

static practice_part *add_estimate5(practice_set *s, const char *id, int exercise, const char *what, const char *unit,
                                    double answer)
{
    practice_part *p = practice_add_part(s, id, exercise, what, unit, JUDGE_RELATIVE, answer, EX5_TOL);
    if (p)
        p->judge.rule_note = ex5_note;
    return p;
}

static const double ex6_rate[] = {50, 100, 200, 400};
static const double ex6_load_pct[] = {70, 75, 80, 90};

/* Replicas for a capacity known to within EX5_TOL: the counts of its two ends. */
static practice_part *add_replicas(practice_set *s, const char *id, const char *what, double rate, double load,
                                   double capacity)
{
    double lo = ceil(rate / (load * capacity * (1 + EX5_TOL)) - 1e-9), hi = ceil(rate / (load * capacity * (1 - EX5_TOL)) - 1e-9);
    practice_part *p = practice_add_part(s, id, 6, what, "replicas", JUDGE_RANGE, 0.5 * (lo + hi), 0.5 * (hi - lo));
    if (p)
        p->judge.rule_note = "the count for your 5's capacity, within 5% of the step model's";
    practice_add_slip(p, ceil(rate / capacity - 1e-9), "that runs every replica flat out; none may go above its load limit");
    return p;
}

static int exercises_5_and_6(practice_set *s, rng_state *r, rng_state *r6)
{
    model_spec m;
    if (model_lookup("llama3-8b", &m) != 0)
        return -1;
    double prompt = 512, output = 256, batch = 64, cap = 16, t_b = -1;
    for (int attempt = 0; attempt < 64 && t_b < 0; attempt++) {
        prompt = practice_pick(r, s->seed, ex5_prompt, PRACTICE_COUNT(ex5_prompt), 1);
        output = practice_pick(r, s->seed, ex5_output, PRACTICE_COUNT(ex5_output), 1);
        batch = practice_pick(r, s->seed, ex5_batch, PRACTICE_COUNT(ex5_batch), 1);
        cap = practice_pick(r, s->seed, ex5_cap, PRACTICE_COUNT(ex5_cap), 1);
        /* every batch fits: the cap is the cache's choice, not memory's */
        t_b = batch_time(&m, (int)prompt, (int)output, (int)batch);
    }
    if (t_b < 0) {
        prompt = 512, output = 256, batch = 64, cap = 16;
        t_b = batch_time(&m, 512, 256, 64);
    }
    double t_k = batch_time(&m, (int)prompt, (int)output, (int)cap), t_1 = batch_time(&m, (int)prompt, (int)output, 1);
    if (t_b < 0 || t_k < 0 || t_1 < 0)
        return -1;
    double c_b = batch / t_b, c_k = cap / t_k, c_1 = 1 / t_1;
    practice_add_input(s, "ch05_ex5_prompt", prompt, "%g", PRACTICE_RANGE_OF(ex5_prompt));
    practice_add_input(s, "ch05_ex5_output", output, "%g", PRACTICE_RANGE_OF(ex5_output));
    practice_add_input(s, "ch05_ex5_batch", batch, "%g", PRACTICE_RANGE_OF(ex5_batch));
    practice_add_input(s, "ch05_ex5_cap", cap, "%g", PRACTICE_RANGE_OF(ex5_cap));
    practice_part *p = add_estimate5(s, "5.5(a1)", 5, "seconds a full batch takes", "s", t_b);
    practice_add_slip(p, t_b / batch, "that is a request's share; the batch runs its requests together");
    p = add_estimate5(s, "5.5(a2)", 5, "requests/s the replica carries", "requests/s", c_b);
    practice_add_slip(p, 1 / t_b, "that is batches per second; each carries the whole batch of requests");
    p = add_estimate5(s, "5.5(b)", 5, "requests/s with the cache's cap", "requests/s", c_k);
    practice_add_slip(p, c_b, "that is the uncapped batch; the cache holds fewer sequences");
    p = add_estimate5(s, "5.5(c)", 5, "requests/s one at a time", "requests/s", c_1);

    double rate = practice_pick(r6, s->seed, ex6_rate, PRACTICE_COUNT(ex6_rate), 1);
    double load = practice_pick(r6, s->seed, ex6_load_pct, PRACTICE_COUNT(ex6_load_pct), 2);
    practice_add_input(s, "ch05_ex6_rate", rate, "%g", PRACTICE_RANGE_OF(ex6_rate));
    practice_add_input(s, "ch05_ex6_load_pct", load, "%g", PRACTICE_RANGE_OF(ex6_load_pct));
    add_replicas(s, "5.6(a)", "replicas of 5(a)", rate, load / 100, c_b);
    add_replicas(s, "5.6(b)", "replicas of 5(b)", rate, load / 100, c_k);
    add_replicas(s, "5.6(c)", "replicas of 5(c)", rate, load / 100, c_1);
    return 0;
}

/* 8 to 10: one request end to end (request.h) on H100s at the datasheet's
 * ceilings, bf16, the default memory policy; -1 when it does not fit. */
static int end_to_end(const char *model, int tp, int prompt, int output, int c, int chunk, double price,
                      request_estimate *e)
{
    model_spec m;
    gpu_spec g = gpu_builtin("h100");
    if (model_lookup(model, &m) != 0)
        return -1;
    request_setup rs = {&m, &g, precision_uniform(DT_BF16), tp, prompt, output, c, chunk, 0, memory_policy_default(),
                        price, 1};
    char err[256];
    return request_estimate_compute(&rs, e, err, sizeof err) == 0 && e->fit.fits ? 0 : -1;
}

static const double ex8_price[] = {1.5, 2, 2.5, 3, 4};
static const double ex8_concurrency[] = {32, 64, 128};

static int exercise_8(practice_set *s, rng_state *r)
{
    double price = PRACTICE_DRAW(s, r, "ch05_ex8_price", ex8_price, 1, "%g");
    double c = PRACTICE_DRAW(s, r, "ch05_ex8_concurrency", ex8_concurrency, 2, "%g");
    request_estimate one, many;
    if (end_to_end("llama3-8b", 1, 1024, 512, 1, 0, price, &one) != 0 ||
        end_to_end("llama3-8b", 1, 1024, 512, (int)c, 0, price, &many) != 0)
        return -1;
    practice_part *p = practice_add_part(s, "5.8(a)", 8, "cost of a million output tokens, one in flight", "$",
                                         JUDGE_RELATIVE, one.cost_per_m_output, JUDGE_HAND_TOL);
    practice_add_slip(p, one.cost_per_m_output / 1000, "that is a thousand tokens' cost; the part asks for a million");
    practice_add_slip(p, one.cost_per_m_output * 3600, "the price is per GPU-hour: a GPU-second costs 3600 times less");
    p = practice_add_part(s, "5.8(b)", 8, "cost of a million output tokens, the larger concurrency", "$",
                          JUDGE_RELATIVE, many.cost_per_m_output, JUDGE_HAND_TOL);
    practice_add_slip(p, one.cost_per_m_output / c,
                      "the step grows with the batch: the cost falls by less than the concurrency");
    practice_add_slip(p, many.cost_per_m_output / 1000, "that is a thousand tokens' cost; the part asks for a million");
    return 0;
}

static const double ex9_budget_ms[] = {100, 150, 200, 300};
static const double ex9_concurrency[] = {32, 64, 96};
static const double ex9_chunk[] = {128, 256, 512};

static int exercise_9(practice_set *s, rng_state *r)
{
    double budget = PRACTICE_DRAW(s, r, "ch05_ex9_budget_ms", ex9_budget_ms, 2, "%g");
    double c = PRACTICE_DRAW(s, r, "ch05_ex9_concurrency", ex9_concurrency, 1, "%g");
    double chunk = PRACTICE_DRAW(s, r, "ch05_ex9_chunk", ex9_chunk, 1, "%g");
    /* the longest prompt alone within the budget, to 256 tokens as the solution searches */
    int longest = 0;
    for (int n = 256; n <= 65536; n += 256) {
        request_estimate e;
        if (end_to_end("llama3-8b", 1, n, 512, 1, 0, 0, &e) != 0 || e.ttft > budget * 1e-3)
            break;
        longest = n;
    }
    if (longest < 256)
        return -1;
    practice_part *p = practice_add_part(s, "5.9(a)", 9, "longest prompt prefilled within the budget", "tokens",
                                         JUDGE_RANGE, longest + 127.5, 127.5);
    if (p)
        p->judge.rule_note = "to the 256 tokens past the longest multiple of 256";
    request_estimate whole, chunked;
    if (end_to_end("llama3-8b", 1, 1024, 512, (int)c, 0, 0, &whole) != 0 ||
        end_to_end("llama3-8b", 1, 1024, 512, (int)c, (int)chunk, 0, &chunked) != 0)
        return -1;
    p = practice_add_part(s, "5.9(b1)", 9, "TTFT with whole prompts", "ms", JUDGE_RELATIVE, whole.ttft * 1e3,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, whole.tpot * 1e3, "that is the TPOT; TTFT is the time to the first token");
    p = practice_add_part(s, "5.9(b2)", 9, "TPOT with whole prompts", "ms", JUDGE_RELATIVE, whole.tpot * 1e3,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, whole.ttft * 1e3, "that is the TTFT; TPOT is the time between later tokens");
    p = practice_add_part(s, "5.9(b3)", 9, "TTFT with chunked prefill", "ms", JUDGE_RELATIVE, chunked.ttft * 1e3,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, whole.ttft * 1e3, "that is the whole prompt's; chunks spread the prefill over steps");
    p = practice_add_part(s, "5.9(b4)", 9, "TPOT with chunked prefill", "ms", JUDGE_RELATIVE, chunked.tpot * 1e3,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, whole.tpot * 1e3, "that is the whole prompts' TPOT; chunking changes it");
    return 0;
}

static const double ex10_tpot_ms[] = {30, 40, 50, 60};
static const double ex10_prompt[] = {512, 1024, 2048};

static int exercise_10(practice_set *s, rng_state *r)
{
    model_spec m;
    gpu_spec g = gpu_builtin("h100");
    if (model_lookup("llama3-70b", &m) != 0)
        return -1;
    double target = 50, prompt = 1024;
    int conc[3] = {0}, best = 0;
    double gs[3] = {0};
    for (int attempt = 0; attempt < 64; attempt++) {
        target = practice_pick(r, s->seed, ex10_tpot_ms, PRACTICE_COUNT(ex10_tpot_ms), 2);
        prompt = practice_pick(r, s->seed, ex10_prompt, PRACTICE_COUNT(ex10_prompt), 1);
        int ok = 1;
        best = 0;
        for (int i = 0; i < 3 && ok; i++) {
            int tp = 2 << i;
            request_setup rs = {&m, &g, precision_uniform(DT_BF16), tp, (int)prompt, 512, 1, 0, 0,
                                memory_policy_default(), 2.0, 1};
            char err[256];
            request_estimate e;
            conc[i] = request_best_concurrency(&rs, 0, target * 1e-3, err, sizeof err);
            ok = conc[i] >= 1 && end_to_end("llama3-70b", tp, (int)prompt, 512, conc[i], 0, 2.0, &e) == 0;
            gs[i] = ok ? e.gpu_seconds_per_request : NAN;
            best = ok && (best == 0 || gs[i] < gs[best - 1]) ? i + 1 : best;
        }
        /* the printed regime: every degree meets the target, and the fastest is not the cheapest */
        if (ok && best != 3)
            break;
        target = 50, prompt = 1024;
        if (attempt == 63)
            return -1;
    }
    practice_add_input(s, "ch05_ex10_tpot_ms", target, "%g", PRACTICE_RANGE_OF(ex10_tpot_ms));
    practice_add_input(s, "ch05_ex10_prompt", prompt, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex10_prompt));
    static const char *const cid[3] = {"5.10(a1)", "5.10(a2)", "5.10(a3)"};
    static const char *const gid[3] = {"5.10(b1)", "5.10(b2)", "5.10(b3)"};
    static const char *const cwhat[3] = {"largest concurrency at TP 2", "largest concurrency at TP 4",
                                         "largest concurrency at TP 8"};
    static const char *const gwhat[3] = {"GPU-seconds a request at TP 2", "GPU-seconds a request at TP 4",
                                         "GPU-seconds a request at TP 8"};
    for (int i = 0; i < 3; i++) {
        practice_part *p = practice_add_part(s, cid[i], 10, cwhat[i], "requests", JUDGE_EXACT, conc[i], 0);
        p = practice_add_part(s, gid[i], 10, gwhat[i], "GPU-s", JUDGE_RELATIVE, gs[i], JUDGE_HAND_TOL);
        practice_add_slip(p, gs[i] / (2 << i), "that is one GPU's seconds; the request holds all of its replica's");
    }
    practice_part *p = practice_add_part(s, "5.10(c)", 10, "the cheapest degree", "TP", JUDGE_EXACT, 2 << (best - 1), 0);
    practice_add_slip(p, 8, "that is the fastest tokens; the cheapest pays for fewer GPUs a request");
    return 0;
}

int practice_build_ch05(uint64_t seed, practice_set *out)
{
    /* one stream per exercise, so a change to one leaves the others' draws */
    rng_state st[9];
    practice_streams(seed, st, 9);
    /* 5.3's stream comes after 5.4's, which keeps the earlier draws, and 5.5 to 5.10's after 5.3's */
    rng_state r1 = st[0], r2 = st[1], r4 = st[2], r3 = st[3];
    rng_state r5 = st[4], r6 = st[5], r8 = st[6], r9 = st[7], r10 = st[8];
    if (exercise_1(out, &r1) != 0)
        return -1;
    exercise_2(out, &r2);
    exercise_3(out, &r3);
    exercise_4(out, &r4);
    if (exercises_5_and_6(out, &r5, &r6) != 0 || exercise_8(out, &r8) != 0 || exercise_9(out, &r9) != 0 ||
        exercise_10(out, &r10) != 0)
        return -1;
    return 0;
}
