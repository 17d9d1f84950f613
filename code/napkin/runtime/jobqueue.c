/* A crash-safe job queue on POSIX threads (see jobqueue.h).
 *
 * One mutex guards the jobs, the queue order and the counters; a second one
 * serialises appends to the journal, so a status call never waits for an
 * fsync.  A job's record is durable before anyone can see the job: submit
 * reserves an id, journals, and only then queues it.  The one thread that
 * owns a job's end (its worker, or cancel while it is queued) marks it
 * finished in memory first, so nobody else can end it, then journals the
 * terminal record, then tells the waiters. */
#include "jobqueue.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <math.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define JQ_MAGIC 0x3152514aU /* "JQR1" */
#define JQ_MAX_ID (UINT64_C(1) << 53) /* ids stay exact in a double and far from wrapping */

/* ------------------------------------------------------------ CRC-32 */

uint32_t jq_crc32(uint32_t crc, const void *data, size_t len)
{
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < len; i++) {
        crc ^= p[i];
        for (int k = 0; k < 8; k++)
            crc = (crc >> 1) ^ (0xedb88320U & (0U - (crc & 1U)));
    }
    return ~crc;
}

//> record
/* One journal record: this header, then len payload bytes.  The CRC covers
 * everything after its own field, payload included, so a record cut short
 * or scribbled on anywhere fails the check. */
typedef struct {
    uint32_t magic;
    uint32_t crc;
    uint32_t type;  /* jrec_type */
    uint32_t len;   /* payload bytes that follow */
    uint64_t id;
    int32_t value;  /* SUBMIT: steps; STEP: steps done; FAILED: error */
    uint32_t reserved;
} jq_header;
//< record

/* jobqueue_size.c prices a job's journal without this file's threads */
_Static_assert(sizeof(jq_header) == JQ_RECORD_HEADER_BYTES, "JQ_RECORD_HEADER_BYTES is the header's size");

static uint32_t record_crc(const jq_header *h, const void *payload)
{
    uint32_t c = jq_crc32(0, (const char *)h + 8, sizeof *h - 8);
    return jq_crc32(c, payload, h->len);
}

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
    pthread_mutex_t journal_mu;
    uint64_t last_id;       /* the highest id issued or possibly issued; under journal_mu */
    int fd;
    off_t journal_size;
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

/* Room for need elements, doubling; -1 (nothing changed) when the size
 * would not fit in a size_t. */
static int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return -1;
        c *= 2;
    }
    if (c > SIZE_MAX / elem)
        return -1;
    void *n = realloc(*p, c * elem);
    if (!n)
        return -1;
    *p = n;
    *cap = c;
    return 0;
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

/* ------------------------------------------------------------ journal */

//> append
/* Append one record and make it durable.  One write() per record, then
 * fsync; on a short or failed write the file is cut back to where it was,
 * so a later record never lands behind a torn one.  A SUBMIT (*id == 0)
 * takes the next id here, under the journal lock, so ids appear in the
 * journal in order and a failed append uses up none. */
static int journal_append(jobqueue *q, jrec_type type, uint64_t *id, int value, const void *payload, size_t len)
{
    jq_header h = {JQ_MAGIC, 0, (uint32_t)type, (uint32_t)len, *id, value, 0};
    size_t total = sizeof h + len;
    char stackbuf[512];
    char *buf = total <= sizeof stackbuf ? stackbuf : malloc(total);
    if (!buf)
        return -1;
    if (len)
        memcpy(buf + sizeof h, payload, len);
    pthread_mutex_lock(&q->journal_mu);
    if (type == JREC_SUBMIT && q->last_id >= JQ_MAX_ID) {
        pthread_mutex_unlock(&q->journal_mu);
        if (buf != stackbuf)
            free(buf);
        return -1;
    }
    if (type == JREC_SUBMIT)
        h.id = q->last_id + 1;
    h.crc = record_crc(&h, payload);
    memcpy(buf, &h, sizeof h);
    size_t off = 0;
    int rc = 0;
    while (off < total) {
        ssize_t w = write(q->fd, buf + off, total - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = -1;
            break;
        }
        off += (size_t)w;
    }
    if (rc == 0 && fsync(q->fd) != 0)
        rc = -1;
    if (rc == 0) {
        q->journal_size += (off_t)total;
        if (type == JREC_SUBMIT)
            *id = q->last_id = h.id;
    }
    else if (ftruncate(q->fd, q->journal_size) != 0) {
        /* nothing more to do: the next open cuts the torn tail */
    }
    pthread_mutex_unlock(&q->journal_mu);
    if (buf != stackbuf)
        free(buf);
    return rc;
}
//< append

