/* napkin: tsan */
/* The batcher: both triggers, per-caller results, the error paths (invalid
 * request, per-item failure, bisection, time-out, crash), close while in
 * flight, and the deadlock specimen run in a child process under a watchdog.
 * Every test runs under an alarm, so a hang is a failure, not a stall. */
#include "batcher.h"
#include "batcher_deadlock.h"

#include "criterion_or_shim.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* A watchdog for every test: SIGALRM ends a hung test as a crash.  (Not
 * Criterion's .timeout, whose bookkeeping LeakSanitizer reports as a leak.) */
static void arm_watchdog(void)
{
    alarm(60);
}
#ifdef BATCHER_TEST_TSAN
__attribute__((unused)) static void (*shim_unused)(void) = arm_watchdog;
#endif
TestSuite(batcher, .init = arm_watchdog);
TestSuite(batcher_deadlock, .init = arm_watchdog);

/* ------------------------------------------------------------ a test handler */

enum { F_POISON = 1, F_ITEMFAIL = 2, F_SLOW = 4, F_CRASH = 8, F_EXIT = 16, F_INVALID = 32, F_REENTER = 64 };

typedef struct {
    int64_t value;
    int flags;
} req;

typedef struct {
    atomic_int calls;
    atomic_int items_seen;
    atomic_int invalid_seen;
    double slow_s;
    batcher *self;            /* for F_REENTER: the handler's own batcher */
    atomic_int reenter_submit_rc, reenter_close_rc;
} handler_state;

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* result = 2*value + 1, so each caller can check it got its own answer. */
static int test_handler(void *ctx, batcher_item *items, size_t n)
{
    handler_state *h = ctx;
    atomic_fetch_add(&h->calls, 1);
    atomic_fetch_add(&h->items_seen, (int)n);
    int slow = 0, crash = 0, exits = 0, poison = 0, reenter = 0;
    for (size_t i = 0; i < n; i++) {
        const req *r = items[i].request;
        slow |= r->flags & F_SLOW;
        crash |= r->flags & F_CRASH;
        exits |= r->flags & F_EXIT;
        poison |= r->flags & F_POISON;
        reenter |= r->flags & F_REENTER;
        if (r->flags & F_INVALID)
            atomic_fetch_add(&h->invalid_seen, 1);
    }
    if (slow)
        sleep_s(h->slow_s);
    if (reenter) { /* both would wait for this very thread */
        req inner = {.value = 1};
        int64_t out;
        atomic_store(&h->reenter_submit_rc, batcher_submit(h->self, &inner, &out));
        atomic_store(&h->reenter_close_rc, batcher_close(h->self, BATCHER_DRAIN));
    }
    if (exits)
        pthread_exit(NULL);
    if (crash)
        return BATCHER_HANDLER_CRASH;
    if (poison)
        return BATCHER_HANDLER_RETRY; /* fails the batch without naming the item */
    for (size_t i = 0; i < n; i++) {
        const req *r = items[i].request;
        int64_t out = 2 * r->value + 1;
        memcpy(items[i].result, &out, sizeof out);
        items[i].status = (r->flags & F_ITEMFAIL) ? 7 : 0;
    }
    return BATCHER_HANDLER_OK;
}

static int test_validate(void *ctx, const void *request)
{
    (void)ctx;
    return (((const req *)request)->flags & F_INVALID) ? -1 : 0;
}

static batcher *make(handler_state *h, size_t max_batch, double max_wait, double timeout)
{
    batcher_config cfg = {
        .max_batch = max_batch, .max_wait = max_wait,
        .request_size = sizeof(req), .result_size = sizeof(int64_t),
        .handler = test_handler, .handler_ctx = h,
        .validate = test_validate, .handler_timeout = timeout,
    };
    char err[128];
    batcher *b = batcher_create(&cfg, err, sizeof err);
    cr_assert_not_null(b, "%s", err);
    return b;
}

/* ------------------------------------------------------------ concurrent callers */

typedef struct {
    batcher *b;
    req r;
    int64_t result;
    int rc;
    double latency;
    double start_delay;
} call;

