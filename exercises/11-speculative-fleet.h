/* Chapter 11 exercises: speculative decoding in a busy fleet.
 *
 * Keys are those of code/specs/gpus.tsv and models.tsv ("llama3-70b",
 * "llama3.2-1b", "h100"); everything is bf16 and the draft runs time-sliced
 * on the target's GPUs with the same tensor-parallel degree.  Every function
 * returns NAN (or -1 for a count or a state) for input it cannot use, and
 * never crashes. */
#ifndef EXERCISES_11_SPECULATIVE_FLEET_H
#define EXERCISES_11_SPECULATIVE_FLEET_H

/* The largest batch whose weights and KV cache (target and draft, context +
 * gamma + 1 tokens a sequence) fit each GPU, under the default memory
 * policy (90% of the driver-reported capacity usable, an activation reserve
 * for 8192 tokens). */
int ex11_max_batch(const char *target, const char *draft, const char *gpu, int tp, int context, int gamma);
/* Speedup over plain decoding at a serving batch, every step from the
 * roofline step model (regime ii); NAN when the batch does not fit. */
double ex11_speedup_at_batch(const char *target, const char *draft, const char *gpu, int tp, int batch,
                             int context, double alpha, int gamma);
/* The smallest batch at which that speedup is below 1, searched from 1 up to
 * batch_max or the largest batch that fits, whichever is smaller; 0 when
 * there is none in that range (no loss within memory). */
int ex11_break_even_batch(const char *target, const char *draft, const char *gpu, int tp, int context,
                          double alpha, int gamma, int batch_max);
/* Bytes a time-sliced draft takes on each of the tp GPUs: its weights and
 * its own KV cache for batch sequences of context tokens. */
double ex11_draft_memory_per_gpu(const char *draft, int tp, int batch, int context);

/* CUSUM on per-round accepted counts, detecting alpha0 -> alpha1: */
/* the threshold h (nats) that keeps false alarms to one per arl0 rounds; */
double ex11_cusum_threshold(double arl0);
/* the log-likelihood ratio a round with `accepted` of gamma adds; */
double ex11_cusum_llr(double alpha0, double alpha1, int gamma, int accepted);
/* the upper bound on the expected rounds from the drop to the alarm. */
double ex11_cusum_delay_bound(double alpha0, double alpha1, int gamma, double arl0);

/* The acceptance rate estimated from accepted drafts and rounds that ended
 * on a rejection. */
double ex11_alpha_estimate(long accepted, long rejections);
/* The next on/off state of a traffic class under the policy "on at a
 * predicted speedup >= 1.10 with >= 1000 rounds of evidence, off below 1.00". */
int ex11_rollout_next(int on, double predicted_speedup, long rounds);

#endif
