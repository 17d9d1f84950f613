/* One request end to end (request.h): the closed-loop formulas against an
 * event-by-event simulation of the same replica, the step times against hand
 * arithmetic, the rate and target searches, and calibration from fixture sets
 * with round ceilings. */
#include "calibrate.h"
#include "memory.h"
#include "request.h"
#include "transformer.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The replica, step by step: C slots; a slot that frees takes a new request
 * at once; a request waiting for its prefill is prefilled (one step, alone),
 * oldest first; otherwise one decode step runs every decoding slot at its own
 * context (the cost model takes one context per step: the mean, as the step
 * is linear in it).  Nothing here assumes Little's law: latency and
 * throughput are counted. */
typedef struct {
    double e2e, ttft, tokens_per_s;
} sim_result;

static sim_result simulate(const request_setup *s, int requests)
{
    int C = s->concurrency, o = s->output;
    int *generated = calloc((size_t)C, sizeof(int)); /* tokens so far; -1: waiting for prefill */
    double *arrived = calloc((size_t)C, sizeof(double));
    double t = 0, sum_e2e = 0, sum_ttft = 0, t_first_done = -1;
    int done = 0, counted = 0, after_first = 0, warm = requests / 5;
    /* staggered: slot i starts i/C of the way through a request, so prefills do not come in bursts
     * (the warm-up fifth of the requests is not counted) */
    for (int i = 0; i < C; i++)
        generated[i] = i == 0 ? -1 : 1 + (int)((long)i * (o - 1) / C);
    char err[256];
    step_cost c;
    while (done < requests) {
        int waiting = -1;
        for (int i = 0; i < C; i++)
            if (generated[i] < 0 && (waiting < 0 || arrived[i] < arrived[waiting]))
                waiting = i;
        if (waiting >= 0) {
            step_shape pf = prefill_shape(1, 0, s->prompt, s->tp, s->prec);
            cr_assert_eq(decoder_step_cost(s->model, s->gpu, &pf, &c, err, sizeof err), 0, "%s", err);
            t += c.time;
            generated[waiting] = 1;
            if (done >= warm)
                sum_ttft += t - arrived[waiting];
        } else {
            double ctx = 0;
            for (int i = 0; i < C; i++)
                ctx += s->prompt + generated[i] - 1;
            step_shape d = decode_shape(C, (int)lround(ctx / C), s->tp, s->prec);
            cr_assert_eq(decoder_step_cost(s->model, s->gpu, &d, &c, err, sizeof err), 0, "%s", err);
            t += c.time;
            for (int i = 0; i < C; i++)
                generated[i]++;
        }
        for (int i = 0; i < C; i++)
            if (generated[i] >= o) { /* finished: a new request takes the slot */
                if (done >= warm) {
                    sum_e2e += t - arrived[i];
                    counted++;
                    if (t_first_done < 0)
                        t_first_done = t;
                    else if (t > t_first_done)
                        after_first++; /* slots finish in bursts: count those after the first burst */
                }
                done++;
                generated[i] = -1;
                arrived[i] = t;
            }
    }
    /* completions after the first counted one, over the time since it */
    sim_result r = {sum_e2e / counted, sum_ttft / counted, (double)after_first * o / (t - t_first_done)};
    free(generated);
    free(arrived);
    return r;
}

static request_setup setup(const model_spec *m, const gpu_spec *g, int tp, int prompt, int output, int c)
{
    request_setup s = {m, g, precision_uniform(DT_BF16), tp, prompt, output, c, 0, 0, memory_policy_default(), 2.0, 1};
    return s;
}

