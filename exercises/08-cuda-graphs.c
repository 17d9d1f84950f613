/* Chapter 8 fill-in kit.  Replace each TODO body with your own derivation,
 * then run `make exercise N=08`.  You may call the napkin library
 * (transformer.h has decoder_step_ops and decoder_step_cost; memory.h has
 * memory_fit) or work from first principles.  Return NAN (or -1) for input
 * you cannot use. */
#include "08-cuda-graphs.h"

#include <math.h>

int ex08_kernels(const char *model_key, int tp, const char *fusion)
{
    /* TODO: one kernel per op of every layer and per once-per-step op;
     * attention is one kernel; a fusion folds ops into their neighbours. */
    return -1;
}

double ex08_share_saved(const char *model_key, const char *gpu_key, int tp, int batch, int context, double launch_us,
                        double node_us)
{
    /* TODO: max(GPU, host) eagerly and as a graph. */
    return NAN;
}

double ex08_implied_launch_us(double eager_step_s, int kernels)
{
    /* TODO: all host time, spread over the kernels. */
    return NAN;
}

int ex08_padded_tokens(int tokens, int max_size)
{
    /* TODO: the smallest captured size at or above tokens. */
    return -1;
}

double ex08_pad_extra_seconds(const char *model_key, const char *gpu_key, int tp, int batch, int context)
{
    /* TODO: which bytes and FLOPs do the dummy rows add? */
    return NAN;
}

int ex08_spec_padded_tokens(int batch, int k, int max_size)
{
    /* TODO: a verification step carries 1 + k tokens per sequence. */
    return -1;
}

int ex08_seqs_lost(const char *model_key, const char *gpu_key, int tp, int context, int n_graphs,
                   double mib_per_graph)
{
    /* TODO: the largest batch with and without the graphs' memory. */
    return -1;
}

int ex08_threshold_batch(const char *model_key, const char *gpu_key, int tp, int context, double launch_us,
                         double threshold)
{
    /* TODO: the saving only falls as the batch grows. */
    return -1;
}
