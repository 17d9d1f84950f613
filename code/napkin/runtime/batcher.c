/* The batch window: see batcher.h for the contract.
 *
 * One lock, b->mu (queue, flusher and watchdog state, who owns which
 * request).  A submitter sleeps on a semaphore of its own, so a completion
 * wakes exactly the one thread it belongs to, without a lock the woken
 * caller would then have to wait for; a caller of batcher_submit_many is
 * woken once for all its requests. */
#include "batcher.h"

#include <errno.h>
#include <math.h>
#include <pthread.h>
#include <sched.h>
#include <semaphore.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { SPIN_YIELDS = 64 };

/* A caller waiting for `remaining` completions. */
typedef struct {
    sem_t done;               /* posted once, by the last completion */
    atomic_size_t remaining;
} waiter;

/* One request while it is queued or in a batch; it belongs to the
 * submitting call (its stack or its allocation) until its completion is
 * delivered, and is not touched after that. */
typedef struct pending {
    const void *request;
    void *result;
    double arrival;
    struct pending *next;
    waiter *w;
    int rc;
} pending;

/* A batch the flusher took from the queue.  who[i] is the caller of item i
 * until its completion is claimed (then NULL): whoever claims it under b->mu
 * delivers it, which makes every completion happen exactly once. */
typedef struct {
    size_t n;
    pending **who;
    pending **claimed; /* scratch for the claims of one handler call */
    batcher_item *items;
    unsigned char *results;
    int abandoned; /* timed out or crashed: its callers are answered */
} batch;

typedef struct {
    atomic_uint_least64_t submitted, completed, ok, rejected, item_errors, timeouts,
        crashes, cancelled, closed, batches, handler_calls, full_flushes, timer_flushes,
        flushers_replaced;
} stat_counters;

struct batcher {
    batcher_config cfg;
    pthread_mutex_t mu;
    pthread_cond_t flush_cv;    /* wakes the flusher (CLOCK_MONOTONIC) */
    pthread_cond_t watch_cv;    /* wakes the watchdog (CLOCK_MONOTONIC) */
    pthread_cond_t closed_cv;   /* the active flusher, or any flusher thread, has ended */
    pending *head, *tail;
    size_t queued;
    int flusher_waiting;        /* flusher is asleep on flush_cv */
    int flusher_gen;            /* the active flusher's generation */
    int flusher_running;        /* 1 while an active flusher exists */
    int closing;
    batcher_close_mode close_mode;
    int closed;                 /* batcher_close has finished */
    int broken;                 /* no flusher could be started */
    /* The handler call in progress, for the watchdog. */
    batch *running;
    double running_deadline;
    int watchdog_idle, watchdog_stop, has_watchdog;
    pthread_t watchdog;
    /* The flusher threads alive now: the active one and any abandoned ones
     * still inside a slow handler.  Each moves itself to `finished` when it
     * ends, and finished threads are joined when the next flusher starts and
     * at close, so the lists stay as short as the handlers still running. */
    pthread_t *threads, *finished;
    size_t nthreads, nfinished, cap_threads; /* both lists have cap_threads slots */
    stat_counters st;
};

typedef struct {
    batcher *b;
    int gen;
} flusher_arg;

#define COUNT(b, field) atomic_fetch_add_explicit(&(b)->st.field, 1, memory_order_relaxed)

const char *batcher_strerror(int rc)
{
    switch (rc) {
    case BATCHER_OK: return "ok";
    case BATCHER_EINVAL: return "invalid request";
    case BATCHER_EITEM: return "request failed in the handler";
    case BATCHER_ETIMEDOUT: return "handler timed out";
    case BATCHER_ECRASH: return "handler crashed";
    case BATCHER_ECANCELLED: return "cancelled by close";
    case BATCHER_ECLOSED: return "batcher is closed";
    case BATCHER_EREENTRANT: return "called from the batcher's own handler (would deadlock)";
    default: return "unknown batcher status";
    }
}

double batcher_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