Test(request, closed_form_matches_a_simulation)
{
    gpu_spec g = gpu_builtin("h100");
    model_spec m8 = model_builtin("llama3-8b"), m70 = model_builtin("llama3-70b");
    request_setup cases[] = {setup(&m8, &g, 1, 512, 64, 16), setup(&m8, &g, 1, 4096, 128, 8),
                             setup(&m70, &g, 4, 2048, 256, 64)};
    for (size_t k = 0; k < sizeof cases / sizeof cases[0]; k++) {
        request_estimate e;
        char err[256];
        cr_assert_eq(request_estimate_compute(&cases[k], &e, err, sizeof err), 0, "%s", err);
        cr_assert(e.fit.fits);
        sim_result sim = simulate(&cases[k], 40 * cases[k].concurrency);
        /* the simulation's decode steps run at the slots' own mean context, the closed form at the mean over
         * a request's life: a few percent apart at most */
        cr_assert(fabs(e.e2e / sim.e2e - 1) < 0.03, "case %zu: e2e %g vs simulated %g", k, e.e2e, sim.e2e);
        cr_assert(fabs(e.tokens_per_s / sim.tokens_per_s - 1) < 0.03, "case %zu: tokens/s %g vs %g", k,
                  e.tokens_per_s, sim.tokens_per_s);
        /* a new request can wait behind other prefills in the simulation: TTFT is at least p */
        cr_assert(sim.ttft >= e.ttft * (1 - 1e-9), "case %zu", k);
    }
}

Test(request, closed_loop_ttft_counts_every_slot_in_the_load)
{
    /* LLaMA-3-70B on 2 pipeline stages of 4 H100s, 2048 tokens in, 256 out,
     * 64 slots: with a pipeline the benchmark's burst-and-steady model
     * (closed_loop.h) does not apply, and TTFT is the busy closed loop's.
     * The replica spends a request's life e2e on the 64 slots' prefills and
     * the decode steps they share, so prefills keep it busy rho = 64 p / e2e
     * of the time.  A request that arrives waits half the decode step in
     * flight, then the prefills queued ahead (M/D/1 at rho: rho p / (2 (1 -
     * rho))), then its own p.  All 64 slots' prefills make the load, not 63:
     * each slot's prefill is one of the C that fill every e2e. */
    gpu_spec g = gpu_builtin("h100");
    model_spec m = model_builtin("llama3-70b");
    request_setup s = setup(&m, &g, 4, 2048, 256, 64);
    s.pp = 2;
    request_estimate e;
    char err[256];
    cr_assert_eq(request_estimate_compute(&s, &e, err, sizeof err), 0, "%s", err);
    const double p = e.prefill_time, d = e.decode_step;
    const double rho = 64 * p / e.e2e;
    cr_assert(rho > 0.05 && rho < 0.9, "a busy loop: rho %g", rho);
    const double hand = d / 2 + rho * p / (2 * (1 - rho)) + p;
    cr_expect(fabs(e.ttft_closed / hand - 1) < 1e-12, "ttft_closed %g, by hand %g", e.ttft_closed, hand);
    /* one slot: the prefills' load is its own, p / e2e */
    s.concurrency = 1;
    cr_assert_eq(request_estimate_compute(&s, &e, err, sizeof err), 0, "%s", err);
    const double p1 = e.prefill_time, d1 = e.decode_step, r1 = p1 / e.e2e;
    cr_expect(fabs(e.ttft_closed / (d1 / 2 + r1 * p1 / (2 * (1 - r1)) + p1) - 1) < 1e-12, "ttft_closed %g",
              e.ttft_closed);
}