static char *read_all(const char *path, long *len, int *missing, char *err, size_t errlen)
{
    *len = 0;
    *missing = 0;
    int fd = open(path, O_RDONLY);
    if (fd < 0) {
        if (errno == ENOENT) {
            *missing = 1;
            return NULL;
        }
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return NULL;
    }
    struct stat st;
    if (fstat(fd, &st) != 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        close(fd);
        return NULL;
    }
    char *buf = malloc((size_t)st.st_size + 1);
    if (!buf) {
        snprintf(err, errlen, "%s: out of memory", path);
        close(fd);
        return NULL;
    }
    long got = 0;
    while (got < st.st_size) {
        ssize_t r = read(fd, buf + got, (size_t)(st.st_size - got));
        if (r < 0 && errno == EINTR)
            continue;
        if (r <= 0)
            break;
        got += r;
    }
    close(fd);
    *len = got;
    return buf;
}

//> replay_walk
/* A record at off that parses and whose CRC holds, in *h; 0 otherwise. */
static int record_at(const char *buf, long len, long off, jq_header *h)
{
    if (off < 0 || len - off < (long)sizeof *h)
        return 0;
    memcpy(h, buf + off, sizeof *h);
    if (h->magic != JQ_MAGIC || h->type < JREC_SUBMIT || h->type > JREC_CANCELLED ||
        (long)h->len > len - off - (long)sizeof *h)
        return 0;
    return record_crc(h, buf + off + sizeof *h) == h->crc;
}

/* The next offset after off where a record's magic appears (len if none):
 * where a walk that lost its footing tries again. */
static long next_magic(const char *buf, long len, long off)
{
    const uint32_t m = JQ_MAGIC;
    for (long p = off + 1; p + 4 <= len; p++)
        if (memcmp(buf + p, &m, 4) == 0)
            return p;
    return len;
}

/* Walk every good record; resynchronise after damage at the next record
 * that checks.  Ids are handed out in journal order (submit takes the next
 * id under the journal lock) and every id has its SUBMIT record before any
 * other record of it, so an id is at most one past the good SUBMITs seen
 * so far, plus one per 32 damaged bytes before it (a lost SUBMIT is at
 * least a header long).  Counting SUBMITs, not the highest id, spends each
 * damaged byte once: a bound on the highest id would let every later record
 * claim the same damage again.  A record claiming more is refused as
 * damage: no crafted id can make replay allocate or loop beyond the file's
 * own size.  on_damage (may be NULL) sees each damaged run of bytes. */
typedef void (*damage_fn)(void *ctx, long off, long len);
static void journal_walk(const char *buf, long len, jrec_fn fn, void *ctx, damage_fn on_damage, void *dctx,
                         jq_scan *s)
{
    memset(s, 0, sizeof *s);
    s->first_damage = -1;
    long off = 0, dmg = -1; /* dmg: where the current damaged run began */
    uint64_t submits = 0;   /* good SUBMIT records so far */
    int stopped = 0;
    while (off < len && !stopped) {
        jq_header h;
        if (!record_at(buf, len, off, &h)) {
            if (dmg < 0)
                dmg = off;
            off = next_magic(buf, len, off);
            continue;
        }
        long lost = s->damaged_bytes + (dmg >= 0 ? off - dmg : 0);
        uint64_t bound = submits + 1 + (uint64_t)lost / sizeof h;
        if (h.id == 0 || h.id > bound) {
            if (s->refused++ == 0)
                s->first_refused = off;
            if (dmg < 0)
                dmg = off;
            off += (long)sizeof h + h.len;
            continue;
        }
        if (dmg >= 0) {
            if (on_damage)
                on_damage(dctx, dmg, off - dmg);
            if (s->first_damage < 0)
                s->first_damage = dmg;
            s->damaged_bytes += off - dmg;
            s->regions++;
            dmg = -1;
        }
        if (h.id > s->hwm)
            s->hwm = h.id;
        submits += h.type == JREC_SUBMIT;
        s->records++;
        jrec r = {(jrec_type)h.type, h.id, h.value, buf + off + sizeof h, h.len};
        off += (long)sizeof h + h.len;
        s->good_end = off;
        if (fn && fn(ctx, &r) != 0)
            stopped = 1;
    }
    s->tail_bytes = len - s->good_end;
    if (dmg >= 0 && s->first_damage < 0)
        s->first_damage = dmg;
}

