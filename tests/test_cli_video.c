/* The `napkin video` subcommand: its numbers against hand arithmetic from
 * the Wan2.1 and HunyuanVideo configs, and its exit codes (2 for a bad flag
 * naming the choices or the nearest valid frame counts, 1 for a request
 * that does not fit, naming the largest that does). */
#include "specs.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "cli_run.h"


static int rel_close(double got, double want, double tol)
{
    return fabs(got - want) <= tol * fabs(want);
}

Test(cli_video, wan14b_on_eight_h100s_by_hand)
{
    char out[OUT_MAX];
    cr_assert_eq(run("video --model wan2.1-14b --frames 81 --width 1280 --height 720 --steps 50 --gpu h100 "
                     "--gpus 8 --efficiency 0.45 --price 2.50 --format tsv",
                     out, sizeof out),
                 0, "%s", out);
    /* 1 + 80/4 = 21 latent frames; 720/8/2 x 1280/8/2 = 45 x 80; 21 x 45 x 80 = 75,600 */
    cr_expect_eq(lround(tsv_value(out, "latent_frames")), 21);
    cr_expect_eq(lround(tsv_value(out, "tokens")), 75600);
    /* linear 2 x 75,600 x 11,953,766,400 = 1.807409e15; attention 4 x 40 x 75,600^2 x 5120 = 4.682023e15;
     * cross-attention 3.38564e13: one forward 6.523288e15; two per step 1.3046577e16 */
    cr_expect(rel_close(tsv_value(out, "flop_forward"), 6.523288e15, 1e-5), "%s", out);
    cr_expect(rel_close(tsv_value(out, "flop_step"), 1.3046577e16, 1e-5));
    /* step: 1.3046577e16 / (8 x 0.705047 x 0.45 x 989.4e12) = 1.3046577e16 / 2.511278e15 = 5.19520 s */
    cr_expect(rel_close(tsv_value(out, "t_step"), 5.19520, 1e-4), "%g", tsv_value(out, "t_step"));
    /* GPU-seconds: 8 GPUs held for the whole request; cost at 2.50 per GPU-hour */
    double t = tsv_value(out, "t_request");
    cr_expect(rel_close(tsv_value(out, "gpu_seconds"), 8 * t, 1e-9));
    cr_expect(rel_close(tsv_value(out, "cost"), 8 * t / 3600 * 2.5, 1e-6));
    cr_expect(rel_close(tsv_value(out, "attention_share"), 0.7229, 1e-3));
    /* activations split 8 ways: 75,600 / 8 = 9,450 tokens x 58,368 x 2 B = 1,103,155,200 B */
    cr_expect(rel_close(tsv_value(out, "mem_dit_act"), 1103155200.0, 1e-9));
    /* compute-bound: batching two requests gains nothing */
    cr_expect(tsv_value(out, "batch2_gain") < 1.01);
    cr_expect(tsv_value(out, "intensity") > 1000);
}

Test(cli_video, queue_at_a_light_rate)
{
    char out[OUT_MAX];
    cr_assert_eq(run("video --gpus 8 --rate 2 --format tsv", out, sizeof out), 0, "%s", out);
    /* utilisation = rate x service: 2/3600 x S_sp for one parallel job; 2/3600 x S_1 / 8 for eight */
    double s_sp = tsv_value(out, "sp_service"), s_1 = tsv_value(out, "ind_service");
    cr_expect(rel_close(tsv_value(out, "sp_utilization"), 2.0 / 3600 * s_sp, 1e-9));
    cr_expect(rel_close(tsv_value(out, "ind_utilization"), 2.0 / 3600 * s_1 / 8, 1e-9));
    /* p95 in system is at least the service time */
    cr_expect(tsv_value(out, "sp_p95") >= s_sp);
    cr_expect(tsv_value(out, "ind_p95") >= s_1);
    /* at rate 20 one 8-way job at a time is overloaded (20 x 261 s > 3600 s) and says so */
    cr_assert_eq(run("video --gpus 8 --rate 20", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "grows without bound") != NULL, "%s", out);
}

Test(cli_video, distilled_guidance_and_json)
{
    char out[OUT_MAX];
    /* HunyuanVideo 129 frames 720p: 33 x 45 x 80 = 118,800 tokens; one pass per step */
    cr_assert_eq(run("video --model hunyuanvideo --gpu h200 --format tsv", out, sizeof out), 0, "%s", out);
    cr_expect_eq(lround(tsv_value(out, "tokens")), 118800);
    cr_expect_eq(lround(tsv_value(out, "forwards")), 1);
    cr_expect(rel_close(tsv_value(out, "flop_step"), tsv_value(out, "flop_forward"), 1e-12));
    cr_expect_float_eq(tsv_value(out, "share_guidance"), 0.0, 1e-12);
    cr_assert_eq(run("video --model cogvideox-5b --gpu a100 --format json", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "\"tokens\":") != NULL, "%s", out);
    cr_assert_eq(run("video --help", out, sizeof out), 0);
    cr_expect(strstr(out, "--frames") != NULL);
}