static void *caller(void *arg)
{
    call *c = arg;
    if (c->start_delay > 0)
        sleep_s(c->start_delay);
    c->result = -1;
    double t0 = batcher_now();
    c->rc = batcher_submit(c->b, &c->r, &c->result);
    c->latency = batcher_now() - t0;
    return NULL;
}

static void run_callers(call *c, size_t n)
{
    pthread_t t[64];
    cr_assert(n <= 64);
    for (size_t i = 0; i < n; i++)
        cr_assert_eq(pthread_create(&t[i], NULL, caller, &c[i]), 0);
    for (size_t i = 0; i < n; i++)
        pthread_join(t[i], NULL);
}

/* ------------------------------------------------------------ pure parts */

Test(batcher, decide_follows_both_triggers)
{
    double dl = -1;
    /* Empty queue: nothing to time. */
    cr_expect_eq(batcher_decide(0, 0, 5, 8, 0.010, &dl), BATCHER_IDLE);
    /* 8 queued with max 8: full, whatever the clock says. */
    cr_expect_eq(batcher_decide(8, 1.000, 1.000, 8, 0.010, &dl), BATCHER_FLUSH_FULL);
    /* 3 queued, oldest at 1.000 s, W = 10 ms, now 1.004: wait until 1.010. */
    cr_expect_eq(batcher_decide(3, 1.000, 1.004, 8, 0.010, &dl), BATCHER_WAIT);
    cr_expect_float_eq(dl, 1.010, 1e-12);
    /* now 1.010 = 1.000 + 0.010 exactly: the window has expired. */
    cr_expect_eq(batcher_decide(3, 1.000, 1.010, 8, 0.010, &dl), BATCHER_FLUSH_EXPIRED);
    /* W = 0: a lone request goes at once. */
    cr_expect_eq(batcher_decide(1, 2.0, 2.0, 8, 0, &dl), BATCHER_FLUSH_EXPIRED);
}

Test(batcher, timespec_carries_nanoseconds)
{
    struct timespec ts = batcher_timespec(12.25);
    /* 12.25 s = 12 s + 250,000,000 ns */
    cr_expect_eq(ts.tv_sec, 12);
    cr_expect(labs(ts.tv_nsec - 250000000L) <= 1);
    ts = batcher_timespec(3.9999999999);
    /* within 0.1 ns of 4 s: either 3 s + 999,999,999 ns or 4 s + 0; never 1e9 ns */
    cr_expect(ts.tv_nsec >= 0 && ts.tv_nsec < 1000000000L);
    cr_expect(ts.tv_sec == 3 || ts.tv_sec == 4);
}

Test(batcher, create_rejects_bad_config)
{
    handler_state h = {0};
    char err[128] = "";
    batcher_config cfg = {.max_batch = 0, .max_wait = 0.01, .handler = test_handler, .handler_ctx = &h};
    cr_expect_null(batcher_create(&cfg, err, sizeof err));
    cr_expect(strstr(err, "max_batch") != NULL, "message names max_batch: %s", err);
    cfg.max_batch = 4;
    cfg.max_wait = -1;
    cr_expect_null(batcher_create(&cfg, err, sizeof err));
    cr_expect(strstr(err, "max_wait") != NULL, "%s", err);
    cfg.max_wait = 0.01;
    cfg.handler = NULL;
    cr_expect_null(batcher_create(&cfg, err, sizeof err));
    cr_expect(strstr(err, "handler") != NULL, "%s", err);
}

/* ------------------------------------------------------------ triggers */

Test(batcher, lone_request_waits_one_window)
{
    handler_state h = {0};
    batcher *b = make(&h, 8, 0.050, 0);
    call c = {.b = b, .r = {.value = 20}};
    run_callers(&c, 1);
    cr_expect_eq(c.rc, BATCHER_OK);
    /* 2 * 20 + 1 */
    cr_expect_eq(c.result, 41);
    /* Only the timer can flush a batch of one with max 8: at least W = 50 ms;
     * under 1 s even on a loaded machine. */
    cr_expect_geq(c.latency, 0.050 - 1e-4, "latency %g", c.latency);
    cr_expect_lt(c.latency, 1.0, "latency %g", c.latency);
    batcher_stats s = batcher_get_stats(b);
    cr_expect_eq(s.timer_flushes, 1);
    cr_expect_eq(s.full_flushes, 0);
    batcher_destroy(b);
}

