/* The all-to-all line (rates.h a2a_rate) fitted by calib/fit_alltoall.c,
 * read from a published table (calib/published_alltoall.c), and priced
 * through price_op on a calibrated row, each against numbers worked by hand. */
#include <criterion/criterion.h>

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <stdlib.h>
#include <unistd.h>

#include "fit_alltoall.h"
#include "moe.h"
#include "pricing.h"
#include "published_alltoall.h"
#include "rate_table.h"
#include "specs.h"

/* A synthetic table with a known line: latency 12 us, 0.02 us a token,
 * 180 GB/s, over tokens 1..1024 and three routers (bytes from each). */
static int synthetic(a2a_point *p, double lat, double tok, double bw)
{
    static const int hidden[] = {4096, 7168, 2048}, k[] = {8, 8, 6}, experts[] = {256, 128, 160};
    int n = 0;
    for (int r = 0; r < 3; r++)
        for (int t = 1; t <= 1024; t *= 2) {
            double bytes = moe_alltoall_bytes(t, experts[r], k[r], hidden[r], 8, 1);
            p[n++] = (a2a_point){t, bytes, lat + tok * t + bytes / bw};
        }
    return n;
}

Test(fit_alltoall, recovers_a_known_line_within_one_percent)
{
    a2a_point p[64];
    int n = synthetic(p, 12e-6, 0.02e-6, 180e9);
    a2a_rate r = {0, 0, 0, 8};
    fit_summary s;
    char err[256];
    cr_assert_eq(fit_a2a_rate(p, n, &r, &s, err, sizeof err), 0, "%s", err);
    cr_expect(fabs(r.latency / 12e-6 - 1) < 0.01, "latency %g", r.latency);
    cr_expect(fabs(r.per_token / 0.02e-6 - 1) < 0.01, "per token %g", r.per_token);
    cr_expect(fabs(r.bandwidth / 180e9 - 1) < 0.01, "bandwidth %g", r.bandwidth);
    cr_expect(s.worst_abs_err < 1e-6, "an exact line fits exactly: %g", s.worst_abs_err);
    cr_expect_eq(r.ep, 8, "the group size is the caller's");
}

Test(fit_alltoall, a_line_without_a_token_term_keeps_none_rather_than_a_negative_one)
{
    /* latency 30 us and 200 GB/s only; with noise that alternates +-3 % the
     * free fit may want a slightly negative token term; none is allowed */
    a2a_point p[64];
    int n = synthetic(p, 30e-6, 0, 200e9);
    for (int i = 0; i < n; i++)
        p[i].time *= i % 2 ? 1.03 : 0.97;
    a2a_rate r = {0, 0, 0, 8};
    char err[256];
    cr_assert_eq(fit_a2a_rate(p, n, &r, NULL, err, sizeof err), 0, "%s", err);
    cr_expect(r.latency > 0 && r.per_token >= 0 && r.bandwidth >= 0, "%g %g %g", r.latency, r.per_token,
              r.bandwidth);
    cr_expect(fabs(r.latency / 30e-6 - 1) < 0.05, "latency %g", r.latency);
}

Test(fit_alltoall, refuses_too_few_or_bad_points)
{
    a2a_point p[3] = {{1, 1, 1e-5}, {2, 2, 1e-5}, {4, 4, 0}};
    a2a_rate r = {0, 0, 0, 8};
    char err[256];
    cr_expect_eq(fit_a2a_rate(p, 2, &r, NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "3 or more"), "%s", err);
    cr_expect_eq(fit_a2a_rate(p, 3, &r, NULL, err, sizeof err), -1);
    cr_expect(strstr(err, "point 3"), "%s", err);
}

/* One decode dispatch of DeepSeek-V3 (256 experts, top-8, hidden 7168) at EP 8
 * with 64 tokens a GPU, on the H200 row carrying SGLang's calibration (DeepEP
 * low-latency, fp8 dispatch: 1 byte a value).  By hand: a token misses a GPU
 * (its 32 experts) with probability C(224, 8) / C(256, 8) = prod_{i<8}
 * (224 - i) / (256 - i) = 0.338168..., so it reaches 8 (1 - 0.338168) =
 * 5.29465 GPUs, 7/8 of them others: 4.63282; bytes = 64 x 4.63282 x 7168
 * x 1 = 2,125,316.  Time = latency + 64 x per_token + bytes / bandwidth, the three
 * read from the row (calibrations.tsv) and combined here by hand. */
