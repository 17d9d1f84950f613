/* A crash-safe job queue on POSIX threads (see jobqueue.h); its journal,
 * the records and their replay, is journal.c.
 *
 * One mutex guards the jobs, the queue order and the counters; the
 * journal's own lock serialises appends, so a status call never waits for
 * an fsync.  A job's record is durable before anyone can see the job: submit
 * reserves an id, journals, and only then queues it.  The one thread that
 * owns a job's end (its worker, or cancel while it is queued) marks it
 * finished in memory first, so nobody else can end it, then journals the
 * terminal record, then tells the waiters. */
#include "jobqueue.h"

#include "grow.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

const char *job_state_name(job_state s)
{
    static const char *const names[] = {"queued", "running", "done", "failed", "cancelled"};
    return (s >= JOB_QUEUED && s <= JOB_CANCELLED) ? names[s] : "?";
}

/* ------------------------------------------------------------ the queue */

typedef struct {
    uint64_t id;
    job_state state;
    int steps, done;
    int cancel_requested;
    int ending; /* its end is being journaled: nobody else may end or run it */
    int error;
    void *payload;
    size_t len;
} job;

struct jobqueue {
    jobqueue_config cfg;
    pthread_mutex_t mu;
    pthread_cond_t work_cv; /* a job was queued, or close began */
    pthread_cond_t done_cv; /* a job ended, or a submit finished */
    job **jobs;             /* jobs[id - 1]; NULL for an id whose submit failed */
    size_t njobs, cap;
    uint64_t *fifo;         /* ids in arrival order; cancelled ones are skipped */
    size_t fifo_head, fifo_len, fifo_cap;
    job **running;          /* running[w]: the job worker w holds, or NULL */
    long unfinished_steps;  /* steps left over queued, running and reserved jobs */
    int pending_submits;    /* reserved, not yet journaled */
    int closing;
    jobqueue_close_mode mode;
    double step_time_sum;
    long step_time_n;
    jq_journal journal;     /* appends serialise on its own lock, not on mu */
    pthread_t *threads;
    int nthreads;
};

typedef struct {
    jobqueue *q;
    int slot;
} worker_arg;

static double mono_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static struct timespec abs_deadline(double seconds_from_now)
{
    double t = mono_now() + seconds_from_now;
    struct timespec ts;
    ts.tv_sec = (time_t)t;
    ts.tv_nsec = (long)((t - (double)ts.tv_sec) * 1e9);
    if (ts.tv_nsec >= 1000000000L) {
        ts.tv_sec++;
        ts.tv_nsec -= 1000000000L;
    }
    return ts;
}

static job *find_job(jobqueue *q, uint64_t id)
{
    return (id >= 1 && id <= q->njobs) ? q->jobs[id - 1] : NULL;
}

static double step_time_locked(const jobqueue *q)
{
    return q->step_time_n ? q->step_time_sum / q->step_time_n : q->cfg.prior_step_time;
}

static int fifo_push(jobqueue *q, uint64_t id)
{
    if (q->fifo_head > 0 && q->fifo_head * 2 >= q->fifo_len) { /* mostly consumed: slide down */
        memmove(q->fifo, q->fifo + q->fifo_head, (q->fifo_len - q->fifo_head) * sizeof *q->fifo);
        q->fifo_len -= q->fifo_head;
        q->fifo_head = 0;
    }
    if (grow((void **)&q->fifo, &q->fifo_cap, q->fifo_len + 1, sizeof *q->fifo) != 0)
        return -1;
    q->fifo[q->fifo_len++] = id;
    return 0;
}

/* The oldest queued job, taken off the fifo; NULL when none. */
static job *fifo_pop(jobqueue *q)
{
    while (q->fifo_head < q->fifo_len) {
        job *j = find_job(q, q->fifo[q->fifo_head++]);
        if (j && j->state == JOB_QUEUED && !j->ending)
            return j;
    }
    return NULL;
}

static int fifo_has_queued(jobqueue *q)
{
    for (size_t i = q->fifo_head; i < q->fifo_len; i++) {
        job *j = find_job(q, q->fifo[i]);
        if (j && j->state == JOB_QUEUED && !j->ending)
            return 1;
    }
    return 0;
}

/* ------------------------------------------------------------ replay */

/* Rebuild the jobs from the journal's records. */
typedef struct {
    jobqueue *q;
    int failed; /* out of memory: the walk stopped */
} replay_ctx;

