/* Chapter 9's exercise variants: 9.1 (the first frame), 9.2 (guidance
 * doubles the bill, parts a and c), 9.3 (where attention takes over), 9.4 (batching
 * videos), 9.5 (does it fit?, parts a and c), 9.6 (one fast job or eight slow ones) and
 * 9.7 (what the journal costs, parts a and b).  The printed numbers are
 * seed 0; other seeds draw from the lists below: frame counts the VAE takes
 * (one more than a multiple of 4) and targets it does not (so that 9.1(c)
 * has a count on either side), videos of the two sizes Wan 14B was released
 * for that fit one H100 in 9.2 and 9.3, batches of two or more in 9.4,
 * lengths of 720p video in 9.5 that keep the printed regime (too big for
 * one L40S alone, inside it offloaded or split two ways), loads under the
 * capacity of both placements of 9.6 (so both queues are stable), and the
 * step counts, payloads and GPU counts of real jobs in 9.7.  9.3(a)'s
 * crossovers are the two models' own and do not vary.  9.2(b) and 9.5(b)
 * have no box: at the printed numbers they are the chapter's own worked
 * numbers, which its library tests state. */
#include "practice_chapters.h"
#include "practice_set.h"

#include "journal_format.h"
#include "practice_draw.h"
#include "specs.h"
#include "units.h"
#include "video.h"

#include <math.h>

/* ---- 9.1: Wan2.1-T2V-1.3B at 832 x 480 */

static const double ex1_frames[] = {17, 25, 33, 41, 49, 57, 65, 73, 81, 89, 97, 105, 113, 121, 129};
/* none of them 1 + 4k: each lies strictly between two counts the VAE takes */
static const double ex1_target[] = {50, 60, 75, 90, 100, 110, 120, 130, 150, 160, 175, 180, 200, 240, 250};

static int exercise_1(practice_set *s, rng_state *r)
{
    double frames = PRACTICE_DRAW(s, r, "ch09_ex1_frames", ex1_frames, 8, "%.0f");
    double target = PRACTICE_DRAW(s, r, "ch09_ex1_target", ex1_target, 4, "%.0f");
    video_model m;
    video_latent l;
    char err[256];
    if (video_model_lookup("wan2.1-1.3b", &m) != 0 || video_latent_shape(&m, (int)frames, 832, 480, &l, err, sizeof err))
        return -1;
    double per_frame = (double)l.lat_h * l.lat_w / (m.patch_s * m.patch_s); /* tokens of one latent frame */
    practice_part *p = practice_add_part(s, "9.1(a1)", 1, "latent frames", "frames", JUDGE_EXACT, l.lat_t, 0);
    practice_add_slip(p, (frames - 1) / m.stride_t, "the causal VAE keeps the first frame on its own: 1 + (F - 1) / 4");
    p = practice_add_part(s, "9.1(a2)", 1, "tokens the DiT sees", "tokens", JUDGE_EXACT, (double)l.tokens, 0);
    practice_add_slip(p, (l.lat_t - 1) * per_frame, "the first frame is a latent frame too");
    practice_add_slip(p, l.lat_t * per_frame * m.patch_s * m.patch_s,
                      "the 1 x 2 x 2 patches make one token of four latent positions");
    practice_add_slip(p, frames * per_frame, "the VAE compresses time by 4 as well as space by 8");
    p = practice_add_part(s, "9.1(b)", 1, "tokens by the colleague's estimate", "tokens", JUDGE_RELATIVE,
                          frames / m.stride_t * per_frame, JUDGE_HAND_TOL);
    practice_add_slip(p, (double)l.tokens, "that is the true count; the estimate divides the frames by the stride");
    int below, above;
    video_nearest_frames(&m, (int)target, &below, &above);
    const char *grid = "the VAE takes 1 + 4k frames: one more than a multiple of the stride";
    p = practice_add_part(s, "9.1(c1)", 1, "the largest frame count the model takes below the target", "frames",
                          JUDGE_EXACT, below, 0);
    practice_add_slip(p, below - 1, grid);
    practice_add_slip(p, above - 1, grid);
    p = practice_add_part(s, "9.1(c2)", 1, "the smallest frame count the model takes above the target", "frames",
                          JUDGE_EXACT, above, 0);
    practice_add_slip(p, above - 1, grid);
    practice_add_slip(p, above + m.stride_t - 1, grid);
    return 0;
}

