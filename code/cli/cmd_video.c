/* napkin video: one text-to-video diffusion request on a GPU type.  The
 * latent and its tokens, FLOPs per forward, step and request (attention's
 * share), memory per GPU, time per step and per request with G-way sequence
 * parallelism, GPU-seconds and money per video, where the time goes, and for
 * an arrival rate the queue with one parallel job at a time against G
 * independent jobs. */
#include "cli_band.h"
#include "cli_device.h"
#include "commands.h"
#include "video.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

/* Beside each calibrated row (cli_band.h): why it has no measured error band. */
static const char NO_RUN_LIKE_IT[] = "no measured run like this one (the serving runs are of language models)";

static const cli_doc video_doc = {
    .name = "video",
    .summary = "one video diffusion request: latent, FLOPs, memory, time, cost, and the queue at a rate",
    .usage = "[--model M] [--frames F] [--width W] [--height H] [--steps S] [--gpu G] [--gpus N] "
             "[--efficiency E] [--price P] [--rate R]\n"
             "                     [--calibrate DIR|NAME | --roofline]",
    .details = "FLOPs per forward: linear 2 S P_tok plus attention 4 L S^2 d over the latent's tokens S;\n"
               "two forwards per step with classifier-free guidance, one when it is distilled.  Time is FLOPs\n"
               "at --efficiency of the GPU's dense bf16 peak, over --gpus sequence-parallel GPUs at the\n"
               "efficiency of HunyuanVideo's published xDiT scaling (or --sp-efficiency).  With --rate (jobs\n"
               "per hour), the queue is simulated for one G-way job at a time and for G independent jobs.\n"
               "Frames must be 1 + a multiple of the VAE's temporal stride (81 = 1 + 4 x 20).\n"
               "Beside it, the calibrated answer prices the same work at the achieved bf16 GEMM rates fitted\n"
               "to published kernel measurements (napkin calibrate) in place of --efficiency: by default the\n"
               "GPU's published set (h100, h200), or --calibrate NAME; --calibrate DIR times both answers on a\n"
               "measured set's ceilings (a CPU set is a device of its own: no --gpu); --roofline gives the first\n"
               "answer alone.",
};

static void report_calibrated(report *rep, const device_setup *d, const video_estimate *e, double price)
{
    if (!device_report_calibrated(rep, d, "the same request", "in place of --efficiency"))
        return;
    report_num(rep, "t_step_calibrated", "one step, calibrated", U_SECONDS, e->t_step);
    cli_band_none(rep, "t_step_calibrated", NO_RUN_LIKE_IT);
    report_num(rep, "t_denoise_calibrated", "all steps, calibrated", U_SECONDS, e->t_denoise);
    cli_band_none(rep, "t_denoise_calibrated", NO_RUN_LIKE_IT);
    report_num(rep, "t_vae_calibrated", "VAE decode, calibrated", U_SECONDS, e->t_vae);
    cli_band_none(rep, "t_vae_calibrated", NO_RUN_LIKE_IT);
    report_num(rep, "t_request_calibrated", "one request, calibrated", U_SECONDS, e->t_request);
    cli_band_none(rep, "t_request_calibrated", NO_RUN_LIKE_IT);
    report_num(rep, "gpu_seconds_calibrated", "GPU-seconds per video, calibrated", U_SECONDS, e->gpu_seconds);
    cli_band_none(rep, "gpu_seconds_calibrated", NO_RUN_LIKE_IT);
    if (price > 0) {
        report_num(rep, "cost_calibrated", "cost per video, calibrated", U_REAL, e->cost);
        cli_band_none(rep, "cost_calibrated", NO_RUN_LIKE_IT);
    }
}

typedef struct {
    device_flags device;
    const char *model_key, *video_table;
    int frames, width, height, steps, forwards, gpus, offload, tiles, sim_jobs;
    double efficiency, sp_eff, price, rate;
} video_flags;

