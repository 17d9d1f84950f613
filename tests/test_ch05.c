/* Chapter 5's argument, checked through the functions its program calls
 * (latency_load: serve_batch_times, queue_capacity, md1_formula, the memory
 * plan): the service time of one request on the H100's published ceilings,
 * the capacity it gives, the M/D/1 knee, and the memory that holds the
 * batches.  Hand arithmetic on LLaMA-3-8B's config.json beside each (the
 * step's byte and FLOP counts are derived in tests/test_ch03.c). */
#include <criterion/criterion.h>
#include <math.h>

#include "ceilings.h"
#include "memory.h"
#include "queue.h"
#include "batch_vs_sequential.h"

#define REL(a, b, tol)                                                                                         \
    cr_assert(fabs((a) - (b)) <= (tol) * fabs(b), "%s = %.9g, expected %.9g (rel. tol. %g)", #a, (double)(a), \
              (double)(b), (double)(tol))

/* One request of 512 + 256 tokens at batch 1, H100 at 3.18 TB/s and 800
 * TFLOP/s.  Decode: 3,851,717,667,840 B / 3.18e12 = 1.211232 s (test_ch03).
 * Prefill of 512 tokens: the projections are compute-bound (intensity over
 * 400 against a ridge of 252): 2 * 512 * 7,504,658,432 / 800e12 = 9.6060
 * ms; the norms, residual adds and SiLU-mul are memory-bound, per layer
 * 2 * (2*512*4096*2 + 8192) + 2 * 3*512*4096*2 + 3*512*14336*2 =
 * 85,999,616 B, * 32 / 3.18e12 = 0.8654 ms; attention (174 FLOP/B) reads 32
 * * 2 * (2 * 1,048,576 + 4,194,304) B = 0.1266 ms; embedding and final norm
 * 4 * 512 * 4096 * 2 + 8192 B = 5.3 us.  The prefill samples only the last
 * position: the head's share of the projections for 512 tokens, 2 * 512 *
 * 4096 * 128,256 / 800e12 = 0.6724 ms, becomes one row's memory-bound read
 * of the head, (1,050,673,152 + 4096 * 2 + 128,256 * 4) / 3.18e12 = 0.3306
 * ms.  Prefill 10.261 ms. */
#define S1 (3851717667840.0 / 3.18e12 + 2 * 512 * 7504658432.0 / 800e12 + 32 * 85999616.0 / 3.18e12 + \
            32 * 2 * 6291456.0 / 3.18e12 + (4 * 512 * 4096 * 2.0 + 8192) / 3.18e12 - \
            2 * 512 * 4096 * 128256.0 / 800e12 + (1050673152.0 + 4096 * 2.0 + 128256 * 4.0) / 3.18e12)

static void times_at_ceilings(double *times, int n)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec sheet = gpu_builtin("h100");
    published_ceilings p;
    cr_assert_eq(published_ceilings_for("h100", &p), 0);
    gpu_spec g = gpu_at_published_ceilings(&sheet, &p);
    serve_workload w = {1, 512, 256, 1, precision_uniform(DT_BF16)};
    char err[256];
    cr_assert_eq(serve_batch_times(&m, &g, &w, n, times, err, sizeof err), 0, "%s", err);
}

Test(ch05, one_request_takes_1_22_s)
{
    double t[1];
    times_at_ceilings(t, 1);
    REL(t[0], S1, 1e-5);
    REL(S1, 1.221493, 1e-5);
    /* served one at a time the replica completes 1 / 1.2215 = 0.819 a second */
    queue_config c = {1, 1, 0, 0, t, SERVICE_FIXED, 1, 0};
    REL(queue_capacity(&c), 1 / S1, 1e-5);
}

Test(ch05, md1_knee_at_90_percent)
{
    /* T = S (1 + rho / (2 (1 - rho))): at rho = 0.9, S * (1 + 0.9 / 0.2) =
     * 5.5 S = 6.72 s; at 0.5, 1.5 S. */
    queue_formula f;
    cr_assert_eq(md1_formula(0.9 / S1, 1 / S1, &f), 0);
    REL(f.time, 5.5 * S1, 1e-9);
    cr_assert_eq(md1_formula(0.5 / S1, 1 / S1, &f), 0);
    REL(f.time, 1.5 * S1, 1e-9);
}