//> deadline
/* An absolute CLOCK_MONOTONIC time for pthread_cond_timedwait.  The
 * nanoseconds must stay below 1e9 or the wait fails with EINVAL at once,
 * and a flusher that treats EINVAL as "time is up" spins. */
struct timespec batcher_timespec(double seconds)
{
    struct timespec ts;
    double whole = floor(seconds);
    ts.tv_sec = (time_t)whole;
    long ns = lround((seconds - whole) * 1e9);
    if (ns >= 1000000000L) { /* rounding can land on exactly one second */
        ts.tv_sec += 1;
        ns -= 1000000000L;
    }
    ts.tv_nsec = ns < 0 ? 0 : ns;
    return ts;
}
//< deadline

//> decide
batcher_decision batcher_decide(size_t queued, double oldest_arrival, double now,
                                size_t max_batch, double max_wait, double *deadline)
{
    if (queued == 0)
        return BATCHER_IDLE;               /* nothing to time: sleep until a submit */
    if (queued >= max_batch)
        return BATCHER_FLUSH_FULL;         /* trigger one: the batch is full */
    double expires = oldest_arrival + max_wait;
    if (now >= expires)
        return BATCHER_FLUSH_EXPIRED;      /* trigger two: the oldest waited W */
    if (deadline)
        *deadline = expires;               /* sleep until the window closes */
    return BATCHER_WAIT;
}
//< decide

/* ------------------------------------------------------------ completion */

static void deliver(batcher *b, pending *p, int rc, const void *result)
{
    switch (rc) {
    case BATCHER_OK: COUNT(b, ok); break;
    case BATCHER_EITEM: COUNT(b, item_errors); break;
    case BATCHER_ETIMEDOUT: COUNT(b, timeouts); break;
    case BATCHER_ECRASH: COUNT(b, crashes); break;
    case BATCHER_ECANCELLED: COUNT(b, cancelled); break;
    default: break;
    }
    COUNT(b, completed);
    waiter *w = p->w;
    if (rc == BATCHER_OK && b->cfg.result_size)
        memcpy(p->result, result, b->cfg.result_size);
    p->rc = rc;
    /* The release orders the writes above before the count; the caller
     * cannot return (and free p or w) before the post, and p and w are not
     * touched after it. */
    if (atomic_fetch_sub_explicit(&w->remaining, 1, memory_order_acq_rel) == 1)
        sem_post(&w->done);
}

/* Fail every request of bt nobody has answered yet.  Caller holds b->mu. */
static void abandon_batch_locked(batcher *b, batch *bt, int rc)
{
    bt->abandoned = 1;
    if (b->running == bt)
        b->running = NULL;
    for (size_t i = 0; i < bt->n; i++) {
        if (bt->who[i]) {
            deliver(b, bt->who[i], rc, NULL);
            bt->who[i] = NULL;
        }
    }
}

/* ------------------------------------------------------------ threads */

static void *flusher_main(void *arg);

/* Room for one more thread on both lists (a live thread always has its slot
 * on the finished list waiting, so ending never allocates).  Caller holds b->mu. */
static int reserve_thread_slot_locked(batcher *b)
{
    if (b->nthreads + b->nfinished < b->cap_threads)
        return 0;
    size_t cap = b->cap_threads ? 2 * b->cap_threads : 4;
    pthread_t *live = realloc(b->threads, cap * sizeof *live);
    if (!live)
        return -1;
    b->threads = live;
    pthread_t *done = realloc(b->finished, cap * sizeof *done);
    if (!done)
        return -1;
    b->finished = done;
    b->cap_threads = cap;
    return 0;
}

/* Join the flushers that have ended.  They left the lock before this caller
 * took it, so each join waits at most for a thread's last return.  Caller
 * holds b->mu and is not one of them. */
static void reap_finished_locked(batcher *b)
{
    for (size_t i = 0; i < b->nfinished; i++)
        pthread_join(b->finished[i], NULL);
    b->nfinished = 0;
}

/* The calling flusher is ending: move it to the finished list and tell
 * batcher_close, which waits for the live list to empty.  Caller holds
 * b->mu; after it unlocks, the thread touches nothing of b. */
