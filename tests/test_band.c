/* The measured error band of a calibrated answer (band.h, split.h,
 * cli_band.h): the held-out split, the quantiles on a synthetic residual set
 * worked by hand, the regimes, a question outside every regime, and the
 * band's names beside each calibrated row of serve and decode. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "band.h"
#include "cli_run.h"
#include "split.h"

/* ------------------------------------------------------------ the split */

/* FNV-1a 64's published test vectors (the FNV authors' test suite): the
 * empty string hashes to the offset basis. */
Test(split, fnv1a_64_matches_the_published_vectors)
{
    cr_assert_eq(run_id_hash(""), 0xcbf29ce484222325ull);
    cr_assert_eq(run_id_hash("a"), 0xaf63dc4c8601ec8cull);
    cr_assert_eq(run_id_hash("foobar"), 0x85944171f73967e8ull);
}

/* Odd hash held out, even fitted: "" ends in 5 (odd), "a" in c (even). */
Test(split, odd_hash_is_held_out_and_the_rule_is_deterministic)
{
    cr_assert_eq(run_is_held_out(""), 1);
    cr_assert_eq(run_is_held_out("a"), 0);
    cr_assert_eq(run_is_held_out("foobar"), 0);
    for (int k = 0; k < 3; k++)
        cr_assert_eq(run_is_held_out("b"), 1); /* 0x...f1a5 */
}

/* ------------------------------------------------------------ quantiles */

#define EPS 1e-12

/* Ten misses, out of order, and a NAN that is skipped.  Sorted:
 * -0.20 -0.10 -0.05 0 0.05 0.10 0.15 0.20 0.25 0.30.
 * 10th percentile: position 0.1 x 9 = 0.9: -0.20 + 0.9 (-0.10 + 0.20) = -0.11.
 * 90th: position 8.1: 0.25 + 0.1 (0.30 - 0.25) = 0.255. */
Test(band, quantiles_of_a_synthetic_residual_set_by_hand)
{
    const double miss[] = {0.05, -0.10, 0.20, 0.00, NAN, -0.05, 0.10, 0.15, -0.20, 0.25, 0.30};
    error_band b = band_of_misses(miss, 11);
    cr_assert_eq(b.have, 1);
    cr_assert_eq(b.n, 10);
    cr_assert_float_eq(b.lo, -0.11, EPS);
    cr_assert_float_eq(b.hi, 0.255, EPS);
}

/* Linear between order statistics: the median of 1 2 3 4 is 2.5, the ends
 * are the extremes, one value is its own quantile. */
Test(band, quantile_interpolates_between_order_statistics)
{
    const double v[] = {1, 2, 3, 4};
    cr_assert_float_eq(band_quantile(v, 4, 0.5), 2.5, EPS);
    cr_assert_float_eq(band_quantile(v, 4, 0.0), 1.0, EPS);
    cr_assert_float_eq(band_quantile(v, 4, 1.0), 4.0, EPS);
    cr_assert_float_eq(band_quantile(v, 1, 0.9), 1.0, EPS);
    cr_assert(isnan(band_quantile(v, 0, 0.5)));
}

Test(band, too_few_runs_give_no_band_and_say_so)
{
    const double miss[] = {0.1, 0.2, 0.3};
    error_band b = band_of_misses(miss, 3);
    cr_assert_eq(b.have, 0);
    cr_assert_eq(b.n, 3);
    cr_assert(strstr(b.why, "too few measured runs like this one") != NULL, "%s", b.why);
    b = band_of_misses(NULL, 0);
    cr_assert_eq(b.have, 0);
    cr_assert(strstr(b.why, "no measured run like this one") != NULL, "%s", b.why);
}

/* band_for over hand-made runs: eight in one regime, three in another that
 * must not count.  Each run's TPOT residual r (answered / measured - 1)
 * is the miss m (measured / answered - 1) = 1 / (1 + r) - 1:
 *   r   -0.5  -0.2  0    0.25  1     -0.5  0.25  0
 *   m    1.0  0.25  0   -0.2  -0.5    1.0 -0.2   0
 * sorted m: -0.5 -0.2 -0.2 0 0 0.25 1 1; 10th percentile at 0.7:
 * -0.5 + 0.7 x 0.3 = -0.29; 90th at 6.3: 1.  A rate (inverse) misses by
 * r itself: sorted -0.5 -0.5 -0.2 0 0 0.25 0.25 1: 10th -0.5, 90th at 6.3:
 * 0.25 + 0.3 x 0.75 = 0.475. */