static int replay_record(void *arg, const jrec *r)
{
    replay_ctx *c = arg;
    jobqueue *q = c->q;
    if (r->type == JREC_SUBMIT) {
        if (r->id == 0 || find_job(q, r->id) || r->value < 1)
            return 0; /* a duplicate or nonsense: the first record of an id wins */
        /* the walk bounds r->id by the journal's size, so this is at most a
         * pointer per 32 journal bytes */
        if (r->id > q->njobs) {
            if (grow((void **)&q->jobs, &q->cap, (size_t)r->id, sizeof *q->jobs) != 0) {
                c->failed = 1;
                return 1;
            }
            for (size_t i = q->njobs; i < r->id; i++)
                q->jobs[i] = NULL;
            q->njobs = (size_t)r->id;
        }
        job *j = calloc(1, sizeof *j);
        void *p = r->payload_len ? malloc(r->payload_len) : NULL;
        if (!j || (r->payload_len && !p)) {
            free(j);
            free(p);
            c->failed = 1;
            return 1;
        }
        if (p)
            memcpy(p, r->payload, r->payload_len);
        *j = (job){r->id, JOB_QUEUED, r->value, 0, 0, 0, 0, p, r->payload_len};
        q->jobs[r->id - 1] = j;
        return 0;
    }
    job *j = find_job(q, r->id);
    if (!j || j->state != JOB_QUEUED)
        return 0; /* a record for an unknown or already finished job changes nothing */
    if (r->type == JREC_STEP) {
        if (r->value > j->done && r->value <= j->steps)
            j->done = r->value;
    } else {
        j->state = r->type == JREC_DONE ? JOB_DONE : r->type == JREC_FAILED ? JOB_FAILED : JOB_CANCELLED;
        j->error = r->type == JREC_FAILED ? r->value : 0;
    }
    return 0;
}

/* ------------------------------------------------------------ workers */

/* End a job the caller owns: claim it (nobody else may end or run it now),
 * journal the terminal record, and only then show the new state and wake
 * the waiters, so "done" is never reported before it is durable.  Called
 * and returns with mu held. */
static void finish_locked(jobqueue *q, job *j, job_state state, int error)
{
    q->unfinished_steps -= j->steps - j->done;
    j->ending = 1;
    jrec_type t = state == JOB_DONE ? JREC_DONE : state == JOB_FAILED ? JREC_FAILED : JREC_CANCELLED;
    pthread_mutex_unlock(&q->mu);
    /* A failed append still ends the job here; the next open runs it again. */
    uint64_t id = j->id;
    (void)jq_journal_append(&q->journal, t, &id, error, NULL, 0);
    pthread_mutex_lock(&q->mu);
    j->state = state;
    j->error = error;
    pthread_cond_broadcast(&q->done_cv);
}

//> worker
static void *worker_main(void *arg)
{
    worker_arg *wa = arg;
    jobqueue *q = wa->q;
    pthread_mutex_lock(&q->mu);
    for (;;) {
        job *j = NULL;
        while (!(q->closing && q->mode == JQ_STOP) && !(j = fifo_pop(q)) &&
               !(q->closing && q->pending_submits == 0))
            pthread_cond_wait(&q->work_cv, &q->mu);
        if (!j)
            break; /* closing: STOP at once, DRAIN once nothing is queued or on its way */
        j->state = JOB_RUNNING;
        q->running[wa->slot] = j;
        job_info info = {j->id, j->payload, j->len, j->steps};
        int rc = 0;
        while (j->done < j->steps) {
            if (j->cancel_requested)
                break;
            if (q->closing && q->mode == JQ_STOP)
                break;
            int step = j->done;
            pthread_mutex_unlock(&q->mu);
            double t0 = mono_now();
            rc = q->cfg.step(q->cfg.step_ctx, &info, step);
            double dt = mono_now() - t0;
            uint64_t id = j->id;
            if (rc == 0)
                (void)jq_journal_append(&q->journal, JREC_STEP, &id, step + 1, NULL, 0);
            pthread_mutex_lock(&q->mu);
            if (rc != 0)
                break;
            j->done = step + 1;
            q->unfinished_steps--;
            q->step_time_sum += dt;
            q->step_time_n++;
        }
        if (rc != 0)
            finish_locked(q, j, JOB_FAILED, rc);
        else if (j->done == j->steps)
            finish_locked(q, j, JOB_DONE, 0);
        else if (j->cancel_requested)
            finish_locked(q, j, JOB_CANCELLED, 0);
        else
            j->state = JOB_QUEUED; /* stopped by close: the journal still has it unfinished */
        q->running[wa->slot] = NULL;
        pthread_cond_broadcast(&q->done_cv); /* drain waits for idle workers */
    }
    pthread_mutex_unlock(&q->mu);
    free(wa);
    return NULL;
}
//< worker