Test(request, step_times_by_hand)
{
    /* LLaMA-3-8B on one H100, prompt 2048: the projections do 2 x 7,504,924,672 x 2048 =
     * 30.74e12 FLOP (the parameters that multiply: all but the 525,336,576 of the embedding
     * table, less the head's logits for 2047 unsampled positions, which the prefill skips:
     * 2 x 4096 x 128,256 x 2047 = 2.15e12).  So about 28.6e12 FLOP of projections, 28.9 ms at
     * 989.4 TFLOP/s; attention and the unfused norms add a few ms.  p in [28.9, 36] ms. */
    gpu_spec g = gpu_builtin("h100");
    model_spec m = model_builtin("llama3-8b");
    request_setup s = setup(&m, &g, 1, 2048, 256, 1);
    request_estimate e;
    char err[256];
    cr_assert_eq(request_estimate_compute(&s, &e, err, sizeof err), 0, "%s", err);
    cr_assert(e.prefill_time >= 28.9e-3 && e.prefill_time <= 36e-3, "p %g", e.prefill_time);
    /* batch 1 decode: every weight byte but the embedding table's, 15.0e9 B, plus 2048-2302
     * tokens of KV at 131,072 B each (0.30 GB): 15.3e9 / 3.35e12 = 4.57 ms; in [4.5, 4.9] ms */
    cr_assert(e.decode_step >= 4.5e-3 && e.decode_step <= 4.9e-3, "d %g", e.decode_step);
    /* one request alone: TTFT = p, TPOT = d, latency p + 255 d */
    cr_assert_float_eq(e.ttft, e.prefill_time, 1e-12);
    cr_assert_float_eq(e.tpot, e.decode_step, 1e-12);
    cr_assert_float_eq(e.e2e, e.prefill_time + 255 * e.decode_step, 1e-9);
    /* cost at $2 a GPU-hour: input p x 2/3600 / 2048 x 1e6 = about $0.0087 per million at 32 ms */
    cr_assert(e.cost_per_m_input > 0.0078 && e.cost_per_m_input < 0.0098, "input cost %g", e.cost_per_m_input);
}

/* A prefill-first engine's cohort TPOT for a mixture is its decode step, not
 * the whole model's read.  Qwen3-235B-A22B in fp8 on two H200s (roofline):
 * the weights are 235e9 B, 117.5 GB a GPU, 24.5 ms at 4.8 TB/s.  Four
 * sequences route to at most 4 x 8 = 32 of 128 experts a layer; the experts
 * are 94 x 128 x 3 x 4096 x 1536 = 227e9 weights, so the step reads at most
 * 32/128 of them plus the other 8e9: 64.8e9 B, 32.4 GB a GPU, 6.75 ms; the KV
 * (4 x 1000-1998 tokens) and the collectives add under 1.5 ms: d in
 * [6.75, 8.5] ms.  The four prompts (4000 tokens) fit one step of SGLang's
 * 8192-token budget, so all four first tokens come in the same step, no
 * prefill pauses a decode, and TPOT = t(C, 0) = d exactly (closed_loop.h). */
Test(request, prefill_first_mixture_tpot_is_its_decode_step)
{
    gpu_spec g = gpu_builtin("h200");
    model_spec m = model_builtin("qwen3-235b-a22b");
    request_setup s = setup(&m, &g, 2, 1000, 1000, 4);
    s.prec = precision_uniform(DT_FP8);
    request_options o = {.prefill_first = 1};
    request_estimate e;
    char err[256];
    cr_assert_eq(request_estimate_with(&s, &o, &e, err, sizeof err), 0, "%s", err);
    cr_assert(e.decode_step >= 6.75e-3 && e.decode_step <= 8.5e-3, "d %g", e.decode_step);
    cr_assert_float_eq(e.tpot, e.decode_step, 1e-12);
    cr_assert(e.tpot < 0.5 * 24.5e-3, "TPOT %g: floored at the whole weights' read", e.tpot);
}

