/* napkin: no-asan */
/* A handler slower than its time-out, tens of thousands of times over: every
 * time-out abandons a flusher inside the handler and starts a fresh one.  The
 * abandoned threads must end (and free their stacks) when their handler
 * returns, so the batcher keeps serving with a bounded thread count and
 * address space.  (Before the fix every abandoned thread stayed joinable
 * until close: about 2 GB of stacks after 200 time-outs, and pthread_create
 * failed for good after about 32,700.)  40,000 time-outs pass that mark;
 * `make soak` runs 100,000 (REAP_TIMEOUTS).  Normal run only: it takes
 * seconds, and the sanitizer runs cover the same paths in test_batcher. */
#include "batcher.h"

#include <criterion/criterion.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

typedef struct {
    atomic_int slow; /* 1: sleep past the time-out */
} slow_ctx;

static int handler(void *ctx, batcher_item *items, size_t n)
{
    slow_ctx *c = ctx;
    if (atomic_load(&c->slow)) {
        struct timespec ts = {0, 300000}; /* 0.3 ms against a 0.1 ms time-out */
        nanosleep(&ts, NULL);
    }
    for (size_t i = 0; i < n; i++)
        memcpy(items[i].result, items[i].request, sizeof(int));
    return BATCHER_HANDLER_OK;
}

/* "Threads:" and "VmSize:" (kB) of this process. */
static void proc_status(long *threads, long *vm_kb)
{
    FILE *f = fopen("/proc/self/status", "r");
    cr_assert_not_null(f);
    char line[256];
    *threads = *vm_kb = -1;
    while (fgets(line, sizeof line, f)) {
        sscanf(line, "Threads: %ld", threads);
        sscanf(line, "VmSize: %ld", vm_kb);
    }
    fclose(f);
}

/* Past the ~32,700 abandoned threads at which pthread_create failed before the fix. */
static long timeouts_wanted(void)
{
    const char *s = getenv("REAP_TIMEOUTS");
    long n = s && *s ? atol(s) : 40000;
    return n >= 1000 && n <= 10000000 ? n : 40000;
}

Test(batcher_reap, tens_of_thousands_of_timeouts_then_it_still_serves, .timeout = 600)
{
    const long TIMEOUTS = timeouts_wanted();
    slow_ctx ctx;
    atomic_init(&ctx.slow, 1);
    batcher_config cfg = {.max_batch = 1, .max_wait = 0, .request_size = sizeof(int), .result_size = sizeof(int),
                          .handler = handler, .handler_ctx = &ctx, .handler_timeout = 100e-6};
    char err[128];
    batcher *b = batcher_create(&cfg, err, sizeof err);
    cr_assert_not_null(b, "%s", err);
    long threads0, vm0;
    proc_status(&threads0, &vm0);
    long max_threads = 0, max_vm = 0;
    /* Most submits time out; one whose handler beats the watchdog to the lock
     * succeeds, which is also right.  Go on until TIMEOUTS have timed out. */
    long timeouts = 0;
    for (long i = 0; timeouts < TIMEOUTS; i++) {
        cr_assert(i < 4L * TIMEOUTS, "only %ld time-outs in %ld submits", timeouts, i);
        int in = (int)i, out = -1;
        int rc = batcher_submit(b, &in, &out);
        cr_assert(rc == BATCHER_ETIMEDOUT || (rc == BATCHER_OK && out == in), "submit %ld: %s", i,
                  batcher_strerror(rc));
        timeouts += rc == BATCHER_ETIMEDOUT;
        if (i % 1000 == 0) {
            long t, vm;
            proc_status(&t, &vm);
            if (t > max_threads) max_threads = t;
            if (vm > max_vm) max_vm = vm;
        }
    }
    batcher_stats st = batcher_get_stats(b);
    cr_assert_eq(st.timeouts, TIMEOUTS);
    cr_assert_eq(st.completed, st.submitted);
    /* A 0.3 ms handler abandoned every 0.1 ms leaves a handful of threads alive at
     * once; 64 is far above that and far below the 32,700 that broke the batcher.
     * Each thread has an 8 MiB stack mapping: 64 of them are 512 MiB of address space. */
    cr_assert(max_threads - threads0 <= 64, "threads grew from %ld to %ld", threads0, max_threads);
    cr_assert(max_vm - vm0 <= 64L * 8 * 1024 + 65536, "address space grew from %ld to %ld kB", vm0, max_vm);
    /* The handler is fast again: the batcher serves.  (Before the fix every
     * submit now said "handler crashed".)  The time-out is still 0.1 ms, which
     * a fast call can overrun on a loaded machine, so a time-out is allowed;
     * a crash, or no success at all, is not. */
    atomic_store(&ctx.slow, 0);
    int served = 0;
    for (int i = 0; i < 1000 && served < 100; i++) {
        int in = 7 * i, out = -1;
        int rc = batcher_submit(b, &in, &out);
        cr_assert(rc == BATCHER_OK || rc == BATCHER_ETIMEDOUT, "submit %d after the time-outs: %s", i,
                  batcher_strerror(rc));
        if (rc == BATCHER_OK) {
            cr_assert_eq(out, 7 * i);
            served++;
        }
    }
    cr_assert_geq(served, 1, "no request served after the time-outs");
    batcher_destroy(b);
    fprintf(stderr, "batcher_reap: %ld time-outs, at most %ld threads (%ld at start), address space +%ld kB\n",
            TIMEOUTS, max_threads, threads0, max_vm - vm0);
}
