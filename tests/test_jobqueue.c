/* napkin: tsan */
/* The job queue: progress and ETA by hand, admission with its reason,
 * cancellation queued and running, a failing step failing its own job,
 * exactly-once completion under 16 threads submitting and cancelling, a torn
 * journal record detected and cut off, resuming after a stop, and a kill -9
 * of a serving child in the middle of a run followed by a restart.  Journals
 * live in a fresh directory under $TMPDIR (or /tmp), never in the tree.
 * Under ThreadSanitizer the tests run from tests/tsan_criterion.h's runner. */
#include "criterion_or_shim.h"

#include "jobqueue.h"
#include "scratch_dir.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

/* ------------------------------------------------------------ helpers */

static void sleep_ms(double ms)
{
    struct timespec ts = {(time_t)(ms / 1000), (long)((ms - 1000 * (double)(time_t)(ms / 1000)) * 1e6)};
    while (nanosleep(&ts, &ts) != 0) {
    }
}

/* A fresh directory for one test's journal (and its quarantine copy). */
typedef struct {
    char dir[SCRATCH_DIR_SIZE];
    char path[SCRATCH_DIR_SIZE + 16];
} scratch;

static void scratch_make(scratch *s)
{
    scratch_dir_make(s->dir, "jq");
    snprintf(s->path, sizeof s->path, "%s/journal", s->dir);
}

/* Records in a journal, per job id. */
#define MAXJ 512
typedef struct {
    int submits[MAXJ + 1], steps[MAXJ + 1], done[MAXJ + 1], failed[MAXJ + 1], cancelled[MAXJ + 1];
    long records;
} journal_count;

static int count_record(void *ctx, const jrec *r)
{
    journal_count *c = ctx;
    c->records++;
    if (r->id < 1 || r->id > MAXJ)
        return 0;
    switch (r->type) {
    case JREC_SUBMIT: c->submits[r->id]++; break;
    case JREC_STEP: c->steps[r->id]++; break;
    case JREC_DONE: c->done[r->id]++; break;
    case JREC_FAILED: c->failed[r->id]++; break;
    case JREC_CANCELLED: c->cancelled[r->id]++; break;
    }
    return 0;
}

static void count_journal(const char *path, journal_count *c, long *torn)
{
    memset(c, 0, sizeof *c);
    char err[256];
    cr_assert_eq(jobqueue_journal_read(path, count_record, c, NULL, torn, err, sizeof err), 0);
}

/* A step function that records every (job, step) it runs, can fail a job
 * at a step named in its payload, can sleep, and can block on a gate. */
typedef struct {
    atomic_int runs[MAXJ + 1][8];
    atomic_int total;
    double sleep_ms;
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int gate_closed;
} stepper;

static void stepper_init(stepper *s, double sleep, int gate_closed)
{
    memset(s, 0, sizeof *s);
    s->sleep_ms = sleep;
    s->gate_closed = gate_closed;
    pthread_mutex_init(&s->mu, NULL);
    pthread_cond_init(&s->cv, NULL);
}

static void stepper_open_gate(stepper *s)
{
    pthread_mutex_lock(&s->mu);
    s->gate_closed = 0;
    pthread_cond_broadcast(&s->cv);
    pthread_mutex_unlock(&s->mu);
}

static void stepper_destroy(stepper *s)
{
    pthread_mutex_destroy(&s->mu);
    pthread_cond_destroy(&s->cv);
}

static int step_fn(void *ctx, const job_info *job, int step)
{
    stepper *s = ctx;
    pthread_mutex_lock(&s->mu);
    while (s->gate_closed)
        pthread_cond_wait(&s->cv, &s->mu);
    pthread_mutex_unlock(&s->mu);
    if (s->sleep_ms > 0)
        sleep_ms(s->sleep_ms);
    if (job->id <= MAXJ && step < 8)
        atomic_fetch_add(&s->runs[job->id][step], 1);
    atomic_fetch_add(&s->total, 1);
    int fail_at = -1;
    if (job->payload_len == sizeof fail_at)
        memcpy(&fail_at, job->payload, sizeof fail_at);
    return step == fail_at ? 7 : 0;
}

