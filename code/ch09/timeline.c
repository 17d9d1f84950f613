/* Chapter 9: a run of the job queue (code/napkin/runtime/jobqueue.c), drawn.
 *
 * Two workers, nine jobs of 10 to 40 steps submitted at staggered times,
 * each step a 4 ms sleep standing in for a denoising step (a real one takes
 * seconds; the queue's logic does not care).  The queue admits a job only if
 * its predicted wait is at most 0.15 s; one job is cancelled while it runs.
 * Writes 09-timeline.tsv (per job: submitted, started, ended, state, the ETA
 * given at submit) and 09-steps.tsv (every step's start and end), in
 * seconds from the first submit, and the values the chapter quotes.  The
 * journal lives in a fresh directory under $TMPDIR (or /tmp), removed after.
 * The times are measured on this machine; the ETA error depends on how
 * steadily it sleeps. */
#include "jobqueue.h"
#include "notebook.h"

#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

enum { JOBS = 9, MAX_STEPS = 40 };
#define STEP_S 0.004
#define MAX_WAIT_S 0.15

typedef struct {
    pthread_mutex_t mu;
    double t0;
    double start[JOBS + 1][MAX_STEPS], end[JOBS + 1][MAX_STEPS];
} trace;

static double now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static void sleep_s(double s)
{
    struct timespec ts = {(time_t)s, (long)((s - (double)(time_t)s) * 1e9)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

static int step(void *ctx, const job_info *job, int k)
{
    trace *t = ctx;
    double a = now();
    sleep_s(STEP_S);
    double b = now();
    if (job->id <= JOBS && k < MAX_STEPS) {
        pthread_mutex_lock(&t->mu);
        t->start[job->id][k] = a - t->t0;
        t->end[job->id][k] = b - t->t0;
        pthread_mutex_unlock(&t->mu);
    }
    return 0;
}

/* A client that cancels job 3 once it has run 10 steps. */
static void *cancel_job3(void *arg)
{
    jobqueue *q = arg;
    for (int i = 0; i < 20000; i++) {
        job_status st;
        if (jobqueue_status(q, 3, &st) == JQ_OK && (st.steps_done >= 10 || st.state >= JOB_DONE)) {
            jobqueue_cancel(q, 3);
            break;
        }
        sleep_s(0.0005);
    }
    return NULL;
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    char dir[256], path[300];
    snprintf(dir, sizeof dir, "%s/napkin-ch09-XXXXXX", tmp && *tmp ? tmp : "/tmp");
    if (!mkdtemp(dir)) {
        perror("timeline: mkdtemp");
        return 1;
    }
    snprintf(path, sizeof path, "%s/journal", dir);
    static trace t;
    pthread_mutex_init(&t.mu, NULL);
    jobqueue_config cfg = {path, 2, step, &t, MAX_WAIT_S, STEP_S, 1, 0, 0};
    char err[256];
    jobqueue *q = jobqueue_open(&cfg, NULL, err, sizeof err);
    if (!q) {
        fprintf(stderr, "timeline: %s\n", err);
        return 1;
    }
    /* steps of each job and the pause before submitting it */
    const int steps[] = {30, 20, 40, 10, 25, 40, 15, 30, 10, 35, 20, 15, 25, 10};
    const double gap[] = {0, 0, 0.01, 0.02, 0.02, 0.01, 0.0, 0.0, 0.05, 0.0, 0.1, 0.05, 0.05, 0.05};
    double submitted[JOBS + 1] = {0}, eta[JOBS + 1] = {0};
    uint64_t ids[JOBS + 1] = {0};
    int accepted = 0, rejected = 0;
    char first_reason[256] = "";
    t.t0 = now();
    pthread_t canceller;
    if (pthread_create(&canceller, NULL, cancel_job3, q) != 0) {
        fprintf(stderr, "timeline: cannot start a thread\n");
        return 1;
    }
    for (int i = 0; i < (int)(sizeof steps / sizeof steps[0]) && accepted < JOBS; i++) {
        sleep_s(gap[i]);
        uint64_t id;
        char reason[256];
        double at = now() - t.t0;
        int rc = jobqueue_submit(q, NULL, 0, steps[i], &id, reason, sizeof reason);
        if (rc == JQ_EREJECTED) {
            if (!rejected++)
                snprintf(first_reason, sizeof first_reason, "%s", reason);
            continue;
        }
        if (rc != JQ_OK || id > JOBS) {
            fprintf(stderr, "timeline: submit failed (%d)\n", rc);
            return 1;
        }
        job_status st;
        jobqueue_status(q, id, &st);
        ids[++accepted] = id;
        submitted[id] = at;
        eta[id] = at + st.eta;
    }
    pthread_join(canceller, NULL);
    if (jobqueue_drain(q, 30) != JQ_OK) {
        fprintf(stderr, "timeline: the jobs did not finish\n");
        return 1;
    }
    FILE *f = nb_data_open("09-timeline.tsv");
    FILE *s = nb_data_open("09-steps.tsv");
    fprintf(f, "# a run of the job queue: 2 workers, 4 ms steps; seconds from the first submit\n"
               "job\tsubmitted\tstarted\tended\tstate\teta_at_submit\tsteps\n");
    fprintf(s, "job\tstart\tend\n");
    double worst = 0, sum_err = 0;
    int done = 0;
    for (int j = 1; j <= accepted; j++) {
        job_status st;
        jobqueue_status(q, ids[j], &st);
        int n = st.steps_done;
        double started = n ? t.start[j][0] : NAN, ended = n ? t.end[j][n - 1] : NAN;
        fprintf(f, "%d\t%.4f\t%.4f\t%.4f\t%s\t%.4f\t%d\n", j, submitted[j], started, ended, job_state_name(st.state),
                eta[j], st.steps);
        for (int k = 0; k < n && k < MAX_STEPS; k++)
            fprintf(s, "%d\t%.4f\t%.4f\n", j, t.start[j][k], t.end[j][k]);
        if (st.state == JOB_DONE) {
            double e = fabs(eta[j] - ended);
            sum_err += e;
            worst = e > worst ? e : worst;
            done++;
        }
    }
    fclose(f);
    fclose(s);
    job_status c;
    jobqueue_status(q, 3, &c);
    nb_value("ch09_tl_accepted", "%d", accepted);
    nb_value("ch09_tl_rejected", "%d", rejected);
    nb_value("ch09_tl_cancel_steps", "%d", c.steps_done);
    nb_value("ch09_tl_cancel_state", "%s", job_state_name(c.state));
    nb_value("ch09_tl_eta_mean_ms", "%.0f", done ? 1000 * sum_err / done : 0);
    nb_value("ch09_tl_eta_worst_ms", "%.0f", 1000 * worst);
    nb_value("ch09_tl_step_ms", "%.2f", 1000 * jobqueue_step_time(q));
    printf("%d jobs accepted, %d refused; job 3 %s after %d steps\n", accepted, rejected, job_state_name(c.state),
           c.steps_done);
    if (rejected)
        printf("first refusal: %s\n", first_reason);
    jobqueue_close(q, JQ_DRAIN);
    unlink(path);
    rmdir(dir);
    return 0;
}