Test(request, chunked_prefill_bookkeeping)
{
    gpu_spec g = gpu_builtin("h100");
    model_spec m = model_builtin("llama3-8b");
    request_setup s = setup(&m, &g, 1, 2048, 256, 32);
    s.chunk = 512;
    request_estimate e;
    char err[256];
    cr_assert_eq(request_estimate_compute(&s, &e, err, sizeof err), 0, "%s", err);
    /* 2048 / 512 = 4 steps of prompt; TTFT is 4 mixed steps; the latency 4 + 255 of them */
    cr_assert_eq(e.prefill_steps, 4);
    cr_assert_float_eq(e.ttft, 4 * e.mixed_step, 1e-12);
    cr_assert_float_eq(e.e2e, 259 * e.mixed_step, 1e-9);
    cr_assert(e.mixed_step > e.decode_step);
    /* a chunk as large as the prompt is no chunking */
    request_setup whole = s;
    whole.chunk = 4096;
    request_setup plain = s;
    plain.chunk = 0;
    request_estimate a, b;
    cr_assert_eq(request_estimate_compute(&whole, &a, err, sizeof err), 0);
    cr_assert_eq(request_estimate_compute(&plain, &b, err, sizeof err), 0);
    cr_assert_float_eq(a.e2e, b.e2e, 1e-12);
    /* chunking trades TTFT for a steadier TPOT: with 32 in flight the unchunked TPOT pays
     * 31 prefills of ~32 ms over 255 tokens, about 3.9 ms a token on top of d */
    cr_assert(e.tpot < b.tpot, "chunked TPOT %g, whole-prompt %g", e.tpot, b.tpot);
}

Test(request, memory_limits_the_concurrency)
{
    /* LLaMA-3-70B at TP 4 on H100, 2048 + 256 tokens: the budget of chapter 1's plan,
     * 0.9 x 85,520,809,984 - 35,276,853,248 - 761,921,536 = 40,929,954,201.6 B over
     * 81,920 x 2304 B a sequence = 216.9 -> 216 */
    gpu_spec g = gpu_builtin("h100");
    model_spec m = model_builtin("llama3-70b");
    request_setup s = setup(&m, &g, 4, 2048, 256, 217);
    request_estimate e;
    char err[256];
    cr_assert_eq(request_estimate_compute(&s, &e, err, sizeof err), 0, "%s", err);
    cr_assert_eq(e.fit.max_batch, 216);
    cr_assert(!e.fit.fits);
}

Test(request, a_full_kv_cache_queues_the_rest)
{
    /* The 70B at TP 4 above holds 216 sequences of 2304 tokens.  With 432 clients the engine runs
     * 216 and 216 wait: TPOT and throughput are those of 216 in flight, and by Little's law the
     * client's latency is 432 / throughput = 2 e2e(216): e2e and the closed-loop TTFT gain e2e(216). */
    gpu_spec g = gpu_builtin("h100");
    model_spec m = model_builtin("llama3-70b");
    request_setup held = setup(&m, &g, 4, 2048, 256, 216), asked = setup(&m, &g, 4, 2048, 256, 432);
    request_estimate b, e;
    char err[256];
    cr_assert_eq(request_estimate_compute(&held, &b, err, sizeof err), 0, "%s", err);
    cr_assert_eq(request_estimate_compute(&asked, &e, err, sizeof err), 0, "%s", err);
    cr_assert(b.fit.fits && b.running == 216);
    cr_assert(!e.fit.fits, "432 do not fit at once");
    cr_assert_eq(e.running, 216);
    cr_assert_float_eq(e.tpot, b.tpot, 1e-12 * b.tpot);
    cr_assert_float_eq(e.requests_per_s, b.requests_per_s, 1e-12 * b.requests_per_s);
    cr_assert_float_eq(e.e2e, 2 * b.e2e, 1e-9 * b.e2e);
    cr_assert_float_eq(e.ttft_closed, b.ttft_closed + b.e2e, 1e-9 * b.e2e);
    /* not one sequence of 2^24 tokens fits: nothing runs */
    request_setup huge = setup(&m, &g, 4, 2048, 1 << 24, 1);
    cr_assert_eq(request_estimate_compute(&huge, &e, err, sizeof err), 0, "%s", err);
    cr_assert_eq(e.running, 0);
}