static jobqueue *open_queue(const char *path, stepper *s, int workers, double max_wait, int resume,
                            jobqueue_replay *rep)
{
    jobqueue_config cfg = {path, workers, step_fn, s, max_wait, 1.0, resume, 0, 0};
    char err[512];
    jobqueue *q = jobqueue_open(&cfg, rep, err, sizeof err);
    cr_assert_not_null(q, "%s", err);
    return q;
}

static uint64_t submit(jobqueue *q, int steps, int fail_at)
{
    uint64_t id = 0;
    char reason[256];
    int rc = jobqueue_submit(q, fail_at >= 0 ? &fail_at : NULL, fail_at >= 0 ? sizeof fail_at : 0, steps, &id,
                             reason, sizeof reason);
    cr_assert_eq(rc, JQ_OK, "%s", reason);
    return id;
}

static void wait_state(jobqueue *q, uint64_t id, job_state want)
{
    for (int i = 0; i < 20000; i++) {
        job_status st;
        cr_assert_eq(jobqueue_status(q, id, &st), JQ_OK);
        if (st.state == want)
            return;
        sleep_ms(0.5);
    }
    cr_assert_fail("job never reached the state");
}

/* ------------------------------------------------------------ the tests */

Test(jobqueue, jobs_run_to_done_and_the_journal_says_so)
{
    scratch d;
    scratch_make(&d);
    stepper s;
    stepper_init(&s, 0, 0);
    jobqueue *q = open_queue(d.path, &s, 2, 0, 1, NULL);
    uint64_t ids[3];
    for (int i = 0; i < 3; i++)
        ids[i] = submit(q, 4, -1);
    cr_expect_eq(ids[0], 1);
    cr_expect_eq(ids[2], 3);
    for (int i = 0; i < 3; i++) {
        job_status st;
        cr_assert_eq(jobqueue_wait(q, ids[i], 30, &st), JQ_OK);
        cr_expect_eq(st.state, JOB_DONE);
        cr_expect_eq(st.steps_done, 4);
        cr_expect_float_eq(st.eta, 0.0, 1e-12);
    }
    jobqueue_close(q, JQ_DRAIN);
    /* 3 SUBMIT + 3 x 4 STEP + 3 DONE = 18 records, each step run once */
    journal_count c;
    long torn;
    count_journal(d.path, &c, &torn);
    cr_expect_eq(c.records, 18);
    cr_expect_eq(torn, 0);
    for (int i = 1; i <= 3; i++) {
        cr_expect_eq(c.done[i], 1);
        for (int k = 0; k < 4; k++)
            cr_expect_eq(atomic_load(&s.runs[i][k]), 1);
    }
    stepper_destroy(&s);
    scratch_dir_remove(d.dir);
}

