/* Chapter 3 fill-in kit.  Replace each TODO body with your own derivation,
 * then run `make exercise N=03`.  You may call the napkin library (packing.h,
 * window.h, batch_vs_sequential.h, memory.h) or work from first principles; the tests
 * compare against hand derivations either way.  Return NAN (or -1) for
 * input you cannot use. */
#include "03-batching-in-practice.h"

#include <math.h>

long ex03_pack_offsets(const int *lengths, int n, long *cu)
{
    /* TODO: cu[0] = 0, cu[i+1] = cu[i] + lengths[i]; return cu[n]. */
    return -1;
}

double ex03_padding_waste(const int *lengths, int n)
{
    /* TODO: (n * longest - sum of lengths) / (n * longest). */
    return NAN;
}

double ex03_bucketed_waste(const int *lengths, int n, const int *edges, int nbuckets)
{
    /* TODO: per bucket, count * its longest; waste = (slots - tokens) / slots. */
    return NAN;
}

int ex03_bucket_batches(const int *lengths, int n, const int *edges, int nbuckets)
{
    /* TODO: the buckets that receive at least one sequence. */
    return -1;
}

double ex03_attention_ratio(const int *lengths, int n, const int *edges, int nbuckets)
{
    /* TODO: a row of length L computes L(L+1)/2 causal pairs; compare the
     * rows padded to the longest with the rows padded within each bucket. */
    return NAN;
}

double ex03_expected_batch(double lambda, double window, int max_batch)
{
    /* TODO: 1 + sum_{j=0}^{B-2} P(X > j), X ~ Poisson(lambda * window). */
    return NAN;
}

double ex03_mean_wait(double lambda, double window, int max_batch)
{
    /* TODO: (1/lambda) sum_{j=0}^{B-2} (j+1) P(X > j), over the mean batch. */
    return NAN;
}

double ex03_mean_dispatch(double lambda, double window, int max_batch)
{
    /* TODO: the window, or sooner when the batch fills first. */
    return NAN;
}

double ex03_window_for_wait(double lambda, int max_batch, double wait_budget)
{
    /* TODO: the mean wait grows with the window; bisect on it. */
    return NAN;
}

double ex03_seq_over_batch(const char *model_key, const char *gpu_key, int n, int prompt, int output)
{
    /* TODO: one prefill step and output-1 decode steps, at batch 1 (times n)
     * and at batch n; compare the totals. */
    return NAN;
}

int ex03_kv_cap(const char *model_key, const char *gpu_key, int context, double usable_fraction,
                double reserve_bytes)
{
    /* TODO: (HBM * usable - bf16 weights - reserve) / (context * KV bytes per token), rounded down. */
    return -1;
}
