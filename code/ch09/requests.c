/* Chapter 9: the arithmetic of one video request and of a queue of them.
 *
 * Wan2.1-T2V-14B at 81 frames of 1280x720 on H100 SXM (bf16, 45% of the
 * dense peak) unless a line says otherwise.  Writes
 *   09-flops.tsv   FLOP per request against frames, attention and linear, 720p and 480p
 *   09-sp.tsv      time per request against sequence-parallel GPUs, and the ideal
 *   09-sp-published.tsv  HunyuanVideo's published xDiT latencies over their 1-GPU figure
 *   09-load.tsv    mean and p95 time in system against arrival rate, one 8-way job
 *                  at a time against eight independent jobs (M/D/c simulated)
 *   09-cost.tsv    where the time of one request goes, per model
 * and the values the chapter quotes. */
#include "notebook.h"
#include "specs.h"
#include "queue.h"
#include "video.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

static video_estimate estimate(const video_request *r)
{
    video_estimate e;
    char err[512];
    if (video_estimate_compute(r, &e, err, sizeof err) != 0) {
        fprintf(stderr, "requests: %s\n", err);
        exit(1);
    }
    return e;
}

enum { REPS = 10 };

typedef struct {
    double mean, p95; /* seconds in system */
} exact_sp;

/* The 8-way placement at `rate` jobs an hour, exactly (M/D/1). */
static exact_sp sp_exact(const video_placement *p, double rate)
{
    queue_formula f;
    double lambda = rate / 3600;
    exact_sp e = {NAN, NAN};
    if (md1_formula(lambda, 1 / p->service_sp, &f) != 0)
        return e;
    e.mean = f.time;
    e.p95 = md1_time_quantile(lambda, p->service_sp, 0.95);
    if (isnan(e.p95)) {
        fprintf(stderr, "requests: no exact M/D/1 percentile at %.1f jobs an hour (service %.17g s)\n", rate, p->service_sp);
        exit(1);
    }
    return e;
}

typedef struct {
    double mean, mean_ci, p95, p95_ci; /* over REPS runs: the average, and the half-width of its 95% interval */
} replicated;

/* Eight independent jobs at `rate`, simulated REPS times with different seeds. */
static replicated independent_replicated(const video_request *q, double rate)
{
    double m[REPS], p[REPS];
    char err[512];
    for (int i = 0; i < REPS; i++) {
        video_placement v;
        if (video_placements(q, rate, 40000, 100 + (uint64_t)i, &v, err, sizeof err) != 0) {
            fprintf(stderr, "requests: %s\n", err);
            exit(1);
        }
        m[i] = v.independent.mean_time;
        p[i] = v.independent.p95_time;
    }
    replicated r = {0};
    const double t9 = 2.262; /* Student's t, 9 degrees of freedom, two-sided 95% */
    double *xs[2] = {m, p}, *avg[2] = {&r.mean, &r.p95}, *ci[2] = {&r.mean_ci, &r.p95_ci};
    for (int k = 0; k < 2; k++) {
        double s = 0, ss = 0;
        for (int i = 0; i < REPS; i++)
            s += xs[k][i];
        *avg[k] = s / REPS;
        for (int i = 0; i < REPS; i++)
            ss += (xs[k][i] - *avg[k]) * (xs[k][i] - *avg[k]);
        *ci[k] = t9 * sqrt(ss / (REPS - 1) / REPS);
    }
    return r;
}