Test(band, band_for_takes_its_regime_and_inverts_for_rates)
{
    const double r[] = {-0.5, -0.2, 0, 0.25, 1, -0.5, 0.25, 0, 9, 9, 9};
    serving_residual runs[11];
    band_regime reg[11];
    band_regime a = {"trtllm", BAND_MODEL_SMALL, BAND_CONC_LOW, BAND_MIX_PROMPT};
    band_regime other = {"vllm", BAND_MODEL_SMALL, BAND_CONC_LOW, BAND_MIX_PROMPT};
    for (int i = 0; i < 11; i++) {
        memset(&runs[i], 0, sizeof runs[i]);
        runs[i].priced = 1;
        runs[i].tpot_err = r[i];
        runs[i].ttft_closed_err = runs[i].e2e_err = NAN;
        reg[i] = i < 8 ? a : other;
    }
    band_runs b = {runs, reg, 11};
    error_band e = band_for(&b, &a, BAND_TPOT, 0);
    cr_assert_eq(e.have, 1);
    cr_assert_eq(e.n, 8);
    cr_assert_float_eq(e.lo, -0.29, EPS);
    cr_assert_float_eq(e.hi, 1.0, EPS);
    e = band_for(&b, &a, BAND_TPOT, 1);
    cr_assert_float_eq(e.lo, -0.5, EPS);
    cr_assert_float_eq(e.hi, 0.475, EPS);
    /* no TTFT residuals at all: no band */
    e = band_for(&b, &a, BAND_TTFT_CLOSED, 0);
    cr_assert_eq(e.have, 0);
    /* the benchmark TTFT (with the engine's overhead) reads its own residual: the same eight put there
     * give the same band as the TPOT's above, while the closed-loop one stays empty */
    for (int i = 0; i < 11; i++) {
        runs[i].ttft_bench_err = r[i];
        runs[i].tpot_err = runs[i].e2e_bench_err = NAN;
    }
    e = band_for(&b, &a, BAND_TTFT_BENCH, 0);
    cr_assert_eq(e.have, 1);
    cr_assert_float_eq(e.lo, -0.29, EPS);
    cr_assert_float_eq(e.hi, 1.0, EPS);
    cr_assert_eq(band_for(&b, &a, BAND_TTFT_CLOSED, 0).have, 0);
    cr_assert_eq(band_for(&b, &a, BAND_E2E_BENCH, 0).have, 0);
    /* and the plain closed loop's (serve without --engine) its own: the same eight there, the same band */
    for (int i = 0; i < 11; i++) {
        runs[i].tpot_plain_err = r[i];
        runs[i].ttft_bench_err = runs[i].ttft_plain_err = runs[i].e2e_plain_err = NAN;
    }
    e = band_for(&b, &a, BAND_TPOT_PLAIN, 0);
    cr_assert_eq(e.have, 1);
    cr_assert_float_eq(e.lo, -0.29, EPS);
    cr_assert_float_eq(e.hi, 1.0, EPS);
    cr_assert_eq(band_for(&b, &a, BAND_TTFT_BENCH, 0).have, 0);
    cr_assert_eq(band_for(&b, &a, BAND_TTFT_PLAIN, 0).have, 0);
}

/* ------------------------------------------------------------ regimes */

static model_table models;

static void load_models(void)
{
    char err[256];
    cr_assert_eq(model_table_builtin(&models, err, sizeof err), 0, "%s", err);
}

static void free_models(void)
{
    model_table_free(&models);
}

TestSuite(regime, .init = load_models, .fini = free_models);

Test(regime, dense_models_fall_in_their_size_class)
{
    band_regime q;
    char why[192];
    /* 8 B: small; Qwen3-32B: mid; 70 B: large.  Concurrency 16 is low, 17 mid, 65 high; 1024 / 128 = 8 is
     * prompt-heavy, 1024 / 256 = 4 is not */
    cr_assert_eq(band_regime_of("trtllm", model_find(&models, "llama3-8b"), 16, 1024, 128, &q, why, sizeof why), 1);
    cr_assert_eq(q.model_class, BAND_MODEL_SMALL);
    cr_assert_eq(q.concurrency_range, BAND_CONC_LOW);
    cr_assert_eq(q.op_mix, BAND_MIX_PROMPT);
    cr_assert_eq(band_regime_of("vllm", model_find(&models, "qwen3-32b"), 17, 1024, 256, &q, why, sizeof why), 1);
    cr_assert_eq(q.model_class, BAND_MODEL_MID);
    cr_assert_eq(q.concurrency_range, BAND_CONC_MID);
    cr_assert_eq(q.op_mix, BAND_MIX_OUTPUT);
    cr_assert_eq(band_regime_of("vllm", model_find(&models, "llama3-70b"), 65, 100, 0, &q, why, sizeof why), 1);
    cr_assert_eq(q.model_class, BAND_MODEL_LARGE);
    cr_assert_eq(q.concurrency_range, BAND_CONC_HIGH);
    cr_assert_eq(q.op_mix, BAND_MIX_OUTPUT, "a decode step alone is judged with the output-heavy runs");
}

