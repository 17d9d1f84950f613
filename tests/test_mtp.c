/* Multi-token prediction (model/mtp.h, napkin decode and serve --mtp): the
 * tokens a step yields against chapter 10's closed form by hand, the
 * module's pass and memory against DeepSeek-V3's parameter counts, the
 * decode's TPOT against its own printed parts, and the refusals. */
#include "cli_run.h"

#include "accepted_tokens.h"
#include "memory.h"
#include "expert_parallel.h"
#include "mtp.h"
#include "request.h"
#include "specs.h"

/* A = 0.8, N = 2: 1 + 0.8 + 0.8^2 = 2.44 tokens a step; N = 1: 1.8. */
Test(mtp, expected_tokens_by_hand)
{
    cr_expect_float_eq(spec_expected_tokens(0.8, 2), 2.44, 1e-12);
    mtp_round r = mtp_round_of(10e-3, 1e-3, 2, 0.8);
    cr_expect_float_eq(r.tokens, 2.44, 1e-12);
    cr_expect_float_eq(r.module, 2e-3, 1e-15);
    cr_expect_float_eq(r.round, 12e-3, 1e-15);
    cr_expect_float_eq(r.per_token, 12e-3 / 2.44, 1e-15); /* 4.918 ms */
    /* A = 0: every draft refused, one token a step, the module's time lost */
    cr_expect_float_eq(mtp_round_of(10e-3, 1e-3, 1, 0).per_token, 11e-3, 1e-15);
}

Test(mtp, checks)
{
    char err[256];
    model_spec ds = model_builtin("deepseek-v3"), llama = model_builtin("llama3-8b");
    cr_expect_eq(mtp_check(&ds, 1, 0.8, err, sizeof err), 0, "%s", err);
    cr_expect_eq(mtp_check(&llama, 1, 0.8, err, sizeof err), -1);
    cr_expect_eq(mtp_check(&ds, 0, 0.8, err, sizeof err), -1);
    cr_expect_eq(mtp_check(&ds, 1, 1.0, err, sizeof err), -1);
    cr_expect_eq(mtp_check(&ds, 1, -0.1, err, sizeof err), -1);
}

/* One pass at batch 1, tp 1, fp8 reads the weights a token uses in the
 * module (params_mtp_active: 688,100,352 = one MoE layer's attention
 * 187,107,328, router 1,835,008 and 9 experts of 44,040,192, enorm, hnorm,
 * eh_proj 102,760,448 and three norms of 7168), the shared head 129280 x
 * 7168 = 926,679,040 and one embedding row of 7168, at one byte each.  The
 * latent attention's two small norms (q_a 1536, kv_a 512) are counted in
 * the attention's parameters but read by no op of the cost model: 2,048
 * bytes the sum over ops lacks. */