Test(jobqueue, admission_and_eta_by_hand)
{
    scratch d;
    scratch_make(&d);
    stepper s;
    stepper_init(&s, 0, 1); /* every step waits at the gate, so nothing is measured */
    jobqueue *q = open_queue(d.path, &s, 1, 10.0, 1, NULL);
    /* one worker, prior step time 1 s, bound 10 s, 5 steps a job */
    uint64_t a = submit(q, 5, -1); /* wait 0 */
    wait_state(q, a, JOB_RUNNING);
    uint64_t b = submit(q, 5, -1); /* 5 steps ahead: 5 s */
    uint64_t c = submit(q, 5, -1); /* 10 steps ahead: 10 s, not above the bound */
    uint64_t id = 0;
    char reason[256] = "";
    /* 15 steps ahead: 15 s > 10 s */
    cr_expect_eq(jobqueue_submit(q, NULL, 0, 5, &id, reason, sizeof reason), JQ_EREJECTED);
    cr_expect(strstr(reason, "predicted wait 15 s exceeds the bound 10 s (15 steps ahead at 1 s a step on 1 workers)") != NULL, "%s", reason);
    job_status st;
    cr_assert_eq(jobqueue_status(q, a, &st), JQ_OK);
    cr_expect_eq(st.state, JOB_RUNNING);
    cr_expect_float_eq(st.eta, 5.0, 1e-9); /* 5 steps left x 1 s */
    cr_assert_eq(jobqueue_status(q, c, &st), JQ_OK);
    cr_expect_eq(st.state, JOB_QUEUED);
    cr_expect_float_eq(st.wait_ahead, 10.0, 1e-9); /* a's 5 + b's 5, one worker */
    cr_expect_float_eq(st.eta, 15.0, 1e-9);        /* + its own 5 */
    /* cancelling b (queued) is immediate and takes its 5 s out of c's ETA */
    cr_expect_eq(jobqueue_cancel(q, b), JQ_OK);
    cr_assert_eq(jobqueue_status(q, b, &st), JQ_OK);
    cr_expect_eq(st.state, JOB_CANCELLED);
    cr_assert_eq(jobqueue_status(q, c, &st), JQ_OK);
    cr_expect_float_eq(st.eta, 10.0, 1e-9);
    cr_expect_eq(jobqueue_cancel(q, b), JQ_EFINISHED);
    cr_expect_eq(jobqueue_cancel(q, 999), JQ_ENOENT);
    cr_expect_eq(jobqueue_status(q, 999, &st), JQ_ENOENT);
    cr_expect_eq(jobqueue_submit(q, NULL, 0, 0, &id, reason, sizeof reason), JQ_EINVAL);
    stepper_open_gate(&s);
    cr_assert_eq(jobqueue_wait(q, c, 30, &st), JQ_OK);
    cr_expect_eq(st.state, JOB_DONE);
    cr_expect_eq(atomic_load(&s.runs[b][0]), 0); /* the cancelled job never ran */
    cr_expect(jobqueue_step_time(q) < 1.0);      /* measured steps replace the prior */
    jobqueue_close(q, JQ_DRAIN);
    stepper_destroy(&s);
    scratch_dir_remove(d.dir);
}

Test(jobqueue, cancel_running_at_a_step_boundary_and_failures_stay_local)
{
    scratch d;
    scratch_make(&d);
    stepper s;
    stepper_init(&s, 1.0, 0);
    jobqueue *q = open_queue(d.path, &s, 2, 0, 1, NULL);
    uint64_t lng = submit(q, 8, -1);
    uint64_t bad = submit(q, 6, 2); /* fails at step 2 */
    uint64_t ok = submit(q, 3, -1);
    for (;;) {
        job_status st;
        cr_assert_eq(jobqueue_status(q, lng, &st), JQ_OK);
        if (st.steps_done >= 2)
            break;
        sleep_ms(0.2);
    }
    cr_expect_eq(jobqueue_cancel(q, lng), JQ_OK);
    job_status st;
    cr_assert_eq(jobqueue_wait(q, lng, 30, &st), JQ_OK);
    cr_expect(st.state == JOB_CANCELLED || st.state == JOB_DONE);
    if (st.state == JOB_CANCELLED)
        cr_expect_lt(st.steps_done, 8);
    cr_assert_eq(jobqueue_wait(q, bad, 30, &st), JQ_OK);
    cr_expect_eq(st.state, JOB_FAILED);
    cr_expect_eq(st.error, 7);
    cr_expect_eq(st.steps_done, 2);
    cr_expect_eq(atomic_load(&s.runs[bad][3]), 0); /* nothing after the failed step */
    cr_assert_eq(jobqueue_wait(q, ok, 30, &st), JQ_OK);
    cr_expect_eq(st.state, JOB_DONE);
    jobqueue_close(q, JQ_DRAIN);
    journal_count c;
    count_journal(d.path, &c, NULL);
    cr_expect_eq(c.failed[bad], 1);
    cr_expect_eq(c.done[ok], 1);
    cr_expect_eq(c.cancelled[lng] + c.done[lng], 1);
    stepper_destroy(&s);
    scratch_dir_remove(d.dir);
}

