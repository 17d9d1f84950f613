/* The closed-loop benchmark's TTFT: the closed form and the replay on a
 * hand-worked start-up burst, the held-out split, the fitted overheads. */
#include "closed_loop.h"
#include "simulate.h"
#include "specs.h"
#include "validate_ttft.h"

#include <criterion/criterion.h>
#include <stdlib.h>

/* Three requests of 100 prompt tokens arrive together; budget 200 tokens a
 * step; a step costs 10 ms + 1 ms a decode + 0.1 ms a prompt token.
 * Step 1: no decodes, 200 prompt tokens (requests 1 and 2 whole):
 *   10 + 0 + 20 = 30 ms, so TTFT 30 ms for both.
 * Step 2: 2 decodes, room 198, request 3's 100 tokens: 10 + 2 + 10 = 22 ms,
 *   TTFT 30 + 22 = 52 ms.  Mean (30 + 30 + 52) / 3 = 37.333 ms. */
static const step_costs HAND = {10e-3, 1e-3, 0.1e-3};

Test(closed_loop, burst_by_hand)
{
    bench_setup b = {3, 100, 2, 200, 3, 0, 0};
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
    bench_setup b = {3, 100, 2, 200, 3, 5e-3, 0};
    bench_ttft r;
    cr_assert_eq(closed_loop_bench_ttft(&b, &HAND, 20e-3, 13e-3, 100e-3, &r), 0);
    cr_assert_float_eq(r.mean, 5e-3 + 112e-3 / 3, 1e-12);
    cr_assert_float_eq(r.per_overhead, 1.0, 1e-12);
}

/* The replay of the same burst, stepped by hand: step 1 ends at 30 ms
 * (first tokens of 1 and 2), step 2 at 52 ms (first token of 3, second and
 * last of 1 and 2), step 3 is request 3's decode alone: 10 + 1 = 11 ms, at
 * 63 ms.  TPOT: 1 and 2: 52 - 30 = 22 ms; 3: 63 - 52 = 11 ms. */
Test(simulate, burst_by_hand)
{
    sim_setup s = {{3, 100, 2, 200, 3, 0, 0}, HAND, 0, 0, 1};
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

Test(simulate, bad_setup_is_refused)
{
    sim_setup s = {{3, 100, 2, 200, 2, 0, 0}, HAND, 0, 0, 1}; /* N < C */
    sim_result r;
    char err[256];
    cr_assert_eq(sim_run(&s, 0, &r, err, sizeof err), -1);
}

/* FNV-1a of "a" is 0xaf63dc4c8601ec8c (the published test vector): even, so
 * "a" fits; the split depends on the id alone. */
Test(closed_loop, split_is_fnv1a_of_the_id)
{
    cr_assert_eq(run_id_hash("a"), 0xaf63dc4c8601ec8cull);
    cr_assert_eq(run_is_held_out("a"), 0);
    cr_assert_eq(run_id_hash(""), 14695981039346656037ull);
    cr_assert_eq(run_is_held_out("a"), run_is_held_out("a"));
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
