/* A crash-safe queue for minute-long jobs (a video request is tens of
 * denoising steps of seconds each), on POSIX threads.
 *
 *   jobqueue *q = jobqueue_open(&cfg, err, n);   replay the journal, start workers
 *   jobqueue_submit(q, payload, len, steps, &id, reason, n);
 *                                    returns at once with an id, once the job
 *                                    is durable in the journal (fsync)
 *   jobqueue_status(q, id, &st);     state, step k of n, ETA: a poll
 *   jobqueue_wait(q, id, timeout, &st);  sleep until the job ends: an event
 *   jobqueue_cancel(q, id);          queued: at once; running: at the next step boundary
 *   jobqueue_close(q, JQ_STOP);      workers stop at a step boundary; what is
 *                                    unfinished resumes at the next open
 *
 * Workers run a pluggable step function, one step of one job per call; a
 * step that fails fails its own job only.  Admission control refuses a job
 * whose predicted wait (the unfinished steps ahead, at the measured step
 * time, over the workers) exceeds max_wait, with the reason in words.
 *
 * Nothing accepted is lost.  The journal (journal.h) is an append-only
 * file of records (SUBMIT with the payload, STEP k done, DONE, FAILED,
 * CANCELLED), each with a length and CRC-32s keyed by the journal's own
 * random salt and the record's offset, so a payload cannot carry a record
 * that replay would take for the journal's; submit returns only after
 * its record is fsynced, and the record gives the job its id, so ids are
 * handed out in journal order and never reused.  jobqueue_open replays the
 * journal, skipping damaged records (a crash mid-write, a flipped bit) and
 * resynchronising after them, so one bad record loses that record only.
 * Every job accepted and not finished is queued again, in id order,
 * resuming after its last journaled step when resume_steps is set (else
 * from step 0).  A job's terminal record is written once, so every accepted
 * job whose records are intact completes exactly once across any number of
 * crashes; a step that was running when the process died runs again (a
 * step function must tolerate that).
 *
 * A step function may submit, cancel and ask for status, but must not close
 * its own queue (close joins the worker it runs on).  Every job stays in
 * memory, finished or not, so that its status can be asked for, and the
 * journal only grows; a server that runs for months would evict finished
 * jobs and rewrite the live ones into a fresh journal. */
#ifndef NAPKIN_JOBQUEUE_H
#define NAPKIN_JOBQUEUE_H

#include "journal.h" /* the records, their walk, jq_job_journal_bytes */

#include <stddef.h>
#include <stdint.h>

typedef enum { JOB_QUEUED, JOB_RUNNING, JOB_DONE, JOB_FAILED, JOB_CANCELLED } job_state;
const char *job_state_name(job_state s); /* "queued", ... */

/* What the calls return. */
enum {
    JQ_OK = 0,
    JQ_EREJECTED = 1, /* admission control: the reason says why; nothing journaled */
    JQ_ENOENT = 2,    /* no such job */
    JQ_EFINISHED = 3, /* cancel of a job already done, failed or cancelled */
    JQ_ECLOSED = 4,   /* the queue is closing */
    JQ_EIO = 5,       /* the journal could not be written; the job was not accepted */
    JQ_EINVAL = 6,    /* bad arguments */
    JQ_ETIMEDOUT = 7  /* jobqueue_wait ran out of time */
};

/* One job as the step function sees it. */
typedef struct {
    uint64_t id;
    const void *payload;
    size_t payload_len;
    int steps; /* n */
} job_info;

/* Run step `step` (0-based) of the job; 0 on success, anything else fails
 * the job.  Called from worker threads, several at once for different jobs. */
typedef int (*job_step_fn)(void *ctx, const job_info *job, int step);

typedef struct {
    const char *journal_path; /* created when missing */
    int workers;              /* >= 1 */
    job_step_fn step;
    void *step_ctx;
    double max_wait;          /* seconds; 0 = admit everything */
    double prior_step_time;   /* seconds per step until one has been measured (> 0) */
    int resume_steps;         /* 1: a restarted job skips its journaled steps */
    int max_steps;            /* largest n a job may ask for; 0 = 1,000,000 */
    size_t max_payload;       /* bytes; 0 = 64 KiB; at most JQ_MAX_PAYLOAD */
} jobqueue_config;

typedef struct {
    uint64_t id;
    job_state state;
    int steps_done, steps; /* progress: step k of n */
    double eta;            /* seconds until it ends, from measured step times; 0 when finished */
    double wait_ahead;     /* seconds of work ahead of it (queued jobs) */
    int error;             /* the step function's return when FAILED */
} job_status;

/* What replay found. */
typedef struct {
    long records;       /* good records read */
    long requeued;      /* jobs queued again */
    long resumed_steps; /* journaled steps skipped by resuming */
    long torn_bytes;    /* bytes after the last good record (0 = clean); cut off when
                           shorter than a record header, else kept and skipped */
    long damaged_bytes; /* bytes skipped before the last good record */
    long regions;       /* damaged runs skipped (the tail included) */
    long refused;       /* records with a good CRC and an impossible id */
    long repaired;      /* damaged file header copies and record magics read past */
    long first_damage;  /* offset of the first skipped byte, -1 if none */
    uint64_t next_id;   /* the id the next submit gets */
    char note[256];     /* what was skipped and where it was copied, in words ("" if clean) */
} jobqueue_replay;

typedef struct jobqueue jobqueue;

/* NULL with a message for a bad config or an unreadable journal. */
jobqueue *jobqueue_open(const jobqueue_config *cfg, jobqueue_replay *replay, char *err, size_t errlen);

/* Accept a job of `steps` steps with a payload copied into the journal.
 * JQ_OK with *id set once it is durable; JQ_EREJECTED with the reason. */
int jobqueue_submit(jobqueue *q, const void *payload, size_t len, int steps, uint64_t *id, char *reason,
                    size_t reasonlen);
int jobqueue_status(jobqueue *q, uint64_t id, job_status *out);
/* Wait until the job has finished (done, failed, cancelled) or timeout
 * seconds pass (<= 0: no limit).  JQ_OK, JQ_ETIMEDOUT or JQ_ENOENT. */
int jobqueue_wait(jobqueue *q, uint64_t id, double timeout, job_status *out);
int jobqueue_cancel(jobqueue *q, uint64_t id);
/* Wait until no job is queued or running (or timeout): JQ_OK or JQ_ETIMEDOUT. */
int jobqueue_drain(jobqueue *q, double timeout);

typedef enum { JQ_STOP, JQ_DRAIN } jobqueue_close_mode;
/* Refuse new jobs, then either run everything (DRAIN) or stop each worker
 * at its next step boundary (STOP: unfinished jobs stay in the journal for
 * the next open); join the workers, close the journal, free. */
void jobqueue_close(jobqueue *q, jobqueue_close_mode mode);

/* The mean measured step time the ETAs use (prior_step_time before any). */
double jobqueue_step_time(jobqueue *q);

#endif
