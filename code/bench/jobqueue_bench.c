/* The job queue's cost: how long submit takes (its record is fsynced before
 * it returns) against the floor of the journal alone writing the same
 * 32-byte record on the same file system, and what a status poll costs
 * with 1,000 jobs queued.
 *
 *   floor    the journal's append (journal.h) of a SUBMIT without payload,
 *            one write + fsync, 200 times, no queue: median and the 10th-90th
 *            percentile
 *   submit   200 submits, one at a time, each timed: the same spread
 *   status   the last of 1,000 queued jobs (its ETA walks the whole queue) and
 *            the running job, 100,000 calls each, three runs: median, min, max
 * The journal lives in a fresh directory under $TMPDIR (or /tmp), removed at
 * the end.  Prints the figures and the targets; it asserts nothing. */
#include "jobqueue.h"
#include "journal.h"

#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { SUBMITS = 200, QUEUED = 1000, STATUS_CALLS = 100000 };

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static int cmp(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

static void spread(double *v, int n, double *p10, double *p50, double *p90)
{
    qsort(v, (size_t)n, sizeof *v, cmp);
    *p10 = v[n / 10];
    *p50 = v[n / 2];
    *p90 = v[n * 9 / 10];
}

/* A step that waits at a gate, so jobs stay queued while status is timed. */
typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
} gate;

static int gated_step(void *ctx, const job_info *job, int step)
{
    (void)job;
    (void)step;
    gate *g = ctx;
    pthread_mutex_lock(&g->mu);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
    return 0;
}

static double status_ns(jobqueue *q, uint64_t id)
{
    job_status st;
    double t0 = now();
    for (int i = 0; i < STATUS_CALLS; i++)
        jobqueue_status(q, id, &st);
    return (now() - t0) / STATUS_CALLS * 1e9;
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    char dir[256], path[300], floor_path[300];
    snprintf(dir, sizeof dir, "%s/napkin-jqbench-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("jobqueue_bench: mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/journal", dir);
    snprintf(floor_path, sizeof floor_path, "%s/floor", dir);

    /* the floor: the record each submit below writes, by the journal alone */
    double t[SUBMITS > QUEUED ? SUBMITS : QUEUED];
    char err[256];
    jq_journal alone;
    if (jq_journal_open(&alone, floor_path, NULL, NULL, NULL, NULL, 0, err, sizeof err) != 0) {
        fprintf(stderr, "jobqueue_bench: %s\n", err);
        return 1;
    }
    for (int i = 0; i < SUBMITS; i++) {
        uint64_t id = 0;
        double t0 = now();
        if (jq_journal_append(&alone, JREC_SUBMIT, &id, 50, NULL, 0) != 0) {
            perror("jobqueue_bench: the floor's journal");
            return 1;
        }
        t[i] = now() - t0;
    }
    jq_journal_close(&alone);
    double f10, f50, f90;
    spread(t, SUBMITS, &f10, &f50, &f90);

    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    jobqueue_config cfg = {path, 1, gated_step, &g, 0, 1.0, 1, 0, 0};
    jobqueue *q = jobqueue_open(&cfg, NULL, err, sizeof err);
    if (!q) {
        fprintf(stderr, "jobqueue_bench: %s\n", err);
        return 1;
    }
    uint64_t id = 0, first = 0;
    for (int i = 0; i < QUEUED; i++) {
        double t0 = now();
        if (jobqueue_submit(q, NULL, 0, 50, &id, err, sizeof err) != JQ_OK) {
            fprintf(stderr, "jobqueue_bench: %s\n", err);
            return 1;
        }
        if (i < SUBMITS)
            t[i] = now() - t0;
        if (!first)
            first = id;
    }
    double s10, s50, s90;
    spread(t, SUBMITS, &s10, &s50, &s90);
    double last_ns[3], run_ns[3];
    for (int r = 0; r < 3; r++) {
        last_ns[r] = status_ns(q, id);
        run_ns[r] = status_ns(q, first);
    }
    qsort(last_ns, 3, sizeof *last_ns, cmp);
    qsort(run_ns, 3, sizeof *run_ns, cmp);

    printf("jobqueue_fsync_floor_us\t%.1f\t- (p10 %.1f, p90 %.1f: the journal alone, 32 B + fsync)\n", f50 * 1e6,
           f10 * 1e6, f90 * 1e6);
    printf("jobqueue_submit_us\t%.1f\t- (p10 %.1f, p90 %.1f)\n", s50 * 1e6, s10 * 1e6, s90 * 1e6);
    printf("jobqueue_submit_x_floor\t%.2f\t<= 1.5 (one fsync per submit)\n", s50 / f50);
    printf("jobqueue_status_last_of_%d_ns\t%.0f\t< 50000 (min %.0f, max %.0f: walks the queue)\n", QUEUED,
           last_ns[1], last_ns[0], last_ns[2]);
    printf("jobqueue_status_running_ns\t%.0f\t< 1000 (min %.0f, max %.0f)\n", run_ns[1], run_ns[0], run_ns[2]);

    pthread_mutex_lock(&g.mu);
    g.open = 1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    jobqueue_close(q, JQ_STOP);
    unlink(path);
    unlink(floor_path);
    rmdir(dir);
    return 0;
}
