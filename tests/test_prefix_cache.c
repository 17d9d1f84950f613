/* Prefix caching in the request model (code/napkin/serving/request.c): the prefill
 * of a hit against the cached prefix, the blend over the hit rate, and the
 * memory one shared prefix frees, against hand arithmetic on LLaMA-3-8B. */
#include <criterion/criterion.h>

#include <math.h>

#include "memory.h"
#include "request.h"

#define near(got, want) \
    cr_expect(fabs((got) - (want)) <= 1e-9 * fabs(want), #got " = %.9g, expected %.9g", (double)(got), (double)(want))

static model_spec M;
static gpu_spec G;

static request_setup setup(void)
{
    M = model_builtin("llama3-8b");
    G = gpu_builtin("h100");
    request_setup s = {&M, &G, precision_uniform(DT_BF16), 1, 4096, 256, 16, 0, 0, memory_policy_default(), 0, 1};
    return s;
}

/* p = h p_hit + (1 - h) p_miss, p_hit the prefill of the last 1024 prompt
 * tokens against 3072 cached ones, p_miss the whole 4096. */
Test(prefix, prefill_blends_hits_and_misses)
{
    char err[256];
    request_setup s = setup();
    request_estimate e;
    cr_assert_eq(request_estimate_cached(&s, 3072, 0.75, &e, err, sizeof err), 0, "%s", err);
    step_cost hit, miss;
    step_shape hs = prefill_shape(1, 3072, 1024, 1, s.prec), ms = prefill_shape(1, 0, 4096, 1, s.prec);
    cr_assert_eq(decoder_step_cost(&M, &G, &hs, &hit, err, sizeof err), 0);
    cr_assert_eq(decoder_step_cost(&M, &G, &ms, &miss, err, sizeof err), 0);
    near(e.prefill_time, 0.75 * hit.time + 0.25 * miss.time);
    near(e.ttft, e.prefill_time);
    cr_expect(hit.time < miss.time / 3, "a hit computes a quarter of the prompt");
    /* without caching the prefill is the miss */
    request_setup none = setup();
    request_estimate n;
    cr_assert_eq(request_estimate_compute(&none, &n, err, sizeof err), 0, "%s", err);
    near(n.prefill_time, miss.time);
    cr_expect(e.requests_per_s > n.requests_per_s);
}

/* Memory: KV per token 131,072 B.  Without caching a slot holds 4096 + 256
 * tokens; with every request hitting a 3072-token prefix it holds 1280 of
 * its own and the replica holds the prefix once:
 *   max C = floor((budget - 3072 * 131072) / (1280 * 131072)). */
Test(prefix, one_shared_prefix_frees_memory)
{
    char err[256];
    request_setup s = setup(), none = setup();
    request_estimate e, n;
    cr_assert_eq(request_estimate_cached(&s, 3072, 1.0, &e, err, sizeof err), 0, "%s", err);
    cr_assert_eq(request_estimate_compute(&none, &n, err, sizeof err), 0, "%s", err);
    const double kv = 131072, budget = n.fit.kv_budget;
    cr_expect_eq(n.fit.max_batch, (int)floor(budget / (4352 * kv)));
    cr_expect_eq(e.fit.max_batch, (int)floor((budget - 3072 * kv) / (1280 * kv)));
}

Test(prefix, refusals)
{
    char err[256];
    request_estimate e;
    request_setup s = setup(); /* the whole prompt cannot be the shared prefix */
    cr_expect_eq(request_estimate_cached(&s, 4096, 0.5, &e, err, sizeof err), -1);
    cr_expect_eq(request_estimate_cached(&s, 100, 1.5, &e, err, sizeof err), -1);
    s.chunk = 512;
    cr_expect_eq(request_estimate_cached(&s, 100, 0.5, &e, err, sizeof err), -1);
}
