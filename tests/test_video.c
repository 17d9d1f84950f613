/* Video diffusion requests: the table, latent shapes and tokens, FLOPs per
 * forward against hand arithmetic from the configs, memory, time, the
 * batching argument, and the queue model against Little's law and the
 * closed forms (M/D/1 from queue.h, Erlang C). */
#include "queue.h"
#include "specs.h"
#include "video.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

static video_model vm(const char *key)
{
    video_model_table t;
    char err[512];
    cr_assert_eq(video_model_table_builtin(&t, err, sizeof err), 0, "%s", err);
    const video_model *m = video_model_find(&t, key);
    cr_assert_not_null(m, "no video model %s", key);
    video_model copy = *m;
    video_model_table_free(&t);
    return copy;
}

static int rel_close(double got, double want, double tol)
{
    return fabs(got - want) <= tol * fabs(want);
}

/* ------------------------------------------------------------- the table */

Test(video_table, builtin_rows_with_sources_and_configs)
{
    video_model_table t;
    char err[512];
    cr_assert_eq(video_model_table_builtin(&t, err, sizeof err), 0, "%s", err);
    const char *keys[] = {"wan2.1-14b", "wan2.1-1.3b", "hunyuanvideo", "cogvideox-5b"};
    for (size_t i = 0; i < 4; i++)
        cr_assert_not_null(video_model_find(&t, keys[i]), "missing %s", keys[i]);
    for (int i = 0; i < t.n; i++)
        cr_expect(strncmp(t.rows[i].source, "https://", 8) == 0, "%s lacks a source", t.rows[i].key);
    /* Wan2.1 wan_t2v_14B.py: dim 5120, ffn_dim 13824, 40 heads, 40 layers,
     * vae_stride (4, 8, 8), patch (1, 2, 2); guidance: two passes per step */
    const video_model *w = video_model_find(&t, "wan2.1-14b");
    cr_expect_eq(w->hidden, 5120);
    cr_expect_eq(w->ffn, 13824);
    cr_expect_eq(w->heads, 40);
    cr_expect_eq(w->layers, 40);
    cr_expect_eq(w->stride_t, 4);
    cr_expect_eq(w->stride_s, 8);
    cr_expect_eq(w->patch_s, 2);
    cr_expect_eq(w->forwards, 2);
    /* HunyuanVideo HYVideo-T/2-cfgdistill: 20 + 40 blocks, 3072 wide, guidance distilled */
    const video_model *h = video_model_find(&t, "hunyuanvideo");
    cr_expect_eq(h->layers, 60);
    cr_expect_eq(h->hidden, 3072);
    cr_expect_eq(h->forwards, 1);
    video_model_table_free(&t);
}