Test(cli_video, bad_input_exits_2_naming_the_choices)
{
    char out[OUT_MAX];
    cr_expect_eq(run("video --frames 80", out, sizeof out), 2);
    cr_expect(strstr(out, "--frames") && strstr(out, "77") && strstr(out, "81"), "%s", out);
    cr_expect_eq(run("video --model sora", out, sizeof out), 2);
    cr_expect(strstr(out, "wan2.1-14b") && strstr(out, "hunyuanvideo"), "%s", out);
    cr_expect_eq(run("video --gpu tpu", out, sizeof out), 2);
    cr_expect(strstr(out, "h100") != NULL, "%s", out);
    cr_expect_eq(run("video --width 1000", out, sizeof out), 2);
    cr_expect(strstr(out, "multiples of 16") != NULL, "%s", out);
    cr_expect_eq(run("video --gpus 16", out, sizeof out), 2);
    cr_expect(strstr(out, "--sp-efficiency") != NULL, "%s", out);
    cr_expect_eq(run("video --gpus 20 --sp-efficiency 0.6 --format tsv", out, sizeof out), 0, "%s", out);
    /* Wan2.1-14B has 40 heads: Ulysses splits them 1, 2, 4, 5, 8, 10 or 20 ways, never 3 or 6 */
    cr_expect_eq(run("video --gpus 3", out, sizeof out), 2);
    cr_expect(strstr(out, "--gpus 3") && strstr(out, "40 heads") && strstr(out, "1, 2, 4, 5, 8, 10"), "%s", out);
    cr_expect_eq(run("video --gpus 6", out, sizeof out), 2);
    cr_expect_eq(run("video --gpus 5 --format tsv", out, sizeof out), 0, "%s", out);
    cr_expect_eq(run("video --efficiency 1.5", out, sizeof out), 2);
    cr_expect_eq(run("video --forwards 3", out, sizeof out), 2);
    cr_expect_eq(run("video --bogus", out, sizeof out), 2);
    /* a malformed table of the reader's own is named by file:line and field */
    char path[] = "/tmp/napkin-video-table-XXXXXX";
    int fd = mkstemp(path);
    cr_assert(fd >= 0);
    const char *bad = "key\tname\tlayers\thidden\theads\tffn\tproj\tparams_b\tvae_stride\tlatent_ch\tpatch\t"
                      "text_tokens\ttext_mode\ttext_enc_b\tvae_ch\tvae_mflop\tsteps\tforwards\tvideo\tsource\n"
                      "m\tM\t2\t64\t4\t256\t4\tmany\t4x8x8\t16\t1x2x2\t8\tjoint\t1\t96\t10\t50\t2\t81x64x64\thttps://x\n";
    cr_assert(write(fd, bad, strlen(bad)) == (ssize_t)strlen(bad));
    close(fd);
    char args[256];
    snprintf(args, sizeof args, "video --video-table %s", path);
    cr_expect_eq(run(args, out, sizeof out), 2);
    char want[128];
    snprintf(want, sizeof want, "%s:2: field 'params_b'", path);
    cr_expect(strstr(out, want) != NULL, "want '%s' in: %s", want, out);
    unlink(path);
}

Test(cli_video, a_request_that_does_not_fit_exits_1_naming_the_largest)
{
    /* HunyuanVideo on one L40S, 1280x720: DiT 13e9 x 2 + text encoders 8.15e9 x 2 = 42.3 GB, plus
     * one block's activations S x (6 x 3072 + 2 x 12288) x 2 B = S x 86,016 B, S = 3600 (1 + k) + 256
     * at 1 + 4k frames.  The largest k that fits the 90% of the GPU row's own capacity a
     * serving process may use: */
    gpu_spec g = gpu_builtin("l40s");
    int best = 0;
    for (int k = 0; k <= 32; k++) {
        double s = 3600.0 * (1 + k) + 256;
        if (42.3e9 + s * 86016.0 <= 0.9 * g.mem_bytes)
            best = 1 + 4 * k;
    }
    cr_assert(best > 0 && best < 129);
    char out[OUT_MAX], want[64];
    cr_expect_eq(run("video --model hunyuanvideo --gpu l40s", out, sizeof out), 1);
    snprintf(want, sizeof want, "--frames %d", best);
    cr_expect(strstr(out, want) != NULL, "want '%s' in: %s", want, out);
    /* with offloading only the DiT phase is resident: 26 GB + activations fits */
    cr_expect_eq(run("video --model hunyuanvideo --gpu l40s --offload", out, sizeof out), 0, "%s", out);
}