/* A MoE model, or a calibration that names no engine, is outside every
 * regime: no band, and the reason. */
Test(regime, outside_every_regime_says_no_run_is_like_it)
{
    band_regime q;
    char why[192];
    const model_spec *moe = model_find(&models, "gpt-oss-120b");
    cr_assert_not_null(moe);
    cr_assert_eq(band_regime_of("trtllm", moe, 8, 1024, 128, &q, why, sizeof why), 0);
    cr_assert(strstr(why, "no measured run like this one") != NULL, "%s", why);
    cr_assert_eq(band_regime_of(NULL, model_find(&models, "llama3-8b"), 8, 1024, 128, &q, why, sizeof why), 0);
    cr_assert(strstr(why, "no measured run like this one") != NULL, "%s", why);
}

Test(regime, engine_of_a_calibration)
{
    char e[32];
    cr_assert_eq(band_engine_of_calibration("published:h100_sxm/trtllm", e, sizeof e), 1);
    cr_assert_str_eq(e, "trtllm");
    cr_assert_eq(band_engine_of_calibration("figures/measured/my-h100", e, sizeof e), 0);
    cr_assert_eq(band_engine_of_calibration(NULL, e, sizeof e), 0);
}

/* ------------------------------------------------------------ the CLI */

/* The held-out runs of serving_runs.tsv a question is judged with, counted
 * apart from the library: 8 B Instruct under TensorRT-LLM (the only 8 B
 * model it served), concurrency <= 16, prompt >= 8 x output, an odd
 * FNV-1a-64 of the id (hashed here again).  8 B on one H100 fits every
 * measured shape, so every such run is priced. */
static int count_held_out_8b_trtllm_low_prompt_heavy(void)
{
    const char *src = getenv("NB_SRC");
    char path[4096];
    snprintf(path, sizeof path, "%s/code/specs/measured/serving_runs.tsv", src && *src ? src : ".");
    FILE *fp = fopen(path, "r");
    cr_assert_not_null(fp, "%s", path);
    char line[4096];
    int n = 0;
    while (fgets(line, sizeof line, fp)) {
        if (line[0] == '#' || strncmp(line, "id\t", 3) == 0)
            continue;
        char *cells[16] = {0};
        int k = 0;
        for (char *p = strtok(line, "\t\n"); p && k < 16; p = strtok(NULL, "\t\n"))
            cells[k++] = p;
        /* id model system backend version precision isl osl concurrency tp pp ... */
        if (k < 11 || strcmp(cells[1], "meta-llama/Llama-3.1-8B-Instruct") != 0 || strcmp(cells[3], "trtllm") != 0)
            continue;
        int isl = atoi(cells[6]), osl = atoi(cells[7]), conc = atoi(cells[8]), pp = atoi(cells[10]);
        unsigned long long h = 14695981039346656037ull;
        for (const unsigned char *c = (const unsigned char *)cells[0]; *c; c++)
            h = (h ^ *c) * 1099511628211ull;
        if (pp == 1 && conc <= 16 && isl >= 8 * osl && (h & 1))
            n++;
    }
    fclose(fp);
    return n;
}

#define SERVE_8B "serve --model llama3-8b --gpu h100 --concurrency 16 --prompt 2048 --output 128"

Test(cli_band, serve_band_counts_the_held_out_runs_like_the_question)
{
    static char out[OUT_MAX];
    cr_assert_eq(run(SERVE_8B " --format tsv", out, sizeof out), 0, "%s", out);
    int n = count_held_out_8b_trtllm_low_prompt_heavy();
    cr_assert_geq(n, BAND_MIN_RUNS);
    cr_assert_eq((int)tsv_value(out, "tpot_calibrated_band_n"), n, "%s", out);
    cr_assert_eq((int)tsv_value(out, "ttft_closed_calibrated_band_n"), n);
    const double tlo = tsv_value(out, "ttft_closed_calibrated_band_lo");
    double lo = tsv_value(out, "tpot_calibrated_band_lo"), hi = tsv_value(out, "tpot_calibrated_band_hi");
    cr_assert(lo < hi, "%g %g", lo, hi);
    /* a rate misses the other way round: its band lies on the other side of 0 when the latency's does */
    double elo = tsv_value(out, "e2e_calibrated_band_lo"), ehi = tsv_value(out, "e2e_calibrated_band_hi");
    double rlo = tsv_value(out, "tokens_per_s_calibrated_band_lo");
    double rhi = tsv_value(out, "tokens_per_s_calibrated_band_hi");
    cr_assert(elo < ehi && rlo < rhi);
    cr_assert(rhi < 0 || elo < 0, "e2e %g..%g, tokens/s %g..%g", elo, ehi, rlo, rhi);
    /* the table says it beside the number */
    cr_assert_eq(run(SERVE_8B, out, sizeof out), 0, "%s", out);
    char want[64];
    snprintf(want, sizeof want, "n = %d", n);
    cr_assert(strstr(out, "runs like this one: ") != NULL && strstr(out, want) != NULL, "%s", out);
    /* with --engine the TTFT carries the engine's fitted overhead, and its band is of the runs answered
     * so: the same runs, other misses (without it the 8B TTFT is far too low, so its band lies above 0) */
    cr_assert_eq(run(SERVE_8B " --engine trtllm --format tsv", out, sizeof out), 0, "%s", out);
    cr_assert_eq((int)tsv_value(out, "ttft_closed_calibrated_band_n"), n);
    double blo = tsv_value(out, "ttft_closed_calibrated_band_lo");
    cr_assert(blo < tlo, "with the overhead %g, without %g", blo, tlo);
    /* and the TPOT band of the runs answered under the engine's schedule is another than the plain loop's */
    cr_assert(tsv_value(out, "tpot_calibrated_band_lo") != lo, "%g", lo);
}