Test(fit_alltoall, a_dispatch_on_a_calibrated_row_by_hand)
{
    double missed = 1;
    for (int i = 0; i < 8; i++)
        missed *= (224.0 - i) / (256 - i);
    const double bytes = 64 * 8 * (1 - missed) * 7.0 / 8 * 7168;
    cr_expect(fabs(bytes / 2125316 - 1) < 1e-6, "bytes %.0f", bytes);
    rate_model rm;
    gpu_spec g = gpu_builtin_calibrated("h200", "published:h200_sxm/sglang", &rm);
    cr_assert(rm.has_alltoall[A2A_DECODE_DISPATCH], "the row carries the decode dispatch line");
    const a2a_rate *a = &rm.alltoall[A2A_DECODE_DISPATCH];
    cr_expect_eq(a->ep, 8);
    op_cost op = {.name = "ep_dispatch", .kind = OP_ALLTOALL, .comm_bytes = bytes, .items = 64,
                  .comm_intra_share = 1, .comm_net_bw = 50e9, .comm_ranks = 8, .a2a_kernel = A2A_DECODE_DISPATCH};
    const double want = a->latency + 64 * a->per_token + bytes / a->bandwidth;
    cr_expect(fabs(price_op(&op, &g, 0, 1, NULL) / want - 1) < 1e-12, "%g vs %g", price_op(&op, &g, 0, 1, NULL),
              want);
    /* the measured 22.994 us (h200_sxm/sglang/alltoall.tsv, 7168, top-8, 256, 64 tokens) is within 15 % */
    cr_expect(fabs(want / 22.994e-6 - 1) < 0.15, "%g us", want * 1e6);
    /* the plain row: the bound, the row's 4.8 us latency plus bytes over 450 GB/s */
    gpu_spec plain = gpu_builtin("h200");
    cr_expect(fabs(price_op(&op, &plain, 0, 1, NULL) / (4.8e-6 + bytes / 450e9) - 1) < 1e-12);
    /* across nodes the measured line does not apply: the bound on either row */
    op.comm_intra_share = 0.5;
    op.comm_ranks = 16;
    cr_expect(fabs(price_op(&op, &g, 0, 1, NULL) / price_op(&op, &plain, 0, 1, NULL) - 1) < 1e-12);
}

Test(fit_alltoall, the_engines_serving_kernels)
{
    const char *impl, *dtype;
    cr_assert_eq(published_alltoall_kernel("sglang", A2A_DECODE_DISPATCH, &impl, &dtype), 0);
    cr_expect_str_eq(impl, "deepep_ll");
    cr_assert_eq(published_alltoall_kernel("sglang", A2A_PREFILL_COMBINE, &impl, &dtype), 0);
    cr_expect_str_eq(impl, "deepep_normal");
    cr_assert_eq(published_alltoall_kernel("trtllm", A2A_DECODE_DISPATCH, &impl, &dtype), 0);
    cr_expect_str_eq(impl, "trtllm_deepep_ll");
    cr_expect_str_eq(dtype, "fp8");
    cr_assert_eq(published_alltoall_kernel("vllm", A2A_PREFILL_DISPATCH, &impl, &dtype), 0);
    cr_expect_str_eq(impl, "deepep_ht");
    cr_expect_eq(published_alltoall_kernel("nccl", A2A_PREFILL_DISPATCH, &impl, &dtype), -1);
    /* bytes a value: DeepEP's low-latency dispatch casts to fp8, its combine and the rest bf16 */
    cr_expect_eq(published_alltoall_value_bytes("deepep_ll", "dispatch", "default"), 1);
    cr_expect_eq(published_alltoall_value_bytes("deepep_ll", "combine", "default"), 2);
    cr_expect_eq(published_alltoall_value_bytes("trtllm_deepep_ht", "dispatch", "nvfp4"), 0.5);
}

/* The held-out judgement on a table whose rows lie on a known line: the
 * even rows' fit predicts the odd rows exactly.  Two groups (dispatch and
 * combine), 12 rows each (hidden 4096 and 7168, 1 to 32 tokens: two hidden
 * sizes keep tokens and bytes apart), DeepSeek-V3's router at EP 8 (4.63282
 * other GPUs a token, a_dispatch_on_a_calibrated_row_by_hand): dispatch
 * 10 us + 0.01 us a token + fp8 bytes at 150 GB/s; combine 12 us + bf16
 * bytes at 150 GB/s. */
