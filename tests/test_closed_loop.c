/* The closed-loop benchmark's TTFT: the closed form and the replay on a
 * hand-worked start-up burst, the held-out split, the fitted overheads. */
#include "closed_loop.h"
#include "simulate.h"
#include "specs.h"
#include "split.h"
#include "validate_ttft.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

/* Three requests of 100 prompt tokens arrive together; budget 200 tokens a
 * step; a step costs 10 ms + 1 ms a decode + 0.1 ms a prompt token.
 * Step 1: no decodes, 200 prompt tokens (requests 1 and 2 whole):
 *   10 + 0 + 20 = 30 ms, so TTFT 30 ms for both.
 * Step 2: 2 decodes, room 198, request 3's 100 tokens: 10 + 2 + 10 = 22 ms,
 *   TTFT 30 + 22 = 52 ms.  Mean (30 + 30 + 52) / 3 = 37.333 ms. */
static const step_costs HAND = {10e-3, 1e-3, 0.1e-3, 0}; /* w_dec 0: a dense model's, w */

Test(closed_loop, burst_by_hand)
{
    bench_setup b = {3, 100, 2, 200, 3, 0, 0, 0};
    double t[3];
    cr_assert_float_eq(closed_loop_burst_ttft(&b, &HAND, t), 112e-3 / 3, 1e-12);
    cr_assert_float_eq(t[0], 30e-3, 1e-12);
    cr_assert_float_eq(t[1], 30e-3, 1e-12);
    cr_assert_float_eq(t[2], 52e-3, 1e-12);
}

/* The same three as a whole benchmark (N = C = 3), with 5 ms of overhead:
 * every TTFT is 5 ms later; the mean is affine in h with slope 1. */
Test(closed_loop, bench_is_the_burst_when_n_is_c)
{
    bench_setup b = {3, 100, 2, 200, 3, 5e-3, 0, 0};
    bench_ttft r;
    cr_assert_eq(closed_loop_bench_ttft(&b, &HAND, &r), 0);
    cr_assert_float_eq(r.mean, 5e-3 + 112e-3 / 3, 1e-12);
}

/* The steady state by hand, with no decodes to carry (O = 1) and no
 * overhead: one client (C = 1) sends, the prompt's step takes
 * w + P c_tok = 10 + 10 = 20 ms, and sends again at once.  Its closed form:
 * X = 1 / cycle; T = w / (1 - X beta) with beta = 10 ms; the request lands
 * in a step of mean E[T^2] / T and waits half of it, then its own step of
 * w + beta + beta X E[T^2] / T.  With a single client the true answer is
 * 20 ms (it always finds the engine idle); the closed form, which spreads
 * arrivals at random, must say more than the bare 20 ms and, at C = 1,
 * close to it: X cycle = 1 pins the rate, checked here, and the TTFT is
 * within the step of 20 ms.  The general agreement is the simulation's
 * test below. */
Test(closed_loop, steady_state_is_littles_law)
{
    bench_setup b = {1, 100, 1, 0, 10, 0, 0, 0};
    bench_ttft r;
    cr_assert_eq(closed_loop_bench_ttft(&b, &HAND, &r), 0);
    cr_assert_float_eq(r.rate * r.cycle, 1.0, 1e-9);
    cr_assert_float_eq(r.step, 10e-3 / (1 - r.rate * 10e-3), 1e-12);
    cr_assert_float_eq(r.cycle, r.engine, 1e-12); /* O = 1, h = 0: the round is the TTFT */
    cr_assert(r.engine >= 20e-3 && r.engine < 40e-3, "%g", r.engine);
}

/* The same burst at a prefill-first engine (decodes wait while prompts do):
 * step 1 as above, 30 ms; step 2 carries request 3's 100 prompt tokens and
 * no decodes: 10 + 10 = 20 ms, TTFT 50 ms.  Mean (30 + 30 + 50) / 3. */
Test(closed_loop, prefill_first_burst_by_hand)
{
    bench_setup b = {3, 100, 2, 200, 3, 0, 0, 1};
    double t[3];
    cr_assert_float_eq(closed_loop_burst_ttft(&b, &HAND, t), 110e-3 / 3, 1e-12);
    cr_assert_float_eq(t[2], 50e-3, 1e-12);
}