Test(batcher, full_batch_does_not_wait_for_the_window)
{
    handler_state h = {0};
    batcher *b = make(&h, 4, 30.0, 0); /* the window alone would take 30 s */
    call c[4];
    for (int i = 0; i < 4; i++)
        c[i] = (call){.b = b, .r = {.value = 100 + i}};
    run_callers(c, 4);
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(c[i].rc, BATCHER_OK);
        cr_expect_eq(c[i].result, 2 * (100 + i) + 1);
        cr_expect_lt(c[i].latency, 5.0);
    }
    batcher_stats s = batcher_get_stats(b);
    /* Four requests, max batch four: one full flush, one handler call. */
    cr_expect_eq(s.batches, 1);
    cr_expect_eq(s.full_flushes, 1);
    cr_expect_eq(atomic_load(&h.calls), 1);
    batcher_destroy(b);
}

Test(batcher, every_caller_gets_its_own_result)
{
    handler_state h = {0};
    batcher *b = make(&h, 5, 0.002, 0);
    call c[40];
    for (int i = 0; i < 40; i++)
        c[i] = (call){.b = b, .r = {.value = 1000 * i + 7}, .start_delay = 0.0005 * (i % 7)};
    run_callers(c, 40);
    for (int i = 0; i < 40; i++) {
        cr_expect_eq(c[i].rc, BATCHER_OK);
        cr_expect_eq(c[i].result, 2 * (1000 * i + 7) + 1, "caller %d", i);
    }
    batcher_stats s = batcher_get_stats(b);
    cr_expect_eq(s.completed, 40);
    cr_expect_eq(s.ok, 40);
    /* At most 5 per batch: at least ceil(40 / 5) = 8 batches. */
    cr_expect_geq(s.batches, 8);
    batcher_destroy(b);
}

/* ------------------------------------------------------------ errors */

Test(batcher, invalid_request_is_rejected_at_submit)
{
    handler_state h = {0};
    batcher *b = make(&h, 4, 0.001, 0);
    req bad = {.value = 3, .flags = F_INVALID};
    int64_t out = 99;
    cr_expect_eq(batcher_submit(b, &bad, &out), BATCHER_EINVAL);
    cr_expect_eq(out, 99, "result untouched on error");
    cr_expect_eq(atomic_load(&h.invalid_seen), 0, "the handler never saw it");
    req good = {.value = 3};
    cr_expect_eq(batcher_submit(b, &good, &out), BATCHER_OK);
    cr_expect_eq(out, 7); /* 2 * 3 + 1 */
    batcher_destroy(b);
}

Test(batcher, per_item_status_fails_only_that_caller)
{
    handler_state h = {0};
    batcher *b = make(&h, 6, 30.0, 0);
    call c[6];
    for (int i = 0; i < 6; i++)
        c[i] = (call){.b = b, .r = {.value = i, .flags = i == 4 ? F_ITEMFAIL : 0}};
    run_callers(c, 6);
    for (int i = 0; i < 6; i++) {
        if (i == 4) {
            cr_expect_eq(c[i].rc, BATCHER_EITEM);
        } else {
            cr_expect_eq(c[i].rc, BATCHER_OK, "caller %d: %s", i, batcher_strerror(c[i].rc));
            cr_expect_eq(c[i].result, 2 * i + 1);
        }
    }
    /* Per-item status needs no retry: one call. */
    cr_expect_eq(atomic_load(&h.calls), 1);
    batcher_destroy(b);
}

/* With and without the watchdog (handler_timeout > 0 takes the lock around
 * every handler call): the same bisection, the same counts. */
