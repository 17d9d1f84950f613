/* Chapter 1 fill-in kit.  Replace each TODO body with your own derivation,
 * then run `make exercise N=01`.  You may call the napkin library (specs.h
 * gives the tables, units.h the dtype sizes) or work from the numbers in
 * code/specs/gpus.tsv and models.tsv directly.  Return NAN (or -1) for
 * input you cannot use. */
#include "01-decode-roofline.h"

#include <math.h>

double ex01_ridge(const char *gpu_key, const char *compute_dtype)
{
    /* TODO: peak FLOP/s of compute_dtype over HBM bytes/s. */
    return NAN;
}

double ex01_ridge_swapped(const char *cores_gpu, const char *memory_gpu, const char *compute_dtype)
{
    /* TODO: the peak of cores_gpu over the bandwidth of memory_gpu. */
    return NAN;
}

double ex01_ridge_batch(const char *gpu_key, const char *weight_dtype, const char *compute_dtype)
{
    /* TODO: a projection at batch B does 2*B FLOP per weight and reads
     * bytes(weight_dtype) per weight; solve intensity = ridge for B. */
    return NAN;
}

double ex01_kv_bytes_per_token(const char *model_key, const char *kv_dtype)
{
    /* TODO: 2 (K and V) * layers * kv_heads * head_dim * bytes. */
    return NAN;
}

double ex01_head_sizing_error(const char *model_key)
{
    /* TODO: what the attention heads count that the KV heads do not. */
    return NAN;
}

int ex01_max_batch(const char *model_key, const char *gpu_key, int tp, int context,
                   const char *weight_dtype, const char *kv_dtype, double usable_fraction,
                   double reserve_bytes)
{
    /* TODO: (HBM * usable_fraction - weights/tp - reserve) over the KV bytes
     * of one sequence on one GPU, rounded down. */
    return -1;
}

double ex01_kv_to_weight_ratio(const char *model_key, int tp, int batch, int context, const char *dtype)
{
    /* TODO: batch * (context + 1) tokens of KV per GPU over the weights per GPU. */
    return NAN;
}

double ex01_step_time(const char *model_key, const char *gpu_key, int tp, int batch, int context,
                      const char *dtype)
{
    /* TODO: NAN unless the batch fits (memory_fit); then max(bytes / bandwidth,
     * FLOP / peak) op by op, plus the tensor-parallel collectives. */
    return NAN;
}

double ex01_step_intensity(const char *model_key, int tp, int batch, int context, const char *dtype)
{
    /* TODO: the step's FLOPs (projections, attention) over all the bytes it moves. */
    return NAN;
}

double ex01_total_params(const char *model_key)
{
    /* TODO: embedding + head + attention + every expert's MLP + norms. */
    return NAN;
}

double ex01_active_params(const char *model_key)
{
    /* TODO: the total less the experts a token is not routed to. */
    return NAN;
}

double ex01_decode_weight_bytes(const char *model_key, int batch, const char *dtype)
{
    /* TODO: the weights of the experts some token in the batch touches. */
    return NAN;
}