/* Its steady state is the cohort, by hand: C = 3, O = 3, h = 5 ms, N = 9.
 * Every round is the burst again (no decodes left when the cohort comes
 * back): TTFT 5 + 110 / 3 ms for all nine.  Prefill ends at 50 ms; then
 * O - 1 = 2 decode steps of 10 + 3 = 13 ms.  TPOT: requests 1 and 2 wait
 * 50 - 30 = 20 ms for request 3's prompt, so (20 + 26) / 2 = 23 ms; request 3
 * 26 / 2 = 13 ms; mean 59 / 3 ms.  Cycle 5 + 50 + 26 = 81 ms. */
Test(closed_loop, prefill_first_cohort_by_hand)
{
    bench_setup b = {3, 100, 3, 200, 9, 5e-3, 0, 1};
    bench_ttft r;
    cr_assert_eq(closed_loop_bench_ttft(&b, &HAND, &r), 0);
    cr_assert_float_eq(r.steady, 5e-3 + 110e-3 / 3, 1e-12);
    cr_assert_float_eq(r.mean, 5e-3 + 110e-3 / 3, 1e-12);
    cr_assert_float_eq(r.step, 59e-3 / 3, 1e-12);
    cr_assert_float_eq(r.cycle, 81e-3, 1e-12);
    cr_assert_float_eq(r.departure, 27e-3, 1e-12);
}

/* A mixture's decode reads only the experts its tokens route to: the same
 * step with w_dec = 4 ms for a step of decodes alone.  t(3, 0) = 4 + 3 =
 * 7 ms; a step with prompt tokens still reads every weight: t(3, 5) =
 * 10 + 3 + 0.5 = 13.5 ms; w_dec = 0 means w (a dense model): t(3, 0) = 13 ms. */
static const step_costs MIXTURE = {10e-3, 1e-3, 0.1e-3, 4e-3};

Test(closed_loop, decodes_alone_read_their_own_weights)
{
    cr_assert_float_eq(step_costs_time(&MIXTURE, 3, 0), 7e-3, 1e-15);
    cr_assert_float_eq(step_costs_time(&MIXTURE, 3, 5), 13.5e-3, 1e-15);
    cr_assert_float_eq(step_costs_time(&HAND, 3, 0), 13e-3, 1e-15);
    cr_assert_float_eq(step_costs_time(&MIXTURE, 0, 0), 0, 0);
}

/* The cohort above with the mixture's costs, by hand: the prompts' steps
 * are the same (TTFT 5 + 110 / 3 ms, prefill ends at 50 ms); the O - 1 = 2
 * decode steps are 4 + 3 = 7 ms, not 13.  TPOT: requests 1 and 2
 * (20 + 14) / 2 = 17 ms, request 3 14 / 2 = 7 ms, mean 41 / 3 ms; cycle
 * 5 + 50 + 14 = 69 ms.  The replay steps the same rounds. */
