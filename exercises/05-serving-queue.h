/* Chapter 5 exercises: a serving queue under Little's law.
 *
 * Rates in requests per second, times in seconds.  Every function returns
 * NAN (or -1 for a count) for input it cannot use, or for a queue that is
 * not stable (arrival rate at or above the service rate), and never crashes. */
#ifndef EXERCISES_05_SERVING_QUEUE_H
#define EXERCISES_05_SERVING_QUEUE_H

/* Little's law: mean number in the system from arrival rate and mean time. */
double ex05_in_system(double lambda, double time);

/* Bytes of KV cache that `requests` requests hold, each with `tokens` tokens
 * of model_key's cache stored in kv_dtype ("bf16", "fp8"). */
double ex05_cache_bytes(const char *model_key, double requests, int tokens, const char *kv_dtype);

/* Mean time in system of M/M/1 and of M/D/1, service rate mu. */
double ex05_mm1_time(double lambda, double mu);
double ex05_md1_time(double lambda, double mu);

/* Mean wait before service of M/G/1 (Pollaczek-Khinchine): mean service
 * time `service`, squared coefficient of variation cs2. */
double ex05_mg1_wait(double lambda, double service, double cs2);

/* The highest arrival rate whose M/G/1 mean time in system is at most
 * `target` seconds (0 when even an empty queue takes longer). */
double ex05_max_rate(double service, double cs2, double target);

/* Capacity of a replica that runs batches to completion: the best of
 * n / s(n) over n up to min(max_batch, kv_cap) (kv_cap 0: no cap), where
 * s(n) is the step model's time to serve a batch of n requests of `prompt`
 * and `output` tokens, bf16, one GPU, datasheet rates.  NAN when the
 * largest batch it would run does not fit the GPU's memory (memory_fit,
 * default policy, at prompt + output tokens of context). */
double ex05_batch_capacity(const char *model_key, const char *gpu_key, int prompt, int output, int max_batch,
                           int kv_cap);

/* Replicas needed to carry `lambda` with none above `max_load` (a share)
 * of its capacity. */
int ex05_replicas_needed(double lambda, double capacity, double max_load);

#endif