Test(ch05, batches_of_64_raise_capacity_and_fit)
{
    /* A batch of 64 costs little more than one: its decode reads the weights
     * once a step for 64 tokens.  Lower bound on s(64): the 255 weight reads
     * 255 * 15,009,857,536 / 3.18e12 = 1.2036 s plus 64 prefills of the
     * projections 64 * 9.6060 ms = 0.6148 s: 1.818 s, so the capacity is at
     * most 64 / 1.818 = 35.2 per s.  And sharing must buy at least 30-fold:
     * the 64 sequences' own KV and activations (under 0.7 s in all) cannot
     * bring s(64) up to 64 * S1 / 30 = 2.61 s. */
    double t[64];
    times_at_ceilings(t, 64);
    double lo = 255 * 15009857536.0 / 3.18e12 + 64 * 2 * 512 * 7504658432.0 / 800e12;
    cr_assert(t[63] > lo && t[63] < 64 * S1 / 30, "s(64) = %g s, floor %g s", t[63], lo);
    queue_config c = {1, 64, 0, 0, t, SERVICE_FIXED, 1, 0};
    double mu = queue_capacity(&c);
    cr_assert(mu > 30 / S1 && mu < 64 / lo, "capacity %g", mu);
    /* And every batch of up to 64 fits: a sequence of 768 tokens holds
     * 768 * 131,072 = 100,663,296 B; left (0.9 * capacity - 16,060,522,496 -
     * 1,269,301,248 reserve) holds 592 of them with the driver's 85.52e9. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    replica_memory r;
    char err[256];
    cr_assert_eq(replica_memory_plan(&m, &g, precision_uniform(DT_BF16), 1, memory_policy_default(), &r, err,
                                     sizeof err),
                 0, "%s", err);
    int cap = max_batch_for_memory(&r, 768);
    cr_assert_eq(cap, (int)floor((0.9 * g.mem_bytes - 16060522496.0 - 1269301248.0) / 100663296.0));
    cr_assert_geq(cap, 64);
}

/* The benchmark section (code/ch05/bench_ttft.c): LLaMA-3-8B bf16 on one
 * H100 at the published TensorRT-LLM rates, prompts of 1024 and outputs of
 * 512, the engine's budget and fitted overhead. */
#include "closed_loop.h"
#include "rate_table.h"
#include "request.h"
#include "simulate.h"

static request_estimate bench_at(int c, int departure_wait, int roofline)
{
    static model_spec m;
    static gpu_spec roof, cal;
    static rate_model rates;
    m = model_builtin("llama3-8b");
    roof = gpu_builtin("h100");
    cal = gpu_builtin_calibrated("h100", "published:h100_sxm/trtllm", &rates);
    const engine_defaults *e = engine_defaults_find("trtllm");
    cr_assert_not_null(e);
    request_setup s = {&m, roofline ? &roof : &cal, precision_uniform(DT_BF16), 1, 1024, 512, c, 0, 0,
                       memory_policy_default(), 0, 1};
    request_options o = {.budget = e->budget, .overhead = e->overhead, .departure_wait = departure_wait};
    request_estimate r;
    char err[256];
    cr_assert_eq(request_estimate_with(&s, &o, &r, err, sizeof err), 0, "%s", err);
    cr_assert(r.fit.fits);
    return r;
}

Test(ch05, bench_burst_of_64_by_hand)
{
    /* 64 prompts of 1024 through a budget of 8192, the decodes of the
     * prompts already done counting against it (room = 8192 - decodes),
     * first come first served.  Step by step (decodes, prompt tokens,
     * prompts finished): (0, 8192, 8), (8, 8184, 7), (15, 8177, 8),
     * (23, 8169, 8), (31, 8161, 8), (39, 8153, 8), (47, 8145, 8),
     * (55, 8137, 8), (63, 218, 1): 65,536 prompt tokens in 9 steps.  A
     * prompt finished in step k waits for steps 1..k.  Over the 64:
     *   weight reads (8*1 + 7*2 + 8*3 + ... + 8*8 + 1*9) / 64 = 295 / 64,
     *   decodes: cumulative 0, 8, 23, 46, 77, 116, 163, 218, 281, weighted
     *   by the prompts finished, 5481 / 64,
     *   prompt tokens: cumulative 8192, 16376, 24553, 32722, 40883, 49036,
     *   57181, 65318, 65536, weighted, 2,403,248 / 64;
     * plus the overhead h. */
    request_estimate e = bench_at(64, 0, 0);
    const step_costs *k = &e.costs;
    double h = engine_defaults_find("trtllm")->overhead;
    REL(e.bench.burst, h + (295 * k->weight_read + 5481 * k->per_decode + 2403248 * k->per_token) / 64, 1e-9);
    /* and the mean over ten rounds weighs the burst once: (64 burst + 576 steady) / 640 */
    REL(e.ttft_closed, (64 * e.bench.burst + 576 * e.bench.steady) / 640, 1e-9);
}

Test(ch05, bench_departure_interval_is_littles_law)
{
    /* C clients each cycling once per `cycle` complete X = C / cycle a
     * second; the departure interval is 1 / X = cycle / C. */
    for (int c = 8; c <= 128; c *= 2) {
        request_estimate e = bench_at(c, 0, 0);
        REL(e.bench.departure, e.bench.cycle / c, 1e-9);
        REL(e.bench.rate * e.bench.cycle, (double)c, 1e-6);
    }
}

Test(ch05, bench_clock_from_departure_adds_one_interval_to_the_steady_rounds)
{
    /* With the clock started one departure earlier, each of the 9 C steady
     * requests of 10 C waits delta more, the burst none: the mean grows by
     * 0.9 delta (the dashed curve of the figure). */
    request_estimate a = bench_at(8, 0, 0), b = bench_at(8, 1, 0);
    REL(b.ttft_closed - a.ttft_closed, 0.9 * a.bench.departure, 1e-6);
}

Test(ch05, bench_simulation_agrees_from_32_up)
{
    /* The section's claim: from 32 in flight up, serve --simulate's mean
     * (seed 5, as the chapter's program) lies within 5 % of the closed form. */
    const int cs[] = {32, 64, 128};
    for (int i = 0; i < 3; i++) {
        request_estimate e = bench_at(cs[i], 0, 0);
        const engine_defaults *d = engine_defaults_find("trtllm");
        sim_setup s = {{cs[i], 1024, 512, d->budget, 0, d->overhead, 0, d->prefill_first}, e.costs, 0, 1, 5, SIM_SPREAD};
        sim_result r;
        char err[256];
        cr_assert_eq(sim_run(&s, 0, &r, err, sizeof err), 0, "%s", err);
        REL(r.ttft.mean, e.ttft_closed, 0.05);
    }
}

Test(ch05, bench_bound_below_estimate)
{
    /* The roofline is a bound: at every concurrency its benchmark TTFT is
     * below the estimate's (same overhead, faster steps). */
    for (int c = 8; c <= 128; c *= 2)
        cr_assert_lt(bench_at(c, 0, 1).ttft_closed, bench_at(c, 0, 0).ttft_closed);
}

Test(ch05, search_ttft_limit_binds_at_tp4)
{
    /* The section's search: LLaMA-3-70B bf16 on 4 H100s, 2048 + 256, limits
     * 0.5 s TTFT and 50 ms TPOT.  The TTFT limit binds: the best concurrency
     * is below the TPOT limit's alone, meets 0.5 s, and one more in flight
     * breaks it (TPOT still within its limit there). */
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    request_setup s = {&m, &g, precision_uniform(DT_BF16), 4, 2048, 256, 1, 0, 0, memory_policy_default(), 0, 1};
    char err[256];
    int c = request_best_concurrency(&s, 0.5, 0.05, err, sizeof err);
    int t = request_best_concurrency(&s, 0, 0.05, err, sizeof err);
    cr_assert(c > 0 && c < t, "best %d, TPOT alone %d", c, t);
    request_estimate a, b;
    s.concurrency = c;
    cr_assert_eq(request_estimate_compute(&s, &a, err, sizeof err), 0, "%s", err);
    s.concurrency = c + 1;
    cr_assert_eq(request_estimate_compute(&s, &b, err, sizeof err), 0, "%s", err);
    cr_assert(a.ttft_closed <= 0.5 && b.ttft_closed > 0.5 && b.tpot <= 0.05, "C %d: %g s, C %d: %g s", c,
              a.ttft_closed, c + 1, b.ttft_closed);
}