static void remove_thread_locked(batcher *b)
{
    pthread_t me = pthread_self();
    for (size_t i = 0; i < b->nthreads; i++)
        if (pthread_equal(me, b->threads[i])) {
            b->threads[i] = b->threads[--b->nthreads];
            b->finished[b->nfinished++] = me;
            break;
        }
    pthread_cond_broadcast(&b->closed_cv);
}

/* 1 when the calling thread is one of b's flushers, that is, when a
 * handler calls back into its own batcher.  Caller holds b->mu. */
static int on_flusher_locked(const batcher *b)
{
    pthread_t me = pthread_self();
    for (size_t i = 0; i < b->nthreads; i++)
        if (pthread_equal(me, b->threads[i]))
            return 1;
    return 0;
}

/* Start a flusher of a new generation: any older one still inside a handler
 * finds itself abandoned when it returns.  Caller holds b->mu. */
static int start_flusher_locked(batcher *b)
{
    flusher_arg *fa = malloc(sizeof *fa);
    if (!fa)
        return -1;
    fa->b = b;
    fa->gen = ++b->flusher_gen;
    /* Join what has ended first (time-outs must not accumulate threads), and
     * make room: a flusher that cannot be tracked could not be waited for. */
    reap_finished_locked(b);
    if (reserve_thread_slot_locked(b) != 0) {
        free(fa);
        return -1;
    }
    pthread_t t;
    int rc = pthread_create(&t, NULL, flusher_main, fa);
    if (rc != 0) {
        free(fa);
        return -1;
    }
    b->threads[b->nthreads++] = t; /* the new thread blocks on b->mu until we unlock */
    b->flusher_running = 1;
    return 0;
}

/* The active flusher is gone (time-out or crash): hand the queue to a new
 * one, or, if none can start, fail what is queued.  Caller holds b->mu. */
static void replace_flusher_locked(batcher *b)
{
    COUNT(b, flushers_replaced);
    if (start_flusher_locked(b) == 0)
        return;
    b->broken = 1;
    b->flusher_running = 0;
    for (pending *p = b->head, *next; p; p = next) {
        next = p->next;
        deliver(b, p, BATCHER_ECRASH, NULL);
    }
    b->head = b->tail = NULL;
    b->queued = 0;
    pthread_cond_broadcast(&b->closed_cv);
}

static void *watchdog_main(void *arg)
{
    batcher *b = arg;
    pthread_mutex_lock(&b->mu);
    while (!b->watchdog_stop) {
        if (!b->running) {
            b->watchdog_idle = 1;
            pthread_cond_wait(&b->watch_cv, &b->mu);
            b->watchdog_idle = 0;
            continue;
        }
        if (batcher_now() >= b->running_deadline) {
            /* The handler overran: answer its callers now and let a fresh
             * flusher serve the queue.  The stuck thread frees its batch
             * when (if) its handler returns. */
            abandon_batch_locked(b, b->running, BATCHER_ETIMEDOUT);
            replace_flusher_locked(b);
            continue;
        }
        struct timespec ts = batcher_timespec(b->running_deadline);
        pthread_cond_timedwait(&b->watch_cv, &b->mu, &ts);
    }
    pthread_mutex_unlock(&b->mu);
    return NULL;
}

/* ------------------------------------------------------------ one batch */

typedef struct {
    batcher *b;
    batch *bt;
} call_ctx;

/* The handler left its thread (pthread_exit): fail its batch, replace this
 * flusher, free the batch. */
static void handler_exited(void *arg)
{
    call_ctx *c = arg;
    batcher *b = c->b;
    pthread_mutex_lock(&b->mu);
    if (!c->bt->abandoned) {
        abandon_batch_locked(b, c->bt, BATCHER_ECRASH);
        replace_flusher_locked(b);
    }
    free(c->bt);
    remove_thread_locked(b); /* the thread ends here, past flusher_main's own exit */
    pthread_mutex_unlock(&b->mu);
}

enum { RUN_DONE, RUN_ABANDONED };