/* ---- 9.2(a): one denoising step of Wan 14B with guidance (part b, one
 * forward, is the chapter's own worked number and half of a) */

static const double ex2_frames[] = {17, 21, 25, 29, 33, 37, 41, 45, 49, 53, 57, 61, 65, 69, 73, 77, 81};
/* 720p and 480p, the two sizes Wan2.1-T2V-14B was released for */
static const double ex2_width[] = {1280, 832};
static const double ex2_height[] = {720, 480};

static int exercise_2(practice_set *s, rng_state *r)
{
    double frames = practice_pick(r, s->seed, ex2_frames, PRACTICE_COUNT(ex2_frames), 16);
    int size = s->seed == 0 ? 0 : (int)rng_below(r, PRACTICE_COUNT(ex2_width));
    video_model m;
    gpu_spec h100 = gpu_builtin("h100");
    if (video_model_lookup("wan2.1-14b", &m) != 0)
        return -1;
    video_request q = video_request_default(&m, &h100);
    q.frames = (int)frames;
    q.width = (int)ex2_width[size];
    q.height = (int)ex2_height[size];
    video_estimate e;
    char err[256];
    /* the request of 9.2(c) runs on one H100: it has to fit there */
    if (video_estimate_compute(&q, &e, err, sizeof err) != 0 || !e.fits)
        return -1;
    practice_add_input(s, "ch09_ex2_frames", frames, "%.0f", PRACTICE_RANGE_OF(ex2_frames));
    practice_add_input(s, "ch09_ex2_width", ex2_width[size], "%.0f", 832, 1280);
    practice_add_input(s, "ch09_ex2_height", ex2_height[size], "%.0f", 480, 720);
    const video_forward_flops *f = &e.forward;
    practice_part *p = practice_add_part(s, "9.2(a)", 2, "FLOPs of a step with guidance", "PFLOP", JUDGE_RELATIVE,
                                         2 * f->total / 1e15, JUDGE_HAND_TOL);
    practice_add_slip(p, 2 * (f->linear + f->cross) / 1e15,
                      "self-attention over the whole video, 4 L N^2 d, is most of a step");
    practice_add_slip(p, 2 * (f->linear + f->attention / 2 + f->cross) / 1e15,
                      "attention is two matrix products (Q K^T and the weighted V): 4, not 2, L N^2 d");
    /* (b), one forward, is half of a and the chapter's own worked number
     * (its library tests print it): no box.  (c): the whole request, 50 steps on one H100; the text encoder and
     * the VAE add well under 1%, so steps x step FLOPs / (45% of the peak)
     * is a hand answer within the tolerance */
    video_estimate e1;
    q.forwards = 1;
    if (video_estimate_compute(&q, &e1, err, sizeof err) != 0 || !e1.fits)
        return -1;
    p = practice_add_part(s, "9.2(c1)", 2, "minutes of a 50-step request with guidance", "min", JUDGE_RELATIVE,
                          e.t_request / 60, JUDGE_HAND_TOL);
    practice_add_slip(p, e.t_request, "that is seconds; the part asks for minutes");
    practice_add_slip(p, e.t_request / 60 * 0.45, "the kernels reach 45% of the peak: divide by 0.45, not multiply");
    practice_add_slip(p, e1.t_request / 60, "with guidance every step runs two forwards");
    p = practice_add_part(s, "9.2(c2)", 2, "minutes of a 50-step request with guidance distilled", "min",
                          JUDGE_RELATIVE, e1.t_request / 60, JUDGE_HAND_TOL);
    practice_add_slip(p, e1.t_request, "that is seconds; the part asks for minutes");
    practice_add_slip(p, e1.t_request / 60 * 0.45, "the kernels reach 45% of the peak: divide by 0.45, not multiply");
    practice_add_slip(p, e.t_request / 60, "distilled guidance runs one forward a step, not two");
    return 0;
}

/* ---- 9.3: where attention takes over.  The crossovers of part a are the
 * models' own (M / (2 n_L d)); part b asks for frames at one of the two
 * sizes Wan 14B was released for. */

