/* Video diffusion requests: a text-to-video DiT denoises a latent the size of
 * a small film for tens of steps, and a 3D VAE decodes it into pixels.
 *
 *   latent frames   1 + (F - 1) / stride_t      (the first frame is kept whole)
 *   latent grid     H / stride_s  x  W / stride_s
 *   tokens N        latent frames / patch_t  x  grid / patch_s^2
 *   one forward     linear 2 N P_tok  +  attention 4 L S^2 d  (+ cross-attention 4 L N T d)
 *                   P_tok = L (proj d^2 + 2 d ffn), S = N (+ T text tokens when joint)
 *   one step        forwards x one forward   (2 with classifier-free guidance)
 *   one request     steps x one step + text encoder + VAE decode
 *
 * Memory per GPU: DiT and text-encoder weights, the activations of one block
 * at N / G tokens with flash-style attention (no N^2 term), the VAE decoder's
 * full-resolution activations split into tiles; offloading keeps only the
 * phase that runs resident.  Time: FLOP at a stated efficiency of the GPU's
 * dense peak, divided over G sequence-parallel GPUs at an efficiency that
 * falls with G (the HunyuanVideo xDiT table by default).  Everything here is
 * for one request; the queue functions below put many of them in line. */
#ifndef NAPKIN_VIDEO_H
#define NAPKIN_VIDEO_H

#include "rng.h"
#include "roofline.h"
#include "specs.h"

#include <stddef.h>
#include <stdint.h>

typedef enum { TEXT_CROSS, TEXT_JOINT } video_text_mode;

typedef struct {
    char key[SPEC_KEY_MAX];
    char name[SPEC_NAME_MAX];
    int layers, hidden, heads, ffn;
    int proj;           /* d x d projections per block a video token passes */
    double params;      /* DiT parameters (published size) */
    int stride_t, stride_s, latent_channels, patch_t, patch_s;
    int text_tokens;
    video_text_mode text_mode;
    double text_encoder_params;
    int vae_channels;
    double vae_flop_per_pixel;
    int steps;          /* default denoising steps */
    int forwards;       /* DiT passes per step: 2 with guidance, 1 distilled */
    int frames, width, height; /* default video */
    char source[SPEC_SOURCE_MAX];
} video_model;

typedef struct {
    video_model *rows;
    int n;
} video_model_table;

/* Parse, load, the built-in table (code/specs/video_models.tsv); errors as
 * "file:line: field 'x': reason". */
int video_model_table_parse(const char *text, const char *filename, video_model_table *out, char *err,
                            size_t errlen);
int video_model_table_load(const char *path, video_model_table *out, char *err, size_t errlen);
int video_model_table_builtin(video_model_table *out, char *err, size_t errlen);
void video_model_table_free(video_model_table *t);
const video_model *video_model_find(const video_model_table *t, const char *key);
char *video_model_keys(const video_model_table *t, char *buf, size_t n);
/* The built-in row for key copied into *out: 0, or -1 when unknown. */
int video_model_lookup(const char *key, video_model *out);
/* The built-in row or exit(1) with a message (for programs). */
video_model video_model_builtin(const char *key);

/* ------------------------------------------------------------- the latent */

/* 1 + (F - 1) / stride_t, or -1 when F - 1 is not a multiple of stride_t. */
int video_latent_frames(const video_model *m, int frames);
/* The valid frame counts nearest F: *below <= F <= *above (below is 0 when
 * there is none). */
void video_nearest_frames(const video_model *m, int frames, int *below, int *above);

typedef struct {
    int frames, width, height;
    int lat_t, lat_h, lat_w; /* latent shape */
    long tokens;             /* video tokens N */
    long sequence;           /* self-attention sequence S: N, plus the text when joint */
} video_latent;

#define VIDEO_MAX_FRAMES 100000
#define VIDEO_MAX_SIDE 65536
/* 0, or -1 with a message: frames off the temporal stride (naming the
 * nearest valid counts), a side not a multiple of stride_s * patch_s. */
int video_latent_shape(const video_model *m, int frames, int width, int height, video_latent *out, char *err,
                       size_t errlen);

/* -------------------------------------------------------------- the FLOPs */

/* Parameters each video token passes through: L (proj d^2 + 2 d ffn). */
double video_linear_params_per_token(const video_model *m);

typedef struct {
    double linear;    /* 2 S P_tok */
    double attention; /* 4 L S^2 d: QK^T and AV over the whole sequence */
    double cross;     /* cross-attention to the text: 4 L N T d + text k, v projections */
    double total;
    double attention_share; /* (attention + cross) / total */
} video_forward_flops;

video_forward_flops video_forward_flop(const video_model *m, const video_latent *l);
/* Text encoder over the prompt, once per guidance branch: 2 P_te T forwards. */
double video_text_encoder_flop(const video_model *m, int forwards);
/* VAE decode: FLOP per output pixel x frames x width x height. */
double video_vae_decode_flop(const video_model *m, const video_latent *l);

/* Bytes one forward moves at `bytes_per_elem`: every weight once, and each
 * block's activations in and out (S (6 d + 2 ffn) per block). */
double video_forward_bytes(const video_model *m, const video_latent *l, double bytes_per_elem);

/* ------------------------------------------------ sequence parallelism */

/* Efficiency of G-way sequence parallelism, speedup / G, from HunyuanVideo's
 * published xDiT latencies (1280x720, 129 frames, 50 steps): 1904.08, 934.09,
 * 514.08, 337.58 s on 1, 2, 4, 8 GPUs; capped at 1 and interpolated in log2 G.
 * Returns -1 beyond 8 GPUs, where there is no published figure. */