/* Register the handler call about to start with the watchdog. */
static void watch_call_start(batcher *b, batch *bt)
{
    pthread_mutex_lock(&b->mu);
    b->running = bt;
    b->running_deadline = batcher_now() + b->cfg.handler_timeout;
    if (b->watchdog_idle)
        pthread_cond_signal(&b->watch_cv);
    pthread_mutex_unlock(&b->mu);
}

/* The call returned.  RUN_ABANDONED (lock released) when the watchdog gave
 * up on it meanwhile; else RUN_DONE with b->mu held, so that the caller can
 * claim its requests before the watchdog could. */
static int watch_call_end(batcher *b, batch *bt)
{
    pthread_mutex_lock(&b->mu);
    if (bt->abandoned) {
        pthread_mutex_unlock(&b->mu);
        return RUN_ABANDONED;
    }
    b->running = NULL;
    return RUN_DONE;
}

/* Call the handler on items [lo, hi) and deliver what it says; a whole-batch
 * failure is split in two and retried, so a bad request ends up alone and
 * only its caller sees the error. */
//> bisect
static int run_range(batcher *b, batch *bt, size_t lo, size_t hi)
{
    size_t n = hi - lo;
    for (size_t i = lo; i < hi; i++)
        bt->items[i].status = 0;
    int timed = b->cfg.handler_timeout > 0;
    if (timed)
        watch_call_start(b, bt);      /* the watchdog times this call */
    COUNT(b, handler_calls);
    call_ctx cc = {b, bt};
    int rc;
    pthread_cleanup_push(handler_exited, &cc);
    rc = b->cfg.handler(b->cfg.handler_ctx, bt->items + lo, n);
    pthread_cleanup_pop(0);
    if (timed && watch_call_end(b, bt) == RUN_ABANDONED)
        return RUN_ABANDONED;         /* the watchdog answered our callers */

    if (rc > 0 && n > 1) {            /* culprit unknown: halve and retry */
        if (timed)
            pthread_mutex_unlock(&b->mu);
        size_t mid = lo + n / 2;
        if (run_range(b, bt, lo, mid) == RUN_ABANDONED)
            return RUN_ABANDONED;
        return run_range(b, bt, mid, hi);
    }
    for (size_t i = lo; i < hi; i++) { /* claim this range's callers */
        bt->claimed[i] = bt->who[i];
        bt->who[i] = NULL;
    }
    if (timed)
        pthread_mutex_unlock(&b->mu);
    for (size_t i = lo; i < hi; i++) {
        int status = rc < 0 ? BATCHER_ECRASH
                   : rc > 0 ? BATCHER_EITEM              /* alone and failed */
                   : bt->items[i].status ? BATCHER_EITEM /* per-item status */
                   : BATCHER_OK;
        deliver(b, bt->claimed[i], status, bt->items[i].result);
    }
    return RUN_DONE;
}
//< bisect

/* Round up to the strictest alignment a request or result may need, so a
 * handler can read them as the structs they are. */
static size_t aligned(size_t x)
{
    size_t a = _Alignof(max_align_t);
    return (x + a - 1) / a * a;
}

/* Copy n queued requests (detached from the queue: chain) into a batch:
 * one allocation, laid out as header | items | who | claimed | requests |
 * results, each request and result on its own aligned stride. */
static batch *make_batch(batcher *b, pending *chain, size_t n)
{
    size_t rq = aligned(b->cfg.request_size), rs = aligned(b->cfg.result_size);
    size_t head = aligned(sizeof(batch) + n * (sizeof(batcher_item) + 2 * sizeof(pending *)));
    batch *bt = malloc(head + n * (rq + rs));
    if (!bt)
        return NULL;
    bt->n = n;
    bt->abandoned = 0;
    bt->items = (batcher_item *)(bt + 1);
    bt->who = (pending **)(bt->items + n);
    bt->claimed = bt->who + n;
    unsigned char *requests = (unsigned char *)bt + head;
    bt->results = requests + n * rq;
    size_t i = 0;
    for (pending *p = chain; p && i < n; p = p->next, i++) {
        bt->who[i] = p;
        if (b->cfg.request_size)
            memcpy(requests + i * rq, p->request, b->cfg.request_size);
        bt->items[i].request = requests + i * rq;
        bt->items[i].result = bt->results + i * rs;
        bt->items[i].status = 0;
    }
    return bt;
}