Test(request, rate_and_targets)
{
    gpu_spec g = gpu_builtin("h100");
    model_spec m = model_builtin("llama3-70b");
    request_setup s = setup(&m, &g, 4, 2048, 256, 1);
    char err[256];
    int c = request_concurrency_for_rate(&s, 5.0, err, sizeof err);
    cr_assert_gt(c, 1);
    request_estimate at, below;
    s.concurrency = c;
    cr_assert_eq(request_estimate_compute(&s, &at, err, sizeof err), 0);
    s.concurrency = c - 1;
    cr_assert_eq(request_estimate_compute(&s, &below, err, sizeof err), 0);
    cr_assert(at.requests_per_s >= 5.0 && below.requests_per_s < 5.0, "C %d: %g, C-1: %g", c, at.requests_per_s,
              below.requests_per_s);
    /* 500 requests/s is beyond one replica */
    cr_assert_eq(request_concurrency_for_rate(&s, 500, err, sizeof err), 0);
    /* the largest C that meets TPOT 50 ms: C meets it, C + 1 does not */
    int best = request_best_concurrency(&s, 0, 0.05, err, sizeof err);
    cr_assert_gt(best, 1);
    s.concurrency = best;
    cr_assert_eq(request_estimate_compute(&s, &at, err, sizeof err), 0);
    s.concurrency = best + 1;
    cr_assert_eq(request_estimate_compute(&s, &below, err, sizeof err), 0);
    cr_assert(at.tpot <= 0.05 && below.tpot > 0.05, "C %d: %g, C+1: %g", best, at.tpot, below.tpot);
}

static const char *src_path(const char *rel)
{
    static char buf[4096];
    const char *src = getenv("NB_SRC");
    snprintf(buf, sizeof buf, "%s/%s", src ? src : ".", rel);
    return buf;
}