static int exercise_3(practice_set *s, rng_state *r)
{
    int size = s->seed == 0 ? 0 : (int)rng_below(r, PRACTICE_COUNT(ex2_width));
    double w = ex2_width[size], h = ex2_height[size];
    practice_add_input(s, "ch09_ex3_width", w, "%.0f", 832, 1280);
    practice_add_input(s, "ch09_ex3_height", h, "%.0f", 480, 720);
    video_model wan, hy;
    if (video_model_lookup("wan2.1-14b", &wan) != 0 || video_model_lookup("hunyuanvideo", &hy) != 0)
        return -1;
    double cw = video_linear_params_per_token(&wan) / (2.0 * wan.layers * wan.hidden);
    double ch = video_linear_params_per_token(&hy) / (2.0 * hy.layers * hy.hidden);
    practice_part *p = practice_add_part(s, "9.3(a1)", 3, "crossover tokens, Wan 14B", "tokens", JUDGE_RELATIVE, cw,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, 2 * cw, "attention is 4 n_L N^2 d against the linear layers' 2 N M: N = M / (2 n_L d)");
    practice_add_slip(p, cw / 2, "attention is 4 n_L N^2 d against the linear layers' 2 N M: N = M / (2 n_L d)");
    p = practice_add_part(s, "9.3(a2)", 3, "crossover tokens, HunyuanVideo", "tokens", JUDGE_RELATIVE, ch,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, 2 * ch, "attention is 4 n_L N^2 d against the linear layers' 2 N M: N = M / (2 n_L d)");
    practice_add_slip(p, ch / 2, "attention is 4 n_L N^2 d against the linear layers' 2 N M: N = M / (2 n_L d)");
    /* tokens of one latent frame: (h / 8 / 2) x (w / 8 / 2) */
    double per_frame = (h / (wan.stride_s * wan.patch_s)) * (w / (wan.stride_s * wan.patch_s));
    double lat = ceil(cw / per_frame), frames = 1 + wan.stride_t * (lat - 1);
    p = practice_add_part(s, "9.3(b)", 3, "frames of video at the crossover, Wan 14B", "frames", JUDGE_EXACT, frames,
                          0);
    practice_add_slip(p, wan.stride_t * lat, "the first frame is a latent frame on its own: 1 + 4 (latent - 1)");
    practice_add_slip(p, frames - wan.stride_t, "round the latent frames up: the crossover lies inside a frame");
    practice_add_slip(p, 1 + wan.stride_t * (ceil(cw / (per_frame * wan.patch_s * wan.patch_s)) - 1),
                      "the 1 x 2 x 2 patches make one token of four latent positions");
    return 0;
}

/* ---- 9.4: batching videos, a batch of two or more */

static const double ex4_batch[] = {2, 3, 4, 8};

static int exercise_4(practice_set *s, rng_state *r)
{
    double batch = PRACTICE_DRAW(s, r, "ch09_ex4_batch", ex4_batch, 0, "%.0f");
    const char *ids[2] = {"9.4(a1)", "9.4(a2)"}, *models[2] = {"wan2.1-14b", "wan2.1-1.3b"};
    const char *gpus[2] = {"h100", "l40s"};
    const char *what[2] = {"throughput gain of the batch, Wan 14B on an H100",
                           "throughput gain of the batch, Wan 1.3B on an L40S"};
    for (int i = 0; i < 2; i++) {
        video_model m;
        if (video_model_lookup(models[i], &m) != 0)
            return -1;
        gpu_spec g = gpu_builtin(gpus[i]);
        video_request q = video_request_default(&m, &g);
        double gain = video_batch_gain(&q, (int)batch);
        if (!(gain > 0))
            return -1;
        practice_part *p = practice_add_part(s, ids[i], 4, what[i], "x", JUDGE_RELATIVE, gain, JUDGE_HAND_TOL);
        practice_add_slip(p, batch, "a denoising step is compute-bound: the batch's step takes that many times longer");
    }
    return 0;
}

/* ---- 9.5: Wan 14B at 720p on one L40S: too big alone, fits offloaded or
 * split two ways (the lengths below keep that regime; the seed suite checks) */

static const double ex5_frames[] = {81, 85, 89, 93, 97, 101, 105, 109, 113, 117, 121, 125, 129, 133, 137, 141};