static void check_bisection(double timeout)
{
    handler_state h = {0};
    batcher *b = make(&h, 8, 30.0, timeout);
    call c[8];
    for (int i = 0; i < 8; i++)
        c[i] = (call){.b = b, .r = {.value = 10 + i, .flags = i == 5 ? F_POISON : 0}};
    run_callers(c, 8);
    int errors = 0;
    for (int i = 0; i < 8; i++) {
        if (c[i].r.flags & F_POISON) {
            cr_expect_eq(c[i].rc, BATCHER_EITEM);
            errors++;
        } else {
            cr_expect_eq(c[i].rc, BATCHER_OK, "caller %d: %s", i, batcher_strerror(c[i].rc));
            cr_expect_eq(c[i].result, 2 * (10 + i) + 1);
        }
    }
    cr_expect_eq(errors, 1);
    /* Halving 8 -> 4 -> 2 -> 1 around one bad request: the failed call of
     * 8, then at each of log2(8) = 3 levels one failing and one passing
     * half: 1 + 2 * 3 = 7 calls; items seen 8 + 2*(4 + 2 + 1) = 22. */
    cr_expect_eq(atomic_load(&h.calls), 7);
    cr_expect_eq(atomic_load(&h.items_seen), 22);
    batcher_destroy(b);
}

Test(batcher, bisection_isolates_the_bad_request)
{
    check_bisection(0);
}

Test(batcher, bisection_under_the_watchdog)
{
    check_bisection(5.0);
}

Test(batcher, handler_timeout_fails_its_batch_and_service_goes_on)
{
    handler_state h = {.slow_s = 0.600};
    batcher *b = make(&h, 2, 30.0, 0.100); /* time-out 100 ms, handler 600 ms */
    call c[4];
    c[0] = (call){.b = b, .r = {.value = 1, .flags = F_SLOW}};
    c[1] = (call){.b = b, .r = {.value = 2}};
    /* The second pair arrives once the first is in the handler. */
    c[2] = (call){.b = b, .r = {.value = 3}, .start_delay = 0.030};
    c[3] = (call){.b = b, .r = {.value = 4}, .start_delay = 0.030};
    run_callers(c, 4);
    int timeouts = 0;
    for (int i = 0; i < 4; i++) {
        if (c[i].rc == BATCHER_ETIMEDOUT) {
            timeouts++;
            /* answered at the time-out, well before the 600 ms handler ends */
            cr_expect_lt(c[i].latency, 0.500, "caller %d latency %g", i, c[i].latency);
        } else {
            cr_expect_eq(c[i].rc, BATCHER_OK, "caller %d: %s", i, batcher_strerror(c[i].rc));
            cr_expect_eq(c[i].result, 2 * c[i].r.value + 1);
        }
    }
    /* The slow request and its batch-mate time out; the late pair is served
     * by the replacement flusher. */
    cr_expect_eq(c[0].rc, BATCHER_ETIMEDOUT);
    cr_expect_eq(timeouts, 2);
    batcher_stats s = batcher_get_stats(b);
    cr_expect_eq(s.flushers_replaced, 1);
    batcher_close(b, BATCHER_DRAIN); /* joins the abandoned thread when it wakes */
    s = batcher_get_stats(b);
    cr_expect_eq(s.completed, 4);
    batcher_destroy(b);
}

Test(batcher, handler_crash_reaches_every_caller_of_the_batch)
{
    handler_state h = {0};
    batcher *b = make(&h, 3, 30.0, 0);
    call c[3];
    for (int i = 0; i < 3; i++)
        c[i] = (call){.b = b, .r = {.value = i, .flags = i == 0 ? F_CRASH : 0}};
    run_callers(c, 3);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(c[i].rc, BATCHER_ECRASH, "caller %d: %s", i, batcher_strerror(c[i].rc));
    /* The batcher still serves the next full batch. */
    call d[3];
    for (int i = 0; i < 3; i++)
        d[i] = (call){.b = b, .r = {.value = 10 + i}};
    run_callers(d, 3);
    for (int i = 0; i < 3; i++) {
        cr_expect_eq(d[i].rc, BATCHER_OK);
        cr_expect_eq(d[i].result, 2 * (10 + i) + 1);
    }
    /* And after close, submit answers at once. */
    req r = {.value = 5};
    int64_t out = 0;
    batcher_close(b, BATCHER_DRAIN);
    cr_expect_eq(batcher_submit(b, &r, &out), BATCHER_ECLOSED);
    batcher_destroy(b);
}