int jobqueue_journal_scan(const char *path, jrec_fn fn, void *ctx, jq_scan *s, char *err, size_t errlen)
{
    long len;
    int missing;
    memset(s, 0, sizeof *s);
    s->first_damage = -1;
    char *buf = read_all(path, &len, &missing, err, errlen);
    if (!buf)
        return missing ? 0 : -1;
    journal_walk(buf, len, fn, ctx, NULL, NULL, s);
    free(buf);
    return 0;
}
//< replay_walk

int jobqueue_journal_read(const char *path, jrec_fn fn, void *ctx, long *good_bytes, long *torn_bytes, char *err,
                          size_t errlen)
{
    jq_scan s;
    int rc = jobqueue_journal_scan(path, fn, ctx, &s, err, errlen);
    if (good_bytes)
        *good_bytes = s.good_end;
    if (torn_bytes)
        *torn_bytes = s.tail_bytes;
    return rc;
}

/* ------------------------------------------------------------ quarantine */

/* "<journal>.quarantine" keeps a copy of every damaged run of a journal:
 * per run, this header, then the bytes.  A run already copied (same offset
 * and length) is not copied again at the next open. */
#define JQ_QMAGIC 0x3151514aU /* "JQQ1" */
typedef struct {
    uint32_t magic, reserved;
    uint64_t offset, length;
} jq_qheader;

typedef struct {
    long *runs; /* offset, length pairs */
    size_t n, cap;
    int failed;
} run_list;

static void collect_run(void *ctx, long off, long len)
{
    run_list *l = ctx;
    if (grow((void **)&l->runs, &l->cap, 2 * (l->n + 1), sizeof *l->runs) != 0) {
        l->failed = 1;
        return;
    }
    l->runs[2 * l->n] = off;
    l->runs[2 * l->n + 1] = len;
    l->n++;
}

static int write_full(int fd, const void *p, size_t n)
{
    const char *c = p;
    while (n > 0) {
        ssize_t w = write(fd, c, n);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            return -1;
        c += w;
        n -= (size_t)w;
    }
    return 0;
}

/* Copy the runs not yet in the quarantine file; 0, or -1 if it cannot be written. */
static int quarantine(const char *journal, const char *buf, const run_list *l)
{
    size_t plen = strlen(journal) + sizeof ".quarantine";
    char *path = malloc(plen);
    if (!path)
        return -1;
    snprintf(path, plen, "%s.quarantine", journal);
    int fd = open(path, O_RDWR | O_CREAT | O_APPEND, 0644);
    free(path);
    if (fd < 0)
        return -1;
    run_list have = {0};
    jq_qheader h;
    while (read(fd, &h, sizeof h) == (ssize_t)sizeof h && h.magic == JQ_QMAGIC && h.length < (uint64_t)LONG_MAX &&
           lseek(fd, (off_t)h.length, SEEK_CUR) >= 0)
        collect_run(&have, (long)h.offset, (long)h.length);
    int rc = 0;
    for (size_t i = 0; i < l->n && rc == 0; i++) {
        long off = l->runs[2 * i], len = l->runs[2 * i + 1];
        int dup = 0;
        for (size_t k = 0; k < have.n && !dup; k++)
            dup = have.runs[2 * k] == off && have.runs[2 * k + 1] == len;
        if (dup)
            continue;
        jq_qheader q = {JQ_QMAGIC, 0, (uint64_t)off, (uint64_t)len};
        rc = write_full(fd, &q, sizeof q) == 0 && write_full(fd, buf + off, (size_t)len) == 0 ? 0 : -1;
    }
    if (rc == 0 && fsync(fd) != 0)
        rc = -1;
    free(have.runs);
    close(fd);
    return rc;
}

/* Rebuild the jobs from the journal's records. */
typedef struct {
    jobqueue *q;
    long records;
    int failed;
} replay_ctx;