static int parse(int argc, char **argv, video_flags *f, cli_common *common)
{
    *f = (video_flags){.device = device_flags_default(DEVICE_PRICING, "h100"), .model_key = "wan2.1-14b",
                       .gpus = 1, .tiles = 8, .sim_jobs = 20000, .efficiency = 0.45};
    cli_opt opts[16 + 2 * DEVICE_NOPTS_MAX];
    const cli_opt request[] = {
        {"--model", OPT_STRING, &f->model_key, "M", "video model (default wan2.1-14b)", 0, 0},
        {"--frames", OPT_POS_INT, &f->frames, "F", "frames (default: the model's, 81 for Wan2.1)", 0, 0},
        {"--width", OPT_POS_INT, &f->width, "W", "pixels (default: the model's)", 0, 0},
        {"--height", OPT_POS_INT, &f->height, "H", "pixels (default: the model's)", 0, 0},
        {"--steps", OPT_POS_INT, &f->steps, "S", "denoising steps (default: the model's)", 0, 0},
        {"--forwards", OPT_POS_INT, &f->forwards, "K",
         "DiT passes per step: 2 guidance, 1 distilled (default: model)", 0, 0},
    };
    const cli_opt serving[] = {
        {"--gpus", OPT_POS_INT, &f->gpus, "N", "sequence-parallel GPUs per job (default 1)", 0, 0},
        /* the share a DiT forward reaches, not a device derating: the calibrated answer stands in for it */
        {"--efficiency", OPT_FRACTION, &f->efficiency, "E", "share of the dense bf16 peak reached (default 0.45)", 0,
         0},
        {"--sp-efficiency", OPT_FRACTION, &f->sp_eff, "E", "sequence-parallel efficiency (default: published table)",
         0, 0},
        {"--price", OPT_POS_REAL, &f->price, "P", "money per GPU-hour (default: no cost shown)", 0, 0},
        {"--rate", OPT_POS_REAL, &f->rate, "R", "arrivals, jobs per hour (default: no queue)", 0, 0},
        {"--offload", OPT_FLAG, &f->offload, NULL, "keep only the running phase's weights on the GPU", 0, 0},
        {"--vae-tiles", OPT_POS_INT, &f->tiles, "T", "VAE decode in T tiles (default 8)", 0, 0},
        {"--jobs", OPT_POS_INT, &f->sim_jobs, "J", "jobs simulated for the queue (default 20000)", 0, 0},
        {"--video-table", OPT_STRING, &f->video_table, "FILE",
         "video models from FILE (default: DIR/video_models.tsv with --specs DIR, else built in)", 0, 0},
    };
    int n = CLI_NOPTS(request);
    memcpy(opts, request, sizeof request);
    n += device_flag_opts(&f->device, DEVICE_GPU, opts + n);
    memcpy(opts + n, serving, sizeof serving);
    n += CLI_NOPTS(serving);
    n += device_flag_opts(&f->device, DEVICE_CALIBRATE | DEVICE_ROOFLINE, opts + n);
    return cli_parse(&video_doc, argc, argv, opts, n, common);
}

static int check(const video_flags *f)
{
    if (f->forwards > 2)
        return cli_fail("video", EXIT_USAGE, "--forwards: %d is not 1 (distilled) or 2 (guidance)", f->forwards);
    if (f->sim_jobs < 100) /* the upper bound is in cli_args.c's table */
        return cli_fail("video", EXIT_USAGE, "--jobs: %d is out of range: from 100 to 50000", f->sim_jobs);
    return 0;
}

/* The video model and the device. */
typedef struct {
    video_model_table vt;
    cli_specs specs;
    const video_model *m;
    device_setup device;
} video_resolved;

