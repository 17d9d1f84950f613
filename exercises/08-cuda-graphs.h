/* Chapter 8 exercises: kernels per step, host time against GPU time, what
 * the published gains imply, padding to capture sizes, speculative token
 * counts, and graph memory against the KV cache.
 *
 * Keys are those of code/specs/gpus.tsv and models.tsv ("llama3-8b",
 * "h100"); dtypes are bf16 throughout; fusion is "none", "norm-residual",
 * "gate-act" or "all".  The vLLM capture list is [1, 2, 4] +
 * range(8, 256, 8) + range(256, max + 1, 16).  Every function returns NAN
 * (or -1 for a count) for input it cannot use, and never crashes. */
#ifndef EXERCISES_08_CUDA_GRAPHS_H
#define EXERCISES_08_CUDA_GRAPHS_H

/* Kernels one decode step launches (tp collectives included). */
int ex08_kernels(const char *model_key, int tp, const char *fusion);
/* 1 - t_graph / t_eager for one decode step at this batch and context, with
 * launch_us of host time per eager launch, a 4 us graph launch and node_us
 * per replayed node; no padding (a graph of exactly this batch). */
double ex08_share_saved(const char *model_key, const char *gpu_key, int tp, int batch, int context, double launch_us,
                        double node_us);
/* Host microseconds per kernel implied by an eager step of eager_step_s that
 * is all host time, for a step of `kernels` kernels. */
double ex08_implied_launch_us(double eager_step_s, int kernels);
/* The captured size a step of `tokens` tokens replays on vLLM's list up to
 * max_size; 0 when it runs eagerly. */
int ex08_padded_tokens(int tokens, int max_size);
/* Extra GPU seconds the padded step costs over the real one (vLLM list up
 * to 512): t(padded) - t(batch); dummy rows attend to nothing. */
double ex08_pad_extra_seconds(const char *model_key, const char *gpu_key, int tp, int batch, int context);
/* Tokens a speculative verification step (1 + k per sequence) replays on
 * vLLM's list up to max_size; 0 when it runs eagerly. */
int ex08_spec_padded_tokens(int batch, int k, int max_size);
/* Sequences of `context` tokens (plus the one being generated) the KV
 * budget loses to n_graphs captured graphs of mib_per_graph MiB each, on
 * one GPU of a tp group, under the default memory policy. */
int ex08_seqs_lost(const char *model_key, const char *gpu_key, int tp, int context, int n_graphs,
                   double mib_per_graph);
/* The first batch whose share saved falls below `threshold` (no padding,
 * 4 us graph launch, 1 us per node), searched up to the largest batch that
 * fits with vLLM's 51 graphs of 26 MiB taken out; 0 when none. */
int ex08_threshold_batch(const char *model_key, const char *gpu_key, int tp, int context, double launch_us,
                         double threshold);

#endif