/* ------------------------------------------------------------ the API */

jobqueue *jobqueue_open(const jobqueue_config *cfg, jobqueue_replay *replay, char *err, size_t errlen)
{
    if (replay)
        memset(replay, 0, sizeof *replay);
    if (!cfg || !cfg->journal_path || !cfg->step || cfg->workers < 1 || cfg->workers > 1024 ||
        !(cfg->prior_step_time > 0) || cfg->max_wait < 0 || cfg->max_steps < 0 ||
        cfg->max_payload > JQ_MAX_PAYLOAD) {
        snprintf(err, errlen, "jobqueue: need a journal path, a step function, 1 to 1024 workers, a positive prior "
                              "step time, a non-negative wait bound and a payload bound of at most %u bytes",
                 JQ_MAX_PAYLOAD);
        return NULL;
    }
    jobqueue *q = calloc(1, sizeof *q);
    if (!q) {
        snprintf(err, errlen, "jobqueue: out of memory");
        return NULL;
    }
    q->cfg = *cfg;
    if (!q->cfg.max_steps)
        q->cfg.max_steps = 1000000;
    if (!q->cfg.max_payload)
        q->cfg.max_payload = 64 * 1024;

    /* rebuild the jobs from the journal, which is then open for appending */
    replay_ctx rc = {q, 0};
    jq_scan sc;
    char note[sizeof replay->note];
    if (jq_journal_open(&q->journal, cfg->journal_path, replay_record, &rc, &sc, note, sizeof note, err, errlen) != 0) {
        if (rc.failed)
            snprintf(err, errlen, "jobqueue: out of memory replaying %s", cfg->journal_path);
        goto fail;
    }
    if (replay) {
        replay->damaged_bytes = sc.damaged_bytes;
        replay->regions = sc.regions + (sc.tail_bytes > 0);
        replay->refused = sc.refused;
        replay->repaired = sc.repaired;
        replay->first_damage = sc.first_damage;
        replay->next_id = q->journal.last_id + 1;
        memcpy(replay->note, note, sizeof note);
    }

    long requeued = 0, resumed = 0;
    for (size_t i = 0; i < q->njobs; i++) {
        job *j = q->jobs[i];
        if (!j || j->state != JOB_QUEUED)
            continue;
        if (!cfg->resume_steps)
            j->done = 0;
        resumed += j->done;
        q->unfinished_steps += j->steps - j->done;
        if (fifo_push(q, j->id) != 0) {
            snprintf(err, errlen, "jobqueue: out of memory");
            goto fail_journal;
        }
        requeued++;
    }
    if (replay) {
        replay->records = sc.records;
        replay->requeued = requeued;
        replay->resumed_steps = resumed;
        replay->torn_bytes = sc.tail_bytes;
    }

    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&q->mu, NULL);
    pthread_cond_init(&q->work_cv, &ca);
    pthread_cond_init(&q->done_cv, &ca);
    pthread_condattr_destroy(&ca);
    q->running = calloc((size_t)cfg->workers, sizeof *q->running);
    q->threads = calloc((size_t)cfg->workers, sizeof *q->threads);
    if (!q->running || !q->threads) {
        snprintf(err, errlen, "jobqueue: out of memory");
        goto fail_sync;
    }
    for (int w = 0; w < cfg->workers; w++) {
        worker_arg *wa = malloc(sizeof *wa);
        if (!wa || (*wa = (worker_arg){q, w}, pthread_create(&q->threads[w], NULL, worker_main, wa) != 0)) {
            free(wa);
            snprintf(err, errlen, "jobqueue: cannot start worker %d", w);
            jobqueue_close(q, JQ_STOP);
            return NULL;
        }
        q->nthreads++;
    }
    return q;

fail_sync:
    pthread_cond_destroy(&q->work_cv);
    pthread_cond_destroy(&q->done_cv);
    pthread_mutex_destroy(&q->mu);