static int exercise_5(practice_set *s, rng_state *r)
{
    double frames = PRACTICE_DRAW(s, r, "ch09_ex5_frames", ex5_frames, 0, "%.0f");
    video_model m;
    if (video_model_lookup("wan2.1-14b", &m) != 0)
        return -1;
    gpu_spec g = gpu_builtin("l40s");
    video_estimate e[3];
    const int gpus[3] = {1, 1, 2}, offload[3] = {0, 1, 0};
    for (int i = 0; i < 3; i++) {
        video_request q = video_request_default(&m, &g);
        q.frames = (int)frames;
        q.width = 1280;
        q.height = 720;
        q.gpus = gpus[i];
        q.offload = offload[i];
        char err[256];
        if (video_estimate_compute(&q, &e[i], err, sizeof err) != 0)
            return -1;
    }
    /* (b), offloaded, is the chapter's own worked number at the printed 81
     * frames (its library tests print it): no box */
    const char *ids[3] = {"9.5(a)", NULL, "9.5(c)"};
    const char *what[3] = {"peak memory on one L40S", NULL, "peak memory per GPU, split two ways"};
    for (int i = 0; i < 3; i += 2) {
        practice_part *p = practice_add_part(s, ids[i], 5, what[i], "GB", JUDGE_RELATIVE, e[i].mem_peak / 1e9,
                                             JUDGE_HAND_TOL);
        practice_add_slip(p, e[i].mem_peak / GiB, "GB are 10^9 bytes, not 2^30");
        if (i == 0)
            practice_add_slip(p, (e[0].mem_peak - e[0].mem_text_weights) / 1e9,
                              "the text encoder's weights stay resident too unless offloaded");
        if (i == 2)
            practice_add_slip(p, e[0].mem_peak / 2e9,
                              "sequence parallelism splits the tokens: each GPU still holds all the weights");
    }
    return 0;
}

/* ---- 9.6: eight H100s, Wan 14B at 720p, as one 8-way job or eight jobs */

/* loads in half jobs an hour, the high ones up to 13, under the 8-way job's capacity */
static const double ex6_low[] = {0.5, 1, 1.5, 2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5};
static const double ex6_high[] = {6, 6.5, 7, 7.5, 8, 8.5, 9, 9.5, 10, 10.5, 11, 11.5, 12, 12.5, 13};

static int exercise_6(practice_set *s, rng_state *r)
{
    double low = practice_pick(r, s->seed, ex6_low, PRACTICE_COUNT(ex6_low), 3);
    double high = practice_pick(r, s->seed, ex6_high, PRACTICE_COUNT(ex6_high), 12);
    video_model m;
    gpu_spec h100 = gpu_builtin("h100");
    if (video_model_lookup("wan2.1-14b", &m) != 0)
        return -1;
    video_request q = video_request_default(&m, &h100);
    video_estimate one, eight;
    char err[256];
    if (video_estimate_compute(&q, &one, err, sizeof err) != 0)
        return -1;
    q.gpus = 8;
    if (video_estimate_compute(&q, &eight, err, sizeof err) != 0)
        return -1;
    /* the exercise states the request times to the second: the answers use those */
    double sp = round(eight.t_request), solo = round(one.t_request);
    practice_add_input(s, "ch09_ex6_service_sp", sp, "%.0f", sp, sp);
    practice_add_input(s, "ch09_ex6_service_one", solo, "%.0f", solo, solo);
    practice_add_input(s, "ch09_ex6_low", low, "%g", PRACTICE_RANGE_OF(ex6_low));
    practice_add_input(s, "ch09_ex6_high", high, "%g", PRACTICE_RANGE_OF(ex6_high));
    const char *ids[2][2] = {{"9.6(a1)", "9.6(a2)"}, {"9.6(b1)", "9.6(b2)"}};
    const double loads[2] = {low, high};
    for (int i = 0; i < 2; i++) {
        double lambda = loads[i] / 3600;
        double w_sp = mdc_wait_approx(lambda, sp, 1), w_ind = mdc_wait_approx(lambda, solo, 8);
        if (w_sp < 0 || w_ind < 0)
            return -1;
        practice_part *p = practice_add_part(s, ids[i][0], 6, i ? "time in system, one 8-way job at a time, high load"
                                                               : "time in system, one 8-way job at a time, low load",
                                             "min", JUDGE_RELATIVE, (w_sp + sp) / 60, JUDGE_HAND_TOL);
        practice_add_slip(p, w_sp / 60, "that is the wait; the time in system adds the service");
        practice_add_slip(p, (2 * w_sp + sp) / 60, "service is fixed (M/D/1): the wait is half the M/M/1 one");
        p = practice_add_part(s, ids[i][1], 6, i ? "time in system, eight independent jobs, high load"
                                                 : "time in system, eight independent jobs, low load",
                              "min", JUDGE_RELATIVE, (w_ind + solo) / 60, JUDGE_HAND_TOL);
        practice_add_slip(p, w_ind / 60, "that is the wait; the time in system adds the service");
        practice_add_slip(p, (2 * w_ind + solo) / 60, "service is fixed (M/D/c): the wait is about half the M/M/c one");
        practice_add_slip(p, (mdc_wait_approx(lambda / 8, solo, 1) + solo) / 60,
                          "eight GPUs sharing one queue wait less than eight queues of an eighth of the load each");
    }
    practice_part *p = practice_add_part(s, "9.6(c1)", 6, "capacity, one 8-way job at a time", "jobs/h",
                                         JUDGE_RELATIVE, 3600 / sp, JUDGE_HAND_TOL);
    practice_add_slip(p, 8 * 3600 / sp, "the eight GPUs run one job together: they are one server");
    p = practice_add_part(s, "9.6(c2)", 6, "capacity, eight independent jobs", "jobs/h", JUDGE_RELATIVE,
                          8 * 3600 / solo, JUDGE_HAND_TOL);
    practice_add_slip(p, 3600 / solo, "eight GPUs run eight jobs at once");
    return 0;
}