Test(calibrate, fixture_sets_with_round_ceilings)
{
    calibration c;
    char err[512];
    /* a CPU set: 1e12 FLOP/s and 1e11 B/s, 1e11 B of memory */
    cr_assert_eq(calibration_load(src_path("tests/calib/cpu-toy"), &c, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(c.peak_flops, 1e12, 1);
    cr_assert_float_eq(c.bandwidth, 1e11, 1);
    gpu_spec d;
    cr_assert_eq(calibrated_gpu(&c, NULL, DT_BF16, &d, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(d.mem_bw, 1e11, 1);
    cr_assert_float_eq(d.flops[DT_FP8], 1e12, 1);
    cr_assert_float_eq(d.mem_bytes, 1e11, 1);
    /* LLaMA-3.2-1B decode at batch 1 on it: the weights but the (tied) embedding table,
     * (1,235,814,400 - 262,668,288) x 2 B = 1.946e9 B, read once (the head reads the tied
     * table again: + 0.525e9 B) = 2.47e9 B / 1e11 B/s = 24.7 ms; in [24.7, 26] ms */
    model_spec m = model_builtin("llama3.2-1b");
    step_shape sh = decode_shape(1, 128, 1, precision_uniform(DT_BF16));
    step_cost sc;
    cr_assert_eq(decoder_step_cost(&m, &d, &sh, &sc, err, sizeof err), 0, "%s", err);
    cr_assert(sc.time >= 24.7e-3 && sc.time <= 26e-3, "step %g", sc.time);
    /* a GPU set: 700 TFLOP/s bf16 measured against 989.4, 3000 GB/s from the stream read row */
    cr_assert_eq(calibration_load(src_path("tests/calib/gpu-toy"), &c, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(c.bandwidth, 3e12, 1);
    cr_assert_str_eq(c.bandwidth_from, "stream.tsv read");
    gpu_spec h = gpu_builtin("h100");
    cr_assert_eq(calibrated_gpu(&c, &h, DT_BF16, &d, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(d.flops[DT_BF16], 700e12, 1);
    /* fp8 scales with it: 1978.9 x 700 / 989.4 = 1400.0 TFLOP/s */
    cr_assert_float_eq(d.flops[DT_FP8], 1978.9e12 * 700 / 989.4, 1e6);
    cr_assert_float_eq(d.link_bw, h.link_bw, 1);
    /* the wrong pairings are errors */
    cr_assert_eq(calibrated_gpu(&c, NULL, DT_BF16, &d, err, sizeof err), -1);
    cr_assert_eq(calibration_load("/nonexistent-set", &c, err, sizeof err), -1);
}

/* A TTFT limit is checked against the benchmark's TTFT (ttft_closed, 50 ms
 * of overhead a request here), not the prefill alone, and by a scan: the
 * answer is the largest C, found by trying every C that fits, whose
 * ttft_closed and TPOT meet the limits. */
Test(request, ttft_limit_is_the_benchmarks)
{
    gpu_spec g = gpu_builtin("h100");
    model_spec m = model_builtin("llama3-8b");
    request_setup s = setup(&m, &g, 1, 1024, 512, 1);
    request_options o = {.overhead = 50e-3};
    char err[256];
    const double ttft_max = 0.2, tpot_max = 0.05;
    int best = request_best_concurrency_with(&s, &o, ttft_max, tpot_max, err, sizeof err);
    cr_assert_gt(best, 0, "%s", err);
    int want = 0;
    request_estimate e;
    for (int c = 1;; c++) {
        s.concurrency = c;
        cr_assert_eq(request_estimate_with(&s, &o, &e, err, sizeof err), 0, "%s", err);
        if (!e.fit.fits)
            break;
        if (e.ttft_closed <= ttft_max && e.tpot <= tpot_max)
            want = c;
        cr_assert(e.ttft < ttft_max, "C %d: the prefill alone %g meets the limit", c, e.ttft);
    }
    cr_assert_eq(best, want);
    s.concurrency = best + 1;
    cr_assert_eq(request_estimate_with(&s, &o, &e, err, sizeof err), 0, "%s", err);
    cr_assert(!e.fit.fits || e.ttft_closed > ttft_max || e.tpot > tpot_max);
}

/* The mixed TPOT of in-flight batching (request.h, mixed_steps) by hand. */
static request_estimate estimate_mixed(request_setup s, int budget, int mixed)
{
    request_options o = {.budget = budget, .mixed_steps = mixed};
    request_estimate e;
    char err[256];
    cr_assert_eq(request_estimate_with(&s, &o, &e, err, sizeof err), 0, "%s", err);
    return e;
}

Test(request, mixed_steps_by_hand)
{
    /* LLaMA-3-8B on one H100, prompt 2048, 9 output tokens, 9 in flight,
     * budget 8192: a prompt takes n = 1 step and a request R = 8 decode
     * steps; a request's decode steps carry the other 8 prompts over the
     * n + R = 9 steps of their lives, m = 8/9 a step, and 1 + 8 x 8/9 = 8.1
     * -> 8 decodes.  Dense: a prompt's step reads the same weights as a
     * decode step, w = 2 B x 7,504,924,672 (all but the embedding table) /
     * 3.35e12 B/s = 4.48 ms, and adds p - w.  So TPOT = d(8) + 8/9 (p - w),
     * d(8) and p priced without mixing (the plain estimate at 8 in flight). */
    gpu_spec g = gpu_builtin("h100");
    model_spec m = model_builtin("llama3-8b");
    const double w = 2.0 * 7504924672.0 / g.mem_bw;
    request_estimate e8 = estimate_mixed(setup(&m, &g, 1, 2048, 9, 8), 0, 0);
    request_estimate e9 = estimate_mixed(setup(&m, &g, 1, 2048, 9, 9), 0, 1);
    const double p = e8.prefill_time;
    double hand = e8.decode_step + 8.0 / 9 * (p - w);
    cr_expect(fabs(e9.tpot / hand - 1) < 1e-3, "TPOT %g, by hand %g", e9.tpot, hand);
    /* its own prompt's step (d(8) + p - w), then 8 TPOTs */
    cr_expect(fabs(e9.e2e / (e8.decode_step + p - w + 8 * hand) - 1) < 1e-3, "e2e %g", e9.e2e);
    /* the unmixed loop pays the 8 prompts whole, weights and all: d(9) + 8 p / 8 */
    request_estimate plain = estimate_mixed(setup(&m, &g, 1, 2048, 9, 9), 0, 0);
    cr_expect(e9.tpot < plain.tpot, "mixed %g, unmixed %g", e9.tpot, plain.tpot);
    cr_expect_float_eq(e9.ttft_closed, plain.ttft_closed, 1e-12, "the closed loop's TTFT already mixes");
    /* a budget of 1024: n = 2 steps a prompt, m = 8/10, 1 + 8 x 8/10 = 7.4 -> 7 decodes */
    request_estimate e7 = estimate_mixed(setup(&m, &g, 1, 2048, 9, 7), 0, 0);
    request_estimate b = estimate_mixed(setup(&m, &g, 1, 2048, 9, 9), 1024, 1);
    hand = e7.decode_step + 0.8 * (p - w);
    cr_expect(fabs(b.tpot / hand - 1) < 1e-3, "TPOT %g, by hand %g", b.tpot, hand);
    cr_expect_eq(b.prefill_steps, 2);
    /* one request alone: no other prompt rides in its steps, TPOT = d(1) as without mixing */
    request_estimate one = estimate_mixed(setup(&m, &g, 1, 2048, 9, 1), 0, 1);
    request_estimate one_plain = estimate_mixed(setup(&m, &g, 1, 2048, 9, 1), 0, 0);
    cr_expect_float_eq(one.tpot, one_plain.tpot, 1e-15);
}

Test(request, mixed_steps_read_the_experts_a_prompt_touches)
{
    /* Qwen3-235B-A22B fp8 at tp 8 on H100, prompt 1024, 3 output tokens, 3
     * in flight: n = 1, R = 2, m = 2/3 a step, 1 + 2 x 2/3 = 2.3 -> 2
     * decodes.  Two tokens touch at most 16 of 128 experts a layer, a
     * 1024-token prompt all of them, so a step holding a prompt reads w_p,
     * the decode step alone w_d < w_p: TPOT = d(2) + 2/3 (w_p - w_d) + 2/3
     * (p - w_p) = d(2) + 2/3 (p - w_d).  w_p and w_d: the priced steps' weight
     * bytes over the HBM bandwidth. */
    gpu_spec g = gpu_builtin("h100");
    model_spec m = model_builtin("qwen3-235b-a22b");
    request_setup s = setup(&m, &g, 8, 1024, 3, 2);
    s.prec = precision_uniform(DT_FP8);
    s.prec.act = DT_BF16;
    request_estimate e2 = estimate_mixed(s, 0, 0);
    s.concurrency = 3;
    request_estimate e3 = estimate_mixed(s, 0, 1);
    step_cost pc, dc;
    char err[256];
    step_shape pf = prefill_shape(1, 0, 1024, 8, s.prec), dec = decode_shape(2, 1024 + 3 / 2, 8, s.prec);
    pf.logits_last = 1;
    cr_assert_eq(decoder_step_cost(&m, &g, &pf, &pc, err, sizeof err), 0, "%s", err);
    cr_assert_eq(decoder_step_cost(&m, &g, &dec, &dc, err, sizeof err), 0, "%s", err);
    const double w_p = pc.weight_bytes / g.mem_bw, w_d = dc.weight_bytes / g.mem_bw;
    cr_assert(w_d < 0.5 * w_p, "a decode of 2 reads %g s of weights, a prompt %g s", w_d, w_p);
    const double hand = e2.decode_step + 2.0 / 3 * (e2.prefill_time - w_d);
    cr_expect(fabs(e3.tpot / hand - 1) < 1e-3, "TPOT %g, by hand %g", e3.tpot, hand);
}
