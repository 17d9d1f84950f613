/* Chapter 12 fill-in kit.  Replace each TODO body with your own derivation,
 * then run `make exercise N=12`.  You may call the napkin library (train.h)
 * or work from first principles.  Return NAN (or -1) for input you cannot
 * use. */
#include "12-sizing-a-training-cluster.h"

#include <math.h>

double ex12_hardware_over_model(double params, int layers, int width, int seq, const char *recompute)
{
    /* TODO: model = 6N + 12 L s d per token; recomputation re-runs a forward
     * (all of it, or only the attention core). */
    return NAN;
}

int ex12_gpus_for_deadline(double flop, double days, double peak, double mfu, int node_size)
{
    /* TODO: GPU-seconds over the deadline's seconds, rounded up to whole nodes. */
    return -1;
}

double ex12_days_on(double flop, int gpus, double peak, double mfu)
{
    /* TODO */
    return NAN;
}

double ex12_goodput_llama3(int gpus)
{
    /* TODO: interruptions per GPU-day x GPUs x hours lost each, as a share of a day. */
    return NAN;
}

double ex12_gpus_at_goodput(double goodput)
{
    /* TODO: solve your goodput formula for the number of GPUs. */
    return NAN;
}

double ex12_interruptions_per_day(int gpus)
{
    /* TODO: the rate per GPU-day times the GPUs. */
    return NAN;
}

double ex12_implied_utilisation(double flop, double peak, double gpu_hours)
{
    /* TODO */
    return NAN;
}

double ex12_activation_coefficient(const char *model_key, int seq, int tp, int sp, const char *recompute,
                                   const char *count)
{
    /* TODO: list what each operation keeps for its backward pass. */
    return NAN;
}

double ex12_stage_activation_bytes(const char *model_key, int seq, int tp, int pp, int sp, const char *schedule,
                                   int microbatches)
{
    /* TODO: per layer x layers per stage x microbatches in flight. */
    return NAN;
}

double ex12_state_bytes(const char *model_key, int tp, int pp, int dp, int zero)
{
    /* TODO: the first stage's layers and the embedding, 2 + 2 + 12 bytes each. */
    return NAN;
}

int ex12_max_micro_batch(const char *model_key, const char *gpu_key, int seq, int tp, int pp, int dp, int sp,
                         int zero)
{
    /* TODO: the state is fixed; activations grow with the microbatch. */
    return -1;
}