static int resolve(const video_flags *f, const cli_common *common, video_resolved *u)
{
    char err[512];
    /* --video-table FILE, else DIR/video_models.tsv under --specs DIR when it is there, else built in */
    const char *table = f->video_table;
    char specs_path[4096];
    if (!table && common->specs_dir) {
        snprintf(specs_path, sizeof specs_path, "%s/video_models.tsv", common->specs_dir);
        FILE *probe = fopen(specs_path, "r");
        if (probe) {
            fclose(probe);
            table = specs_path;
        }
    }
    int rc = table ? video_model_table_load(table, &u->vt, err, sizeof err)
                   : video_model_table_builtin(&u->vt, err, sizeof err);
    if (rc != 0)
        return cli_fail("video", table ? EXIT_USAGE : 1, "%s", err);
    int row;
    if ((rc = cli_find_key("video", "--model", "video model", f->model_key, SPEC_ROWS(&u->vt), &row)) != 0)
        return rc;
    u->m = &u->vt.rows[row];
    if ((rc = cli_specs_load("video", common, &u->specs)) != 0)
        return rc;
    /* a diffusion transformer computes in bf16 (video.h) */
    return device_setup_resolve("video", &u->specs, &f->device, DT_BF16, &u->device);
}

/* A request that does not fit: the most frames that do at its size. */
static int does_not_fit(const video_request *r, const video_estimate *e)
{
    char need[32], have[32];
    int best = video_max_frames_that_fit(r);
    fmt_bytes(e->mem_peak, need, sizeof need);
    fmt_bytes(e->mem_capacity, have, sizeof have);
    if (best > 0)
        return cli_fail("video", EXIT_NO_FIT,
                        "does not fit: %s per GPU, the %s has %s; the largest that fits at %dx%d is --frames %d%s",
                        need, r->gpu->key, have, r->width, r->height, best, r->offload ? "" : " (or try --offload)");
    return cli_fail("video", EXIT_NO_FIT, "does not fit: %s per GPU, the %s has %s; not even one frame fits%s", need,
                    r->gpu->key, have, r->offload ? "" : " (try --offload)");
}

/* The request at --efficiency and at measured kernel rates, and its queue at --rate. */
typedef struct {
    video_request r;
    video_latent lat;
    video_estimate e, e_cal;
    video_placement p;
} video_answer;

static int compute(const video_flags *f, const video_resolved *u, video_answer *a)
{
    const video_model *m = u->m;
    video_request *r = &a->r;
    *r = video_request_default(m, &u->device.timed);
    r->frames = f->frames ? f->frames : m->frames;
    r->width = f->width ? f->width : m->width;
    r->height = f->height ? f->height : m->height;
    r->steps = f->steps ? f->steps : m->steps;
    r->forwards = f->forwards ? f->forwards : m->forwards;
    r->gpus = f->gpus;
    r->efficiency = f->efficiency;
    r->sp_efficiency = f->sp_eff;
    r->price = f->price;
    r->offload = f->offload;
    r->vae_tiles = f->tiles;
    char err[512];
    if (video_latent_shape(m, r->frames, r->width, r->height, &a->lat, err, sizeof err) != 0)
        return cli_fail("video", EXIT_USAGE, "%s %s",
                        strstr(err, "frames do not") || strstr(err, "smallest valid") ? "--frames:"
                        : strstr(err, "at most")                                      ? "--frames/--width/--height:"
                                                                                      : "--width/--height:",
                        err);
    if (video_estimate_compute(r, &a->e, err, sizeof err) != 0) {
        if (strstr(err, "beyond"))
            return cli_fail("video", EXIT_USAGE, "--gpus: %d: %s (--sp-efficiency E)", f->gpus, err);
        return cli_fail("video", EXIT_USAGE, "%s", err);
    }
    if (!a->e.fits)
        return does_not_fit(r, &a->e);
    /* the fitted achieved shares stand in for --efficiency: applying both would count the distance twice */
    memset(&a->e_cal, 0, sizeof a->e_cal);
    rated_device cal = device_rated(&u->device);
    if (cal.have) {
        video_request rc_req = *r;
        rc_req.gpu = &cal.gpu;
        rc_req.efficiency = 1.0;
        if (video_estimate_compute(&rc_req, &a->e_cal, err, sizeof err) != 0)
            return cli_fail("video", EXIT_USAGE, "%s", err);
    }
    if (f->rate > 0 && video_placements(r, f->rate, f->sim_jobs, 1, &a->p, err, sizeof err) != 0)
        return cli_fail("video", EXIT_USAGE, "%s", err);
    return 0;
}