double video_sp_efficiency(int gpus);
#define VIDEO_SP_TABLE_MAX_GPUS 8

/* --------------------------------------------------------- one request */

typedef struct {
    const video_model *model;
    const gpu_spec *gpu;
    int frames, width, height;
    int steps;
    int forwards;        /* DiT passes per step (0 = the model's) */
    int gpus;            /* sequence-parallel degree G */
    double efficiency;   /* share of the dense bf16 peak the kernels reach */
    double sp_efficiency;/* <= 0: video_sp_efficiency(G) */
    double price;        /* money per GPU-hour (0 = not given) */
    int offload;         /* 1: only the running phase's weights are resident */
    int vae_tiles;       /* VAE decode in this many tiles (>= 1) */
    double bytes_per_elem; /* 2 for bf16 weights and activations */
} video_request;

/* Defaults: the model's default video and steps, 1 GPU, efficiency 0.45,
 * bf16, no offload, 8 VAE tiles. */
video_request video_request_default(const video_model *m, const gpu_spec *g);

typedef struct {
    video_latent latent;
    video_forward_flops forward;
    int forwards, steps;
    double flop_step, flop_denoise, flop_text, flop_vae, flop_request;
    /* roofline of one forward on one GPU at batch 1 */
    double bytes_forward, intensity, ridge;
    bound_kind bound;
    /* memory per GPU, bytes */
    double mem_dit_weights, mem_text_weights, mem_dit_act, mem_vae_act, mem_peak, mem_capacity;
    int fits;
    /* time */
    double sp_eff;
    double t_forward, t_step, t_denoise, t_text, t_vae, t_request; /* seconds, wall */
    double gpu_seconds, cost;
    /* where the GPU-seconds go (shares sum to 1) */
    double share_attention, share_linear, share_guidance, share_vae, share_text;
} video_estimate;

/* 0, or -1 with a message for bad input.  A request that does not fit is
 * still estimated, with fits = 0. */
int video_estimate_compute(const video_request *r, video_estimate *out, char *err, size_t errlen);

/* The largest valid frame count <= r->frames whose request fits a GPU's
 * memory at r's resolution and GPUs; 0 when not even one frame fits. */
int video_max_frames_that_fit(const video_request *r);

/* Time of one denoising step (every guidance forward) for a batch of b
 * identical requests on one GPU (roofline at the request's efficiency):
 * compute-bound steps grow in proportion to b. */
double video_batch_step_time(const video_request *r, int batch);
/* Throughput gain of a batch of b over b runs alone: b t(1) / t(b). */
double video_batch_gain(const video_request *r, int batch);

/* ------------------------------------------------------------ the queue */

/* Erlang C: the chance an arrival waits in M/M/c at offered load a = lambda S
 * (c servers, a < c); -1 for bad input. */
double erlang_c(int c, double offered);
/* M/M/c mean wait Wq; -1 when unstable. */
double mmc_wait(double lambda, double service, int c);
/* M/D/c mean wait by the usual approximation Wq(M/D/c) ~ Wq(M/M/c) / 2
 * (exact at c = 1, where it is the M/D/1 formula). */
double mdc_wait_approx(double lambda, double service, int c);

/* M/D/1, first come first served, exactly: P(wait <= t) by Erlang's formula
 * (NAN for bad input, rho >= 1, or a t so far in the tail that the
 * alternating sum loses its digits, about lambda t > 25), and the q-quantile
 * of the time in system (wait plus the service), seconds. */
double md1_wait_cdf(double lambda, double service, double t);
double md1_time_quantile(double lambda, double service, double q);

typedef enum { MDC_FIXED, MDC_EXPONENTIAL } mdc_service;

typedef struct {
    double lambda;  /* arrivals per second (Poisson) */
    double service; /* seconds per job */
    mdc_service dist;
    int servers;    /* c */
    long jobs, warmup;
} mdc_config;

typedef struct {
    double mean_wait, mean_time, p95_time, p50_time;
    double utilization; /* busy server-seconds / (c x span) */
    double in_system;   /* time-average jobs present, over the measured span */
    double throughput;
    long measured;
} mdc_stats;

/* First-come-first-served c servers; deterministic for a generator state.
 * 0, or -1 with a message (bad input, rho >= 1, out of memory). */
int mdc_simulate(const mdc_config *c, rng_state *r, mdc_stats *out, char *err, size_t errlen);

/* G GPUs, two placements at one arrival rate: one G-way sequence-parallel job
 * at a time (one server, service t_request at G) or G independent jobs (G
 * servers, service t_request at 1 GPU). */
typedef struct {
    double service_sp, service_independent;
    double rho_sp, rho_independent;
    int stable_sp, stable_independent;
    int fits_sp, fits_independent; /* the request fits one GPU's memory at G, at 1 */
    mdc_stats sp, independent; /* valid when stable */
    long jobs_sp, jobs_independent; /* arrivals each simulation measured (0: not simulated) */
} video_placement;

/* The simulation's work limit: arrivals (warm-up included) times servers,
 * each arrival scanning every server for the one that frees first.  A
 * simulation that would exceed it measures fewer arrivals instead. */
#define MDC_WORK_LIMIT 5000000.0

int video_placements(const video_request *r, double jobs_per_hour, long jobs, uint64_t seed,
                     video_placement *out, char *err, size_t errlen);

#endif