Test(video_table, malformed_rows_name_file_line_and_field)
{
    const char *header = "key\tname\tlayers\thidden\theads\tffn\tproj\tparams_b\tvae_stride\tlatent_ch\tpatch\t"
                         "text_tokens\ttext_mode\ttext_enc_b\tvae_ch\tvae_mflop\tsteps\tforwards\tvideo\tsource\n";
    const char *good = "m\tM\t2\t64\t4\t256\t4\t1\t4x8x8\t16\t1x2x2\t8\tjoint\t1\t96\t10\t50\t2\t81x64x64\thttps://x\n";
    char text[2048], err[512];
    video_model_table t;
    snprintf(text, sizeof text, "# c\n%s%s", header, good);
    cr_assert_eq(video_model_table_parse(text, "v.tsv", &t, err, sizeof err), 0, "%s", err);
    cr_expect_eq(t.n, 1);
    video_model_table_free(&t);

    struct {
        const char *row, *want;
    } bad[] = {
        {"m\tM\t2\t64\t4\t256\t4\t1\t4x8x8\t16\t1x2x2\t8\tboth\t1\t96\t10\t50\t2\t81x64x64\thttps://x\n",
         "v.tsv:3: field 'text_mode'"},
        {"m\tM\t2\t64\t4\t256\t4\t1\t4x8\t16\t1x2x2\t8\tjoint\t1\t96\t10\t50\t2\t81x64x64\thttps://x\n",
         "v.tsv:3: field 'vae_stride'"},
        {"m\tM\t2\t64\t4\t256\t4\t1\t4x8x8\t16\t1x2x2\t8\tjoint\t1\t96\t10\t50\t2\t80x64x64\thttps://x\n",
         "v.tsv:3: field 'video'"},
        {"m\tM\t2\t64\t4\t256\t4\t1\t4x8x8\t16\t1x2x2\t8\tjoint\t1\t96\t10\t50\t3\t81x64x64\thttps://x\n",
         "v.tsv:3: field 'forwards'"},
        {"m\tM\t2\t64\t5\t256\t4\t1\t4x8x8\t16\t1x2x2\t8\tjoint\t1\t96\t10\t50\t2\t81x64x64\thttps://x\n",
         "v.tsv:3: field 'heads'"},
        {"m\tM\t2\t64\t4\t256\t4\t1\t4x8x8\t16\t1x2x2\t8\tjoint\t1\t96\t10\t50\t2\t81x64x64\n",
         "v.tsv:3: field 'source'"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        snprintf(text, sizeof text, "# c\n%s%s", header, bad[i].row);
        cr_expect_eq(video_model_table_parse(text, "v.tsv", &t, err, sizeof err), -1, "row %zu parsed", i);
        cr_expect(strstr(err, bad[i].want) != NULL, "row %zu: got '%s', want '%s'", i, err, bad[i].want);
    }
    /* a duplicated key is named on its second line */
    snprintf(text, sizeof text, "%s%s%s", header, good, good);
    cr_expect_eq(video_model_table_parse(text, "v.tsv", &t, err, sizeof err), -1);
    cr_expect(strstr(err, "v.tsv:3: field 'key'") != NULL, "%s", err);
}

/* ------------------------------------------------------------ the latent */

Test(video_latent, the_first_frame_is_kept_whole)
{
    video_model w = vm("wan2.1-14b");
    /* 81 frames: 1 + 80 / 4 = 21 latent frames, not 81 / 4 = 20.25 */
    cr_expect_eq(video_latent_frames(&w, 81), 21);
    cr_expect_eq(video_latent_frames(&w, 1), 1);
    cr_expect_eq(video_latent_frames(&w, 80), -1);
    int lo, hi;
    video_nearest_frames(&w, 80, &lo, &hi);
    cr_expect_eq(lo, 77);
    cr_expect_eq(hi, 81);
    video_nearest_frames(&w, 0, &lo, &hi);
    cr_expect_eq(lo, 0);
    cr_expect_eq(hi, 1);
    video_latent l;
    char err[256];
    cr_expect_eq(video_latent_shape(&w, 80, 1280, 720, &l, err, sizeof err), -1);
    cr_expect(strstr(err, "77") && strstr(err, "81"), "%s", err);
    cr_expect_eq(video_latent_shape(&w, 81, 1280, 721, &l, err, sizeof err), -1);
    cr_expect(strstr(err, "multiples of 16") != NULL, "%s", err);
}

Test(video_latent, tokens_of_the_published_configs)
{
    video_latent l;
    char err[256];
    /* Wan2.1 14B, 81 frames 1280x720: 21 x 90 x 160 latent, patches of 2x2: 21 x 45 x 80 = 75,600 */
    video_model w = vm("wan2.1-14b");
    cr_assert_eq(video_latent_shape(&w, 81, 1280, 720, &l, err, sizeof err), 0, "%s", err);
    cr_expect_eq(l.lat_t, 21);
    cr_expect_eq(l.lat_h, 90);
    cr_expect_eq(l.lat_w, 160);
    cr_expect_eq(l.tokens, 75600);
    cr_expect_eq(l.sequence, 75600); /* text enters by cross-attention */
    /* HunyuanVideo, 129 frames 1280x720: 33 x 45 x 80 = 118,800; 256 text tokens join: 119,056 */
    video_model h = vm("hunyuanvideo");
    cr_assert_eq(video_latent_shape(&h, 129, 1280, 720, &l, err, sizeof err), 0, "%s", err);
    cr_expect_eq(l.tokens, 118800);
    cr_expect_eq(l.sequence, 119056);
    /* CogVideoX-5B, 49 frames 720x480: 13 x 30 x 45 = 17,550 (+ 226 text) */
    video_model c = vm("cogvideox-5b");
    cr_assert_eq(video_latent_shape(&c, 49, 720, 480, &l, err, sizeof err), 0, "%s", err);
    cr_expect_eq(l.tokens, 17550);
    cr_expect_eq(l.sequence, 17776);
}

/* ------------------------------------------------------------ the FLOPs */

Test(video_flops, wan14b_forward_by_hand)
{
    video_model w = vm("wan2.1-14b");
    /* per token per block: 6 d^2 + 2 d ffn = 6 x 26,214,400 + 2 x 5120 x 13824
     *   = 157,286,400 + 141,557,760 = 298,844,160; x 40 blocks = 11,953,766,400 */
    cr_expect_float_eq(video_linear_params_per_token(&w), 11953766400.0, 1.0);
    video_latent l;
    char err[256];
    cr_assert_eq(video_latent_shape(&w, 81, 1280, 720, &l, err, sizeof err), 0);
    video_forward_flops f = video_forward_flop(&w, &l);
    /* linear: 2 x 75,600 x 11,953,766,400 = 1.80740948e15 */
    cr_expect(rel_close(f.linear, 1.80740948e15, 1e-8), "%g", f.linear);
    /* attention: 4 x 40 x 75,600^2 x 5120 = 160 x 5.71536e9 x 5120 = 4.68202291e15 */
    cr_expect(rel_close(f.attention, 4.68202291e15, 1e-8), "%g", f.attention);
    /* cross: 4 x 40 x 75,600 x 512 x 5120 = 3.17089e13, plus text k, v: 2 x 512 x 2 x 5120^2 x 40
     * = 2.14748e12: 3.38564e13 */
    cr_expect(rel_close(f.cross, 3.38564e13, 1e-5), "%g", f.cross);
    /* attention's share: (4.68202 + 0.03386) / 6.52329 = 0.7229 */
    cr_expect(fabs(f.attention_share - 0.7229) < 5e-4, "%g", f.attention_share);
}

Test(video_flops, guidance_doubles_the_step_and_distillation_does_not)
{
    gpu_spec g = gpu_builtin("h100");
    char err[256];
    video_model w = vm("wan2.1-14b");
    video_request r = video_request_default(&w, &g);
    video_estimate e;
    cr_assert_eq(video_estimate_compute(&r, &e, err, sizeof err), 0, "%s", err);
    cr_expect_float_eq(e.flop_step, 2 * e.forward.total, 1e-3 * e.flop_step);
    cr_expect_float_eq(e.flop_denoise, 50 * e.flop_step, 1e-3 * e.flop_denoise);
    r.forwards = 1; /* a distilled variant: half the step */
    video_estimate e1;
    cr_assert_eq(video_estimate_compute(&r, &e1, err, sizeof err), 0, "%s", err);
    cr_expect(rel_close(e1.t_step, e.t_step / 2, 1e-9));

    /* HunyuanVideo (distilled) at 1280x720x129: S = 119,056; P_tok = 60 x 12 x 3072^2 = 6,794,772,480
     * linear 2 S P = 1.61791e15; attention 4 x 60 x S^2 x 3072; one pass per step */
    video_model h = vm("hunyuanvideo");
    video_request rh = video_request_default(&h, &g);
    cr_assert_eq(video_estimate_compute(&rh, &e, err, sizeof err), 0, "%s", err);
    cr_expect(rel_close(e.forward.linear, 1.61791e15, 1e-5), "%g", e.forward.linear);
    cr_expect(rel_close(e.forward.attention, 4.0 * 60 * 119056.0 * 119056 * 3072, 1e-5), "%g", e.forward.attention);
    cr_expect(rel_close(e.flop_step, e.forward.total, 1e-12));
}

Test(video_flops, attention_grows_with_the_square_of_the_frames)
{
    video_model w = vm("wan2.1-14b");
    video_latent a, b;
    char err[256];
    /* 41 frames: 11 latent frames; 81 frames: 21.  Attention scales by (21/11)^2 = 3.6446, linear by 21/11 */
    cr_assert_eq(video_latent_shape(&w, 41, 1280, 720, &a, err, sizeof err), 0);
    cr_assert_eq(video_latent_shape(&w, 81, 1280, 720, &b, err, sizeof err), 0);
    video_forward_flops fa = video_forward_flop(&w, &a), fb = video_forward_flop(&w, &b);
    cr_expect(rel_close(fb.attention / fa.attention, 441.0 / 121.0, 1e-12));
    cr_expect(rel_close(fb.linear / fa.linear, 21.0 / 11.0, 1e-12));
}

/* ------------------------------------------------- memory, time, roofline */

Test(video_request, wan14b_on_one_h100_by_hand)
{
    gpu_spec g = gpu_builtin("h100");
    video_model w = vm("wan2.1-14b");
    video_request r = video_request_default(&w, &g);
    video_estimate e;
    char err[256];
    cr_assert_eq(video_estimate_compute(&r, &e, err, sizeof err), 0, "%s", err);
    /* weights 14e9 x 2 = 28 GB; umT5 encoder 5.68e9 x 2 = 11.36 GB; one block's activations
     * 75,600 x (6 x 5120 + 2 x 13824) x 2 = 75,600 x 58,368 x 2 = 8,825,241,600 B;
     * VAE 81 x 1280 x 720 x 96 x 2 x 2 / 8 tiles = 3,583,180,800 B (smaller, so the DiT sets the peak) */
    cr_expect_float_eq(e.mem_dit_act, 8825241600.0, 1.0);
    cr_expect_float_eq(e.mem_vae_act, 3583180800.0, 1.0);
    double peak = 28e9 + 11.36e9 + 8825241600.0;
    cr_expect(rel_close(e.mem_peak, peak, 1e-12), "%g", e.mem_peak);
    cr_expect_eq(e.fits, peak <= g.mem_bytes); /* the GPU row's capacity, whatever it is */
    /* one forward at 45% of 989.4 TFLOP/s: 6.52329e15 / 4.4523e14 = 14.6515 s; two per step */
    cr_expect(fabs(e.t_forward - 14.6515) < 2e-3, "%g", e.t_forward);
    cr_expect(fabs(e.t_step - 29.303) < 4e-3, "%g", e.t_step);
    /* shares of the request's time add up to one */
    double s = e.share_attention + e.share_linear + e.share_guidance + e.share_vae + e.share_text;
    cr_expect_float_eq(s, 1.0, 1e-9);
    cr_expect(fabs(e.share_guidance - 0.5 * e.t_denoise / e.t_request) < 1e-12);
    /* cost: G x t / 3600 x price */
    r.price = 2.5;
    cr_assert_eq(video_estimate_compute(&r, &e, err, sizeof err), 0);
    cr_expect(rel_close(e.cost, e.t_request / 3600 * 2.5, 1e-12));
}

Test(video_request, offload_keeps_one_phase_resident)
{
    gpu_spec g = gpu_builtin("h100");
    video_model w = vm("wan2.1-14b");
    video_request r = video_request_default(&w, &g);
    r.offload = 1;
    video_estimate e;
    char err[256];
    cr_assert_eq(video_estimate_compute(&r, &e, err, sizeof err), 0, "%s", err);
    /* max(text 11.36 GB, DiT 28 GB + 8.825 GB, VAE 3.58 GB) = 36.825 GB */
    cr_expect(rel_close(e.mem_peak, 28e9 + 8825241600.0, 1e-12), "%g", e.mem_peak);
}

Test(video_request, compute_bound_at_batch_one_and_batching_buys_nothing)
{
    gpu_spec g = gpu_builtin("h100");
    video_model w = vm("wan2.1-14b");
    video_request r = video_request_default(&w, &g);
    video_estimate e;
    char err[256];
    cr_assert_eq(video_estimate_compute(&r, &e, err, sizeof err), 0, "%s", err);
    /* bytes: 28e9 weights + 40 x 75,600 x 58,368 x 2 (in, out) x 2 B = 28e9 + 7.06019e11 = 7.34019e11;
     * intensity 6.52329e15 / 7.34019e11 = 8,887 FLOP/B, thirty times the H100's 295 */
    cr_expect(fabs(e.intensity - 8887) < 2, "%g", e.intensity);
    cr_expect_eq(e.bound, BOUND_COMPUTE);
    cr_expect(e.intensity > 30 * e.ridge);
    /* two requests in one step take twice as long: the gain is under 1%.  A step is
     * both guidance forwards: 2 x 6.52329e15 / (989.4e12 x 0.45) = 29.30 s */
    cr_expect(rel_close(video_batch_step_time(&r, 1), 2 * 6.52329e15 / (989.4e12 * 0.45), 1e-4), "%g",
              video_batch_step_time(&r, 1));
    cr_expect(rel_close(video_batch_step_time(&r, 1), e.t_step, 1e-9), "%g vs %g", video_batch_step_time(&r, 1),
              e.t_step);
    double t1 = video_batch_step_time(&r, 1), t2 = video_batch_step_time(&r, 2);
    cr_expect(rel_close(t2, 2 * t1, 1e-9), "t1 %g t2 %g", t1, t2);
    cr_expect(video_batch_gain(&r, 2) < 1.01);
}

Test(video_request, sequence_parallel_efficiency_from_the_published_table)
{
    /* HunyuanVideo xDiT: 1904.08 / 514.08 / 4 = 0.925965; 1904.08 / 337.58 / 8 = 0.705047;
     * 2 GPUs 1904.08 / 934.09 / 2 = 1.019 capped at 1 */
    cr_expect_float_eq(video_sp_efficiency(1), 1.0, 1e-12);
    cr_expect_float_eq(video_sp_efficiency(2), 1.0, 1e-12);
    cr_expect_float_eq(video_sp_efficiency(4), 0.925965, 1e-6);
    cr_expect_float_eq(video_sp_efficiency(8), 0.705047, 1e-6);
    /* 3 GPUs: log2 3 = 1.58496 of the way from 2 to 4: 1 - 0.074035 x 0.58496 = 0.956692 */
    cr_expect_float_eq(video_sp_efficiency(3), 0.956692, 1e-5);
    cr_expect_eq(video_sp_efficiency(16), -1);

    gpu_spec g = gpu_builtin("h100");
    video_model w = vm("wan2.1-14b");
    video_request r = video_request_default(&w, &g);
    video_estimate e1, e8;
    char err[256];
    cr_assert_eq(video_estimate_compute(&r, &e1, err, sizeof err), 0);
    r.gpus = 8;
    cr_assert_eq(video_estimate_compute(&r, &e8, err, sizeof err), 0);
    /* compute-bound, so the step time divides by 8 x 0.705 = 5.64 */
    cr_expect(rel_close(e1.t_step / e8.t_step, 8 * 0.705047, 1e-4), "%g", e1.t_step / e8.t_step);
    cr_expect(e8.gpu_seconds > e1.gpu_seconds); /* speed bought with GPU-seconds */
    r.gpus = 16;
    cr_expect_eq(video_estimate_compute(&r, &e8, err, sizeof err), -1);
    cr_expect(strstr(err, "beyond 8") != NULL, "%s", err);
    r.sp_efficiency = 0.6;
    cr_expect_eq(video_estimate_compute(&r, &e8, err, sizeof err), -1); /* 40 heads do not split 16 ways */
    cr_expect(strstr(err, "--gpus 16") != NULL, "%s", err);
    r.gpus = 20;
    cr_expect_eq(video_estimate_compute(&r, &e8, err, sizeof err), 0, "%s", err);
}

/* --------------------------------------------------------------- queues */

Test(video_queue, erlang_c_by_hand)
{
    /* c = 1: P(wait) = rho */
    cr_expect_float_eq(erlang_c(1, 0.6), 0.6, 1e-12);
    /* c = 2, a = 1: sum_{k<2} = 1 + 1 = 2; a^2/2! / (1 - 1/2) = 1; P = 1/3; Wq = P S / (c - a) = S / 3 */
    cr_expect_float_eq(erlang_c(2, 1.0), 1.0 / 3.0, 1e-12);
    cr_expect_float_eq(mmc_wait(1.0 / 60, 60.0, 2), 20.0, 1e-9);
    cr_expect_eq(erlang_c(2, 2.0), -1);
    /* the M/D/c approximation is the M/D/1 formula of queue.h at c = 1 */
    queue_formula f;
    cr_assert_eq(md1_formula(0.01, 1.0 / 60, &f), 0);
    cr_expect_float_eq(mdc_wait_approx(0.01, 60, 1), f.wait, 1e-9);
}

static mdc_stats sim(double lambda, double s, int c, mdc_service d, uint64_t seed)
{
    mdc_config cfg = {lambda, s, d, c, 200000, 20000};
    rng_state r = rng_make(seed);
    mdc_stats st;
    char err[256];
    cr_assert_eq(mdc_simulate(&cfg, &r, &st, err, sizeof err), 0, "%s", err);
    return st;
}

Test(video_queue, simulation_against_closed_forms_and_little)
{
    /* M/D/1, rho 0.7, S = 60 s: Wq = rho S / (2 (1 - rho)) = 0.7 x 60 / 0.6 = 70 s */
    mdc_stats a = sim(0.7 / 60, 60, 1, MDC_FIXED, 1);
    cr_expect(rel_close(a.mean_wait, 70.0, 0.04), "M/D/1 Wq %g", a.mean_wait);
    cr_expect(rel_close(a.utilization, 0.7, 0.01), "%g", a.utilization);
    /* Little: L = lambda W */
    cr_expect(rel_close(a.in_system, 0.7 / 60 * a.mean_time, 0.02), "L %g lW %g", a.in_system,
              0.7 / 60 * a.mean_time);
    /* M/M/3 at a = 2.4 (rho 0.8), S = 60: Erlang C gives Wq; the simulation with exponential service */
    double want = mmc_wait(2.4 / 60, 60, 3);
    mdc_stats b = sim(2.4 / 60, 60, 3, MDC_EXPONENTIAL, 2);
    cr_expect(rel_close(b.mean_wait, want, 0.06), "M/M/3 sim %g erlang %g", b.mean_wait, want);
    /* M/D/3: the approximation within 10% of the simulation, and p95 above the mean */
    mdc_stats d = sim(2.4 / 60, 60, 3, MDC_FIXED, 3);
    cr_expect(rel_close(d.mean_wait, mdc_wait_approx(2.4 / 60, 60, 3), 0.10), "M/D/3 sim %g approx %g",
              d.mean_wait, mdc_wait_approx(2.4 / 60, 60, 3));
    cr_expect(d.p95_time > d.mean_time && d.p50_time >= 60.0);
    cr_expect(rel_close(d.in_system, 2.4 / 60 * d.mean_time, 0.02));
    /* unstable: refused with a reason */
    mdc_config bad = {1.0, 2.0, MDC_FIXED, 1, 100, 0};
    rng_state r = rng_make(1);
    mdc_stats st;
    char err[256];
    cr_expect_eq(mdc_simulate(&bad, &r, &st, err, sizeof err), -1);
    cr_expect(strstr(err, "utilisation") != NULL, "%s", err);
}

Test(video_queue, one_parallel_job_or_many_independent_ones)
{
    gpu_spec g = gpu_builtin("h100");
    video_model w = vm("wan2.1-14b");
    video_request r = video_request_default(&w, &g);
    r.gpus = 8;
    video_placement p;
    char err[256];
    /* light load: 0.5 jobs per hour.  SP serves each job 5.6x faster, and waits are rare in both */
    cr_assert_eq(video_placements(&r, 0.5, 20000, 7, &p, err, sizeof err), 0, "%s", err);
    cr_expect(rel_close(p.service_independent / p.service_sp, 8 * 0.705047, 0.01));
    cr_expect(p.sp.mean_time < p.independent.mean_time);
    /* capacity: SP 3600 / S_sp jobs per hour; independent 8 x 3600 / S_1: 8 / 5.64 = 1.42x more.
     * At a rate between the two, only the independent placement is stable. */
    double cap_sp = 3600 / p.service_sp, cap_ind = 8 * 3600 / p.service_independent;
    cr_expect(rel_close(cap_ind / cap_sp, 1 / 0.705047, 0.01));
    cr_assert_eq(video_placements(&r, 0.5 * (cap_sp + cap_ind), 20000, 7, &p, err, sizeof err), 0, "%s", err);
    cr_expect_eq(p.stable_sp, 0);
    cr_expect_eq(p.stable_independent, 1);
}

Test(video_queue, a_simulation_keeps_to_its_work_limit)
{
    /* 40 independent servers (as many as wan2.1's 40 heads allow), 200,000 jobs asked; each
     * arrival scans every server, so 5e6 / (1.1 x 40) = 113,636 arrivals fit MDC_WORK_LIMIT
     * (warm-up included: the 1.1), and the result says it measured those, not 200,000 */
    gpu_spec g = gpu_builtin("h100");
    video_model w = vm("wan2.1-14b");
    video_request r = video_request_default(&w, &g);
    r.gpus = 40;
    r.sp_efficiency = 0.5;
    video_placement p;
    char err[256];
    cr_assert_eq(video_placements(&r, 2, 200000, 7, &p, err, sizeof err), 0, "%s", err);
    cr_expect(p.jobs_independent > 100000 && p.jobs_independent < 200000, "%ld", p.jobs_independent);
    cr_expect(p.jobs_independent * 1.1 * 40 <= MDC_WORK_LIMIT + 40, "%ld", p.jobs_independent);
}
