/* A batch window on POSIX threads: many callers, one handler that prefers
 * to see their requests together.
 *
 *   batcher *b = batcher_create(&cfg);         max batch, max wait, handler
 *   int rc = batcher_submit(b, &req, &res);    from any thread; blocks until
 *                                              this request's own completion
 *   batcher_close(b, BATCHER_DRAIN);           run what is queued, join threads
 *   batcher_destroy(b);                        free
 *
 * Two triggers share one queue: a batch is flushed when it holds max_batch
 * requests, or when its oldest request has waited max_wait.  One flusher
 * thread owns both triggers; it sleeps on a condition variable with an
 * absolute CLOCK_MONOTONIC deadline, and submitters only ever signal it.
 *
 * Errors reach only the callers they belong to:
 *   - a request the validator refuses is rejected inside submit;
 *   - a handler that reports per-item status fails only those items;
 *   - a handler that fails a whole batch without saying which item was bad
 *     is retried on the two halves of the batch, recursively, until the bad
 *     request is alone (bisection);
 *   - a handler that runs past handler_timeout, returns BATCHER_HANDLER_CRASH,
 *     or exits its thread (pthread_exit) fails every request of its batch
 *     that has not completed; a fresh flusher takes over the queue.
 * A handler that submits to, or closes, its own batcher would wait for the
 * thread it runs on; those calls return BATCHER_EREENTRANT instead.
 * With a handler_timeout, an abandoned handler call may still be running
 * when the next one starts: such a handler must tolerate two calls at once.
 * Every submitted request completes exactly once: its result, its error, or
 * a cancellation.  A handler that crashes the whole process (a segfault) is
 * beyond any in-process batcher; that is a supervisor's job.
 *
 * Requests and results are fixed-size byte blocks that the batcher copies,
 * so a handler that is abandoned after a time-out never writes into a
 * caller's memory. */
#ifndef NAPKIN_BATCHER_H
#define NAPKIN_BATCHER_H

#include <stddef.h>
#include <stdint.h>
#include <time.h>

/* What batcher_submit returns. */
enum {
    BATCHER_OK = 0,
    BATCHER_EINVAL = 1,    /* refused by the validator; never queued */
    BATCHER_EITEM = 2,     /* the handler failed this request (alone) */
    BATCHER_ETIMEDOUT = 3, /* its batch's handler ran past handler_timeout */
    BATCHER_ECRASH = 4,    /* its batch's handler crashed */
    BATCHER_ECANCELLED = 5,/* closed with BATCHER_CANCEL before it ran */
    BATCHER_ECLOSED = 6,   /* submitted after close began; never queued */
    BATCHER_EREENTRANT = 7 /* called from the batcher's own handler */
};

/* What a handler returns. */
enum {
    BATCHER_HANDLER_OK = 0,    /* ran; each item's status says how it went */
    BATCHER_HANDLER_RETRY = 1, /* the batch failed, culprit unknown: bisect */
    BATCHER_HANDLER_CRASH = -1 /* gave up: fail every item of this call */
};

/* One request as the handler sees it.  status starts at 0 (success); the
 * handler sets it non-zero for an item that failed. */
typedef struct {
    const void *request; /* request_size bytes, owned by the batcher */
    void *result;        /* result_size bytes to fill, owned by the batcher */
    int status;
} batcher_item;

typedef int (*batcher_handler_fn)(void *ctx, batcher_item *items, size_t n);
/* Returns 0 when the request may be queued. */
typedef int (*batcher_validate_fn)(void *ctx, const void *request);

typedef struct {
    size_t max_batch;          /* >= 1 */
    double max_wait;           /* seconds, >= 0: the window */
    size_t request_size;       /* bytes copied from each request (may be 0) */
    size_t result_size;        /* bytes copied back into each result (may be 0) */
    batcher_handler_fn handler;
    void *handler_ctx;
    batcher_validate_fn validate; /* optional */
    void *validate_ctx;
    double handler_timeout;    /* seconds; 0 = no time-out (no watchdog thread) */
} batcher_config;

