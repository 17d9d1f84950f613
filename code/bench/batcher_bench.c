/* The batcher's cost, against the floor of any thread handoff.
 *
 *   floor        one condition-variable round trip between two threads
 *                (A signals B, B signals A), the least any submit that waits
 *                for another thread can cost;
 *   round trip   one caller, batches of one, a no-op handler: submit to
 *                return through the flusher;
 *   throughput   16 callers, max batch 16, window 50 µs, no-op handler
 *                (the batch fills when every caller has a request in, so
 *                the size trigger, not the timer, sets the pace):
 *                requests per second and wall time per request, with one
 *                request per submit, and with batcher_submit_many groups
 *                of 64 (one wake-up per group instead of per request).
 * Prints the figures and the targets (at most 3x the floor per request, at
 * least 500,000 requests/s on 2 cores); it asserts nothing. */
#include "batcher.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

/* ------------------------------------------------------------ the floor */

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int turn; /* 0: ping's move, 1: pong's */
    long rounds;
} pingpong;

static void *pong(void *arg)
{
    pingpong *p = arg;
    pthread_mutex_lock(&p->mu);
    for (long i = 0; i < p->rounds; i++) {
        while (p->turn != 1)
            pthread_cond_wait(&p->cv, &p->mu);
        p->turn = 0;
        pthread_cond_signal(&p->cv);
    }
    pthread_mutex_unlock(&p->mu);
    return NULL;
}

static double cv_round_trip(long rounds)
{
    pingpong p = {.rounds = rounds};
    pthread_mutex_init(&p.mu, NULL);
    pthread_cond_init(&p.cv, NULL);
    pthread_t t;
    if (pthread_create(&t, NULL, pong, &p) != 0) {
        fprintf(stderr, "batcher_bench: cannot start a thread\n");
        exit(1);
    }
    double t0 = batcher_now();
    pthread_mutex_lock(&p.mu);
    for (long i = 0; i < rounds; i++) {
        p.turn = 1;
        pthread_cond_signal(&p.cv);
        while (p.turn != 0)
            pthread_cond_wait(&p.cv, &p.mu);
    }
    pthread_mutex_unlock(&p.mu);
    double dt = batcher_now() - t0;
    pthread_join(t, NULL);
    pthread_cond_destroy(&p.cv);
    pthread_mutex_destroy(&p.mu);
    return dt / (double)rounds;
}

/* ------------------------------------------------------------ the batcher */

static int noop_handler(void *ctx, batcher_item *items, size_t n)
{
    (void)ctx;
    (void)items;
    (void)n;
    return BATCHER_HANDLER_OK;
}

static batcher *make(size_t max_batch, double max_wait)
{
    batcher_config cfg = {.max_batch = max_batch, .max_wait = max_wait,
                          .request_size = sizeof(long), .result_size = 0,
                          .handler = noop_handler};
    char err[128];
    batcher *b = batcher_create(&cfg, err, sizeof err);
    if (!b) {
        fprintf(stderr, "batcher_bench: %s\n", err);
        exit(1);
    }
    return b;
}

enum { GROUP_MAX = 256 };

typedef struct {
    batcher *b;
    long n;
    size_t group; /* requests per submit call */
    long failures;
} loop_arg;

static void *submit_loop(void *arg)
{
    loop_arg *a = arg;
    long req[GROUP_MAX] = {0};
    int rc[GROUP_MAX];
    for (long i = 0; i < a->n; i += (long)a->group) {
        if (a->group == 1) {
            if (batcher_submit(a->b, &i, NULL) != BATCHER_OK)
                a->failures++;
        } else {
            a->failures += (long)(a->group - batcher_submit_many(a->b, a->group, req, NULL, rc));
        }
    }
    return NULL;
}

/* Seconds per request with `threads` callers each submitting n. */
static double through(int threads, long n, size_t group, size_t max_batch, double max_wait,
                      batcher_stats *st)
{
    batcher *b = make(max_batch, max_wait);
    pthread_t t[64];
    loop_arg a[64];
    double t0 = batcher_now();
    for (int i = 0; i < threads; i++) {
        a[i] = (loop_arg){b, n, group, 0};
        if (pthread_create(&t[i], NULL, submit_loop, &a[i]) != 0) {
            fprintf(stderr, "batcher_bench: cannot start a thread\n");
            exit(1);
        }
    }
    long failures = 0;
    for (int i = 0; i < threads; i++) {
        pthread_join(t[i], NULL);
        failures += a[i].failures;
    }
    double dt = batcher_now() - t0;
    batcher_close(b, BATCHER_DRAIN);
    *st = batcher_get_stats(b);
    batcher_destroy(b);
    if (failures)
        fprintf(stderr, "batcher_bench: %ld requests failed\n", failures);
    return dt / ((double)threads * (double)n);
}

static double median3(double a, double b, double c)
{
    return a > b ? (b > c ? b : (a > c ? c : a)) : (a > c ? a : (b > c ? c : b));
}

int main(void)
{
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    double floor_s = median3(cv_round_trip(100000), cv_round_trip(100000), cv_round_trip(100000));
    batcher_stats st;
    double single = median3(through(1, 50000, 1, 1, 0, &st), through(1, 50000, 1, 1, 0, &st),
                            through(1, 50000, 1, 1, 0, &st));
    double per_req = through(16, 20000, 1, 16, 50e-6, &st);
    double rate = 1 / per_req;
    double mean_batch = (double)st.ok / (double)st.batches;
    double per_req_grouped = through(16, 256 * 1024, 64, 64, 50e-6, &st);

    printf("batcher_cv_round_trip_us\t%.2f\t- (the floor: two threads, one condition variable)\n",
           floor_s * 1e6);
    printf("batcher_single_caller_us\t%.2f\t-\n", single * 1e6);
    printf("batcher_single_caller_x_floor\t%.2f\t<= 3\n", single / floor_s);
    printf("batcher_loaded_wall_per_request_us\t%.2f\t- (16 callers, max batch 16, window 50 us)\n",
           per_req * 1e6);
    printf("batcher_loaded_x_floor\t%.2f\t<= 3\n", per_req / floor_s);
    printf("batcher_requests_per_s\t%.0f\t>= 500000 on 2 cores (this machine: %ld cores)\n", rate,
           cores);
    printf("batcher_mean_batch\t%.1f\t-\n", mean_batch);
    printf("batcher_grouped_wall_per_request_us\t%.3f\t- (16 callers, submit_many of 64)\n",
           per_req_grouped * 1e6);
    printf("batcher_grouped_x_floor\t%.2f\t<= 3\n", per_req_grouped / floor_s);
    printf("batcher_grouped_requests_per_s\t%.0f\t>= 500000 on 2 cores\n", 1 / per_req_grouped);
    return 0;
}