static int replay_record(void *arg, const jrec *r)
{
    replay_ctx *c = arg;
    jobqueue *q = c->q;
    c->records++;
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
    (void)journal_append(q, t, &id, error, NULL, 0);
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
                (void)journal_append(q, JREC_STEP, &id, step + 1, NULL, 0);
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
        !(cfg->prior_step_time > 0) || cfg->max_wait < 0 || cfg->max_steps < 0) {
        snprintf(err, errlen, "jobqueue: need a journal path, a step function, 1 to 1024 workers, a positive prior "
                              "step time and a non-negative wait bound");
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
    q->fd = -1;

    /* replay; copy damaged runs aside; cut a torn tail before appending anything */
    replay_ctx rc = {q, 0, 0};
    long len = 0;
    int missing = 0;
    char *buf = read_all(cfg->journal_path, &len, &missing, err, errlen);
    if (!buf && !missing)
        goto fail;
    jq_scan sc;
    run_list runs = {0};
    journal_walk(buf ? buf : "", len, replay_record, &rc, collect_run, &runs, &sc);
    const uint32_t magic = JQ_MAGIC;
    if (rc.failed || runs.failed) {
        snprintf(err, errlen, "jobqueue: out of memory replaying %s", cfg->journal_path);
        free(buf);
        free(runs.runs);
        goto fail;
    }
    if (sc.records == 0 && len >= 4 && memcmp(buf, &magic, 4) != 0) {
        /* not a torn first record but some other file: never cut it */
        snprintf(err, errlen, "%s: not a job journal (refusing to truncate it)", cfg->journal_path);
        free(buf);
        free(runs.runs);
        goto fail;
    }
    /* a tail shorter than a header cannot hold an acknowledged record: a torn append */
    int cut = sc.tail_bytes > 0 && sc.tail_bytes < (long)sizeof(jq_header);
    if (sc.tail_bytes > 0)
        collect_run(&runs, sc.good_end, sc.tail_bytes);
    int quarantined = runs.n == 0 || (!runs.failed && quarantine(cfg->journal_path, buf, &runs) == 0);
    free(buf);
    free(runs.runs);
    q->fd = open(cfg->journal_path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (q->fd < 0) {
        snprintf(err, errlen, "%s: %s", cfg->journal_path, strerror(errno));
        goto fail;
    }
    if (cut && (ftruncate(q->fd, sc.good_end) != 0 || fsync(q->fd) != 0)) {
        snprintf(err, errlen, "%s: cannot cut the torn tail: %s", cfg->journal_path, strerror(errno));
        goto fail;
    }
    q->journal_size = cut ? sc.good_end : len;
    /* past every id a kept damaged run may hold: the walk's bound for the next record */
    long kept_lost = sc.damaged_bytes + (cut ? 0 : sc.tail_bytes);
    q->last_id = sc.hwm + (uint64_t)kept_lost / sizeof(jq_header);
    if (replay) {
        replay->damaged_bytes = sc.damaged_bytes;
        replay->regions = sc.regions + (sc.tail_bytes > 0);
        replay->refused = sc.refused;
        replay->first_damage = sc.first_damage;
        replay->next_id = q->last_id + 1;
        if (replay->regions) {
            char refused[96] = "";
            if (sc.refused)
                snprintf(refused, sizeof refused, "; %ld records refused for an impossible id, the first at offset %ld",
                         sc.refused, sc.first_refused);
            snprintf(replay->note, sizeof replay->note,
                     "%s: skipped %ld damaged bytes in %ld runs, the first at offset %ld%s; %s%s", cfg->journal_path,
                     sc.damaged_bytes + sc.tail_bytes, replay->regions, sc.first_damage, refused,
                     quarantined ? "copied to its .quarantine file" : "its .quarantine file could not be written",
                     cut ? "; the torn tail was cut off" : "");
        }
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
            goto fail;
        }
        requeued++;
    }
    if (replay) {
        replay->records = rc.records;
        replay->requeued = requeued;
        replay->resumed_steps = resumed;
        replay->torn_bytes = sc.tail_bytes;
    }

    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
    pthread_mutex_init(&q->mu, NULL);
    pthread_mutex_init(&q->journal_mu, NULL);
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
    pthread_mutex_destroy(&q->journal_mu);
fail:
    if (q->fd >= 0)
        close(q->fd);
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
        ok = journal_append(q, JREC_SUBMIT, &my, steps, payload, len) == 0;

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
    close(q->fd);
    for (size_t i = 0; i < q->njobs; i++)
        if (q->jobs[i]) {
            free(q->jobs[i]->payload);
            free(q->jobs[i]);
        }
    pthread_cond_destroy(&q->work_cv);
    pthread_cond_destroy(&q->done_cv);
    pthread_mutex_destroy(&q->mu);
    pthread_mutex_destroy(&q->journal_mu);
    free(q->jobs);
    free(q->fifo);
    free(q->running);
    free(q->threads);
    free(q);
}