/* Counters, for tests and benchmarks. */
typedef struct {
    uint64_t submitted;   /* calls to batcher_submit */
    uint64_t completed;   /* completions delivered (equals submitted once idle) */
    uint64_t ok, rejected, item_errors, timeouts, crashes, cancelled, closed;
    uint64_t batches;       /* batches formed by the flusher */
    uint64_t handler_calls; /* includes bisection retries */
    uint64_t full_flushes;  /* batches flushed because they were full */
    uint64_t timer_flushes; /* batches flushed because the window expired */
    uint64_t flushers_replaced;
} batcher_stats;

typedef struct batcher batcher;

typedef enum { BATCHER_DRAIN, BATCHER_CANCEL } batcher_close_mode;

/* NULL with a message in err (if given) when the config is invalid or a
 * thread cannot be started. */
batcher *batcher_create(const batcher_config *cfg, char *err, size_t errlen);

/* Queue one request (request_size bytes at request) and wait for it.  On
 * BATCHER_OK the result_size bytes at result are filled; on any error they
 * are untouched.  Safe from any number of threads until batcher_close has
 * been destroyed. */
int batcher_submit(batcher *b, const void *request, void *result);

/* Submit n requests at once (n * request_size bytes at requests) and wait
 * until all n have completed: one wake-up for the lot instead of one per
 * request.  Each gets its own status in rcs[i] and, on BATCHER_OK, its own
 * result_size bytes at results + i * result_size (results may be NULL when
 * result_size is 0).  The requests are queued together, in order, so they
 * may share a batch with each other and with other callers.  Returns how
 * many succeeded. */
size_t batcher_submit_many(batcher *b, size_t n, const void *requests, void *results, int *rcs);

/* Stop accepting requests (later submits return BATCHER_ECLOSED); DRAIN
 * runs every queued request, CANCEL completes the queued ones with
 * BATCHER_ECANCELLED (a batch already in the handler finishes either way).
 * Returns when every request submitted before it has its completion and
 * every flusher thread has ended.  Submits may overlap it.  A handler that
 * never returns keeps close (and destroy) waiting for it: that is the one
 * unbounded wait, and it is stated here rather than hidden.  Its callers
 * already have their time-out errors, and until close the batcher goes on
 * serving new requests on a fresh flusher; an abandoned flusher ends, and
 * frees its thread, as soon as its handler returns.  Calling close twice is
 * harmless.  Returns 0, or
 * BATCHER_EREENTRANT (doing nothing) when called from the handler. */
int batcher_close(batcher *b, batcher_close_mode mode);

/* Close (with CANCEL) if not closed, then free.  No thread may be inside
 * batcher_submit or call it again. */
void batcher_destroy(batcher *b);

batcher_stats batcher_get_stats(batcher *b);

/* "ok", "invalid request", ... */
const char *batcher_strerror(int rc);

/* The flusher's decision, separated from the threads so that it can be
 * tested and taught on its own.  Given the queue (count, oldest arrival),
 * the time now and the two limits: BATCHER_FLUSH_FULL or _EXPIRED to flush
 * now, else BATCHER_WAIT with *deadline set to when the window expires
 * (BATCHER_IDLE: queue empty, wait for a submit). */
typedef enum { BATCHER_IDLE, BATCHER_WAIT, BATCHER_FLUSH_FULL, BATCHER_FLUSH_EXPIRED } batcher_decision;
batcher_decision batcher_decide(size_t queued, double oldest_arrival, double now,
                                size_t max_batch, double max_wait, double *deadline);

/* Seconds on CLOCK_MONOTONIC, and an absolute timespec for it: the clock the
 * flusher's condition variable is bound to. */
double batcher_now(void);
struct timespec batcher_timespec(double seconds);

/* The window's price in theory (mean, p50, p99 wait under Poisson arrivals)
 * is window.h's. */

#endif