Test(mtp, module_pass_reads_the_module)
{
    model_spec ds = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    step_shape s = decode_shape(1, 0, 1, precision_uniform(DT_FP8));
    step_cost c;
    char err[256];
    cr_assert_eq(mtp_pass_cost(&ds, &g, &s, &c, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(c.weight_bytes, 688100352.0 + 926679040.0 + 7168.0 - 2048.0, 0.5, "%.0f", c.weight_bytes);
    /* a pass is one position a sequence */
    s.new_tokens = 2;
    cr_expect_eq(mtp_pass_cost(&ds, &g, &s, &c, err, sizeof err), -1);
}

/* The modules held: params_mtp less the shared embedding and head,
 * 13,463,426,048 - 2 x 926,679,040 = 11,610,067,968 weights, fp8 over tp 8:
 * 1,451,258,496 bytes a GPU; the KV of its one latent layer, 512 + 64
 * values at one byte. */
Test(mtp, memory_counts_the_module)
{
    model_spec ds = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    precision p = precision_uniform(DT_FP8);
    cr_expect_float_eq(model_params(&ds).mtp_served, 11610067968.0, 0.5);
    cr_expect_float_eq(mtp_weight_bytes_per_gpu(&ds, DT_FP8, 8), 1451258496.0, 0.5);
    cr_expect_float_eq(mtp_kv_bytes_per_token_per_gpu(&ds, DT_FP8, 8), 576.0, 1e-9);
    resident_model rm = {&ds, p, 8};
    fit_check plain, with;
    char err[256];
    cr_assert_eq(memory_fit(&g, memory_policy_default(), &rm, 1, 0, 64, 8192, &plain, err, sizeof err), 0);
    with = plain;
    cr_assert_eq(mtp_fit_adjust(&rm, 64, 8192, &with, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(with.weights - plain.weights, 1451258496.0, 1.0);
    cr_expect_float_eq(with.kv_per_token - plain.kv_per_token, 576.0, 1e-6);
    cr_expect_float_eq(with.kv_budget, plain.kv_budget - 1451258496.0, 1.0);
    cr_expect_eq(with.max_batch, (int)floor(with.kv_budget / (with.kv_per_token * 8192)));
    model_spec llama = model_builtin("llama3-8b");
    resident_model rl = {&llama, p, 1};
    cr_expect_eq(mtp_fit_adjust(&rl, 1, 1, &with, err, sizeof err), -1);
}

/* DeepSeek-V3 decode, --mtp 1 --mtp-accept 0.8: E[N] = 1.8, and TPOT is the
 * printed verify step plus the printed module time over 1.8, both ways;
 * without MTP it is the printed plain step. */
Test(mtp, decode_tpot_is_its_printed_parts)
{
    char out[OUT_MAX];
    cr_assert_eq(run("decode --model deepseek-v3 --gpu h200 --tp 8 --dtype fp8 --batch 32 --context 4096 "
                     "--mtp 1 --mtp-accept 0.8 --format tsv", out, sizeof out), 0, "%s", out);
    cr_expect_float_eq(tsv_value(out, "mtp_tokens_per_step"), 1.8, 1e-12);
    const char *suffix[2] = {"", "_calibrated"};
    for (int i = 0; i < 2; i++) {
        char k[4][64];
        snprintf(k[0], 64, "mtp_verify_step%s", suffix[i]);
        snprintf(k[1], 64, "mtp_module_time%s", suffix[i]);
        snprintf(k[2], 64, "tpot_mtp%s", suffix[i]);
        snprintf(k[3], 64, "tpot_without_mtp%s", suffix[i]);
        double verify = tsv_value(out, k[0]), module = tsv_value(out, k[1]);
        cr_expect(verify > 0 && module > 0, "%s %g %s %g", k[0], verify, k[1], module);
        cr_expect_float_eq(tsv_value(out, k[2]), (verify + module) / 1.8, 1e-9 * verify, "%s", k[2]);
    }
    cr_expect_float_eq(tsv_value(out, "tpot_without_mtp"), tsv_value(out, "step_time"), 1e-15);
    cr_expect_float_eq(tsv_value(out, "tpot_without_mtp_calibrated"), tsv_value(out, "step_time_calibrated"), 1e-15);
    /* one module pass drafts one token: N = 1, the module time is one pass */
    cr_expect_float_eq(tsv_value(out, "mtp_module_time"), tsv_value(out, "mtp_module_pass"), 1e-15);
    cr_expect_float_eq(tsv_value(out, "tokens_per_s_mtp"), 32 / tsv_value(out, "tpot_mtp"), 1e-6);
}

/* serve: the decode step d is the round's time per token, E[N] 2.44 at N = 2. */
Test(mtp, serve_decode_step_is_the_round)
{
    char out[OUT_MAX];
    cr_assert_eq(run("serve --model deepseek-v3 --gpu h200 --tp 8 --dtype fp8 --concurrency 16 --roofline "
                     "--mtp 2 --mtp-accept 0.8 --format tsv", out, sizeof out), 0, "%s", out);
    cr_expect_float_eq(tsv_value(out, "mtp_tokens_per_step"), 2.44, 1e-12);
    double round = tsv_value(out, "mtp_verify_step") + 2 * tsv_value(out, "mtp_module_pass");
    cr_expect_float_eq(tsv_value(out, "decode_step"), round / 2.44, 1e-9 * round);
    cr_expect(tsv_value(out, "tpot") < tsv_value(out, "tpot_request_without_mtp"));
}

static void expect_refused(const char *args, const char *names)
{
    char out[OUT_MAX];
    cr_expect_eq(run(args, out, sizeof out), 2, "%s: %s", args, out);
    cr_expect(strstr(out, names) != NULL, "%s: wanted '%s' in: %s", args, names, out);
}

Test(mtp, refusals_name_the_flag)
{
    expect_refused("decode --model llama3-8b --gpu h100 --mtp 1 --mtp-accept 0.7", "--mtp 1: llama3-8b ships no");
    expect_refused("decode --model deepseek-v3 --gpu h200 --tp 8 --dtype fp8 --mtp 1 --mtp-accept 1", "--mtp-accept");
    expect_refused("decode --model deepseek-v3 --gpu h200 --tp 8 --dtype fp8 --mtp 1 --mtp-accept -0.2",
                   "--mtp-accept");
    expect_refused("decode --model deepseek-v3 --gpu h200 --tp 8 --dtype fp8 --mtp 0 --mtp-accept 0.5", "--mtp");
    expect_refused("decode --model deepseek-v3 --gpu h200 --tp 8 --dtype fp8 --mtp 1", "--mtp-accept");
    expect_refused("decode --model deepseek-v3 --gpu h200 --tp 8 --dtype fp8 --mtp-accept 0.5", "--mtp-accept");
    expect_refused("serve --model llama3-8b --gpu h100 --mtp 2 --mtp-accept 0.7", "--mtp 2: llama3-8b ships no");
    expect_refused("serve --model deepseek-v3 --gpu h200 --tp 8 --dtype fp8 --mtp 1 --mtp-accept 0.7 --disaggregate "
                   "--prefill-gpus 8 --decode-gpus 8", "--mtp with --disaggregate");
}

/* Under expert parallelism (TP 8 attention, experts EP 8) the round is the
 * layout's parts: the verification is the layout's step with 2 tokens a
 * sequence, the module's layer is split as the main model's
 * (layout_mtp_pass_cost), and one draft accepted with A = 0.875 yields
 * 1 + 0.875 = 1.875 tokens a round (chapter 10's closed form, N = 1); each
 * part is the mean of its two ends, contexts 1024 and 1024 + 1024 - 2. */
Test(mtp, expert_parallel_round_is_the_layouts_parts)
{
    model_spec ds = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    const precision prec = precision_uniform(DT_FP8);
    const parallel_layout l = {8, 1, 1, 8};
    request_setup s = {&ds, &g, prec, 8, 1024, 1024, 16, 0, 0, memory_policy_default(), 0, 1};
    request_options o = {.ep = ep_links_default(8, prec, &g), .layout = l, .mtp_steps = 1, .mtp_accept = 0.875};
    request_estimate e;
    char err[256];
    cr_assert_eq(request_estimate_with(&s, &o, &e, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(e.mtp.tokens, 1.875, 1e-12);
    double verify = 0, pass = 0;
    const int ctx[2] = {1024, 2046};
    for (int i = 0; i < 2; i++) {
        step_shape d = decode_shape(16, ctx[i], 8, prec);
        step_cost v, p;
        step_shape vs = mtp_verify_shape(&d, 1);
        cr_assert_eq(layout_decoder_step_cost(&ds, &g, &vs, &l, &o.ep, &v, err, sizeof err), 0, "%s", err);
        cr_assert_eq(layout_mtp_pass_cost(&ds, &g, &d, &l, &o.ep, &p, err, sizeof err), 0, "%s", err);
        verify += v.time / 2;
        pass += p.time / 2;
    }
    cr_expect_float_eq(e.mtp.verify, verify, 1e-12 * verify);
    cr_expect_float_eq(e.mtp.pass, pass, 1e-12 * pass);
    cr_expect_float_eq(e.decode_step, (verify + pass) / 1.875, 1e-9 * verify);
    /* the module's layer over 8 GPUs reads less than its whole layer on one (module_pass_reads_the_module) */
    step_shape one = decode_shape(1, 0, 8, prec);
    step_cost split, whole;
    cr_assert_eq(layout_mtp_pass_cost(&ds, &g, &one, &l, &o.ep, &split, err, sizeof err), 0, "%s", err);
    step_shape one_tp1 = decode_shape(1, 0, 1, prec);
    cr_assert_eq(mtp_pass_cost(&ds, &g, &one_tp1, &whole, err, sizeof err), 0, "%s", err);
    cr_expect(split.weight_bytes < whole.weight_bytes, "%.0f vs %.0f", split.weight_bytes, whole.weight_bytes);
    /* a pass drafts one position a sequence */
    one.new_tokens = 2;
    cr_expect_eq(layout_mtp_pass_cost(&ds, &g, &one, &l, &o.ep, &split, err, sizeof err), -1);
}