/* ------------------------------------------------------------ the flusher */

//> flusher
static void *flusher_main(void *arg)
{
    flusher_arg fa = *(flusher_arg *)arg;
    free(arg);
    batcher *b = fa.b;
    pthread_mutex_lock(&b->mu);
    for (;;) {
        if (b->flusher_gen != fa.gen)
            break;                                   /* replaced */
        if (b->closing && b->close_mode == BATCHER_CANCEL) {
            for (pending *p = b->head, *next; p; p = next) {
                next = p->next;
                deliver(b, p, BATCHER_ECANCELLED, NULL);
            }
            b->head = b->tail = NULL;
            b->queued = 0;
        }
        if (b->closing && b->queued == 0)
            break;                                   /* drained */
        double deadline = 0;
        double wait = b->closing ? 0 : b->cfg.max_wait; /* closing: flush now */
        batcher_decision d = batcher_decide(b->queued, b->head ? b->head->arrival : 0,
                                            batcher_now(), b->cfg.max_batch, wait, &deadline);
        if (d == BATCHER_IDLE || d == BATCHER_WAIT) {
            b->flusher_waiting = 1;
            if (d == BATCHER_IDLE) {
                pthread_cond_wait(&b->flush_cv, &b->mu);
            } else {
                struct timespec ts = batcher_timespec(deadline);
                pthread_cond_timedwait(&b->flush_cv, &b->mu, &ts);
            }
            b->flusher_waiting = 0;
            continue;                                /* decide again */
        }
        /* Take up to max_batch from the front of the queue. */
        size_t n = b->queued < b->cfg.max_batch ? b->queued : b->cfg.max_batch;
        pending *chain = b->head, *last = chain;
        for (size_t i = 1; i < n; i++)
            last = last->next;
        b->head = last->next;
        if (!b->head)
            b->tail = NULL;
        last->next = NULL;
        b->queued -= n;
        COUNT(b, batches);
        if (d == BATCHER_FLUSH_FULL) COUNT(b, full_flushes); else COUNT(b, timer_flushes);
        pthread_mutex_unlock(&b->mu);                /* the handler runs unlocked */

        batch *bt = make_batch(b, chain, n);
        int outcome = RUN_DONE;
        if (!bt) {
            for (pending *p = chain, *next; p; p = next) {
                next = p->next;
                deliver(b, p, BATCHER_ECRASH, NULL);
            }
        } else {
            outcome = run_range(b, bt, 0, n);
            free(bt);
        }
        pthread_mutex_lock(&b->mu);
        if (outcome == RUN_ABANDONED)
            break;                                   /* a successor took over */
    }
    if (b->flusher_gen == fa.gen) {                  /* the active flusher ends */
        b->flusher_running = 0;
        pthread_cond_broadcast(&b->closed_cv);
    }
    remove_thread_locked(b);
    pthread_mutex_unlock(&b->mu);
    return NULL;
}
//< flusher

/* ------------------------------------------------------------ public API */

static int init_cond_monotonic(pthread_cond_t *cv)
{
    pthread_condattr_t ca;
    if (pthread_condattr_init(&ca) != 0)
        return -1;
    int rc = pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    if (rc == 0)
        rc = pthread_cond_init(cv, &ca);
    pthread_condattr_destroy(&ca);
    return rc == 0 ? 0 : -1;
}