int main(void)
{
    gpu_spec h100 = gpu_builtin("h100"), a100 = gpu_builtin("a100"), l40s = gpu_builtin("l40s");
    video_model wan = video_model_builtin("wan2.1-14b"), wan13 = video_model_builtin("wan2.1-1.3b");
    video_model hy = video_model_builtin("hunyuanvideo"), cog = video_model_builtin("cogvideox-5b");
    video_request r = video_request_default(&wan, &h100);
    video_estimate e = estimate(&r);

    /* --- the latent --- */
    nb_value("ch09_lat_t", "%d", e.latent.lat_t);
    nb_value("ch09_lat_h", "%d", e.latent.lat_h);
    nb_value("ch09_lat_w", "%d", e.latent.lat_w);
    nb_value("ch09_tokens", "%ld", e.latent.tokens);
    nb_value("ch09_tokens_wrong", "%.0f", 81.0 / 4 * (e.latent.lat_h / 2) * (e.latent.lat_w / 2));
    nb_value("ch09_ptok_b", "%.2f", video_linear_params_per_token(&wan) / 1e9);

    /* --- FLOPs --- */
    nb_value("ch09_fwd_pflop", "%.2f", e.forward.total / 1e15);
    nb_value("ch09_lin_pflop", "%.2f", e.forward.linear / 1e15);
    nb_value("ch09_att_pflop", "%.2f", (e.forward.attention + e.forward.cross) / 1e15);
    nb_value("ch09_att_share_pct", "%.0f", 100 * e.forward.attention_share);
    nb_value("ch09_step_pflop", "%.1f", e.flop_step / 1e15);
    nb_value("ch09_req_pflop", "%.0f", e.flop_request / 1e15);
    nb_value("ch09_vae_pflop", "%.2f", e.flop_vae / 1e15);
    nb_value("ch09_text_tflop", "%.0f", e.flop_text / 1e12);
    /* where attention equals the linear layers: 4 L S^2 d = 2 S P_tok */
    nb_value("ch09_cross_tokens", "%.0f", video_linear_params_per_token(&wan) / (2.0 * wan.layers * wan.hidden));

    /* --- roofline and batching --- */
    nb_value("ch09_intensity", "%.0f", e.intensity);
    nb_value("ch09_ridge", "%.0f", e.ridge);
    nb_value("ch09_intensity_x_ridge", "%.0f", e.intensity / e.ridge);
    nb_value("ch09_batch2_step_s", "%.1f", video_batch_step_time(&r, 2));
    nb_value("ch09_batch1_step_s", "%.1f", video_batch_step_time(&r, 1));
    nb_value("ch09_batch2_gain", "%.4f", video_batch_gain(&r, 2));
    nb_value("ch09_batch2_gain_pct", "%.2f", 100 * (video_batch_gain(&r, 2) - 1));

    /* --- memory --- */
    nb_value("ch09_mem_dit_gb", "%.0f", e.mem_dit_weights / 1e9);
    nb_value("ch09_mem_text_gb", "%.1f", e.mem_text_weights / 1e9);
    nb_value("ch09_mem_act_gb", "%.1f", e.mem_dit_act / 1e9);
    nb_value("ch09_mem_vae_gb", "%.1f", e.mem_vae_act / 1e9);
    nb_value("ch09_mem_peak_gb", "%.1f", e.mem_peak / 1e9);
    nb_value("ch09_h100_gb", "%.1f", e.mem_capacity / 1e9); /* usable: 90% of what the driver reports */
    /* the N^2 score matrix that flash attention never stores: S^2 x heads x 2 B for one layer */
    nb_value("ch09_scores_gb", "%.0f", (double)e.latent.sequence * e.latent.sequence * wan.heads * 2.0 / 1e9);
    video_request rl = video_request_default(&wan, &l40s);
    video_estimate el = estimate(&rl);
    nb_value("ch09_l40s_peak_gb", "%.1f", el.mem_peak / 1e9);
    nb_value("ch09_l40s_gb", "%.1f", el.mem_capacity / 1e9);
    nb_value("ch09_l40s_fits", "%s", el.fits ? "fits" : "does not fit");
    nb_value("ch09_l40s_max_frames", "%d", video_max_frames_that_fit(&rl));
    rl.offload = 1;
    el = estimate(&rl);
    nb_value("ch09_l40s_offload_gb", "%.1f", el.mem_peak / 1e9);

    /* --- time and cost on one GPU and on eight --- */
    nb_value("ch09_t_step_1", "%.1f", e.t_step);
    nb_value("ch09_t_req_1_min", "%.1f", e.t_request / 60);
    nb_value("ch09_t_req_1_min_say", "%.0f", e.t_request / 60); /* the key numbers, as said aloud */
    nb_value("ch09_t_vae_1", "%.1f", e.t_vae);
    nb_value("ch09_share_guidance_pct", "%.0f", 100 * e.share_guidance);
    nb_value("ch09_share_att_pct", "%.0f", 100 * e.share_attention);
    nb_value("ch09_share_lin_pct", "%.0f", 100 * e.share_linear);
    nb_value("ch09_share_vae_pct", "%.1f", 100 * e.share_vae);
    r.price = 2.5; /* an assumed rental price, dollars per GPU-hour */
    nb_value("ch09_price", "%.2f", r.price);
    e = estimate(&r);
    nb_value("ch09_cost_1", "%.2f", e.cost);
    r.gpus = 8;
    video_estimate e8 = estimate(&r);
    nb_value("ch09_t_step_8", "%.1f", e8.t_step);
    nb_value("ch09_t_req_8_s", "%.0f", e8.t_request);
    nb_value("ch09_t_req_8_min", "%.1f", e8.t_request / 60);
    nb_value("ch09_t_req_8_min_say", "%.0f", e8.t_request / 60);
    nb_value("ch09_sp8_eff", "%.2f", e8.sp_eff);
    nb_value("ch09_sp4_eff", "%.2f", video_sp_efficiency(4));
    nb_value("ch09_sp8_speedup", "%.2f", e.t_request / e8.t_request);
    nb_value("ch09_cost_8", "%.2f", e8.cost);
    nb_value("ch09_gpus_8_gpu_s", "%.0f", e8.gpu_seconds);
    nb_value("ch09_gpus_1_gpu_s", "%.0f", e.gpu_seconds);

    /* --- published wall times against the model --- */
    video_request rc = video_request_default(&cog, &a100);
    rc.efficiency = 1.0;
    video_estimate ec = estimate(&rc);
    nb_value("ch09_cog_pflop", "%.1f", ec.flop_request / 1e15);
    nb_value("ch09_cog_a100_eff_pct", "%.0f", 100 * ec.t_request / 180.0); /* card: ~180 s on one A100 */
    rc.gpu = &h100;
    ec = estimate(&rc);
    nb_value("ch09_cog_h100_eff_pct", "%.0f", 100 * ec.t_request / 90.0); /* card: ~90 s on one H100 */
    video_request rh = video_request_default(&hy, &h100);
    rh.efficiency = 1.0;
    video_estimate ehy = estimate(&rh);
    nb_value("ch09_hy_tokens", "%ld", ehy.latent.tokens);
    nb_value("ch09_hy_pflop", "%.0f", ehy.flop_request / 1e15);
    nb_value("ch09_hy_att_share_pct", "%.0f", 100 * ehy.forward.attention_share);
    nb_value("ch09_hy_peak_gb", "%.0f", ehy.mem_peak / 1e9);
    nb_value("ch09_hy_eff_1904_pct", "%.0f", 100 * ehy.t_request / 1904.08);

    /* --- 09-flops.tsv --- */
    FILE *f = nb_data_open("09-flops.tsv");
    fprintf(f, "# Wan2.1-T2V-14B FLOP per request (50 steps, guidance), PFLOP\nframes\tatt720\tlin720\tatt480\tlin480\n");
    for (int frames = 1; frames <= 161; frames += 8) {
        video_request q = video_request_default(&wan, &h100);
        q.frames = frames;
        video_estimate a = estimate(&q);
        q.width = 832;
        q.height = 480;
        video_estimate b = estimate(&q);
        double k = a.steps * a.forwards / 1e15;
        fprintf(f, "%d\t%.3f\t%.3f\t%.3f\t%.3f\n", frames, k * (a.forward.attention + a.forward.cross),
                k * a.forward.linear, k * (b.forward.attention + b.forward.cross), k * b.forward.linear);
    }
    fclose(f);

    /* --- 09-sp.tsv --- */
    f = nb_data_open("09-sp.tsv");
    fprintf(f, "# Wan2.1-T2V-14B 81x1280x720 on H100, minutes per request\ngpus\tmodel\tideal\n");
    video_request q = video_request_default(&wan, &h100);
    double t1 = estimate(&q).t_request;
    for (int g = 1; g <= 8; g++) {
        if (wan.heads % g != 0) /* head-splitting parallelism needs the count to divide the heads */
            continue;
        q.gpus = g;
        fprintf(f, "%d\t%.3f\t%.3f\n", g, estimate(&q).t_request / 60, t1 / g / 60);
    }
    fclose(f);
    f = nb_data_open("09-sp-published.tsv");
    fprintf(f, "# HunyuanVideo README (xDiT): latency over the 1-GPU latency, times Wan's 1-GPU minutes\n"
               "gpus\tscaled\n");
    const double hy_lat[] = {1904.08, 934.09, 514.08, 337.58};
    for (int i = 0; i < 4; i++)
        fprintf(f, "%d\t%.3f\n", 1 << i, t1 / 60 * hy_lat[i] / hy_lat[0]);
    fclose(f);

    /* --- 09-load.tsv --- */
    q = video_request_default(&wan, &h100);
    q.gpus = 8;
    video_placement p;
    char err[512];
    if (video_placements(&q, 1.0, 2000, 1, &p, err, sizeof err) != 0) {
        fprintf(stderr, "requests: %s\n", err);
        return 1;
    }
    double cap_sp = 3600 / p.service_sp, cap_ind = 8 * 3600 / p.service_independent;
    nb_value("ch09_cap_sp", "%.1f", cap_sp);
    nb_value("ch09_cap_ind", "%.1f", cap_ind);
    f = nb_data_open("09-load.tsv");
    fprintf(f, "# Wan2.1-T2V-14B on 8 x H100: minutes in system\nrate\tsp_mean\tsp_p95\tind_mean\tind_p95\n");
    for (double rate = 0.5; rate < 0.98 * cap_ind; rate += 0.5) {
        if (video_placements(&q, rate, 40000, 9, &p, err, sizeof err) != 0) {
            fprintf(stderr, "requests: %s\n", err);
            return 1;
        }
        fprintf(f, "%.2f\t", rate);
        if (p.stable_sp && p.rho_sp < 0.97)
            fprintf(f, "%.3f\t%.3f\t", p.sp.mean_time / 60, p.sp.p95_time / 60);
        else
            fprintf(f, "?\t?\t");
        fprintf(f, "%.3f\t%.3f\n", p.independent.mean_time / 60, p.independent.p95_time / 60);
    }
    fclose(f);
    /* One 8-way job at a time is M/D/1: its mean (Pollaczek-Khinchine) and
     * its 95th percentile (Erlang's distribution) are exact.  Eight
     * independent jobs are M/D/8, which has no closed form: they are
     * simulated, REPS runs of 40,000 jobs, and quoted with a 95% interval. */
    /* the crossover: the lowest rate at which independent jobs have the lower mean time */
    double cross = 0;
    for (double rate = 0.1; rate < cap_sp; rate += 0.1) {
        if (video_placements(&q, rate, 40000, 9, &p, err, sizeof err) != 0)
            return 1;
        if (p.independent.mean_time < sp_exact(&p, rate).mean) {
            cross = rate;
            break;
        }
    }
    nb_value("ch09_cross_rate", "%.1f", cross);
    double cross95 = 0;
    for (double rate = 0.1; rate < cap_sp; rate += 0.1) {
        if (video_placements(&q, rate, 40000, 9, &p, err, sizeof err) != 0)
            return 1;
        if (p.independent.p95_time < sp_exact(&p, rate).p95) {
            cross95 = rate;
            break;
        }
    }
    nb_value("ch09_cross_rate_p95", "%.1f", cross95);
    const double points[2] = {2.0, floor(cap_sp * 0.95 * 10) / 10};
    const char *names[2] = {"light", "busy"};
    for (int i = 0; i < 2; i++) {
        double rate = points[i];
        replicated ind = independent_replicated(&q, rate);
        if (video_placements(&q, rate, 40000, 9, &p, err, sizeof err) != 0)
            return 1;
        exact_sp e = sp_exact(&p, rate);
        char n[64];
        snprintf(n, sizeof n, "ch09_%s_sp_min", names[i]);
        nb_value(n, "%.1f", e.mean / 60);
        snprintf(n, sizeof n, "ch09_%s_sp_p95", names[i]);
        nb_value(n, "%.1f", e.p95 / 60);
        snprintf(n, sizeof n, "ch09_%s_sp_sim_min", names[i]);
        nb_value(n, "%.1f", p.sp.mean_time / 60);
        snprintf(n, sizeof n, "ch09_%s_sp_sim_p95", names[i]);
        nb_value(n, "%.1f", p.sp.p95_time / 60);
        snprintf(n, sizeof n, "ch09_%s_rho_sp", names[i]);
        nb_value(n, "%.3f", p.rho_sp);
        snprintf(n, sizeof n, "ch09_%s_ind_min", names[i]);
        nb_value(n, "%.1f", ind.mean / 60);
        snprintf(n, sizeof n, "ch09_%s_ind_min_ci", names[i]);
        nb_value(n, "%.2f", ind.mean_ci / 60);
        snprintf(n, sizeof n, "ch09_%s_ind_p95", names[i]);
        nb_value(n, "%.1f", ind.p95 / 60);
        snprintf(n, sizeof n, "ch09_%s_ind_p95_ci", names[i]);
        nb_value(n, "%.2f", ind.p95_ci / 60);
    }
    nb_value("ch09_busy_rate", "%.1f", points[1]);
    nb_value("ch09_reps", "%d", REPS);
    /* Little's law at the busy point, in the simulation: jobs in the system = rate x time */
    if (video_placements(&q, points[1], 40000, 9, &p, err, sizeof err) != 0)
        return 1;
    nb_value("ch09_busy_sp_l", "%.2f", p.sp.in_system);
    nb_value("ch09_busy_sp_lw", "%.2f", points[1] / 3600 * p.sp.mean_time);

    /* --- 09-cost.tsv --- */
    f = nb_data_open("09-cost.tsv");
    fprintf(f, "# one request at each model's default video on one H100 at 45%%, minutes\n"
               "# model\tattention\tlinear\tguidance\tvae\ttext\n");
    const video_model *models[] = {&wan, &wan13, &hy, &cog};
    const char *labels[] = {"Wan 14B 720p", "Wan 1.3B 480p", "Hunyuan 720p", "CogVideoX 480p"};
    for (int i = 0; i < 4; i++) {
        video_request m = video_request_default(models[i], &h100);
        video_estimate a = estimate(&m);
        double t = a.t_request / 60;
        fprintf(f, "\"%s\"\t%.3f\t%.3f\t%.3f\t%.3f\t%.4f\n", labels[i], t * a.share_attention, t * a.share_linear,
                t * a.share_guidance, t * a.share_vae, t * a.share_text);
    }
    fclose(f);
    printf("chapter 9 values and data written\n");
    return 0;
}