/* 16 threads, each submitting 8 jobs of 3 steps and cancelling every second one. */
enum { THREADS = 16, PER_THREAD = 8, STEPS = 3 };
typedef struct {
    jobqueue *q;
    uint64_t ids[PER_THREAD];
    int cancel_rc[PER_THREAD];
} submitter;

static void *submitter_main(void *arg)
{
    submitter *sb = arg;
    for (int i = 0; i < PER_THREAD; i++) {
        char reason[128];
        sb->ids[i] = 0;
        if (jobqueue_submit(sb->q, NULL, 0, STEPS, &sb->ids[i], reason, sizeof reason) != JQ_OK)
            sb->ids[i] = 0;
        sb->cancel_rc[i] = (i % 2 && sb->ids[i]) ? jobqueue_cancel(sb->q, sb->ids[i]) : -1;
    }
    return NULL;
}

Test(jobqueue, exactly_once_under_16_threads)
{
    scratch d;
    scratch_make(&d);
    static stepper s; /* large: off the stack */
    stepper_init(&s, 0, 0);
    jobqueue *q = open_queue(d.path, &s, 4, 0, 1, NULL);
    static submitter sb[THREADS];
    pthread_t t[THREADS];
    for (int i = 0; i < THREADS; i++) {
        sb[i].q = q;
        cr_assert_eq(pthread_create(&t[i], NULL, submitter_main, &sb[i]), 0);
    }
    for (int i = 0; i < THREADS; i++)
        pthread_join(t[i], NULL);
    cr_assert_eq(jobqueue_drain(q, 60), JQ_OK);
    int seen[MAXJ + 1] = {0};
    long done = 0, cancelled = 0;
    for (int i = 0; i < THREADS; i++)
        for (int k = 0; k < PER_THREAD; k++) {
            uint64_t id = sb[i].ids[k];
            cr_assert(id >= 1 && id <= THREADS * PER_THREAD);
            seen[id]++;
            if (k % 2)
                cr_expect(sb[i].cancel_rc[k] == JQ_OK || sb[i].cancel_rc[k] == JQ_EFINISHED);
            job_status st;
            cr_assert_eq(jobqueue_status(q, id, &st), JQ_OK);
            cr_expect(st.state == JOB_DONE || st.state == JOB_CANCELLED, "job %llu %s", (unsigned long long)id,
                      job_state_name(st.state));
            if (k % 2 == 0)
                cr_expect_eq(st.state, JOB_DONE);
            done += st.state == JOB_DONE;
            cancelled += st.state == JOB_CANCELLED;
            /* every step ran at most once; a done job ran each of its steps exactly once */
            for (int j = 0; j < STEPS; j++) {
                int runs = atomic_load(&s.runs[id][j]);
                cr_expect(runs <= 1);
                if (st.state == JOB_DONE)
                    cr_expect_eq(runs, 1);
            }
        }
    for (int id = 1; id <= THREADS * PER_THREAD; id++)
        cr_expect_eq(seen[id], 1, "id %d handed out %d times", id, seen[id]);
    jobqueue_close(q, JQ_DRAIN);
    journal_count c;
    count_journal(d.path, &c, NULL);
    long jdone = 0, jcancelled = 0;
    for (int id = 1; id <= THREADS * PER_THREAD; id++) {
        cr_expect_eq(c.submits[id], 1);
        cr_expect_eq(c.done[id] + c.cancelled[id] + c.failed[id], 1, "job %d ended %d times", id,
                     c.done[id] + c.cancelled[id]);
        jdone += c.done[id];
        jcancelled += c.cancelled[id];
    }
    cr_expect_eq(jdone, done);
    cr_expect_eq(jcancelled, cancelled);
    cr_expect_eq(done + cancelled, THREADS * PER_THREAD);
    stepper_destroy(&s);
    scratch_dir_remove(d.dir);
}

