/* Chapter 4 exercises: a batch window in C.
 *
 * Time in seconds (CLOCK_MONOTONIC for absolute times), rates per second.
 * Every function returns NAN (or -1 for a count) for input it cannot use,
 * and never crashes. */
#ifndef EXERCISES_04_BATCH_WINDOW_IN_C_H
#define EXERCISES_04_BATCH_WINDOW_IN_C_H

#include "batcher.h" /* batcher_decision */

#include <stddef.h>
#include <time.h>

/* The flusher's decision.  `queued` requests wait, the oldest since
 * `oldest_arrival`; it is `now`.  Return BATCHER_IDLE for an empty queue,
 * BATCHER_FLUSH_FULL when queued >= max_batch, BATCHER_FLUSH_EXPIRED when the
 * oldest has waited max_wait or longer, else BATCHER_WAIT with *deadline set
 * to the moment the window expires. */
batcher_decision ex04_decide(size_t queued, double oldest_arrival, double now, size_t max_batch,
                             double max_wait, double *deadline);

/* The absolute time `now + wait` as a timespec for pthread_cond_timedwait:
 * tv_nsec in [0, 1e9).  {0, 0} for a negative or non-finite time. */
struct timespec ex04_deadline(double now, double wait);

/* Handler calls a batch of n costs when the handler fails any call that
 * contains a bad item (bad[i] != 0) without saying which, and the batcher
 * bisects: a failed call on k > 1 items is retried on its first floor(k/2)
 * and its remaining items.  -1 for n < 1. */
long ex04_bisect_calls(size_t n, const int *bad);

/* Mean wait a request spends in the window (Poisson arrivals at lambda,
 * window w, max batch max_batch; chapter 3's closed form). */
double ex04_mean_wait(double lambda, double w, int max_batch);

/* Share of batches that fill to max_batch before the window closes. */
double ex04_fill_share(double lambda, double w, int max_batch);

/* Requests per second one serial flusher sustains when every batch is full:
 * batch / (overhead + fixed + per_item * batch). */
double ex04_serial_throughput(size_t batch, double overhead, double fixed, double per_item);

#endif