static void report_request(report *rep, const video_flags *f, const video_resolved *u, const video_answer *a)
{
    const video_request *r = &a->r;
    const video_latent *lat = &a->lat;
    const video_estimate *e = &a->e;
    report_section(rep, "request");
    report_text(rep, "model", "model", u->m->key);
    report_text(rep, "gpu", "GPU", r->gpu->key);
    device_report_measured(rep, &u->device);
    report_int(rep, "gpus", "sequence-parallel GPUs", f->gpus);
    report_int(rep, "frames", "frames", r->frames);
    report_int(rep, "width", "width", r->width);
    report_int(rep, "height", "height", r->height);
    report_int(rep, "steps", "denoising steps", r->steps);
    report_int(rep, "forwards", "DiT passes per step", e->forwards);

    report_section(rep, "latent");
    report_int(rep, "latent_frames", "latent frames 1 + (F - 1) / stride", lat->lat_t);
    report_int(rep, "latent_height", "latent height", lat->lat_h);
    report_int(rep, "latent_width", "latent width", lat->lat_w);
    report_num(rep, "tokens", "video tokens N", U_TOKENS, (double)lat->tokens);
    report_num(rep, "sequence", "attention sequence S", U_TOKENS, (double)lat->sequence);

    report_section(rep, "FLOPs");
    report_num(rep, "flop_linear", "linear, one forward", U_FLOP, e->forward.linear);
    report_num(rep, "flop_attention", "attention, one forward", U_FLOP, e->forward.attention + e->forward.cross);
    report_num(rep, "flop_forward", "one forward", U_FLOP, e->forward.total);
    report_num(rep, "attention_share", "attention share of a forward", U_REAL, e->forward.attention_share);
    report_num(rep, "flop_step", "one step", U_FLOP, e->flop_step);
    report_num(rep, "flop_request", "one request (text encoder and VAE included)", U_FLOP, e->flop_request);
    report_num(rep, "intensity", "arithmetic intensity of a forward", U_INTENSITY, e->intensity);
    report_num(rep, "ridge", "GPU ridge (bf16)", U_INTENSITY, e->ridge);
    report_text(rep, "bound", "a step at batch 1 is", bound_name(e->bound));
    report_num(rep, "batch2_gain", "throughput gain of batching two requests", U_REAL, video_batch_gain(r, 2));
}

static void report_memory_and_time(report *rep, const device_setup *d, const video_flags *f,
                                   const video_estimate *e)
{
    report_section(rep, "memory per GPU");
    report_num(rep, "mem_dit_weights", "DiT weights", U_BYTES, e->mem_dit_weights);
    report_num(rep, "mem_text_weights", "text encoder weights", U_BYTES, e->mem_text_weights);
    report_num(rep, "mem_dit_act", "DiT activations (one block)", U_BYTES, e->mem_dit_act);
    report_num(rep, "mem_vae_act", "VAE decode activations (one tile)", U_BYTES, e->mem_vae_act);
    report_num(rep, "mem_peak", "peak", U_BYTES, e->mem_peak);
    report_num(rep, "mem_capacity", "GPU memory usable (90% of the driver's)", U_BYTES, e->mem_capacity);

    device_report_first(rep, d, f->efficiency, "time");
    report_num(rep, "sp_efficiency", "sequence-parallel efficiency", U_REAL, e->sp_eff);
    report_num(rep, "t_step", "one step", U_SECONDS, e->t_step);
    report_num(rep, "t_denoise", "all steps", U_SECONDS, e->t_denoise);
    report_num(rep, "t_vae", "VAE decode", U_SECONDS, e->t_vae);
    report_num(rep, "t_request", "one request", U_SECONDS, e->t_request);
    report_num(rep, "gpu_seconds", "GPU-seconds per video", U_SECONDS, e->gpu_seconds);
    if (f->price > 0)
        report_num(rep, "cost", "cost per video (at --price per GPU-hour)", U_REAL, e->cost);
    report_num(rep, "share_attention", "time share: attention", U_REAL, e->share_attention);
    report_num(rep, "share_linear", "time share: linear layers", U_REAL, e->share_linear);
    report_num(rep, "share_guidance", "time share: the guidance pass", U_REAL, e->share_guidance);
    report_num(rep, "share_vae", "time share: VAE decode", U_REAL, e->share_vae);
    report_num(rep, "share_text", "time share: text encoder", U_REAL, e->share_text);
}