Test(fit_alltoall, held_out_rows_of_an_exact_line)
{
    char dir[] = "/tmp/napkin_a2a_XXXXXX";
    cr_assert_not_null(mkdtemp(dir));
    char path[256];
    snprintf(path, sizeof path, "%s/alltoall.tsv", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    fprintf(f, "# measurement: alltoall\n# kind: published\n"
               "implementation\tphase\tdtype\tep\tnodes\thidden\ttopk\texperts\ttokens\ttime_s\n");
    double missed = 1;
    for (int i = 0; i < 8; i++)
        missed *= (224.0 - i) / (256 - i);
    const double others = 8 * (1 - missed) * 7 / 8;
    for (int phase = 0; phase < 2; phase++)
        for (int h = 4096; h <= 7168; h += 3072)
            for (int t = 1; t <= 32; t *= 2) {
                double bytes = t * others * h * (phase ? 2 : 1);
                double time = phase ? 12e-6 + bytes / 150e9 : 10e-6 + 0.01e-6 * t + bytes / 150e9;
                fprintf(f, "deepep_ll\t%s\tdefault\t8\t1\t%d\t8\t256\t%d\t%.9e\n", phase ? "combine" : "dispatch",
                        h, t, time);
            }
    fclose(f);
    fit_summary s;
    int groups;
    char err[256];
    cr_assert_eq(published_alltoall_heldout(dir, &s, &groups, err, sizeof err), 0, "%s", err);
    cr_expect_eq(groups, 2);
    cr_expect_eq(s.points, 12, "6 odd rows of each group");
    cr_expect(s.worst_abs_err < 1e-6, "worst %g", s.worst_abs_err);
    /* and the fit of SGLang's serving kernels reads the same lines back */
    rate_model m;
    memset(&m, 0, sizeof m);
    cr_assert_eq(published_alltoall_fit(dir, "sglang", 0, &m, NULL, err, sizeof err), 0, "%s", err);
    cr_expect(m.has_alltoall[A2A_DECODE_DISPATCH] && m.has_alltoall[A2A_DECODE_COMBINE]);
    cr_expect(!m.has_alltoall[A2A_PREFILL_DISPATCH], "no deepep_normal rows");
    cr_expect(fabs(m.alltoall[A2A_DECODE_DISPATCH].latency / 10e-6 - 1) < 1e-4);
    cr_expect(fabs(m.alltoall[A2A_DECODE_DISPATCH].bandwidth / 150e9 - 1) < 1e-4);
    cr_expect(fabs(m.alltoall[A2A_DECODE_DISPATCH].per_token / 0.01e-6 - 1) < 1e-4);
    cr_expect(fabs(m.alltoall[A2A_DECODE_COMBINE].latency / 12e-6 - 1) < 1e-4);
    cr_expect(m.alltoall[A2A_DECODE_COMBINE].per_token < 1e-13, "%g", m.alltoall[A2A_DECODE_COMBINE].per_token);
    remove(path);
    rmdir(dir);
}

/* A calibration row of an all-to-all line: read back as written, and a bad
 * one refused with its row named. */
Test(fit_alltoall, calibration_rows_round_trip_and_refuse_nonsense)
{
    rate_model m;
    memset(&m, 0, sizeof m);
    snprintf(m.name, sizeof m.name, "test:a2a");
    snprintf(m.gpu, sizeof m.gpu, "h200");
    m.alltoall[A2A_PREFILL_COMBINE] = (a2a_rate){3.5e-5, 2.5e-8, 3.5e11, 8};
    m.has_alltoall[A2A_PREFILL_COMBINE] = 1;
    char text[2048];
    FILE *f = fmemopen(text, sizeof text, "w");
    cr_assert_not_null(f);
    rate_model_write(f, &m, NULL, NULL, 1);
    rate_model_write_alltoall(f, &m, NULL);
    fclose(f);
    rate_model back;
    char err[512];
    cr_assert_eq(rate_model_parse(text, "t.tsv", "test:a2a", &back, err, sizeof err), 0, "%s\n%s", err, text);
    cr_expect(back.has_alltoall[A2A_PREFILL_COMBINE] && !back.has_alltoall[A2A_DECODE_DISPATCH]);
    cr_expect(fabs(back.alltoall[A2A_PREFILL_COMBINE].latency / 3.5e-5 - 1) < 1e-6);
    cr_expect(fabs(back.alltoall[A2A_PREFILL_COMBINE].per_token / 2.5e-8 - 1) < 1e-6);
    cr_expect(fabs(back.alltoall[A2A_PREFILL_COMBINE].bandwidth / 3.5e11 - 1) < 1e-6);
    cr_expect_eq(back.alltoall[A2A_PREFILL_COMBINE].ep, 8);
    /* an EP group of 1 has no all-to-all */
    char *tp = strstr(text, "alltoall_prefill_combine\t8\t");
    cr_assert_not_null(tp);
    tp[strlen("alltoall_prefill_combine\t")] = '1';
    cr_expect_eq(rate_model_parse(text, "t.tsv", "test:a2a", &back, err, sizeof err), -1);
    cr_expect(strstr(err, "data row 1") && strstr(err, "all-to-all"), "%s", err);
}
