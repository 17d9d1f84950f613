/* Tensor-parallel communication: the ring formulas against hand arithmetic,
 * and the collectives a decode step adds. */
#include "comm.h"
#include "memory.h"
#include "specdec.h"
#include "transformer.h"

#include <criterion/criterion.h>
#include <math.h>

Test(comm, ring_allreduce_by_hand)
{
    /* H100 row: 450e9 B/s per direction, 4.8 us per collective.  1 MiB at TP 4:
     * 4.8e-6 + 2 x 3/4 x 1,048,576 / 450e9 = 4.8e-6 + 3.4953e-6 = 8.2953e-6 s. */
    gpu_spec g = gpu_builtin("h100");
    cr_assert_float_eq(allreduce_time(&g, 4, 1048576), 8.29525e-6, 1e-10);
    /* TP 8: 2 x 7/8 x 1 MiB / 450e9 = 4.0778e-6, + 4.8e-6 = 8.8778e-6 */
    cr_assert_float_eq(allreduce_time(&g, 8, 1048576), 8.87780e-6, 1e-10);
    /* all-gather to 32 MB at TP 4: 4.8e-6 + 3/4 x 32e6 / 450e9 = 58.1333e-6 */
    cr_assert_float_eq(allgather_time(&g, 4, 32e6), 58.1333e-6, 1e-10);
    /* nothing to do on one GPU */
    cr_assert_eq(allreduce_time(&g, 1, 1e9), 0);
    cr_assert_eq(allgather_time(&g, 1, 1e9), 0);
}

Test(comm, unknown_links_are_not_free)
{
    gpu_spec g = gpu_builtin("h100");
    g.link_bw = 0;
    cr_assert(isnan(allreduce_time(&g, 2, 1e6)));
    model_spec m = model_builtin("llama3-8b");
    step_shape s = decode_shape(1, 1024, 2, precision_uniform(DT_BF16));
    step_cost c;
    char err[256];
    cr_assert_eq(decoder_step_cost(&m, &g, &s, &c, err, sizeof err), -1);
    cr_assert(strstr(err, "link bandwidth") != NULL, "%s", err);
    s.skip_comm = 1; /* the pure roofline needs no links */
    cr_assert_eq(decoder_step_cost(&m, &g, &s, &c, err, sizeof err), 0, "%s", err);
}