Test(batcher, handler_thread_exit_is_a_crash_not_a_hang)
{
    handler_state h = {0};
    batcher *b = make(&h, 2, 30.0, 0);
    call c[2];
    c[0] = (call){.b = b, .r = {.value = 1, .flags = F_EXIT}};
    c[1] = (call){.b = b, .r = {.value = 2}};
    run_callers(c, 2);
    cr_expect_eq(c[0].rc, BATCHER_ECRASH);
    cr_expect_eq(c[1].rc, BATCHER_ECRASH);
    /* A new flusher took the queue: the next pair is served. */
    call d[2] = {{.b = b, .r = {.value = 8}}, {.b = b, .r = {.value = 9}}};
    run_callers(d, 2);
    cr_expect_eq(d[0].rc, BATCHER_OK);
    cr_expect_eq(d[0].result, 17); /* 2 * 8 + 1 */
    cr_expect_eq(d[1].result, 19); /* 2 * 9 + 1 */
    cr_expect_eq(batcher_get_stats(b).flushers_replaced, 1);
    batcher_destroy(b);
}

Test(batcher, submit_many_answers_each_request_in_its_slot)
{
    handler_state h = {0};
    batcher *b = make(&h, 4, 0.001, 0);
    req r[10];
    int64_t out[10];
    int rc[10];
    for (int i = 0; i < 10; i++) {
        r[i] = (req){.value = 50 + i, .flags = i == 2 ? F_INVALID : i == 7 ? F_ITEMFAIL : 0};
        out[i] = -1;
    }
    /* 10 requests, one invalid (slot 2), one the handler fails (slot 7): 8 ok. */
    cr_expect_eq(batcher_submit_many(b, 10, r, out, rc), 8);
    for (int i = 0; i < 10; i++) {
        int want = i == 2 ? BATCHER_EINVAL : i == 7 ? BATCHER_EITEM : BATCHER_OK;
        cr_expect_eq(rc[i], want, "slot %d: %s", i, batcher_strerror(rc[i]));
        if (want == BATCHER_OK)
            cr_expect_eq(out[i], 2 * (50 + i) + 1, "slot %d", i);
        else
            cr_expect_eq(out[i], -1, "slot %d untouched", i);
    }
    /* 9 queued with max batch 4: batches of 4, 4 and 1, so at least 3. */
    batcher_stats s = batcher_get_stats(b);
    cr_expect_geq(s.batches, 3);
    cr_expect_eq(s.submitted, 10);
    cr_expect_eq(s.completed, 10);
    batcher_close(b, BATCHER_DRAIN);
    /* After close: every slot says closed, none is queued. */
    cr_expect_eq(batcher_submit_many(b, 3, r + 3, out, rc), 0);
    for (int i = 0; i < 3; i++)
        cr_expect_eq(rc[i], BATCHER_ECLOSED);
    batcher_destroy(b);
}

Test(batcher, handler_calling_its_own_batcher_gets_an_error_not_a_deadlock)
{
    handler_state h = {0};
    batcher *b = make(&h, 1, 0, 0);
    h.self = b;
    req r = {.value = 4, .flags = F_REENTER};
    int64_t out = 0;
    cr_expect_eq(batcher_submit(b, &r, &out), BATCHER_OK);
    cr_expect_eq(out, 9); /* 2 * 4 + 1 */
    cr_expect_eq(atomic_load(&h.reenter_submit_rc), BATCHER_EREENTRANT);
    cr_expect_eq(atomic_load(&h.reenter_close_rc), BATCHER_EREENTRANT);
    /* The batcher is still open and serving. */
    req plain = {.value = 5};
    cr_expect_eq(batcher_submit(b, &plain, &out), BATCHER_OK);
    cr_expect_eq(out, 11);
    batcher_destroy(b);
}

/* ------------------------------------------------------------ close */

typedef struct {
    batcher *b;
    double delay;
    batcher_close_mode mode;
} closer_arg;