Test(closed_loop, prefill_first_cohort_of_a_mixture_by_hand)
{
    bench_setup b = {3, 100, 3, 200, 9, 5e-3, 0, 1};
    bench_ttft r;
    cr_assert_eq(closed_loop_bench_ttft(&b, &MIXTURE, &r), 0);
    cr_assert_float_eq(r.steady, 5e-3 + 110e-3 / 3, 1e-12);
    cr_assert_float_eq(r.step, 41e-3 / 3, 1e-12);
    cr_assert_float_eq(r.cycle, 69e-3, 1e-12);
    sim_setup s = {b, MIXTURE, 3, 0, 1, 0};
    sim_result q;
    char err[256];
    cr_assert_eq(sim_run(&s, 0, &q, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(q.tpot.mean, 41e-3 / 3, 1e-12);
    step_costs bad = MIXTURE;
    bad.decode_weight_read = -1e-3;
    cr_assert_eq(closed_loop_bench_ttft(&b, &bad, &r), -1);
}

/* The replay of the same cohorts, stepped: alike requests at a prefill-first
 * engine come back together round after round, so the replay's means equal
 * the hand-worked ones above (each round identical, warm-up or not). */
Test(simulate, prefill_first_cohorts_by_hand)
{
    sim_setup s = {{3, 100, 3, 200, 9, 5e-3, 0, 1}, HAND, 3, 0, 1, 0};
    sim_result r;
    char err[256];
    cr_assert_eq(sim_run(&s, 0, &r, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.ttft.mean, 5e-3 + 110e-3 / 3, 1e-12);
    cr_assert_float_eq(r.tpot.mean, 59e-3 / 3, 1e-12);
    cr_assert_eq(r.measured, 6);
}

/* A prefill-first replay at benchmark scale agrees with its closed form in
 * the steady state (alike requests; C = 64, 1024/128 tokens, 12 chunks a
 * round): within 5 %. */
Test(simulate, prefill_first_agrees_with_the_closed_form)
{
    const step_costs k = {9.5e-3, 0.15e-3, 0.0465e-3, 0};
    const int C = 64;
    bench_setup b = {C, 1024, 128, 0, 20 * C, 20e-3, 0, 1};
    bench_ttft cf;
    cr_assert_eq(closed_loop_bench_ttft(&b, &k, &cf), 0);
    sim_setup s = {b, k, 5 * C, 0, 7, 0};
    sim_result r;
    char err[256];
    cr_assert_eq(sim_run(&s, 0, &r, err, sizeof err), 0, "%s", err);
    cr_assert(fabs(r.ttft.mean / cf.steady - 1) < 0.05, "TTFT sim %g, closed %g", r.ttft.mean, cf.steady);
    cr_assert(fabs(r.tpot.mean / cf.step - 1) < 0.05, "TPOT sim %g, closed %g", r.tpot.mean, cf.step);
}

/* The replay of the same burst, stepped by hand: step 1 ends at 30 ms
 * (first tokens of 1 and 2), step 2 at 52 ms (first token of 3, second and
 * last of 1 and 2), step 3 is request 3's decode alone: 10 + 1 = 11 ms, at
 * 63 ms.  TPOT: 1 and 2: 52 - 30 = 22 ms; 3: 63 - 52 = 11 ms. */
Test(simulate, burst_by_hand)
{
    sim_setup s = {{3, 100, 2, 200, 3, 0, 0, 0}, HAND, 0, 0, 1, 0};
    sim_result r;
    char err[256];
    cr_assert_eq(sim_run(&s, 1, &r, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(r.requests[0].first, 30e-3, 1e-12);
    cr_assert_float_eq(r.requests[1].first, 30e-3, 1e-12);
    cr_assert_float_eq(r.requests[2].first, 52e-3, 1e-12);
    cr_assert_float_eq(r.requests[2].last, 63e-3, 1e-12);
    cr_assert_float_eq(r.ttft.mean, 112e-3 / 3, 1e-12);
    cr_assert_float_eq(r.tpot.mean, (22e-3 + 22e-3 + 11e-3) / 3, 1e-12);
    cr_assert_eq(r.steps, 3);
    sim_result_free(&r);
}

/* The replay and the closed form price one process: requests that drift
 * apart (overheads exponential around h, outputs 10 % apart), in the steady
 * state (the first 40 rounds left out, 200 sent).  A 8B-like step: the
 * weights 8 ms, a decode 0.05 ms, a prompt token 0.02 ms; C = 32, 1024
 * prompt and 256 output tokens, h = 50 ms.  Both means within 5 %. */
Test(simulate, steady_state_agrees_with_the_closed_form)
{
    const step_costs k = {8e-3, 0.05e-3, 0.02e-3, 0};
    const int C = 32;
    bench_setup b = {C, 1024, 256, 0, 200 * C, 50e-3, 0, 0};
    bench_ttft cf;
    cr_assert_eq(closed_loop_bench_ttft(&b, &k, &cf), 0);
    sim_setup s = {b, k, 40 * C, 1, 7, SIM_SPREAD};
    sim_result r;
    char err[256];
    cr_assert_eq(sim_run(&s, 0, &r, err, sizeof err), 0, "%s", err);
    cr_assert(fabs(r.ttft.mean / cf.steady - 1) < 0.05, "TTFT sim %g, closed %g", r.ttft.mean, cf.steady);
    cr_assert(fabs(r.tpot.mean / cf.step - 1) < 0.05, "TPOT sim %g, closed %g", r.tpot.mean, cf.step);
}

/* Alike requests (fixed overhead and output) lock into cohorts: the cohort
 * prefilled in one long step finishes in one short decode step and comes
 * back together, so the replay's steady TTFT stays far above the closed
 * form's, which is why a benchmark's drift is part of the model. */
Test(simulate, alike_requests_lock_into_cohorts)
{
    const step_costs k = {8e-3, 0.05e-3, 0.02e-3, 0};
    const int C = 32;
    bench_setup b = {C, 1024, 256, 0, 100 * C, 50e-3, 0, 0};
    bench_ttft cf;
    cr_assert_eq(closed_loop_bench_ttft(&b, &k, &cf), 0);
    sim_setup s = {b, k, 40 * C, 0, 7, 0};
    sim_result r;
    char err[256];
    cr_assert_eq(sim_run(&s, 0, &r, err, sizeof err), 0, "%s", err);
    cr_assert(r.ttft.mean > 2 * cf.steady, "TTFT sim %g, closed %g", r.ttft.mean, cf.steady);
}

Test(simulate, bad_setup_is_refused)
{
    sim_setup s = {{3, 100, 2, 200, 2, 0, 0, 0}, HAND, 0, 0, 1, 0}; /* N < C */
    sim_result r;
    char err[256];
    cr_assert_eq(sim_run(&s, 0, &r, err, sizeof err), -1);
}

/* The overheads serve uses are the fit on the fitting half: refit them. */
Test(closed_loop, engine_overheads_are_the_fit)
{
    gpu_table g;
    model_table m;
    char err[512];
    cr_assert_eq(gpu_table_builtin(&g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(model_table_builtin(&m, err, sizeof err), 0, "%s", err);
    ttft_validation *v = malloc(sizeof *v);
    cr_assert_eq(validate_ttft("code/specs/measured/serving_runs.tsv", &g, &m, v, err, sizeof err), 0, "%s", err);
    for (int k = 0; k < v->no; k++) {
        const engine_defaults *e = engine_defaults_find(v->o[k].engine);
        cr_assert_not_null(e);
        cr_assert(v->o[k].fitted_on > 0);
        cr_assert_float_eq(e->overhead, v->o[k].overhead, 0.1e-3, "%s: table %g, fit %g", e->name, e->overhead,
                           v->o[k].overhead);
    }
    free(v);
}

/* serving_runs.tsv with the measured TTFT of every run on one side of the
 * split multiplied by ten, written to a temporary file. */
static void write_scaled(const char *path, int held_out_side)
{
    FILE *in = fopen("code/specs/measured/serving_runs.tsv", "r"), *out = fopen(path, "w");
    cr_assert(in && out);
    char line[4096];
    int ttft_col = -1;
    while (fgets(line, sizeof line, in)) {
        if (line[0] == '#' || ttft_col == -2) {
            fputs(line, out);
            continue;
        }
        char *cells[32];
        int n = 0;
        line[strcspn(line, "\n")] = 0;
        for (char *c = strtok(line, "\t"); c && n < 32; c = strtok(NULL, "\t"))
            cells[n++] = c;
        if (ttft_col < 0) /* the header */
            for (int i = 0; i < n; i++)
                if (strcmp(cells[i], "ttft_s") == 0)
                    ttft_col = i;
        char scaled[64];
        if (ttft_col >= 0 && strcmp(cells[0], "id") != 0 && run_is_held_out(cells[0]) == held_out_side) {
            snprintf(scaled, sizeof scaled, "%.9g", 10 * strtod(cells[ttft_col], NULL));
            cells[ttft_col] = scaled;
        }
        for (int i = 0; i < n; i++)
            fprintf(out, "%s%s", cells[i], i + 1 < n ? "\t" : "\n");
    }
    fclose(in);
    fclose(out);
}

/* The fit sees only its half: ten times every held-out TTFT leaves each
 * engine's overhead as it was; ten times every fitting TTFT moves it (so
 * the first check can fail). */
Test(closed_loop, fitted_overhead_uses_only_its_half)
{
    gpu_table g;
    model_table m;
    char err[512], path[] = "/tmp/napkin_runs_XXXXXX";
    cr_assert_eq(gpu_table_builtin(&g, err, sizeof err), 0, "%s", err);
    cr_assert_eq(model_table_builtin(&m, err, sizeof err), 0, "%s", err);
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    close(fd);
    ttft_validation *base = malloc(sizeof *base), *v = malloc(sizeof *v);
    cr_assert_eq(validate_ttft("code/specs/measured/serving_runs.tsv", &g, &m, base, err, sizeof err), 0, "%s", err);
    write_scaled(path, 1);
    cr_assert_eq(validate_ttft(path, &g, &m, v, err, sizeof err), 0, "%s", err);
    for (int k = 0; k < v->no; k++)
        cr_assert_float_eq(v->o[k].overhead, base->o[k].overhead, 1e-12, "%s", v->o[k].engine);
    cr_assert(v->ttft_abs > base->ttft_abs); /* the held-out errors did see it */
    write_scaled(path, 0);
    cr_assert_eq(validate_ttft(path, &g, &m, v, err, sizeof err), 0, "%s", err);
    for (int k = 0; k < v->no; k++)
        cr_assert(v->o[k].overhead > 2 * base->o[k].overhead, "%s", v->o[k].engine);
    unlink(path);
    free(base), free(v);
}
