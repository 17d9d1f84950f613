/* Chapter 10 exercises: the capped geometric process and the two cost
 * regimes of speculative decoding.
 *
 * alpha is the per-token acceptance rate in [0, 1], gamma the draft tokens
 * per round (>= 1), c a draft step over a target step.  Keys are those of
 * code/specs/gpus.tsv and models.tsv ("llama3-70b", "h100").  Every function returns NAN (or
 * -1 for a count) for input it cannot use, and never crashes. */
#ifndef EXERCISES_10_SPECULATIVE_DECODING_H
#define EXERCISES_10_SPECULATIVE_DECODING_H

/* Expected tokens per round, the target's own token included. */
double ex10_expected_tokens(double alpha, int gamma);
/* P(N = k): the round yields exactly k tokens (k = 1 .. gamma+1). */
double ex10_prob_tokens(double alpha, int gamma, int k);
/* Standard deviation of N. */
double ex10_tokens_stddev(double alpha, int gamma);
/* Walltime speedup when verifying gamma+1 tokens costs one target step. */
double ex10_speedup(double alpha, int gamma, double c);
/* The gamma in 1 .. gamma_max with the highest speedup at draft cost c. */
int ex10_best_gamma(double alpha, double c, int gamma_max);
/* The smallest alpha whose speedup reaches `target` at this gamma and c;
 * NAN when even alpha = 1 falls short. */
double ex10_alpha_for_speedup(double target, int gamma, double c);
/* Arithmetic operations per emitted token relative to plain decoding, with
 * c_hat the draft's operations per token over the target's. */
double ex10_operations_factor(double alpha, int gamma, double c_hat);
/* Time of a target step with gamma+1 new tokens per sequence over a plain
 * decode step, from the roofline step model (bf16, tp GPUs, the target
 * alone).  NAN when the batch does not fit the GPUs' memory (weights, the
 * reserve and the KV of context + gamma + 1 tokens per sequence). */
double ex10_verify_ratio(const char *model_key, const char *gpu_key, int tp, int batch, int context, int gamma);

#endif
