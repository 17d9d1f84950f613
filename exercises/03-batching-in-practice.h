/* Chapter 3 exercises: batching in practice.
 *
 * Keys are those of code/specs/gpus.tsv and models.tsv ("h100", "llama3-8b").
 * Time in seconds, rates per second, memory in bytes.  Every function
 * returns NAN (or -1 for a count) for input it cannot use, and never crashes. */
#ifndef EXERCISES_03_BATCHING_IN_PRACTICE_H
#define EXERCISES_03_BATCHING_IN_PRACTICE_H

/* Cumulative sequence offsets of a packed batch: cu[0] = 0 and
 * cu[i+1] = cu[i] + lengths[i] (cu has n+1 slots).  Returns the total token
 * count, or -1 for n < 0 or a negative length. */
long ex03_pack_offsets(const int *lengths, int n, long *cu);

/* Share of token slots that are padding when the batch is padded to its
 * longest sequence (0 for an empty batch). */
double ex03_padding_waste(const int *lengths, int n);

/* The same when sequences are bucketed: a sequence goes to the first bucket
 * whose (ascending) edge is >= its length, the longest ones to the last;
 * each bucket is padded to its own longest member. */
double ex03_bucketed_waste(const int *lengths, int n, const int *edges, int nbuckets);

/* Batches the bucketing launches (buckets that hold a sequence), and the
 * causal attention work (query-key pairs) padded to the longest over the
 * same work bucketed; -1 or NAN for bad input. */
int ex03_bucket_batches(const int *lengths, int n, const int *edges, int nbuckets);
double ex03_attention_ratio(const int *lengths, int n, const int *edges, int nbuckets);

/* Poisson arrivals at `lambda` per second; a batch opens at its first
 * arrival and goes at `max_batch` requests or `window` seconds after opening.
 * The mean batch size, and the mean wait of a request before dispatch. */
double ex03_expected_batch(double lambda, double window, int max_batch);
double ex03_mean_wait(double lambda, double window, int max_batch);
/* The mean time from a batch's first arrival to its dispatch. */
double ex03_mean_dispatch(double lambda, double window, int max_batch);

/* The longest window whose mean wait is at most `wait_budget` seconds
 * (to a microsecond or better); NAN for bad input. */
double ex03_window_for_wait(double lambda, int max_batch, double wait_budget);

/* Time to serve n requests one after another over the time to serve them
 * as one batch, with the step model on the GPU's datasheet rates, bf16,
 * one GPU; prompt and output lengths in tokens.  NAN when the batch of n
 * does not fit the GPU's memory (memory_fit, default policy). */
double ex03_seq_over_batch(const char *model_key, const char *gpu_key, int n, int prompt, int output);

/* How many sequences of `context` tokens have room for their bf16 KV cache
 * on one GPU holding the bf16 weights, when the server may use
 * `usable_fraction` of HBM and keeps `reserve_bytes` for activations.
 * 0 when none; -1 for bad input. */
int ex03_kv_cap(const char *model_key, const char *gpu_key, int context, double usable_fraction,
                double reserve_bytes);

#endif
