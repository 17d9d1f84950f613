/* Chapter 9 worked answers, computed through the napkin library.  The
 * exercise tests check these functions against hand derivations; main()
 * records the numbers the written solutions quote. */
#include "09-video-diffusion.h"

#include "notebook.h"
#include "specs.h"
#include "video.h"

#include <math.h>
#include <stdio.h>

int ex09_latent_frames(int frames, int stride_t)
{
    if (stride_t < 1)
        return -1;
    video_model m = {.stride_t = stride_t};
    return video_latent_frames(&m, frames);
}

static int latent(const char *model_key, int frames, int width, int height, video_model *m, video_latent *l)
{
    char err[256];
    if (video_model_lookup(model_key, m) != 0)
        return -1;
    return video_latent_shape(m, frames, width, height, l, err, sizeof err);
}

long ex09_tokens(const char *model_key, int frames, int width, int height)
{
    video_model m;
    video_latent l;
    return latent(model_key, frames, width, height, &m, &l) == 0 ? l.tokens : -1;
}

double ex09_step_flop(const char *model_key, int frames, int width, int height, int forwards)
{
    video_model m;
    video_latent l;
    if (forwards < 1 || forwards > 2 || latent(model_key, frames, width, height, &m, &l) != 0)
        return NAN;
    return forwards * video_forward_flop(&m, &l).total;
}

double ex09_attention_crossover_tokens(const char *model_key)
{
    video_model m;
    if (video_model_lookup(model_key, &m) != 0)
        return NAN;
    return video_linear_params_per_token(&m) / (2.0 * m.layers * m.hidden);
}

double ex09_batch_gain(const char *model_key, const char *gpu_key, int batch)
{
    video_model m;
    gpu_spec g;
    if (batch < 1 || video_model_lookup(model_key, &m) != 0 || gpu_lookup(gpu_key, &g) != 0)
        return NAN;
    video_request r = video_request_default(&m, &g);
    return video_batch_gain(&r, batch);
}

double ex09_peak_memory(const char *model_key, const char *gpu_key, int frames, int width, int height, int gpus,
                        int offload)
{
    video_model m;
    gpu_spec g;
    if (video_model_lookup(model_key, &m) != 0 || gpu_lookup(gpu_key, &g) != 0)
        return NAN;
    video_request r = video_request_default(&m, &g);
    r.frames = frames;
    r.width = width;
    r.height = height;
    r.gpus = gpus;
    r.offload = offload != 0;
    video_estimate e;
    char err[256];
    return video_estimate_compute(&r, &e, err, sizeof err) == 0 ? e.mem_peak : NAN;
}

double ex09_mdc_time(double jobs_per_hour, double service_s, int servers)
{
    double w = mdc_wait_approx(jobs_per_hour / 3600.0, service_s, servers);
    return w < 0 ? NAN : w + service_s;
}

double ex09_journal_bytes(int steps, int payload_bytes)
{
    if (steps < 1 || payload_bytes < 0)
        return NAN;
    /* the record header is 32 bytes (code/napkin/runtime/jobqueue.c, snippet "record") */
    return 32.0 * (steps + 2) + payload_bytes;
}