fail_journal:
    jq_journal_close(&q->journal);
fail:
    for (size_t i = 0; i < q->njobs; i++)
        if (q->jobs[i]) {
            free(q->jobs[i]->payload);
            free(q->jobs[i]);
        }
    free(q->jobs);
    free(q->fifo);
    free(q->running);
    free(q->threads);
    free(q);
    return NULL;
}

//> jobqueue_submit
int jobqueue_submit(jobqueue *q, const void *payload, size_t len, int steps, uint64_t *id, char *reason,
                    size_t reasonlen)
{
    if (!q || !id || steps < 1 || steps > q->cfg.max_steps || len > q->cfg.max_payload || (len && !payload))
        return JQ_EINVAL;
    pthread_mutex_lock(&q->mu);
    if (q->closing) {
        pthread_mutex_unlock(&q->mu);
        return JQ_ECLOSED;
    }
    /* admission: the unfinished steps ahead, at the measured step time, over the workers */
    double st = step_time_locked(q);
    double wait = (double)q->unfinished_steps * st / q->cfg.workers;
    if (q->cfg.max_wait > 0 && wait > q->cfg.max_wait) {
        if (reason)
            snprintf(reason, reasonlen,
                     "predicted wait %.3g s exceeds the bound %.3g s (%ld steps ahead at %.3g s a step on %d "
                     "workers)",
                     wait, q->cfg.max_wait, q->unfinished_steps, st, q->cfg.workers);
        pthread_mutex_unlock(&q->mu);
        return JQ_EREJECTED;
    }
    /* reserve the work; the id comes with the journal record, and the job
     * becomes visible only once it is durable */
    q->unfinished_steps += steps;
    q->pending_submits++;
    pthread_mutex_unlock(&q->mu);

    job *j = calloc(1, sizeof *j);
    void *copy = len ? malloc(len) : NULL;
    int ok = j && (!len || copy);
    if (ok && len)
        memcpy(copy, payload, len);
    uint64_t my = 0;
    if (ok)
        ok = jq_journal_append(&q->journal, JREC_SUBMIT, &my, steps, payload, len) == 0;

    pthread_mutex_lock(&q->mu);
    q->pending_submits--;
    int queued = 0;
    if (ok && my > q->njobs && grow((void **)&q->jobs, &q->cap, (size_t)my, sizeof *q->jobs) == 0) {
        for (size_t i = q->njobs; i < my; i++) /* ids skipped, or still on their way */
            q->jobs[i] = NULL;
        q->njobs = (size_t)my;
    }
    if (ok && my <= q->njobs) {
        *j = (job){my, JOB_QUEUED, steps, 0, 0, 0, 0, copy, len};
        if (fifo_push(q, my) == 0) {
            q->jobs[my - 1] = j;
            queued = 1;
        }
    }
    /* (durable but out of memory to queue: the next open runs it) */
    if (!queued)
        q->unfinished_steps -= steps;
    if (q->closing) /* draining workers wait for the last pending submit */
        pthread_cond_broadcast(&q->work_cv);
    else if (queued)
        pthread_cond_signal(&q->work_cv);
    pthread_cond_broadcast(&q->done_cv); /* close may be waiting for pending submits */
    pthread_mutex_unlock(&q->mu);
    if (!queued) {
        free(copy);
        free(j);
        if (reason)
            snprintf(reason, reasonlen, "the journal could not be written");
        return JQ_EIO;
    }
    *id = my;
    return JQ_OK;
}
//< jobqueue_submit

//> status
static void status_locked(jobqueue *q, const job *j, job_status *out)
{
    double st = step_time_locked(q);
    memset(out, 0, sizeof *out);
    out->id = j->id;
    out->state = j->state;
    out->steps_done = j->done;
    out->steps = j->steps;
    out->error = j->error;
    if (j->state == JOB_RUNNING) {
        out->eta = (j->steps - j->done) * st;
    } else if (j->state == JOB_QUEUED) {
        /* the work ahead: what the running jobs have left, and every queued job before it */
        long ahead = 0;
        for (int w = 0; w < q->cfg.workers; w++)
            if (q->running[w])
                ahead += q->running[w]->steps - q->running[w]->done;
        for (size_t i = q->fifo_head; i < q->fifo_len && q->fifo[i] != j->id; i++) {
            const job *a = find_job(q, q->fifo[i]);
            if (a && a->state == JOB_QUEUED)
                ahead += a->steps - a->done;
        }
        out->wait_ahead = ahead * st / q->cfg.workers;
        out->eta = out->wait_ahead + (j->steps - j->done) * st;
    }
}
//< status

