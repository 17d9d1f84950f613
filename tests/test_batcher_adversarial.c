/* napkin: tsan */
/* The batcher against a hostile handler and hostile callers: handlers that
 * overrun their time-out, fail some items, ask for bisection, crash, or do
 * not return until released; close and destroy while callers wait; submits
 * after close; max batch 1 with no window; 64 threads.  Every request gets
 * exactly one result, the one its own request calls for, and nothing waits
 * past its stated bound.  Runs under ThreadSanitizer and AddressSanitizer too. */
#include "batcher.h"

#include "criterion_or_shim.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { THREADS = 64 };

/* What a request asks the handler to do with it. */
enum { DO_OK, DO_FAIL_ITEM, DO_RETRY_BAD, DO_CRASH, DO_SLOW };

typedef struct {
    int what;
    int value;
} req;

typedef struct {
    atomic_int handler_calls;
    double slow_seconds;
    /* a handler that never returns until released */
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int release;
    atomic_int stuck;
} hctx;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (time_t)s) * 1e9)};
    nanosleep(&ts, NULL);
}

static int hostile_handler(void *ctx, batcher_item *items, size_t n)
{
    hctx *h = ctx;
    atomic_fetch_add(&h->handler_calls, 1);
    int crash = 0, retry = 0, slow = 0;
    for (size_t i = 0; i < n; i++) {
        const req *r = items[i].request;
        crash |= r->what == DO_CRASH;
        retry |= r->what == DO_RETRY_BAD;
        slow |= r->what == DO_SLOW;
    }
    if (crash)
        return BATCHER_HANDLER_CRASH; /* fails the whole call */
    if (retry)
        return BATCHER_HANDLER_RETRY; /* culprit unknown: the batcher bisects */
    if (slow)
        sleep_s(h->slow_seconds);
    for (size_t i = 0; i < n; i++) {
        const req *r = items[i].request;
        int out = 3 * r->value + 1;
        memcpy(items[i].result, &out, sizeof out);
        items[i].status = r->what == DO_FAIL_ITEM;
    }
    return BATCHER_HANDLER_OK;
}

typedef struct {
    batcher *b;
    int id, n;
    atomic_int *wrong, *answered;
} caller_arg;

/* The result each request must get, given what it asked for.  A crash fails
 * its whole handler call, so a good request that shared a batch with a
 * crashing one may see ECRASH; a slow one may time out, and so may those
 * sharing its batch. */
static int acceptable(int what, int rc, int out, int value)
{
    switch (what) {
    case DO_OK: return (rc == BATCHER_OK && out == 3 * value + 1) || rc == BATCHER_ECRASH || rc == BATCHER_ETIMEDOUT;
    case DO_FAIL_ITEM: return rc == BATCHER_EITEM || rc == BATCHER_ECRASH || rc == BATCHER_ETIMEDOUT;
    case DO_RETRY_BAD: return rc == BATCHER_EITEM || rc == BATCHER_ECRASH || rc == BATCHER_ETIMEDOUT;
    case DO_CRASH: return rc == BATCHER_ECRASH || rc == BATCHER_ETIMEDOUT;
    case DO_SLOW: return rc == BATCHER_ETIMEDOUT || (rc == BATCHER_OK && out == 3 * value + 1) ||
                         rc == BATCHER_ECRASH;
    }
    return 0;
}

static void *hostile_caller(void *p)
{
    caller_arg *a = p;
    for (int i = 0; i < a->n; i++) {
        int k = a->id * 7919 + i * 104729;
        req r = {k % 97 == 0 ? DO_CRASH : k % 31 == 0 ? DO_RETRY_BAD : k % 13 == 0 ? DO_FAIL_ITEM
                 : k % 41 == 0 ? DO_SLOW : DO_OK, k};
        int out = -1;
        int rc = batcher_submit(a->b, &r, &out);
        atomic_fetch_add(a->answered, 1);
        if (!acceptable(r.what, rc, out, r.value))
            atomic_fetch_add(a->wrong, 1);
    }
    return NULL;
}