Test(comm, batch_one_tp8_is_latency_bound)
{
    /* LLaMA-3-70B, batch 1, TP 8 on H100: 161 all-reduces of 8192 x 2 = 16,384 B,
     * each 4.8e-6 + 2 x 7/8 x 16,384 / 450e9 = 4.8637e-6 s -> 0.78306 ms; the logits gather,
     * 128,256 x 4 = 513,024 B: 4.8e-6 + 7/8 x 513,024 / 450e9 = 5.7975e-6 s.  0.78886 ms
     * in all, against about 17.6 GB / 8 / 3.35e12 = 5.3 ms of weights: over 12% of the step. */
    gpu_spec g = gpu_builtin("h100");
    model_spec m = model_builtin("llama3-70b");
    step_shape s = decode_shape(1, 1024, 8, precision_uniform(DT_BF16));
    step_cost c;
    char err[256];
    cr_assert_eq(decoder_step_cost(&m, &g, &s, &c, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(c.time_comm, 0.78886e-3, 1e-8);
    cr_assert(c.time_comm / c.time > 0.12, "share %f", c.time_comm / c.time);
    /* and at TP 1 there is none */
    step_shape one = decode_shape(1, 1024, 1, precision_uniform(DT_BF16));
    model_spec small = model_builtin("llama3-8b");
    cr_assert_eq(decoder_step_cost(&small, &g, &one, &c, err, sizeof err), 0, "%s", err);
    cr_assert_eq(c.time_comm, 0);
    cr_assert_eq(c.comm_bytes, 0);
}

Test(comm, op_list_has_two_allreduces_per_layer)
{
    model_spec m = model_builtin("llama3-8b");
    step_shape s = decode_shape(4, 128, 2, precision_uniform(DT_BF16));
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    int per_layer = 0, once = 0;
    for (int i = 0; i < n; i++)
        if (op_is_comm(&ops[i]))
            *(ops[i].per_layer ? &per_layer : &once) += 1;
    cr_assert_eq(per_layer, 2);
    cr_assert_eq(once, 2); /* embedding all-reduce, logits gather */
    s.skip_comm = 1;
    n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    for (int i = 0; i < n; i++)
        cr_assert(!op_is_comm(&ops[i]));
}

/* ---------------------------------------------------------------- fits */

Test(fit, two_resident_models_share_the_budget)
{
    /* LLaMA-3-70B at TP 4 and LLaMA-3-8B at TP 4 on the same H100s, datasheet 80e9 B, all
     * usable, no reserve.  Weights per GPU: 70,553,706,496 x 2 / 4 = 35,276,853,248 and
     * 8,030,261,248 x 2 / 4 = 4,015,130,624; left 80e9 - 39,291,983,872 = 40,708,016,128 B.
     * KV per token per GPU: 81,920 + 2 x 32 x 2 x 128 x 2 = 32,768 -> 114,688 B.
     * At 2048 tokens a sequence takes 234,881,024 B: 173.3 -> 173 sequences. */
    gpu_spec g = gpu_builtin("h100");
    model_spec t = model_builtin("llama3-70b"), d = model_builtin("llama3-8b");
    memory_policy pol = {1.0, 0, 0, 80e9};
    resident_model rm[2] = {{&t, precision_uniform(DT_BF16), 4}, {&d, precision_uniform(DT_BF16), 4}};
    fit_check f;
    char err[256];
    cr_assert_eq(memory_fit(&g, pol, rm, 2, 0, 173, 2048, &f, err, sizeof err), 0, "%s", err);
    cr_assert_float_eq(f.kv_budget, 40708016128.0, 1);
    cr_assert_float_eq(f.kv_per_token, 114688.0, 1e-9);
    cr_assert_eq(f.max_batch, 173);
    cr_assert(f.fits);
    cr_assert_eq(memory_fit(&g, pol, rm, 2, 0, 174, 2048, &f, err, sizeof err), 0);
    cr_assert(!f.fits);
    /* 1 GB of adapter slots: 39,708,016,128 / 234,881,024 = 169.05 -> 169 */
    cr_assert_eq(memory_fit(&g, pol, rm, 2, 1e9, 1, 2048, &f, err, sizeof err), 0);
    cr_assert_eq(f.max_batch, 169);
}

Test(fit, spec_draft_placement)
{
    /* The same pair, the draft on the target's GPUs: KV per sequence is context + gamma + 1 =
     * 2043 + 4 + 1 = 2048 tokens, so the limit is the 173 above.  On a GPU of its own
     * (draft_tp 1: 16,060,522,496 B of weights, 131,072 B of KV per token, 80e9 usable) the
     * draft holds (80e9 - 16,060,522,496) / (131,072 x 2048) = 238.2 -> 238 sequences; the
     * target alone (35,276,853,248 left 44,723,146,752) / (81,920 x 2048) = 266.6 -> 266;
     * together 238. */
    gpu_spec g = gpu_builtin("h100");
    model_spec t = model_builtin("llama3-70b"), d = model_builtin("llama3-8b");
    memory_policy pol = {1.0, 0, 0, 80e9};
    spec_setup s = spec_setup_default(&t, &d, &g, 4, 173, 2043);
    spec_fit f;
    char err[256];
    cr_assert_eq(spec_memory_fit(&s, pol, 4, &f, err, sizeof err), 0, "%s", err);
    cr_assert_eq(f.max_batch, 173);
    cr_assert(f.fits);
    s.batch = 174;
    cr_assert_eq(spec_memory_fit(&s, pol, 4, &f, err, sizeof err), 0);
    cr_assert(!f.fits);
    s.draft_tp = 1;
    s.draft_own_gpus = 1;
    cr_assert_eq(spec_memory_fit(&s, pol, 4, &f, err, sizeof err), 0);
    cr_assert_eq(f.target_gpu.max_batch, 266);
    cr_assert_eq(f.draft_gpu.max_batch, 238);
    cr_assert_eq(f.max_batch, 238);
}

Test(fit, break_even_bisection_matches_a_scan)
{
    /* The bracketing search must find the same batch as a plain scan. */
    gpu_spec g = gpu_builtin("h100");
    model_spec t = model_builtin("llama3-70b"), d = model_builtin("llama3.2-1b");
    spec_setup s = spec_setup_default(&t, &d, &g, 4, 1, 1024);
    char err[256];
    for (int k = 0; k < 3; k++) {
        double alpha = 0.6 + 0.15 * k;
        int found = spec_break_even_batch(&s, alpha, 4, 1500, err, sizeof err);
        int scan = 0;
        for (int b = 1; b <= 1500 && !scan; b++) {
            spec_setup u = s;
            u.batch = b;
            spec_estimate e;
            cr_assert_eq(spec_estimate_compute(&u, alpha, 4, &e, err, sizeof err), 0, "%s", err);
            if (e.speedup_roofline < 1.0)
                scan = b;
        }
        cr_assert_eq(found, scan, "alpha %.2f: bisection %d, scan %d", alpha, found, scan);
    }
    /* a range too small to reach the loss: none */
    cr_assert_eq(spec_break_even_batch(&s, 0.9, 4, 8, err, sizeof err), 0);
}