static long file_size(const char *path)
{
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    fseek(f, 0, SEEK_END);
    long n = ftell(f);
    fclose(f);
    return n;
}

Test(jobqueue, a_torn_last_record_is_detected_and_cut_off)
{
    scratch d;
    scratch_make(&d);
    stepper s;
    stepper_init(&s, 0, 0);
    jobqueue *q = open_queue(d.path, &s, 1, 0, 1, NULL);
    for (int i = 0; i < 3; i++)
        submit(q, 1, -1);
    cr_assert_eq(jobqueue_drain(q, 30), JQ_OK);
    jobqueue_close(q, JQ_DRAIN);
    /* the file header (two 32-byte copies), then 3 x (SUBMIT, STEP, DONE),
     * 32 bytes each with no payload: 64 + 288 bytes */
    long good = file_size(d.path);
    cr_expect_eq(good, 64 + 9 * 32);

    /* a crash mid-append: the first 20 bytes of a record */
    FILE *f = fopen(d.path, "rb");
    char head[32];
    fseek(f, 64, SEEK_SET);
    cr_assert_eq(fread(head, 1, 32, f), 32);
    fclose(f);
    f = fopen(d.path, "ab");
    fwrite(head, 1, 20, f);
    fclose(f);
    jobqueue_replay rep;
    q = open_queue(d.path, &s, 1, 0, 1, &rep);
    cr_expect_eq(rep.torn_bytes, 20);
    cr_expect_eq(rep.records, 9);
    cr_expect_eq(rep.requeued, 0);
    cr_expect_eq(file_size(d.path), good); /* cut back before anything is appended */
    uint64_t id = submit(q, 1, -1);
    cr_expect_eq(id, 4);
    cr_assert_eq(jobqueue_wait(q, id, 30, NULL), JQ_OK);
    jobqueue_close(q, JQ_DRAIN);

    /* a scribbled-on last record (job 4's DONE): its CRC fails, so job 4 is unfinished and runs again */
    f = fopen(d.path, "r+b");
    fseek(f, -8, SEEK_END);
    fputc(0x5a, f);
    fclose(f);
    int before = atomic_load(&s.total);
    q = open_queue(d.path, &s, 1, 0, 1, &rep);
    cr_expect_eq(rep.torn_bytes, 32);
    cr_expect_eq(rep.records, 11);
    cr_expect_eq(rep.requeued, 1);
    /* its STEP record survived: with resume, the one step is not run again */
    cr_expect_eq(rep.resumed_steps, 1);
    cr_assert_eq(jobqueue_wait(q, 4, 30, NULL), JQ_OK);
    jobqueue_close(q, JQ_DRAIN);
    cr_expect_eq(atomic_load(&s.total), before);

    /* and the journal is clean again */
    journal_count c;
    long torn;
    count_journal(d.path, &c, &torn);
    cr_expect_eq(torn, 0);
    for (int i = 1; i <= 4; i++)
        cr_expect_eq(c.done[i], 1);
    stepper_destroy(&s);
    scratch_dir_remove(d.dir);
}