batcher *batcher_create(const batcher_config *cfg, char *err, size_t errlen)
{
    const char *why = NULL;
    if (!cfg)
        why = "no config";
    else if (cfg->max_batch < 1)
        why = "max_batch must be at least 1";
    else if (!(cfg->max_wait >= 0) || cfg->max_wait > 3600)
        why = "max_wait must be between 0 and 3600 seconds";
    else if (!(cfg->handler_timeout >= 0) || cfg->handler_timeout > 3600)
        why = "handler_timeout must be between 0 (none) and 3600 seconds";
    else if (!cfg->handler)
        why = "a handler is required";
    if (why) {
        if (err && errlen)
            snprintf(err, errlen, "batcher_create: %s", why);
        return NULL;
    }
    batcher *b = calloc(1, sizeof *b);
    if (!b) {
        if (err && errlen)
            snprintf(err, errlen, "batcher_create: out of memory");
        return NULL;
    }
    b->cfg = *cfg;
    pthread_mutex_init(&b->mu, NULL);
    if (init_cond_monotonic(&b->flush_cv) || init_cond_monotonic(&b->watch_cv) ||
        init_cond_monotonic(&b->closed_cv)) {
        if (err && errlen)
            snprintf(err, errlen, "batcher_create: cannot set up condition variables");
        free(b);
        return NULL;
    }
    pthread_mutex_lock(&b->mu);
    int ok = start_flusher_locked(b) == 0;
    if (ok && cfg->handler_timeout > 0) {
        ok = pthread_create(&b->watchdog, NULL, watchdog_main, b) == 0;
        b->has_watchdog = ok;
    }
    pthread_mutex_unlock(&b->mu);
    if (!ok) {
        if (err && errlen)
            snprintf(err, errlen, "batcher_create: cannot start threads");
        batcher_destroy(b);
        return NULL;
    }
    return b;
}

//> submit
/* Queue the n pendings of one caller (all valid) and wait for all of them. */
static void submit_and_wait(batcher *b, pending *ps, size_t n, waiter *w)
{
    atomic_init(&w->remaining, n);
    sem_init(&w->done, 0, 0);
    double now = batcher_now();
    for (size_t i = 0; i < n; i++) {
        ps[i].arrival = now;
        ps[i].w = w;
        ps[i].next = i + 1 < n ? &ps[i + 1] : NULL;
    }

    pthread_mutex_lock(&b->mu);
    if (b->closing || b->broken || on_flusher_locked(b)) { /* never queued: answer here */
        /* From inside the handler, waiting would mean waiting for the very
         * thread that waits: refuse instead of deadlocking. */
        int rc = on_flusher_locked(b) ? BATCHER_EREENTRANT
               : b->broken ? BATCHER_ECRASH : BATCHER_ECLOSED;
        pthread_mutex_unlock(&b->mu);
        for (size_t i = 0; i < n; i++) {
            if (rc == BATCHER_ECLOSED) COUNT(b, closed);
            deliver(b, &ps[i], rc, NULL);
        }
    } else {
        size_t before = b->queued;
        if (b->tail) b->tail->next = &ps[0]; else b->head = &ps[0];
        b->tail = &ps[n - 1];
        b->queued += n;
        /* Wake the flusher only when its decision changes: the queue was
         * empty (it sleeps without a deadline) or the batch just filled. */
        if (b->flusher_waiting &&
            (before == 0 || (before < b->cfg.max_batch && b->queued >= b->cfg.max_batch)))
            pthread_cond_signal(&b->flush_cv);
        pthread_mutex_unlock(&b->mu);
    }

    /* Yield a while before sleeping: on a busy machine the completion
     * usually comes within a few scheduling rounds, and a thread that never
     * went to sleep is not paying for a wake-up. */
    for (int spin = 0; spin < SPIN_YIELDS && atomic_load_explicit(&w->remaining, memory_order_acquire); spin++)
        sched_yield();
    while (sem_wait(&w->done) != 0) /* only EINTR: retry */
        ;
    sem_destroy(&w->done);         /* b is not touched after completion */
}

int batcher_submit(batcher *b, const void *request, void *result)
{
    COUNT(b, submitted);
    if (b->cfg.validate && b->cfg.validate(b->cfg.validate_ctx, request) != 0) {
        COUNT(b, rejected);
        COUNT(b, completed);
        return BATCHER_EINVAL;             /* rejected at the door, alone */
    }
    pending p = {.request = request, .result = result};
    waiter w;
    submit_and_wait(b, &p, 1, &w);
    return p.rc;
}
//< submit

