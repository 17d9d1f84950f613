/* Chapter 6 exercises: low-rank adapters on one base model, in memory and
 * in step time.
 *
 * Keys are those of code/specs/gpus.tsv and models.tsv ("llama3-70b",
 * "h100"); targets is a comma-separated list of modules from q, k, v, o,
 * gate, up, down.  Adapters and the base are bf16; contexts are tokens per
 * sequence; the memory policy is the library's default.  Every function
 * returns NAN (or -1 for a count) for input it cannot use, and never
 * crashes. */
#ifndef EXERCISES_06_MANY_FINE_TUNES_H
#define EXERCISES_06_MANY_FINE_TUNES_H

/* Parameters of one adapter of rank r on the targeted modules of every layer. */
double ex06_adapter_params(const char *model_key, int rank, const char *targets);
/* Bytes of that adapter one GPU of a tp group holds. */
double ex06_adapter_bytes_per_gpu(const char *model_key, int rank, const char *targets, int tp);
/* The largest batch of `context`-token sequences that fits one GPU of the
 * tp group beside `slots` adapter slots, each sized for rank slot_rank. */
int ex06_max_batch_with_slots(const char *model_key, const char *gpu_key, int tp, int slot_rank, const char *targets,
                              int slots, int context);
/* A decode step with `distinct` adapters among `batch` sequences over the
 * base model's step, each adapter kernel (a shrink and an expand per target
 * per layer) charged launch_us microseconds beside its roofline time; NAN
 * when the batch does not fit one GPU beside `distinct` slots of this rank. */
double ex06_step_ratio(const char *model_key, const char *gpu_key, int tp, int rank, const char *targets, int batch,
                       int context, int distinct, double launch_us);
/* FLOP per adapter weight byte of a gathered shrink or expand with
 * `distinct` adapters among `batch` tokens, weights of weight_elem_bytes. */
double ex06_bgmv_intensity(int batch, int distinct, double weight_elem_bytes);
/* Expected distinct adapters among `batch` requests drawn independently
 * from `adapters` adapters with Zipf(s) popularity (s = 0: uniform). */
double ex06_expected_distinct(int adapters, double zipf_s, int batch);
/* GPUs that `tenants` fine-tunes of the model need before any load is
 * considered, each replica tp GPUs: as full copies (copies = 1), or as one
 * base with an adapter each (copies = 0). */
int ex06_gpus_for_tenants(const char *model_key, int tp, int tenants, int copies);
/* Seconds to load one adapter from host memory into a GPU slot, each GPU of
 * the group loading its own share over its own PCIe link. */
double ex06_load_time(const char *model_key, const char *gpu_key, int tp, int rank, const char *targets);

#endif