Test(jobqueue, a_stopped_queue_resumes_from_the_last_journaled_step)
{
    for (int resume = 1; resume >= 0; resume--) {
        scratch d;
        scratch_make(&d);
        static stepper s1, s2;
        stepper_init(&s1, 25.0, 0); /* slow enough that the stop lands well before step 8 */
        jobqueue *q = open_queue(d.path, &s1, 1, 0, resume, NULL);
        uint64_t id = submit(q, 8, -1);
        for (;;) {
            job_status st;
            cr_assert_eq(jobqueue_status(q, id, &st), JQ_OK);
            if (st.steps_done >= 2)
                break;
            sleep_ms(0.5);
        }
        jobqueue_close(q, JQ_STOP); /* the worker stops at its next step boundary */
        journal_count c;
        count_journal(d.path, &c, NULL);
        cr_expect_eq(c.done[id], 0);
        int journaled = c.steps[id];
        cr_expect(journaled >= 2 && journaled < 8, "%d", journaled);

        stepper_init(&s2, 0, 0);
        jobqueue_replay rep;
        q = open_queue(d.path, &s2, 1, 0, resume, &rep);
        cr_expect_eq(rep.requeued, 1);
        cr_expect_eq(rep.resumed_steps, resume ? journaled : 0);
        job_status st;
        cr_assert_eq(jobqueue_wait(q, id, 30, &st), JQ_OK);
        cr_expect_eq(st.state, JOB_DONE);
        jobqueue_close(q, JQ_DRAIN);
        for (int k = 0; k < 8; k++) {
            int want = (resume && k < journaled) ? 0 : 1;
            cr_expect_eq(atomic_load(&s2.runs[id][k]), want, "resume %d step %d", resume, k);
        }
        count_journal(d.path, &c, NULL);
        cr_expect_eq(c.done[id], 1);
        stepper_destroy(&s1);
        stepper_destroy(&s2);
        scratch_dir_remove(d.dir);
    }
}

/* The serving process, in a child: accepts jobs, reports each accepted id
 * on the pipe once submit has returned, and works until it is killed. */
enum { CRASH_JOBS = 30, CRASH_STEPS = 6 };
static void crash_child(const char *path, int fd)
{
    static stepper s;
    stepper_init(&s, 10.0, 0); /* 30 jobs x 6 steps x 10 ms / 2 workers: 0.9 s, the kill comes long before */
    jobqueue_config cfg = {path, 2, step_fn, &s, 0, 1.0, 1, 0, 0};
    char err[256];
    jobqueue *q = jobqueue_open(&cfg, NULL, err, sizeof err);
    if (!q)
        _exit(3);
    for (int i = 0; i < CRASH_JOBS; i++) {
        uint64_t id;
        if (jobqueue_submit(q, NULL, 0, CRASH_STEPS, &id, err, sizeof err) != JQ_OK)
            _exit(4);
        if (write(fd, &id, sizeof id) != (ssize_t)sizeof id)
            _exit(5);
    }
    for (;;)
        pause();
}

Test(jobqueue, kill_9_mid_run_then_restart_completes_every_job_once)
{
    scratch d;
    scratch_make(&d);
    int p[2];
    cr_assert_eq(pipe(p), 0);
    pid_t pid = fork();
    cr_assert(pid >= 0);
    if (pid == 0) {
        close(p[0]);
        crash_child(d.path, p[1]);
    }
    close(p[1]);
    uint64_t accepted[CRASH_JOBS];
    int n = 0;
    while (n < CRASH_JOBS && read(p[0], &accepted[n], sizeof accepted[n]) == (ssize_t)sizeof accepted[n])
        n++;
    close(p[0]);
    cr_assert_eq(n, CRASH_JOBS, "the child accepted %d jobs", n);
    /* let a few jobs finish, then kill it in the middle of the run */
    journal_count c;
    long done_before = 0;
    for (int i = 0; i < 20000 && done_before < 3; i++) {
        count_journal(d.path, &c, NULL);
        done_before = 0;
        for (int id = 1; id <= CRASH_JOBS; id++)
            done_before += c.done[id];
        sleep_ms(0.5);
    }
    kill(pid, SIGKILL);
    int status;
    waitpid(pid, &status, 0);
    cr_expect(WIFSIGNALED(status) && WTERMSIG(status) == SIGKILL);
    count_journal(d.path, &c, NULL);
    done_before = 0;
    for (int id = 1; id <= CRASH_JOBS; id++)
        done_before += c.done[id];
    cr_expect(done_before >= 3 && done_before < CRASH_JOBS, "%ld done at the kill", done_before);

    /* restart: everything accepted and unfinished is queued again */
    static stepper s;
    stepper_init(&s, 0, 0);
    jobqueue_replay rep;
    jobqueue *q = open_queue(d.path, &s, 2, 0, 1, &rep);
    cr_expect_eq(rep.requeued, CRASH_JOBS - done_before);
    cr_assert_eq(jobqueue_drain(q, 60), JQ_OK);
    for (int i = 0; i < CRASH_JOBS; i++) {
        job_status st;
        cr_assert_eq(jobqueue_status(q, accepted[i], &st), JQ_OK);
        cr_expect_eq(st.state, JOB_DONE);
    }
    jobqueue_close(q, JQ_DRAIN);
    count_journal(d.path, &c, NULL);
    for (int i = 0; i < CRASH_JOBS; i++) {
        uint64_t id = accepted[i];
        cr_expect_eq(c.submits[id], 1);
        cr_expect_eq(c.done[id], 1, "job %llu done %d times", (unsigned long long)id, c.done[id]);
        cr_expect_eq(c.failed[id] + c.cancelled[id], 0);
    }
    stepper_destroy(&s);
    scratch_dir_remove(d.dir);
}