//> close
int batcher_close(batcher *b, batcher_close_mode mode)
{
    if (!b)
        return 0;
    pthread_mutex_lock(&b->mu);
    if (on_flusher_locked(b)) {            /* from the handler: it would join itself */
        pthread_mutex_unlock(&b->mu);
        return BATCHER_EREENTRANT;
    }
    if (b->closing) {                      /* someone else is closing it */
        while (!b->closed)
            pthread_cond_wait(&b->closed_cv, &b->mu);
        pthread_mutex_unlock(&b->mu);
        return 0;
    }
    b->closing = 1;                        /* from now on submit says ECLOSED */
    b->close_mode = mode;
    pthread_cond_broadcast(&b->flush_cv);
    while (b->flusher_running)             /* the queue drains or is cancelled */
        pthread_cond_wait(&b->closed_cv, &b->mu);
    b->watchdog_stop = 1;
    pthread_cond_broadcast(&b->watch_cv);
    pthread_mutex_unlock(&b->mu);          /* never join while holding the lock */

    if (b->has_watchdog)
        pthread_join(b->watchdog, NULL);
    /* No thread can start another flusher now.  One abandoned inside a slow
     * handler ends (and leaves the list) when that handler returns. */
    pthread_mutex_lock(&b->mu);
    while (b->nthreads > 0)
        pthread_cond_wait(&b->closed_cv, &b->mu);
    reap_finished_locked(b); /* when close returns, every flusher thread has exited */
    b->closed = 1;
    pthread_cond_broadcast(&b->closed_cv);
    pthread_mutex_unlock(&b->mu);
    return 0;
}
//< close

void batcher_destroy(batcher *b)
{
    if (!b)
        return;
    batcher_close(b, BATCHER_CANCEL);
    free(b->threads);
    free(b->finished);
    pthread_cond_destroy(&b->flush_cv);
    pthread_cond_destroy(&b->watch_cv);
    pthread_cond_destroy(&b->closed_cv);
    pthread_mutex_destroy(&b->mu);
    free(b);
}

size_t batcher_submit_many(batcher *b, size_t n, const void *requests, void *results, int *rcs)
{
    if (n == 0)
        return 0;
    const unsigned char *rq = requests;
    unsigned char *rs = results;
    pending *ps = malloc(n * sizeof *ps);
    size_t *slot = malloc(n * sizeof *slot); /* ps[j] is request slot[j] */
    size_t queued = 0;
    for (size_t i = 0; i < n; i++) {
        COUNT(b, submitted);
        const void *request = rq + i * b->cfg.request_size;
        if (!ps || !slot) {
            COUNT(b, crashes);
            COUNT(b, completed);
            rcs[i] = BATCHER_ECRASH;       /* out of memory: refuse, never hang */
        } else if (b->cfg.validate && b->cfg.validate(b->cfg.validate_ctx, request) != 0) {
            COUNT(b, rejected);
            COUNT(b, completed);
            rcs[i] = BATCHER_EINVAL;
        } else {
            slot[queued] = i;
            ps[queued++] = (pending){.request = request,
                                     .result = rs ? rs + i * b->cfg.result_size : NULL};
        }
    }
    if (queued) {
        waiter w;
        submit_and_wait(b, ps, queued, &w);
        for (size_t j = 0; j < queued; j++)
            rcs[slot[j]] = ps[j].rc;
    }
    free(ps);
    free(slot);
    size_t ok = 0;
    for (size_t i = 0; i < n; i++)
        ok += rcs[i] == BATCHER_OK;
    return ok;
}

batcher_stats batcher_get_stats(batcher *b)
{
    batcher_stats s;
#define LOAD(f) s.f = atomic_load_explicit(&b->st.f, memory_order_relaxed)
    LOAD(submitted); LOAD(completed); LOAD(ok); LOAD(rejected); LOAD(item_errors);
    LOAD(timeouts); LOAD(crashes); LOAD(cancelled); LOAD(closed); LOAD(batches);
    LOAD(handler_calls); LOAD(full_flushes); LOAD(timer_flushes); LOAD(flushers_replaced);
#undef LOAD
    return s;
}