int jobqueue_status(jobqueue *q, uint64_t id, job_status *out)
{
    pthread_mutex_lock(&q->mu);
    job *j = find_job(q, id);
    if (j)
        status_locked(q, j, out);
    pthread_mutex_unlock(&q->mu);
    return j ? JQ_OK : JQ_ENOENT;
}

static int finished(const job *j)
{
    return j->state == JOB_DONE || j->state == JOB_FAILED || j->state == JOB_CANCELLED;
}

int jobqueue_wait(jobqueue *q, uint64_t id, double timeout, job_status *out)
{
    struct timespec dl = abs_deadline(timeout > 0 ? timeout : 0);
    pthread_mutex_lock(&q->mu);
    job *j = find_job(q, id);
    int rc = j ? JQ_OK : JQ_ENOENT;
    while (j && !finished(j)) {
        if (timeout > 0) {
            if (pthread_cond_timedwait(&q->done_cv, &q->mu, &dl) == ETIMEDOUT && !finished(j)) {
                rc = JQ_ETIMEDOUT;
                break;
            }
        } else {
            pthread_cond_wait(&q->done_cv, &q->mu);
        }
    }
    if (j && out)
        status_locked(q, j, out);
    pthread_mutex_unlock(&q->mu);
    return rc;
}

//> cancel
int jobqueue_cancel(jobqueue *q, uint64_t id)
{
    pthread_mutex_lock(&q->mu);
    job *j = find_job(q, id);
    int rc = JQ_OK;
    if (!j)
        rc = JQ_ENOENT;
    else if (finished(j) || j->ending)
        rc = JQ_EFINISHED;
    else if (j->state == JOB_RUNNING)
        j->cancel_requested = 1; /* its worker ends it at the next step boundary */
    else
        finish_locked(q, j, JOB_CANCELLED, 0); /* queued: no worker owns it yet */
    pthread_mutex_unlock(&q->mu);
    return rc;
}
//< cancel

int jobqueue_drain(jobqueue *q, double timeout)
{
    struct timespec dl = abs_deadline(timeout > 0 ? timeout : 0);
    pthread_mutex_lock(&q->mu);
    int rc = JQ_OK;
    while (q->unfinished_steps > 0 || q->pending_submits > 0 || fifo_has_queued(q)) {
        if (timeout > 0) {
            if (pthread_cond_timedwait(&q->done_cv, &q->mu, &dl) == ETIMEDOUT) {
                rc = JQ_ETIMEDOUT;
                break;
            }
        } else {
            pthread_cond_wait(&q->done_cv, &q->mu);
        }
    }
    /* a job whose last step has run is finished a moment later, by its worker */
    while (rc == JQ_OK) {
        int busy = 0;
        for (int w = 0; w < q->cfg.workers; w++)
            busy |= q->running[w] != NULL;
        if (!busy)
            break;
        pthread_cond_wait(&q->done_cv, &q->mu);
    }
    pthread_mutex_unlock(&q->mu);
    return rc;
}

double jobqueue_step_time(jobqueue *q)
{
    pthread_mutex_lock(&q->mu);
    double st = step_time_locked(q);
    pthread_mutex_unlock(&q->mu);
    return st;
}

void jobqueue_close(jobqueue *q, jobqueue_close_mode mode)
{
    if (!q)
        return;
    pthread_mutex_lock(&q->mu);
    q->closing = 1;
    q->mode = mode;
    pthread_cond_broadcast(&q->work_cv);
    while (q->pending_submits > 0)
        pthread_cond_wait(&q->done_cv, &q->mu);
    pthread_mutex_unlock(&q->mu);
    for (int w = 0; w < q->nthreads; w++)
        pthread_join(q->threads[w], NULL);
    jq_journal_close(&q->journal);
    for (size_t i = 0; i < q->njobs; i++)
        if (q->jobs[i]) {
            free(q->jobs[i]->payload);
            free(q->jobs[i]);
        }
    pthread_cond_destroy(&q->work_cv);
    pthread_cond_destroy(&q->done_cv);
    pthread_mutex_destroy(&q->mu);
    free(q->jobs);
    free(q->fifo);
    free(q->running);
    free(q->threads);
    free(q);
}
