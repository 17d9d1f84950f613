/* Chapter 1 exercises: the decode roofline.
 *
 * Keys are those of code/specs/gpus.tsv and models.tsv ("h100", "llama3-70b");
 * dtypes are "bf16", "fp8", "int8", ...  Every function returns NAN (or -1
 * for a count) when a key, a dtype or a shape is invalid, and never crashes.
 * Memory is in bytes, time in seconds, rates per second. */
#ifndef EXERCISES_01_DECODE_ROOFLINE_H
#define EXERCISES_01_DECODE_ROOFLINE_H

/* FLOP per byte at which a GPU's compute time equals its memory time:
 * the dense peak of `compute_dtype` over the HBM bandwidth. */
double ex01_ridge(const char *gpu_key, const char *compute_dtype);

/* The ridge of a part no one sells: the tensor cores of `cores_gpu` fed by
 * the memory of `memory_gpu` (the H200 is the H100's cores on faster memory). */
double ex01_ridge_swapped(const char *cores_gpu, const char *memory_gpu, const char *compute_dtype);

/* The decode batch at which a weight projection reaches the ridge, counting
 * weight bytes only: weights stored at `weight_dtype`, math at the
 * `compute_dtype` rate. */
double ex01_ridge_batch(const char *gpu_key, const char *weight_dtype, const char *compute_dtype);

/* K and V of every layer for one token, whole model. */
double ex01_kv_bytes_per_token(const char *model_key, const char *kv_dtype);

/* The factor by which sizing the cache with the attention heads instead of
 * the KV heads overstates it. */
double ex01_head_sizing_error(const char *model_key);

/* Largest number of sequences of `context` tokens whose KV cache fits on one
 * GPU of a tp-way replica, when the server may use `usable_fraction` of HBM
 * and keeps `reserve_bytes` per GPU for activations.  0 when none fit; -1 for
 * bad input. */
int ex01_max_batch(const char *model_key, const char *gpu_key, int tp, int context,
                   const char *weight_dtype, const char *kv_dtype, double usable_fraction,
                   double reserve_bytes);

/* In one decode step on one GPU (everything stored in `dtype`), the bytes
 * of KV cache moved over the bytes of weights read. */
double ex01_kv_to_weight_ratio(const char *model_key, int tp, int batch, int context, const char *dtype);

/* Roofline time of one decode step (everything in `dtype`); a token per
 * sequence comes out of every step.  NAN when the batch's KV cache does not
 * fit (the library's default memory policy: memory_fit). */
double ex01_step_time(const char *model_key, const char *gpu_key, int tp, int batch, int context,
                      const char *dtype);

/* FLOP over bytes of the whole decode step (everything in `dtype`): weights,
 * KV cache and activations, projections and attention together. */
double ex01_step_intensity(const char *model_key, int tp, int batch, int context, const char *dtype);

/* Parameters stored, and parameters one token uses (they differ for a
 * mixture of experts). */
double ex01_total_params(const char *model_key);
double ex01_active_params(const char *model_key);

/* Weight bytes one decode step reads on one GPU (tp = 1), everything in
 * `dtype`: for a mixture of experts this grows with the batch as more
 * experts are touched. */
double ex01_decode_weight_bytes(const char *model_key, int batch, const char *dtype);

#endif
