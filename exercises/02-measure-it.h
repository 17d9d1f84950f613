/* Chapter 2 exercises: memory-bound or compute-bound, measured.
 *
 * Keys are those of code/specs/gpus.tsv and models.tsv ("h200",
 * "llama3-70b").  Every function returns NAN for invalid input (an unknown
 * key or kernel name, a non-positive size or time) and never crashes.  Bytes,
 * seconds, bytes/s and FLOP/s throughout; fractions, not percentages. */
#ifndef EXERCISES_02_MEASURE_IT_H
#define EXERCISES_02_MEASURE_IT_H

/* The bandwidth a STREAM/BabelStream kernel reports, bytes/s: bytes read
 * plus bytes written over the time.  kernel is "copy", "read", "write" or
 * "triad"; each pass touches `elements` elements of `elem_bytes` in each of
 * its arrays. */
double ex02_stream_bandwidth(const char *kernel, double elements, double elem_bytes, double seconds);

/* Roofline time of Y[m x n] = X[m x k] W^T with bf16 inputs and output on a
 * GPU's datasheet ceilings (dense bf16 peak, HBM bandwidth). */
double ex02_gemm_time(const char *gpu_key, double m, double n, double k);

/* The batch m at which that GEMM turns from memory- to compute-bound on the
 * datasheet ceilings (X, W and Y bytes all counted). */
double ex02_knee_batch(const char *gpu_key, double n, double k);

/* Median of |predicted - measured| / measured over n pairs. */
double ex02_median_abs_error(const double *predicted, const double *measured, int n);

/* What a profile says: DRAM bytes read and written (Nsight Compute's
 * dram__bytes_read.sum and dram__bytes_write.sum) over the kernel's duration
 * (gpu__time_duration.sum), as a fraction of a bandwidth ceiling. */
double ex02_dram_fraction(double bytes_read, double bytes_written, double seconds, double ceiling);

/* Bytes of KV cache one decode step reads for `batch` sequences of `context`
 * cached tokens (whole model, bf16 cache, no tensor parallelism), over a
 * read bandwidth: the time attention cannot beat. */
double ex02_attention_floor(const char *model_key, int context, int batch, double read_bandwidth);

/* A step of `kernels` launches, each costing the host `per_launch` seconds
 * to enqueue, whose kernels keep the GPU busy `gpu_busy` seconds in all.
 * Launches overlap execution, so the step takes the longer of the two; the
 * share of that step during which the GPU waits for the host. */
double ex02_launch_idle_share(int kernels, double per_launch, double gpu_busy);

#endif
