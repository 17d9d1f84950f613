/* The job queue's journal (see journal.h): the record layout and its
 * CRC, the walk that replays it and resynchronises after damage, the
 * quarantine copy of damaged bytes, and the durable append. */
#include "journal.h"

#include "grow.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JQ_MAGIC 0x3152514aU /* "JQR1" */
#define JQ_MAX_ID (UINT64_C(1) << 53) /* ids stay exact in a double and far from wrapping */

/* ------------------------------------------------------------ records */

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

/* journal_format.h sizes a job's journal without this file's I/O */
_Static_assert(sizeof(jq_header) == JQ_RECORD_HEADER_BYTES, "JQ_RECORD_HEADER_BYTES is the header's size");

static uint32_t record_crc(const jq_header *h, const void *payload)
{
    uint32_t c = jq_crc32(0, (const char *)h + 8, sizeof *h - 8);
    return jq_crc32(c, payload, h->len);
}

/* ------------------------------------------------------------ reading */

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

/* ------------------------------------------------------------ opening */

/* The caller's reader, and whether it stopped the walk. */
typedef struct {
    jrec_fn fn;
    void *ctx;
    int stopped;
} reader;

static int read_one(void *arg, const jrec *r)
{
    reader *rd = arg;
    if (rd->fn && rd->fn(rd->ctx, r) != 0)
        rd->stopped = 1;
    return rd->stopped;
}

int jq_journal_open(jq_journal *j, const char *path, jrec_fn fn, void *ctx, jq_scan *scan, char *note,
                    size_t notelen, char *err, size_t errlen)
{
    memset(j, 0, sizeof *j);
    j->fd = -1;
    if (note && notelen)
        note[0] = '\0';
    /* replay; copy damaged runs aside; cut a torn tail before appending anything */
    long len = 0;
    int missing = 0;
    char *buf = read_all(path, &len, &missing, err, errlen);
    if (!buf && !missing)
        return -1;
    reader rd = {fn, ctx, 0};
    jq_scan sc;
    run_list runs = {0};
    journal_walk(buf ? buf : "", len, read_one, &rd, collect_run, &runs, &sc);
    const uint32_t magic = JQ_MAGIC;
    int refuse = 0;
    if (rd.stopped) {
        snprintf(err, errlen, "%s: replay stopped at a record its reader could not take", path);
        refuse = 1;
    } else if (runs.failed) {
        snprintf(err, errlen, "jobqueue: out of memory replaying %s", path);
        refuse = 1;
    } else if (sc.records == 0 && len >= 4 && memcmp(buf, &magic, 4) != 0) {
        /* not a torn first record but some other file: never cut it */
        snprintf(err, errlen, "%s: not a job journal (refusing to truncate it)", path);
        refuse = 1;
    }
    if (refuse) {
        free(buf);
        free(runs.runs);
        return -1;
    }
    /* a tail shorter than a header cannot hold an acknowledged record: a torn append */
    int cut = sc.tail_bytes > 0 && sc.tail_bytes < (long)sizeof(jq_header);
    if (sc.tail_bytes > 0)
        collect_run(&runs, sc.good_end, sc.tail_bytes);
    int quarantined = runs.n == 0 || (!runs.failed && quarantine(path, buf, &runs) == 0);
    free(buf);
    free(runs.runs);
    j->fd = open(path, O_WRONLY | O_CREAT | O_APPEND, 0644);
    if (j->fd < 0) {
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return -1;
    }
    if (cut && (ftruncate(j->fd, sc.good_end) != 0 || fsync(j->fd) != 0)) {
        snprintf(err, errlen, "%s: cannot cut the torn tail: %s", path, strerror(errno));
        close(j->fd);
        j->fd = -1;
        return -1;
    }
    j->size = cut ? sc.good_end : len;
    /* past every id a kept damaged run may hold: the walk's bound for the next record */
    long kept_lost = sc.damaged_bytes + (cut ? 0 : sc.tail_bytes);
    j->last_id = sc.hwm + (uint64_t)kept_lost / sizeof(jq_header);
    long regions = sc.regions + (sc.tail_bytes > 0);
    if (note && notelen && regions) {
        char refused[96] = "";
        if (sc.refused)
            snprintf(refused, sizeof refused, "; %ld records refused for an impossible id, the first at offset %ld",
                     sc.refused, sc.first_refused);
        snprintf(note, notelen, "%s: skipped %ld damaged bytes in %ld runs, the first at offset %ld%s; %s%s", path,
                 sc.damaged_bytes + sc.tail_bytes, regions, sc.first_damage, refused,
                 quarantined ? "copied to its .quarantine file" : "its .quarantine file could not be written",
                 cut ? "; the torn tail was cut off" : "");
    }
    if (scan)
        *scan = sc;
    pthread_mutex_init(&j->mu, NULL);
    return 0;
}

void jq_journal_close(jq_journal *j)
{
    close(j->fd);
    j->fd = -1;
    pthread_mutex_destroy(&j->mu);
}

/* ------------------------------------------------------------ appending */

//> append
/* Append one record and make it durable.  One write() per record, then
 * fsync; on a short or failed write the file is cut back to where it was,
 * so a later record never lands behind a torn one.  A SUBMIT (*id == 0)
 * takes the next id here, under the journal lock, so ids appear in the
 * journal in order and a failed append uses up none. */
int jq_journal_append(jq_journal *j, jrec_type type, uint64_t *id, int value, const void *payload, size_t len)
{
    jq_header h = {JQ_MAGIC, 0, (uint32_t)type, (uint32_t)len, *id, value, 0};
    size_t total = sizeof h + len;
    char stackbuf[512];
    char *buf = total <= sizeof stackbuf ? stackbuf : malloc(total);
    if (!buf)
        return -1;
    if (len)
        memcpy(buf + sizeof h, payload, len);
    pthread_mutex_lock(&j->mu);
    if (type == JREC_SUBMIT && j->last_id >= JQ_MAX_ID) {
        pthread_mutex_unlock(&j->mu);
        if (buf != stackbuf)
            free(buf);
        return -1;
    }
    if (type == JREC_SUBMIT)
        h.id = j->last_id + 1;
    h.crc = record_crc(&h, payload);
    memcpy(buf, &h, sizeof h);
    size_t off = 0;
    int rc = 0;
    while (off < total) {
        ssize_t w = write(j->fd, buf + off, total - off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0) {
            rc = -1;
            break;
        }
        off += (size_t)w;
    }
    if (rc == 0 && fsync(j->fd) != 0)
        rc = -1;
    if (rc == 0) {
        j->size += (off_t)total;
        if (type == JREC_SUBMIT)
            *id = j->last_id = h.id;
    }
    else if (ftruncate(j->fd, j->size) != 0) {
        /* nothing more to do: the next open cuts the torn tail */
    }
    pthread_mutex_unlock(&j->mu);
    if (buf != stackbuf)
        free(buf);
    return rc;
}
//< append