Test(jobqueue, a_foreign_file_is_refused_and_a_torn_first_record_cut)
{
    scratch d;
    scratch_make(&d);
    const char text[] = "this is not a job journal, and must not be truncated\n";
    FILE *f = fopen(d.path, "wb");
    fwrite(text, 1, sizeof text - 1, f);
    fclose(f);
    stepper s;
    stepper_init(&s, 0, 0);
    jobqueue_config cfg = {d.path, 1, step_fn, &s, 0, 1.0, 1, 0, 0};
    char err[512] = "";
    cr_expect(jobqueue_open(&cfg, NULL, err, sizeof err) == NULL);
    cr_expect(strstr(err, "not a job journal") != NULL, "%s", err);
    cr_expect_eq(file_size(d.path), (long)(sizeof text - 1));

    /* a crash during the very first append: the header and the first 12 bytes of a record */
    unlink(d.path);
    jobqueue *q = open_queue(d.path, &s, 1, 0, 1, NULL);
    submit(q, 1, -1);
    jobqueue_close(q, JQ_STOP);
    f = fopen(d.path, "rb");
    char head[64 + 12];
    cr_assert_eq(fread(head, 1, sizeof head, f), sizeof head);
    fclose(f);
    f = fopen(d.path, "wb");
    fwrite(head, 1, sizeof head, f);
    fclose(f);
    jobqueue_replay rep;
    q = open_queue(d.path, &s, 1, 0, 1, &rep);
    cr_expect_eq(rep.torn_bytes, 12);
    cr_expect_eq(rep.records, 0);
    cr_expect_eq(file_size(d.path), 64);
    jobqueue_close(q, JQ_STOP);

    /* a crash while the journal's header was written: its first 12 bytes;
     * no record can follow a header not yet whole, so it is written anew */
    f = fopen(d.path, "wb");
    fwrite(head, 1, 12, f);
    fclose(f);
    q = open_queue(d.path, &s, 1, 0, 1, &rep);
    cr_expect_eq(rep.torn_bytes, 12);
    cr_expect_eq(rep.records, 0);
    cr_expect(strstr(rep.note, "written anew") != NULL, "%s", rep.note);
    cr_expect_eq(file_size(d.path), 64);
    submit(q, 1, -1);
    jobqueue_close(q, JQ_DRAIN);
    q = open_queue(d.path, &s, 1, 0, 1, &rep);
    cr_expect_eq(rep.records, 3, "the new header's salt checks the records written after it");
    cr_expect_eq(rep.note[0], '\0', "%s", rep.note);
    jobqueue_close(q, JQ_STOP);
    stepper_destroy(&s);
    scratch_dir_remove(d.dir);
}
