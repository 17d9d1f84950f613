/* Chapter 6 fill-in kit.  Replace each TODO body with your own derivation,
 * then run `make exercise N=06`.  You may call the napkin library (specs.h
 * for the model and GPU rows, memory.h for memory_fit, transformer.h for
 * decoder_step_cost) or work from first principles.  Return NAN (or -1) for
 * input you cannot use. */
#include "06-many-fine-tunes.h"

#include <math.h>

double ex06_adapter_params(const char *model_key, int rank, const char *targets)
{
    /* TODO: r (in + out) per targeted module per layer; k and v are
     * hidden -> kv_heads * head_dim. */
    return NAN;
}

double ex06_adapter_bytes_per_gpu(const char *model_key, int rank, const char *targets, int tp)
{
    /* TODO: column-parallel modules split B, row-parallel ones split A. */
    return NAN;
}

int ex06_max_batch_with_slots(const char *model_key, const char *gpu_key, int tp, int slot_rank, const char *targets,
                              int slots, int context)
{
    /* TODO: the slots are fixed allocations: memory_fit's extra_bytes. */
    return -1;
}

double ex06_step_ratio(const char *model_key, const char *gpu_key, int tp, int rank, const char *targets, int batch,
                       int context, int distinct, double launch_us)
{
    /* TODO: the base step, plus for each target and layer a shrink and an
     * expand reading `distinct` adapters' A and B, plus the launches. */
    return NAN;
}

double ex06_bgmv_intensity(int batch, int distinct, double weight_elem_bytes)
{
    /* TODO: 2 FLOP per weight per token that uses it. */
    return NAN;
}

double ex06_expected_distinct(int adapters, double zipf_s, int batch)
{
    /* TODO: adapter i appears at least once with probability 1 - (1 - p_i)^B. */
    return NAN;
}

int ex06_gpus_for_tenants(const char *model_key, int tp, int tenants, int copies)
{
    /* TODO: a replica per copy, or one replica that holds every adapter. */
    return -1;
}

double ex06_load_time(const char *model_key, const char *gpu_key, int tp, int rank, const char *targets)
{
    /* TODO: this GPU's bytes over the host link (gpu_spec.host_bw). */
    return NAN;
}