#ifndef NB_EXERCISE_TEST
int main(void)
{
    /* 1: the off-by-one */
    nb_value("ch09_ex1_lat", "%d", ex09_latent_frames(81, 4));
    nb_value("ch09_ex1_tokens", "%ld", ex09_tokens("wan2.1-1.3b", 81, 832, 480));
    nb_value("ch09_ex1_wrong", "%.0f", 81.0 / 4 * 30 * 52);
    video_model w13 = video_model_builtin("wan2.1-1.3b");
    int below, above;
    video_nearest_frames(&w13, 100, &below, &above);
    nb_value("ch09_ex1_below", "%d", below);
    nb_value("ch09_ex1_above", "%d", above);
    nb_value("ch09_ex1_lat_101", "%d", ex09_latent_frames(101, 4));

    /* 2: guidance */
    double s2 = ex09_step_flop("wan2.1-14b", 81, 1280, 720, 2), s1 = ex09_step_flop("wan2.1-14b", 81, 1280, 720, 1);
    nb_value("ch09_ex2_step2", "%.2f", s2 / 1e15);
    nb_value("ch09_ex2_step1", "%.2f", s1 / 1e15);
    video_model wan = video_model_builtin("wan2.1-14b");
    gpu_spec h100 = gpu_builtin("h100");
    video_request r = video_request_default(&wan, &h100);
    video_estimate e;
    char err[256];
    if (video_estimate_compute(&r, &e, err, sizeof err) != 0)
        return 1;
    nb_value("ch09_ex2_min2", "%.1f", e.t_request / 60);
    r.forwards = 1;
    if (video_estimate_compute(&r, &e, err, sizeof err) != 0)
        return 1;
    nb_value("ch09_ex2_min1", "%.1f", e.t_request / 60);

    /* 3: where attention takes over */
    double cw = ex09_attention_crossover_tokens("wan2.1-14b"), ch = ex09_attention_crossover_tokens("hunyuanvideo");
    nb_value("ch09_ex3_wan", "%.0f", cw);
    nb_value("ch09_ex3_hy", "%.0f", ch);
    /* 720p: 3600 tokens per latent frame; frames = 1 + 4 (latent frames - 1) */
    int lat = (int)ceil(cw / 3600.0);
    nb_value("ch09_ex3_wan_lat", "%d", lat);
    nb_value("ch09_ex3_wan_frames", "%d", 1 + 4 * (lat - 1));

    /* 4: batching two videos */
    nb_value("ch09_ex4_gain2", "%.4f", ex09_batch_gain("wan2.1-14b", "h100", 2));
    nb_value("ch09_ex4_gain2_13b", "%.4f", ex09_batch_gain("wan2.1-1.3b", "l40s", 2));

    /* 5: memory */
    gpu_spec l40s = gpu_builtin("l40s");
    double m1 = ex09_peak_memory("wan2.1-14b", "l40s", 81, 1280, 720, 1, 0);
    double m1o = ex09_peak_memory("wan2.1-14b", "l40s", 81, 1280, 720, 1, 1);
    double m2 = ex09_peak_memory("wan2.1-14b", "l40s", 81, 1280, 720, 2, 0);
    nb_value("ch09_ex5_l40s_gb", "%.0f", l40s.mem_bytes / 1e9);
    nb_value("ch09_ex5_m1", "%.1f", m1 / 1e9);
    nb_value("ch09_ex5_m1o", "%.1f", m1o / 1e9);
    nb_value("ch09_ex5_m2", "%.1f", m2 / 1e9);
    nb_value("ch09_ex5_m1_fits", "%s", m1 <= l40s.mem_bytes ? "fits" : "does not fit");
    nb_value("ch09_ex5_m2_fits", "%s", m2 <= l40s.mem_bytes ? "fits" : "does not fit");

    /* 6: one parallel job or eight independent ones, 8 x H100 */
    r = video_request_default(&wan, &h100);
    video_estimate one;
    if (video_estimate_compute(&r, &one, err, sizeof err) != 0)
        return 1;
    r.gpus = 8;
    video_estimate eight;
    if (video_estimate_compute(&r, &eight, err, sizeof err) != 0)
        return 1;
    nb_value("ch09_ex6_s8", "%.0f", eight.t_request);
    nb_value("ch09_ex6_s1", "%.0f", one.t_request);
    const double rates[] = {2, 12};
    const char *names[] = {"2", "12"};
    for (int i = 0; i < 2; i++) {
        char n1[64], n2[64];
        snprintf(n1, sizeof n1, "ch09_ex6_sp_%s", names[i]);
        snprintf(n2, sizeof n2, "ch09_ex6_ind_%s", names[i]);
        nb_value(n1, "%.1f", ex09_mdc_time(rates[i], eight.t_request, 1) / 60);
        nb_value(n2, "%.1f", ex09_mdc_time(rates[i], one.t_request, 8) / 60);
    }
    nb_value("ch09_ex6_cap_sp", "%.1f", 3600 / eight.t_request);
    nb_value("ch09_ex6_cap_ind", "%.1f", 8 * 3600 / one.t_request);

    /* 7: the journal */
    nb_value("ch09_ex7_bytes", "%.0f", ex09_journal_bytes(50, 200));
    /* 8 GPUs each finishing a step every t_step (independent jobs): fsyncs per second */
    nb_value("ch09_ex7_fsync_per_s", "%.2f", 8 / one.t_step);
    nb_value("ch09_ex7_t_step", "%.1f", one.t_step);
    nb_value("ch09_ex7_jobs_per_gb", "%.0f", 1e9 / ex09_journal_bytes(50, 200));
    return 0;
}
#endif
