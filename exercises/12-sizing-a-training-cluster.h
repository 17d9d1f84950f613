/* Chapter 12 exercises: the FLOPs of a training run, the cluster for a
 * deadline, goodput under failures, and the memory of one GPU.
 *
 * FLOP and bytes are SI doubles; peak is a GPU's FLOP/s; days are days.
 * recompute is "none", "selective" or "full"; count is "korthikanti" (the
 * GPT layer of Korthikanti et al., 2022) or "modern" (flash attention, GQA,
 * a gated MLP); schedule is "1f1b" or "gpipe".  Model and GPU keys are
 * those of code/specs/models.tsv and gpus.tsv ("llama3-70b", "h100").
 * Every function returns NAN (or -1 for a count) for input it cannot use,
 * and never crashes. */
#ifndef EXERCISES_12_SIZING_A_TRAINING_CLUSTER_H
#define EXERCISES_12_SIZING_A_TRAINING_CLUSTER_H

/* Hardware FLOPs over model FLOPs per token for `params` multiplying
 * parameters, `layers` layers of attention width `width`, sequence `seq`. */
double ex12_hardware_over_model(double params, int layers, int width, int seq, const char *recompute);
/* GPUs, in whole nodes of node_size, that run `flop` model FLOPs within
 * `days` at `mfu` of `peak` (no failures). */
int ex12_gpus_for_deadline(double flop, double days, double peak, double mfu, int node_size);
/* Days `flop` model FLOPs take on `gpus` GPUs at `mfu` of `peak`. */
double ex12_days_on(double flop, int gpus, double peak, double mfu);
/* Goodput of a cluster of `gpus` with Llama 3's interruption rate (466 in 54
 * days on 16,384 GPUs) and the loss per interruption that left it 90%. */
double ex12_goodput_llama3(int gpus);
/* The cluster size (in GPUs, not rounded) at which that goodput falls to
 * `goodput` (a share, 0.95); NAN outside 0 < goodput < 1. */
double ex12_gpus_at_goodput(double goodput);
/* Interruptions a day on a cluster of `gpus` at Llama 3's rate per GPU. */
double ex12_interruptions_per_day(int gpus);
/* The average utilisation that reported GPU-hours imply for a run. */
double ex12_implied_utilisation(double flop, double peak, double gpu_hours);
/* Activation bytes one layer keeps, one sequence of `seq` tokens, on one
 * GPU of a tp group, over seq * hidden (the coefficient of sbh). */
double ex12_activation_coefficient(const char *model_key, int seq, int tp, int sp, const char *recompute,
                                   const char *count);
/* Activation bytes the first pipeline stage's GPU holds: modern count, no
 * recomputation, microbatch 1, `microbatches` per step. */
double ex12_stage_activation_bytes(const char *model_key, int seq, int tp, int pp, int sp, const char *schedule,
                                   int microbatches);
/* Weights, gradients and optimizer state (mixed-precision Adam) per GPU of
 * the first stage, with ZeRO stage `zero` over dp. */
double ex12_state_bytes(const char *model_key, int tp, int pp, int dp, int zero);
/* The largest microbatch that fits the GPU (modern count, 1F1B, pp
 * microbatches in flight, no recomputation); 0 when none. */
int ex12_max_micro_batch(const char *model_key, const char *gpu_key, int seq, int tp, int pp, int dp, int sp,
                         int zero);

#endif