/* The two queues at --rate: one sequence-parallel job at a time, and independent jobs. */
static void report_queue(report *rep, const video_flags *f, const video_request *r, const video_placement *p)
{
    report_section(rep, "queue: one sequence-parallel job at a time");
    report_num(rep, "rate", "arrivals (jobs per hour)", U_REAL, f->rate);
    report_num(rep, "sp_service", "service time", U_SECONDS, p->service_sp);
    report_num(rep, "sp_utilization", "utilisation", U_REAL, p->rho_sp);
    if (p->stable_sp) {
        report_num(rep, "sp_wait", "mean wait", U_SECONDS, p->sp.mean_wait);
        report_num(rep, "sp_p95", "p95 time in system", U_SECONDS, p->sp.p95_time);
    }
    report_section(rep, "queue: independent jobs, one per GPU");
    report_num(rep, "ind_service", "service time", U_SECONDS, p->service_independent);
    report_num(rep, "ind_utilization", "utilisation", U_REAL, p->rho_independent);
    if (p->stable_independent && p->fits_independent) {
        report_num(rep, "ind_wait", "mean wait", U_SECONDS, p->independent.mean_wait);
        report_num(rep, "ind_p95", "p95 time in system", U_SECONDS, p->independent.p95_time);
    }
    if (!p->stable_sp)
        report_note(rep, "one parallel job at a time: utilisation %.2f >= 1, the queue grows without bound", p->rho_sp);
    if (!p->fits_independent)
        report_note(rep, "independent jobs: one request does not fit one %s", r->gpu->key);
    else if (!p->stable_independent)
        report_note(rep, "independent jobs: utilisation %.2f >= 1, the queue grows without bound",
                    p->rho_independent);
    if (p->jobs_sp > 0 || p->jobs_independent > 0)
        report_note(rep, "queue simulated over %ld Poisson arrivals with fixed service (M/D/c)",
                    p->jobs_sp > p->jobs_independent ? p->jobs_sp : p->jobs_independent);
    else
        report_note(rep, "neither queue is stable: nothing was simulated");
    if (p->jobs_independent > 0 && p->jobs_independent < f->sim_jobs)
        report_note(rep, "the independent queue measured %ld arrivals, not --jobs %d: %d servers x arrivals is "
                         "held to the simulation's work limit of %.0f",
                    p->jobs_independent, f->sim_jobs, f->gpus, MDC_WORK_LIMIT);
}

int cmd_video(int argc, char **argv)
{
    video_flags f;
    cli_common common;
    int rc = parse(argc, argv, &f, &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    if ((rc = check(&f)) != 0)
        return rc;
    video_resolved u = {0};
    video_answer a;
    report *rep = NULL;
    if ((rc = resolve(&f, &common, &u)) != 0 || (rc = compute(&f, &u, &a)) != 0)
        goto out;
    rep = report_new("video");
    report_request(rep, &f, &u, &a);
    report_memory_and_time(rep, &u.device, &f, &a.e);
    if (f.rate > 0)
        report_queue(rep, &f, &a.r, &a.p);
    report_calibrated(rep, &u.device, &a.e_cal, f.price);
    report_note(rep, "time is FLOPs at %.0f%% of the dense bf16 peak; the VAE runs on one GPU", 100 * f.efficiency);
    rc = report_print(rep, common.format, stdout);
out:
    report_free(rep);
    cli_specs_free(&u.specs);
    video_model_table_free(&u.vt);
    return rc;
}