static void run_callers(batcher *b, int per_thread, atomic_int *wrong, atomic_int *answered)
{
    pthread_t t[THREADS];
    caller_arg a[THREADS];
    for (int i = 0; i < THREADS; i++) {
        a[i] = (caller_arg){b, i, per_thread, wrong, answered};
        pthread_create(&t[i], NULL, hostile_caller, &a[i]);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
}

static hctx *new_ctx(double slow)
{
    hctx *h = calloc(1, sizeof *h);
    h->slow_seconds = slow;
    pthread_mutex_init(&h->mu, NULL);
    pthread_cond_init(&h->cv, NULL);
    return h;
}

static void free_ctx(hctx *h)
{
    pthread_mutex_destroy(&h->mu);
    pthread_cond_destroy(&h->cv);
    free(h);
}

Test(adversarial, sixty_four_threads_every_failure_mode)
{
    alarm(120);
    hctx *h = new_ctx(0.004); /* slow requests overrun the 2 ms time-out */
    batcher_config cfg = {.max_batch = 8, .max_wait = 0.0005, .request_size = sizeof(req),
                          .result_size = sizeof(int), .handler = hostile_handler, .handler_ctx = h,
                          .handler_timeout = 0.002};
    batcher *b = batcher_create(&cfg, NULL, 0);
    cr_assert_not_null(b);
    atomic_int wrong = 0, answered = 0;
    run_callers(b, 200, &wrong, &answered);
    cr_expect_eq(atomic_load(&wrong), 0);
    cr_expect_eq(atomic_load(&answered), THREADS * 200);
    batcher_stats st = batcher_get_stats(b);
    cr_expect_eq(st.completed, st.submitted);
    cr_expect_eq(st.submitted, (uint64_t)THREADS * 200);
    cr_expect_geq(st.crashes, 1);
    cr_expect_geq(st.item_errors, 1);
    batcher_destroy(b);
    free_ctx(h);
    alarm(0);
}

Test(adversarial, max_batch_one_no_window)
{
    alarm(120);
    hctx *h = new_ctx(0.001);
    batcher_config cfg = {.max_batch = 1, .max_wait = 0, .request_size = sizeof(req), .result_size = sizeof(int),
                          .handler = hostile_handler, .handler_ctx = h, .handler_timeout = 0.01};
    batcher *b = batcher_create(&cfg, NULL, 0);
    cr_assert_not_null(b);
    atomic_int wrong = 0, answered = 0;
    run_callers(b, 100, &wrong, &answered);
    cr_expect_eq(atomic_load(&wrong), 0);
    batcher_stats st = batcher_get_stats(b);
    cr_expect_eq(st.completed, st.submitted);
    /* one request a batch: a crash or a bad item fails only its own caller */
    cr_expect_eq(st.batches, st.submitted - st.rejected);
    batcher_destroy(b);
    free_ctx(h);
    alarm(0);
}

typedef struct {
    batcher *b;
    atomic_int *answered, *wrong;
    atomic_int *stop;
} looper_arg;

static void *looping_caller(void *p)
{
    looper_arg *a = p;
    int after_close = 0;
    for (int i = 0; !atomic_load(a->stop) || after_close < 3; i++) {
        req r = {DO_OK, i};
        int out = -1;
        int rc = batcher_submit(a->b, &r, &out);
        atomic_fetch_add(a->answered, 1);
        if (rc == BATCHER_ECLOSED || rc == BATCHER_ECANCELLED)
            after_close++;
        else if (!(rc == BATCHER_OK && out == 3 * i + 1))
            atomic_fetch_add(a->wrong, 1);
        if (after_close >= 3)
            break; /* the batcher is closed: every later submit says so */
    }
    return NULL;
}

Test(adversarial, close_while_callers_wait_and_submit_after)
{
    alarm(120);
    for (int mode = 0; mode < 2; mode++) {
        hctx *h = new_ctx(0);
        batcher_config cfg = {.max_batch = 16, .max_wait = 0.002, .request_size = sizeof(req),
                              .result_size = sizeof(int), .handler = hostile_handler, .handler_ctx = h};
        batcher *b = batcher_create(&cfg, NULL, 0);
        cr_assert_not_null(b);
        atomic_int answered = 0, wrong = 0, stop = 0;
        pthread_t t[THREADS];
        looper_arg a = {b, &answered, &wrong, &stop};
        for (int i = 0; i < THREADS; i++)
            pthread_create(&t[i], NULL, looping_caller, &a);
        sleep_s(0.05);
        atomic_store(&stop, 1);
        cr_expect_eq(batcher_close(b, mode ? BATCHER_CANCEL : BATCHER_DRAIN), 0);
        for (int i = 0; i < THREADS; i++)
            pthread_join(t[i], NULL);
        req r = {DO_OK, 1};
        int out;
        cr_expect_eq(batcher_submit(b, &r, &out), BATCHER_ECLOSED);
        batcher_stats st = batcher_get_stats(b);
        cr_expect_eq(st.completed, st.submitted);
        cr_expect_eq((uint64_t)atomic_load(&answered) + 1, st.submitted);
        cr_expect_eq(atomic_load(&wrong), 0);
        batcher_destroy(b);
        free_ctx(h);
    }
    alarm(0);
}

/* A handler that does not return until released: its callers get their
 * time-out within the bound; the batcher serves new requests meanwhile (a
 * fresh flusher); close waits for the stuck call, which is the stated
 * limitation (batcher.h), and returns once it is released. */
static int stuck_handler(void *ctx, batcher_item *items, size_t n)
{
    hctx *h = ctx;
    const req *first = items[0].request;
    if (first->what == DO_SLOW) {
        atomic_fetch_add(&h->stuck, 1);
        pthread_mutex_lock(&h->mu);
        while (!h->release)
            pthread_cond_wait(&h->cv, &h->mu);
        pthread_mutex_unlock(&h->mu);
    }
    for (size_t i = 0; i < n; i++) {
        const req *r = items[i].request;
        int out = 3 * r->value + 1;
        memcpy(items[i].result, &out, sizeof out);
    }
    return BATCHER_HANDLER_OK;
}

typedef struct {
    batcher *b;
    int rc;
    double waited;
} stuck_arg;

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + 1e-9 * ts.tv_nsec;
}

