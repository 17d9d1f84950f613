/* Chapter 8's reading of the published CUDA-graph gains, checked from the
 * chapter's own program down: the floor a saving puts on the launch cost,
 * the per-step host work that graphs do not remove, and the capture counts
 * it quotes.  Hand arithmetic beside each; LLaMA-3-8B (and LLaMA-2-7B, the
 * same layers) launches 323 kernels a step unfused (tests/test_graphs.c). */
#include <criterion/criterion.h>
#include <math.h>

#include "chapter_values.h"
#include "graphs.h"
#include "specs.h"

#define NEAR(a, b, tol)                                                                                    \
    cr_assert(fabs((a) - (b)) <= (tol), "%s = %.9g, expected %.9g (abs. tol. %g)", #a, (double)(a), (double)(b), \
              (double)(tol))

/* vLLM PR #1440: 12.0 -> 10.5 ms.  Graphs removed 1.5 ms, 1.5e-3 / 323 =
 * 4.644 us a kernel; with a 4 us graph launch and 1 us a node the eager
 * launch cost at least (1.5e-3 + 4e-6) / 323 + 1e-6 = 5.656 us (not the 37 us
 * of 12 ms / 323, which would make the whole eager step launches). */
Test(ch08, published_saving_is_a_floor_on_the_launch)
{
    launch_costs lc = launch_costs_default();
    NEAR(implied_launch_cost(12.0e-3, 10.5e-3, 323, &lc), (1.5e-3 + 4e-6) / 323 + 1e-6, 1e-12);
    NEAR(chapter_value("ch08/graph_share", "ch08_vllm_per_kernel_us"), 4.6, 1e-9);
    NEAR(chapter_value("ch08/graph_share", "ch08_vllm_floor_us"), 5.7, 1e-9);
    /* SGLang PR #1401: (9.28 - 7.06 + 0.004) ms / 323 + 1 us = 7.885 us; (8.23 - 7.35 + 0.004) / 323 + 1 = 3.737 */
    NEAR(chapter_value("ch08/graph_share", "ch08_sglt_floor_us"), 7.9, 1e-9);
    NEAR(chapter_value("ch08/graph_share", "ch08_sglf_floor_us"), 3.7, 1e-9);
    cr_assert(isnan(implied_launch_cost(7e-3, 9e-3, 323, &lc)), "a graph step slower than eager implies nothing");
}

/* SGLang's triton pair read on an H100 SXM at the roofline, 136-token
 * context: GPU 15,009,849,344 B of weights read at batch 1 (the embedding
 * only one row) plus 136 x 131,072 B of KV, / 3.35e12 = 4.486 ms; host work
 * per step 7.06 - 4.486 = 2.57 ms; launches 9.28 - 2.57 = 6.71 ms over 323 =
 * 20.8 us.  The chapter's rounded inputs must give back both published
 * steps. */
Test(ch08, rounded_inputs_give_back_the_published_steps)
{
    double gpu_ms = chapter_value("ch08/graph_share", "ch08_sglt_h100_gpu_ms");
    double host_ms = chapter_value("ch08/graph_share", "ch08_sglt_h100_host_ms");
    double launch_us = chapter_value("ch08/graph_share", "ch08_sglt_h100_launch_us");
    NEAR(gpu_ms, (15009849344.0 + 136 * 131072.0) / 3.35e12 * 1e3, 0.01);
    NEAR(host_ms, 7.06 - gpu_ms, 0.01);
    NEAR(launch_us, (9.28 - host_ms) / 323 * 1e3, 0.1);
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = decode_shape(1, 136, 1, precision_uniform(DT_BF16));
    launch_costs lc = launch_costs_default();
    lc.launch = launch_us * 1e-6;
    lc.step_host = host_ms * 1e-3;
    graph_step r;
    char err[256];
    cr_assert_eq(graph_step_cost(&m, &g, &s, FUSE_NONE, &lc, NULL, &r, err, sizeof err), 0, "%s", err);
    NEAR(r.step_eager * 1e3, 9.28, 0.02);
    NEAR(r.step_graph * 1e3, 7.06, 0.01);
}

/* The per-step host work is outside the max: 8B at batch 1, 1024-token
 * context, 20 us a launch, 1 ms a step: eager 1 + max(4.52, 323 x 0.020 =
 * 6.46) = 7.46 ms, graph 1 + max(4.52, 0.004 + 0.323) = 5.52 ms, saved 26.0%
 * (30.0% without it: 1 - 4.52 / 6.46). */
Test(ch08, step_host_work_is_paid_both_ways)
{
    NEAR(chapter_value("ch08/graph_share", "ch08_8b_b1_whatif_saved_pct"), 30, 0.5);
    NEAR(chapter_value("ch08/graph_share", "ch08_8b_b1_whatif_h_saved_pct"), 26, 0.5);
    double gpu = chapter_value("ch08/graph_share", "ch08_8b_b1_gpu_ms");
    NEAR(100 * (1 - (1 + gpu) / (1 + 323 * 0.020)), 26, 0.5);
}

/* vLLM's list up to 512: [1, 2, 4] + range(8, 256, 8) (31) + range(256, 513, 16)
 * (17) = 51; the older one, [1, 2, 4] + every multiple of 8 to 512 (64), 67. */
Test(ch08, capture_counts)
{
    NEAR(chapter_value("ch08/graph_share", "ch08_capture_n"), 51, 0);
    NEAR(chapter_value("ch08/graph_share", "ch08_capture_n_older"), 67, 0);
}

/* §8.4 says in words what its values show, so the words must stay true: at
 * a Python-side launch the eager launches of both models' batch-1 steps take
 * less than their GPU work (so they hide behind it and graphs save nothing),
 * the saving is under 5% from the first sequence, and at the what-if launch
 * batch 256 saves nothing for either model. */
Test(ch08, the_prose_claims_of_share_saved_hold)
{
    const char *models[] = {"8b", "70b"};
    for (int i = 0; i < 2; i++) {
        char host[64], gpu[64], stop[64], b256[64];
        snprintf(host, sizeof host, "ch08_%s_b1_py_host_ms", models[i]);
        snprintf(gpu, sizeof gpu, "ch08_%s_b1_gpu_ms", models[i]);
        snprintf(stop, sizeof stop, "ch08_%s_stop_py", models[i]);
        snprintf(b256, sizeof b256, "ch08_%s_b256_whatif_saved_pct", models[i]);
        cr_assert(chapter_value("ch08/graph_share", host) < chapter_value("ch08/graph_share", gpu), "%s", models[i]);
        NEAR(chapter_value("ch08/graph_share", stop), 1, 0);
        NEAR(chapter_value("ch08/graph_share", b256), 0, 0);
    }
}
