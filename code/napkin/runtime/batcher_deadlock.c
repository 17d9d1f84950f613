/* A deadlocking window batcher and its fix: see batcher_deadlock.h. */
#include "batcher_deadlock.h"

#include "batcher.h" /* batcher_now, batcher_timespec */

#include <pthread.h>

/* State shared by both demos: a count of queued and flushed requests, and
 * the timer. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv; /* CLOCK_MONOTONIC */
    int queued, flushed;
    int timer_armed;   /* a deadline is set */
    int timer_running; /* the timer's callback is in progress */
    int stop;
    double deadline, window;
    int max_batch;
} mini;

static int mini_init(mini *q, double window)
{
    *q = (mini){.window = window, .max_batch = 8};
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    int rc = pthread_cond_init(&q->cv, &ca);
    pthread_condattr_destroy(&ca);
    pthread_mutex_init(&q->mu, NULL);
    return rc;
}

static void mini_destroy(mini *q)
{
    pthread_cond_destroy(&q->cv);
    pthread_mutex_destroy(&q->mu);
}

/* ------------------------------------------------------------ the bug */

//> deadlock_bug
/* Flush what is queued.  The fill path and the timer both call this. */
static void flush(mini *q)
{
    pthread_mutex_lock(&q->mu);
    q->timer_armed = 0;            /* stop the timer ...                    */
    while (q->timer_running)       /* ... and wait out a callback in flight */
        pthread_cond_wait(&q->cv, &q->mu);
    q->flushed += q->queued;
    q->queued = 0;
    pthread_cond_broadcast(&q->cv);
    pthread_mutex_unlock(&q->mu);
}

static void *timer_thread(void *arg)
{
    mini *q = arg;
    pthread_mutex_lock(&q->mu);
    while (!q->stop) {
        if (!q->timer_armed) {
            pthread_cond_wait(&q->cv, &q->mu);
        } else if (batcher_now() < q->deadline) {
            struct timespec ts = batcher_timespec(q->deadline);
            pthread_cond_timedwait(&q->cv, &q->mu, &ts);
        } else {                   /* the window expired: run the callback */
            q->timer_running = 1;
            pthread_mutex_unlock(&q->mu);
            flush(q);              /* waits for timer_running == 0: itself */
            pthread_mutex_lock(&q->mu);
            q->timer_running = 0;
            pthread_cond_broadcast(&q->cv);
        }
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}
//< deadlock_bug

static void buggy_submit(mini *q)
{
    pthread_mutex_lock(&q->mu);
    int ticket = q->flushed + q->queued + 1;
    if (++q->queued == 1) {        /* first of a batch: arm the timer */
        q->timer_armed = 1;
        q->deadline = batcher_now() + q->window;
        pthread_cond_broadcast(&q->cv);
    }
    int full = q->queued >= q->max_batch;
    pthread_mutex_unlock(&q->mu);
    if (full)
        flush(q);
    pthread_mutex_lock(&q->mu);
    while (q->flushed < ticket)
        pthread_cond_wait(&q->cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
}

int deadlock_demo_buggy(double window_s)
{
    mini q;
    if (mini_init(&q, window_s) != 0)
        return -1;
    pthread_t t;
    if (pthread_create(&t, NULL, timer_thread, &q) != 0) {
        mini_destroy(&q);
        return -1;
    }
    buggy_submit(&q);              /* never returns: the timer is stuck */
    pthread_mutex_lock(&q.mu);
    q.stop = 1;
    pthread_cond_broadcast(&q.cv);
    pthread_mutex_unlock(&q.mu);
    pthread_join(t, NULL);
    int flushed = q.flushed;
    mini_destroy(&q);
    return flushed;
}

/* ------------------------------------------------------------ the fix */

//> deadlock_fix
/* One thread owns both triggers.  Nobody stops it: the fill path signals,
 * and the flusher flushes under the lock it already holds. */
static void *flusher_thread(void *arg)
{
    mini *q = arg;
    pthread_mutex_lock(&q->mu);
    while (!q->stop || q->queued > 0) {
        if (q->queued == 0) {
            pthread_cond_wait(&q->cv, &q->mu);
        } else if (q->queued < q->max_batch && !q->stop &&
                   batcher_now() < q->deadline) {
            struct timespec ts = batcher_timespec(q->deadline);
            pthread_cond_timedwait(&q->cv, &q->mu, &ts);
        } else {                   /* full, expired or closing: flush */
            q->flushed += q->queued;
            q->queued = 0;
            pthread_cond_broadcast(&q->cv);
        }
    }
    pthread_mutex_unlock(&q->mu);
    return NULL;
}

static void fixed_submit(mini *q)
{
    pthread_mutex_lock(&q->mu);
    int ticket = q->flushed + q->queued + 1;
    if (++q->queued == 1)
        q->deadline = batcher_now() + q->window;
    if (q->queued == 1 || q->queued >= q->max_batch)
        pthread_cond_broadcast(&q->cv);  /* signal; never flush here */
    while (q->flushed < ticket)
        pthread_cond_wait(&q->cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
}
//< deadlock_fix

int deadlock_demo_fixed(double window_s)
{
    mini q;
    if (mini_init(&q, window_s) != 0)
        return -1;
    pthread_t t;
    if (pthread_create(&t, NULL, flusher_thread, &q) != 0) {
        mini_destroy(&q);
        return -1;
    }
    fixed_submit(&q);
    pthread_mutex_lock(&q.mu);
    q.stop = 1;
    pthread_cond_broadcast(&q.cv);
    pthread_mutex_unlock(&q.mu);   /* join only after letting go of the lock */
    pthread_join(t, NULL);
    int flushed = q.flushed;
    mini_destroy(&q);
    return flushed;
}