/* ---- 9.7: the journal of one job */

static const double ex7_steps[] = {20, 25, 30, 40, 50};
static const double ex7_payload[] = {100, 200, 500, 1000, 2000};

static const double ex7_gpus[] = {2, 4, 6, 8, 12, 16, 24, 32, 48, 64, 96, 128};

static int exercise_7(practice_set *s, rng_state *r)
{
    double steps = PRACTICE_DRAW(s, r, "ch09_ex7_steps", ex7_steps, 4, "%.0f");
    double payload = PRACTICE_DRAW(s, r, "ch09_ex7_payload", ex7_payload, 1, PRACTICE_GROUPED);
    double bytes = jq_job_journal_bytes((int)steps, (size_t)payload);
    double header = jq_job_journal_bytes(0, 0) / 2; /* SUBMIT and DONE, no payload, no step */
    practice_part *p = practice_add_part(s, "9.7(a)", 7, "journal bytes of one job", "bytes", JUDGE_EXACT, bytes, 0);
    practice_add_slip(p, bytes - header, "count the DONE record too: SUBMIT, one STEP per step, DONE");
    practice_add_slip(p, bytes - 2 * header, "SUBMIT and DONE are records too, each with its header");
    practice_add_slip(p, bytes + steps * payload, "only the SUBMIT record carries the payload");
    /* (b): GPUs each running the chapter's default Wan job, a STEP record
     * (one fsync) every step */
    double gpus = PRACTICE_DRAW(s, r, "ch09_ex7_gpus", ex7_gpus, 3, "%.0f");
    video_model m;
    gpu_spec h100 = gpu_builtin("h100");
    if (video_model_lookup("wan2.1-14b", &m) != 0)
        return -1;
    video_request q = video_request_default(&m, &h100);
    video_estimate e;
    char err[256];
    if (video_estimate_compute(&q, &e, err, sizeof err) != 0)
        return -1;
    p = practice_add_part(s, "9.7(b)", 7, "fsyncs a second", "fsync/s", JUDGE_RELATIVE, gpus / e.t_step,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, gpus / e.t_request, "a STEP record is written every step, not every job");
    practice_add_slip(p, gpus / e.t_forward, "a step with guidance runs two forwards");
    practice_add_slip(p, 1 / e.t_step, "each GPU journals its own steps");
    return 0;
}

int practice_build_ch09(uint64_t seed, practice_set *out)
{
    /* one stream per exercise, so a change to one leaves the others' draws */
    rng_state st[7];
    practice_streams(seed, st, 7);
    rng_state r1 = st[0], r6 = st[1], r7 = st[2], r2 = st[3], r3 = st[4], r4 = st[5], r5 = st[6];
    if (exercise_1(out, &r1) != 0 || exercise_2(out, &r2) != 0 || exercise_3(out, &r3) != 0 ||
        exercise_4(out, &r4) != 0 || exercise_5(out, &r5) != 0 || exercise_6(out, &r6) != 0 ||
        exercise_7(out, &r7) != 0)
        return -1;
    return 0;
}