/* Every calibrated row of serve and decode has <row>_band_lo and _hi, in
 * tsv and in json. */
static const char *const SERVE_ROWS[] = {"prefill_time_calibrated", "decode_step_calibrated", "ttft_calibrated",
                                         "ttft_closed_calibrated", "tpot_calibrated", "e2e_calibrated",
                                         "tokens_per_s_calibrated", "requests_per_s_calibrated",
                                         "cost_per_m_output_calibrated"};
static const char *const DECODE_ROWS[] = {"step_time_calibrated", "time_comm_calibrated", "tokens_per_s_calibrated",
                                          "tokens_per_s_per_user_calibrated", "calibrated_over_roofline"};

static void names_present(const char *args, const char *const *rows, int nrows)
{
    static char tsv[OUT_MAX], json[OUT_MAX];
    char a[512];
    snprintf(a, sizeof a, "%s --format tsv", args);
    cr_assert_eq(run(a, tsv, sizeof tsv), 0, "%s", tsv);
    snprintf(a, sizeof a, "%s --format json", args);
    cr_assert_eq(run(a, json, sizeof json), 0, "%s", json);
    for (int i = 0; i < nrows; i++) {
        const char *end[] = {"_band_lo", "_band_hi"};
        char k[128], tk[136], jk[136];
        snprintf(tk, sizeof tk, "\n%s\t", rows[i]);
        cr_assert(strstr(tsv, tk) != NULL, "%s: no row %s", args, rows[i]);
        for (int j = 0; j < 2; j++) {
            snprintf(k, sizeof k, "%s%s", rows[i], end[j]);
            snprintf(tk, sizeof tk, "\n%s\t", k);
            snprintf(jk, sizeof jk, "\"%s\": ", k);
            cr_assert(strstr(tsv, tk) != NULL, "%s: no %s in tsv", args, k);
            cr_assert(strstr(json, jk) != NULL, "%s: no %s in json", args, k);
        }
    }
}

Test(cli_band, serve_names_a_band_beside_each_calibrated_row)
{
    names_present(SERVE_8B " --price 2", SERVE_ROWS, sizeof SERVE_ROWS / sizeof SERVE_ROWS[0]);
}

Test(cli_band, decode_names_a_band_beside_each_calibrated_row)
{
    names_present("decode --model llama3-70b --gpu h200 --tp 4 --batch 16 --calibrate published:h200_sxm/vllm",
                  DECODE_ROWS, sizeof DECODE_ROWS / sizeof DECODE_ROWS[0]);
}

/* A MoE model: no serving run is like it.  The table says so, the band is
 * none ('-' in tsv, null in json), never invented. */
Test(cli_band, a_question_outside_every_regime_says_so)
{
    static char out[OUT_MAX];
    const char *args = "decode --model gpt-oss-120b --gpu h100 --batch 8";
    char a[256];
    cr_assert_eq(run(args, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "no measured run like this one") != NULL, "%s", out);
    cr_assert(strstr(out, "runs like this one: ") == NULL || strstr(out, "n = ") == NULL, "%s", out);
    snprintf(a, sizeof a, "%s --format tsv", args);
    cr_assert_eq(run(a, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "\nstep_time_calibrated_band_lo\t-\t") != NULL, "%s", out);
    cr_assert(strstr(out, "\nstep_time_calibrated_band_hi\t-\t") != NULL, "%s", out);
    snprintf(a, sizeof a, "%s --format json", args);
    cr_assert_eq(run(a, out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "\"step_time_calibrated_band_lo\": null") != NULL, "%s", out);
}