static void *closer(void *arg)
{
    closer_arg *a = arg;
    sleep_s(a->delay);
    batcher_close(a->b, a->mode);
    return NULL;
}

Test(batcher, close_drains_queued_requests)
{
    handler_state h = {0};
    batcher *b = make(&h, 100, 30.0, 0); /* neither trigger fires by itself */
    call c[10];
    for (int i = 0; i < 10; i++)
        c[i] = (call){.b = b, .r = {.value = i}};
    closer_arg ca = {b, 0.100, BATCHER_DRAIN};
    pthread_t ct;
    pthread_create(&ct, NULL, closer, &ca);
    run_callers(c, 10);
    pthread_join(ct, NULL);
    for (int i = 0; i < 10; i++) {
        cr_expect_eq(c[i].rc, BATCHER_OK, "caller %d: %s", i, batcher_strerror(c[i].rc));
        cr_expect_eq(c[i].result, 2 * i + 1);
    }
    batcher_stats s = batcher_get_stats(b);
    cr_expect_eq(s.completed, 10);
    cr_expect_eq(s.ok, 10);
    batcher_destroy(b);
}

Test(batcher, close_cancel_gives_each_request_one_completion)
{
    handler_state h = {.slow_s = 0.300};
    batcher *b = make(&h, 1, 0.0, 0);
    call c[6];
    /* The first request is in the (slow) handler when close comes; the other
     * five are queued behind it. */
    c[0] = (call){.b = b, .r = {.value = 0, .flags = F_SLOW}};
    for (int i = 1; i < 6; i++)
        c[i] = (call){.b = b, .r = {.value = i}, .start_delay = 0.050};
    closer_arg ca = {b, 0.150, BATCHER_CANCEL};
    pthread_t ct;
    pthread_create(&ct, NULL, closer, &ca);
    run_callers(c, 6);
    pthread_join(ct, NULL);
    cr_expect_eq(c[0].rc, BATCHER_OK, "in flight: finishes");
    cr_expect_eq(c[0].result, 1);
    for (int i = 1; i < 6; i++)
        cr_expect_eq(c[i].rc, BATCHER_ECANCELLED, "caller %d: %s", i, batcher_strerror(c[i].rc));
    batcher_stats s = batcher_get_stats(b);
    /* 6 submitted = 1 ok + 5 cancelled, each once. */
    cr_expect_eq(s.submitted, 6);
    cr_expect_eq(s.completed, 6);
    cr_expect_eq(s.ok, 1);
    cr_expect_eq(s.cancelled, 5);
    batcher_destroy(b);
}

/* ------------------------------------------------------------ the deadlock */

/* Run fn(window) in a child; kill it after `limit` seconds.  Returns the
 * child's exit status, or -1 when the watchdog had to kill it. */
static int run_with_watchdog(int (*fn)(double), double window, double limit)
{
    fflush(NULL); /* the child must not print the parent's buffered output */
    pid_t pid = fork();
    cr_assert_geq(pid, 0, "fork");
    if (pid == 0) {
        alarm((unsigned)limit + 5); /* belt and braces: the child dies anyway */
        int flushed = fn(window);
        _exit(flushed == 1 ? 0 : 3);
    }
    double t_end = batcher_now() + limit;
    int status = 0;
    while (batcher_now() < t_end) {
        pid_t r = waitpid(pid, &status, WNOHANG);
        if (r == pid)
            return WIFEXITED(status) ? WEXITSTATUS(status) : 100 + WTERMSIG(status);
        sleep_s(0.005);
    }
    kill(pid, SIGKILL);
    waitpid(pid, &status, 0);
    return -1;
}

Test(batcher_deadlock, timer_that_stops_itself_hangs)
{
    /* Window 10 ms; the watchdog gives it 1.5 s, 150 windows. */
    cr_expect_eq(run_with_watchdog(deadlock_demo_buggy, 0.010, 1.5), -1,
                 "the buggy timer was expected to deadlock");
}

Test(batcher_deadlock, one_thread_owning_both_triggers_finishes)
{
    cr_expect_eq(run_with_watchdog(deadlock_demo_fixed, 0.010, 10.0), 0);
}