static void *stuck_caller(void *p)
{
    stuck_arg *a = p;
    req r = {DO_SLOW, 5};
    int out;
    double t0 = now_s();
    a->rc = batcher_submit(a->b, &r, &out);
    a->waited = now_s() - t0;
    return NULL;
}

Test(adversarial, handler_that_never_returns)
{
    alarm(60);
    hctx *h = new_ctx(0);
    batcher_config cfg = {.max_batch = 1, .max_wait = 0, .request_size = sizeof(req), .result_size = sizeof(int),
                          .handler = stuck_handler, .handler_ctx = h, .handler_timeout = 0.05};
    batcher *b = batcher_create(&cfg, NULL, 0);
    cr_assert_not_null(b);
    stuck_arg s[4];
    pthread_t t[4];
    for (int i = 0; i < 4; i++) {
        s[i] = (stuck_arg){b, -1, 0};
        pthread_create(&t[i], NULL, stuck_caller, &s[i]);
    }
    for (int i = 0; i < 4; i++)
        pthread_join(t[i], NULL);
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(s[i].rc, BATCHER_ETIMEDOUT);
        /* each waits at most its own time-out behind the others' (max batch 1):
         * four 50 ms time-outs in a row, with a generous 2 s for a loaded machine */
        cr_expect_lt(s[i].waited, 2.0);
    }
    cr_expect_eq(atomic_load(&h->stuck), 4);
    /* a good request is served while four handler calls are still stuck */
    req r = {DO_OK, 9};
    int out = -1;
    cr_expect_eq(batcher_submit(b, &r, &out), BATCHER_OK);
    cr_expect_eq(out, 28);
    /* release them, then close returns */
    pthread_mutex_lock(&h->mu);
    h->release = 1;
    pthread_cond_broadcast(&h->cv);
    pthread_mutex_unlock(&h->mu);
    cr_expect_eq(batcher_close(b, BATCHER_DRAIN), 0);
    batcher_destroy(b);
    free_ctx(h);
    alarm(0);
}
