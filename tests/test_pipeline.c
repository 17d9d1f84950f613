/* Pipeline parallelism (pipeline.h): the stage a GPU holds, the hand-off,
 * the bubble, and serving with stages, against hand arithmetic from
 * LLaMA-3-70B's config. */
#include "pipeline.h"
#include "request.h"

#include <criterion/criterion.h>
#include <math.h>

Test(pipeline, the_stage_a_gpu_holds)
{
    /* LLaMA-3-70B, a layer: attention 2 x 8192 x 8192 + 2 x 8192 x 1024 = 150,994,944, MLP
     * 3 x 8192 x 28672 = 704,643,072, norms 16,384: 855,654,400.  A quarter of the 80 layers,
     * 20 x 855,654,400 = 17,113,088,000, plus one vocabulary matrix 128,256 x 8192 =
     * 1,050,673,152 and the final norm 8192: 18,163,769,344 parameters. */
    model_spec m = model_builtin("llama3-70b"), st;
    char err[256];
    cr_assert_eq(pipeline_stage_model(&m, 4, &st, err, sizeof err), 0, "%s", err);
    cr_assert_eq(st.layers, 20);
    cr_assert_float_eq(model_params(&st).total, 18163769344.0, 0.5);
    cr_assert_eq(pipeline_stage_model(&m, 3, &st, err, sizeof err), -1);
    cr_assert(strstr(err, "does not divide the 80 layers") != NULL, "%s", err);
    /* pp = 1 is the model itself */
    cr_assert_eq(pipeline_stage_model(&m, 1, &st, err, sizeof err), 0);
    cr_assert_float_eq(model_params(&st).total, model_params(&m).total, 0.5);
}

Test(pipeline, hand_off_bubble_and_cycle)
{
    /* batch 64 in 2 microbatches of 32 over 2 stages of TP 4 on H100: a hand-off is one
     * microbatch's residual stream, 32 x 8192 x 2 = 524,288 B, at 4.8 us + 524,288 / 450e9 =
     * 5.9651 us.  Bubble of a flush (M + pp - 1 slots for M of work): (2 - 1) / (2 + 2 - 1) = 1/3;
     * with 8 microbatches over 4 stages 3/11. */
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    step_shape s = decode_shape(64, 4096, 4, precision_uniform(DT_BF16));
    pipeline_cost c;
    char err[256];
    cr_assert_eq(pipeline_step_cost(&m, &g, &s, 2, 2, &c, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(c.p2p_bytes, 524288.0, 1e-9);
    cr_assert_float_eq(c.p2p_time, 5.96508e-6, 1e-10);
    cr_assert_float_eq(c.bubble, 1.0 / 3, 1e-12);
    /* the slot is a stage plus a hand-off: a flush 3 slots, a steady cycle 2, one token's trip 2 less a hand-off */
    double slot = c.stage_time + c.p2p_time;
    cr_assert_float_eq(c.flush_time, 3 * slot, 1e-12);
    cr_assert_float_eq(c.cycle_time, 2 * slot, 1e-12);
    cr_assert_float_eq(c.latency, 2 * slot - c.p2p_time, 1e-12);
    cr_assert_eq(pipeline_step_cost(&m, &g, &s, 4, 8, &c, err, sizeof err), 0);
    cr_assert_float_eq(c.bubble, 3.0 / 11, 1e-12);
    /* a stage of half the layers on half the batch reads half the layers' weights: its time is
     * below half the whole step at the whole batch, which reads every weight once */
    step_cost whole;
    cr_assert_eq(decoder_step_cost(&m, &g, &s, &whole, err, sizeof err), 0);
    cr_assert_eq(pipeline_step_cost(&m, &g, &s, 2, 2, &c, err, sizeof err), 0);
    cr_assert(c.stage_time < 0.5 * whole.time + 0.4e-3, "stage %g, whole %g", c.stage_time, whole.time);
    cr_assert_eq(pipeline_step_cost(&m, &g, &s, 2, 65, &c, err, sizeof err), -1);
}

Test(pipeline, serving_with_stages_holds_more)
{
    /* LLaMA-3-70B at TP 4 x PP 2, 2048 + 256 tokens: a stage holds 40 x 855,654,400 +
     * 1,050,681,344 = 35,276,857,344 parameters, 17,638,428,672 B a GPU; reserve 761,921,536 B
     * (test_request.c); left 0.9 x 85,520,809,984 - both = 58,568,378,777.6 B over 40 layers x
     * 2 x 2 KV heads x 128 x 2 B = 40,960 B a token, 94,371,840 B a sequence: 620.6 -> 620. */
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    request_setup s = {&m, &g, precision_uniform(DT_BF16), 4, 2048, 256, 64, 0, 0, memory_policy_default(), 2.0, 2};
    request_estimate e;
    char err[256];
    cr_assert_eq(request_estimate_compute(&s, &e, err, sizeof err), 0, "%s", err);
    cr_assert_eq(e.fit.max_batch, 620);
    cr_assert_eq(e.gpus, 8);
    /* chunked prefill and stages together are refused, not guessed */
    s.chunk = 512;
    cr_assert_eq(request_estimate_compute(&s, &e, err, sizeof err), -1);
}
