/* Chapter 9 exercises: the arithmetic of a video diffusion request and of a
 * queue of them.
 *
 * Model keys are those of code/specs/video_models.tsv ("wan2.1-14b",
 * "hunyuanvideo"), GPU keys those of code/specs/gpus.tsv ("h100").  Times
 * are at 45% of the GPU's dense bf16 peak, weights and activations in bf16,
 * 8 VAE tiles, as in the chapter.  Every function returns NAN (or -1 for a
 * count) for input it cannot use, and never crashes. */
#ifndef EXERCISES_09_VIDEO_DIFFUSION_H
#define EXERCISES_09_VIDEO_DIFFUSION_H

/* Latent frames of a causal VAE with temporal stride stride_t; -1 when the
 * frame count does not fit the stride. */
int ex09_latent_frames(int frames, int stride_t);
/* Video tokens N of a model at frames x width x height; -1 when invalid. */
long ex09_tokens(const char *model_key, int frames, int width, int height);
/* FLOP of one denoising step with `forwards` DiT passes (2 with guidance). */
double ex09_step_flop(const char *model_key, int frames, int width, int height, int forwards);
/* The sequence length at which attention's FLOPs equal the linear layers'. */
double ex09_attention_crossover_tokens(const char *model_key);
/* Throughput gain of batching `batch` requests (the model's default video)
 * into one step on one GPU: batch x t(1) / t(batch). */
double ex09_batch_gain(const char *model_key, const char *gpu_key, int batch);
/* Peak memory per GPU in bytes, with `gpus`-way sequence parallelism, and
 * offloading (1) or not (0). */
double ex09_peak_memory(const char *model_key, const char *gpu_key, int frames, int width, int height, int gpus,
                        int offload);
/* Mean time in system, seconds, of an M/D/c queue (Poisson arrivals at
 * jobs_per_hour, fixed service of service_s, c servers), by the chapter's
 * approximation; NAN when the queue is unstable. */
double ex09_mdc_time(double jobs_per_hour, double service_s, int servers);
/* Journal bytes one job leaves behind when it completes: its SUBMIT record
 * with the payload, one STEP record per step, and its DONE record, each
 * record a 32-byte header. */
double ex09_journal_bytes(int steps, int payload_bytes);

#endif
