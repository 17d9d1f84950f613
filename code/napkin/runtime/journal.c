/* The job queue's journal (see journal.h): the record layout and its
 * CRC, the walk that replays it and resynchronises after damage, the
 * quarantine copy of damaged bytes, and the durable append. */
#include "journal.h"

#include "grow.h"

#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stddef.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#define JQ_MAGIC 0x3252514aU      /* "JQR2": a record */
#define JQ_OLD_MAGIC 0x3152514aU  /* "JQR1": a record of the earlier, unsalted format */
#define JQ_FILE_MAGIC 0x324a514aU /* "JQJ2": the file header */
#define JQ_FORMAT 2
#define JQ_MAGIC_SLACK 3 /* bits of a record's magic a flip may have changed; its CRCs still decide */
#define JQ_MAX_ID (UINT64_C(1) << 53) /* ids stay exact in a double and far from wrapping */

/* ------------------------------------------------------------ records */

/* The reflected CRC-32 table, built once. */
static uint32_t crc_table[256];
static pthread_once_t crc_once = PTHREAD_ONCE_INIT;

static void crc_table_build(void)
{
    for (uint32_t i = 0; i < 256; i++) {
        uint32_t c = i;
        for (int k = 0; k < 8; k++)
            c = (c >> 1) ^ (0xedb88320U & (0U - (c & 1U)));
        crc_table[i] = c;
    }
}

uint32_t jq_crc32(uint32_t crc, const void *data, size_t len)
{
    pthread_once(&crc_once, crc_table_build);
    const unsigned char *p = data;
    crc = ~crc;
    for (size_t i = 0; i < len; i++)
        crc = (crc >> 8) ^ crc_table[(crc ^ p[i]) & 0xffU];
    return ~crc;
}

//> record
/* One journal record: this header, then len payload bytes.  The header CRC
 * covers the journal's salt, the record's own file offset and the fields
 * from type to value; the CRC continues from it over the payload.  A record
 * cut short or scribbled on anywhere but its magic fails a check, and one
 * found anywhere but where the journal wrote it, or written by anyone
 * without the salt, fails the header's. */
typedef struct {
    uint32_t magic;
    uint32_t crc;   /* the payload's, continuing from hcrc */
    uint32_t type;  /* jrec_type */
    uint32_t len;   /* payload bytes that follow */
    uint64_t id;
    int32_t value;  /* SUBMIT: steps; STEP: steps done; FAILED: error */
    uint32_t hcrc;  /* salt, offset, type..value */
} jq_header;
//< record

/* journal_format.h sizes a job's journal without this file's I/O */
_Static_assert(sizeof(jq_header) == JQ_RECORD_HEADER_BYTES, "JQ_RECORD_HEADER_BYTES is the header's size");

#define HEADER_FIELDS 20 /* type, len, id, value: the bytes from offset 8 */

static uint32_t header_crc(uint64_t salt, uint64_t off, const jq_header *h)
{
    unsigned char b[16 + HEADER_FIELDS];
    memcpy(b, &salt, 8);
    memcpy(b + 8, &off, 8);
    memcpy(b + 16, (const char *)h + 8, HEADER_FIELDS);
    return jq_crc32(0, b, sizeof b);
}

/* The file header, twice at the start of the file. */
typedef struct {
    uint32_t magic;   /* JQ_FILE_MAGIC */
    uint32_t version; /* JQ_FORMAT */
    uint64_t salt;
    uint32_t reserved[3];
    uint32_t crc;     /* of everything before it */
} jq_file_header;

_Static_assert(2 * sizeof(jq_file_header) == JQ_FILE_HEADER_BYTES, "JQ_FILE_HEADER_BYTES is two file headers");

static int file_header_ok(const unsigned char *p, jq_file_header *out)
{
    memcpy(out, p, sizeof *out);
    return out->magic == JQ_FILE_MAGIC && out->version == JQ_FORMAT &&
           jq_crc32(0, out, offsetof(jq_file_header, crc)) == out->crc;
}

/* A copy that one flipped bit made fail, put right: the CRC-32 tells any
 * two single-bit errors in 32 bytes apart, so at most one flip fits. */
static int file_header_fixed(const unsigned char *p, jq_file_header *out)
{
    unsigned char c[sizeof(jq_file_header)];
    for (size_t bit = 0; bit < 8 * sizeof c; bit++) {
        memcpy(c, p, sizeof c);
        c[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        if (file_header_ok(c, out))
            return 1;
    }
    return 0;
}

/* What the start of a file says. */
typedef enum {
    HEAD_GOOD,    /* both copies intact */
    HEAD_REPAIR,  /* a copy is damaged or torn; the other, or one bit, gives the header */
    HEAD_NEW,     /* empty, or torn while its header was written: no record can follow */
    HEAD_OLD,     /* the earlier unsalted format */
    HEAD_FOREIGN  /* not a journal, or both copies past repair */
} head_state;

static head_state read_head(const unsigned char *buf, long len, jq_file_header *fh)
{
    const size_t n = sizeof *fh;
    int have0 = len >= (long)n, have1 = len >= (long)(2 * n);
    if ((have0 && file_header_ok(buf, fh)) || (have1 && file_header_ok(buf + n, fh)) ||
        (have0 && file_header_fixed(buf, fh)) || (have1 && file_header_fixed(buf + n, fh))) {
        int intact = have1 && memcmp(buf, fh, n) == 0 && memcmp(buf + n, fh, n) == 0;
        return intact ? HEAD_GOOD : HEAD_REPAIR;
    }
    const uint32_t magic = JQ_FILE_MAGIC, old = JQ_OLD_MAGIC;
    if (len < JQ_FILE_HEADER_BYTES && memcmp(buf, &magic, len < 4 ? (size_t)len : 4) == 0)
        return HEAD_NEW;
    if (len >= 4 && memcmp(buf, &old, 4) == 0)
        return HEAD_OLD;
    return HEAD_FOREIGN;
}

static void head_refusal(head_state st, const char *path, char *err, size_t errlen)
{
    if (st == HEAD_OLD)
        snprintf(err, errlen,
                 "%s: a job journal of the earlier format (unsalted records, no file header), which this build "
                 "does not read; finish its jobs with the build that wrote it, or move it aside (left unchanged)",
                 path);
    else
        snprintf(err, errlen,
                 "%s: not a job journal, or one whose two header copies are both damaged past repair (left "
                 "unchanged)",
                 path);
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
/* The bits in which a header's magic differs from a record's. */
static int magic_flips(uint32_t m)
{
    return __builtin_popcount(m ^ JQ_MAGIC);
}

/* A record at off whose magic is near enough and whose two CRCs hold, in
 * *h; 0 otherwise.  A length over the maximum costs nothing, a header that
 * does not check costs its 36 bytes of CRC: only a header the journal wrote
 * at this offset has its payload read. */
static int record_at(const char *buf, long len, long off, uint64_t salt, jq_header *h)
{
    if (off < 0 || len - off < (long)sizeof *h)
        return 0;
    memcpy(h, buf + off, sizeof *h);
    if (magic_flips(h->magic) > JQ_MAGIC_SLACK || h->type < JREC_SUBMIT || h->type > JREC_CANCELLED ||
        h->len > JQ_MAX_PAYLOAD || (long)h->len > len - off - (long)sizeof *h)
        return 0;
    if (header_crc(salt, (uint64_t)off, h) != h->hcrc)
        return 0;
    return jq_crc32(h->hcrc, buf + off + sizeof *h, h->len) == h->crc;
}

/* The next offset after off where a record's magic, give or take a few
 * bits, appears with room for a header (len if none): where a walk that
 * lost its footing tries again. */
static long next_candidate(const char *buf, long len, long off)
{
    for (long p = off + 1; p + (long)sizeof(jq_header) <= len; p++) {
        uint32_t m;
        memcpy(&m, buf + p, 4);
        if (magic_flips(m) <= JQ_MAGIC_SLACK)
            return p;
    }
    return len;
}

/* Walk every good record from start; resynchronise after damage at the
 * next record that checks.  Ids are handed out in journal order (submit
 * takes the next id under the journal lock) and every id has its SUBMIT
 * record before any other record of it, so an id is at most one past the
 * good SUBMITs seen so far, plus one per 32 damaged bytes before it (a lost
 * SUBMIT is at least a header long).  Counting SUBMITs, not the highest id,
 * spends each damaged byte once: a bound on the highest id would let every
 * later record claim the same damage again.  A record claiming more is
 * refused as damage: no crafted id can make replay allocate or loop beyond
 * the file's own size.  on_damage (may be NULL) sees each damaged run. */
typedef void (*damage_fn)(void *ctx, long off, long len);
static void journal_walk(const char *buf, long len, long start, uint64_t salt, jrec_fn fn, void *ctx,
                         damage_fn on_damage, void *dctx, jq_scan *s)
{
    long off = start, dmg = -1; /* dmg: where the current damaged run began */
    s->good_end = start;
    uint64_t submits = 0; /* good SUBMIT records so far */
    int stopped = 0;
    while (off < len && !stopped) {
        jq_header h;
        if (!record_at(buf, len, off, salt, &h)) {
            if (dmg < 0)
                dmg = off;
            off = next_candidate(buf, len, off);
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
        s->repaired += h.magic != JQ_MAGIC;
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
    s->tail_bytes = len > s->good_end ? len - s->good_end : 0;
    if (dmg >= 0 && s->first_damage < 0)
        s->first_damage = dmg;
}

static void scan_init(jq_scan *s)
{
    memset(s, 0, sizeof *s);
    s->first_damage = -1;
}

int jobqueue_journal_scan(const char *path, jrec_fn fn, void *ctx, jq_scan *s, char *err, size_t errlen)
{
    long len;
    int missing;
    scan_init(s);
    char *buf = read_all(path, &len, &missing, err, errlen);
    if (!buf)
        return missing ? 0 : -1;
    jq_file_header fh;
    head_state st = read_head((const unsigned char *)buf, len, &fh);
    if (st == HEAD_OLD || st == HEAD_FOREIGN) {
        head_refusal(st, path, err, errlen);
        free(buf);
        return -1;
    }
    if (st == HEAD_NEW)
        s->tail_bytes = len; /* a header torn as it was made: no record */
    else {
        s->repaired += st == HEAD_REPAIR;
        journal_walk(buf, len, JQ_FILE_HEADER_BYTES, fh.salt, fn, ctx, NULL, NULL, s);
    }
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
 * and length) is not copied again at the next open: the runs already there
 * are sorted once and each new one is looked up, so a journal with many
 * damaged runs opens in time n log n, not n squared. */
#define JQ_QMAGIC 0x3151514aU /* "JQQ1" */
typedef struct {
    uint32_t magic, reserved;
    uint64_t offset, length;
} jq_qheader;

typedef struct {
    long off, len;
} run;

typedef struct {
    run *runs;
    size_t n, cap;
    int failed;
} run_list;

static void collect_run(void *ctx, long off, long len)
{
    run_list *l = ctx;
    if (grow((void **)&l->runs, &l->cap, l->n + 1, sizeof *l->runs) != 0) {
        l->failed = 1;
        return;
    }
    l->runs[l->n++] = (run){off, len};
}

static int run_cmp(const void *a, const void *b)
{
    const run *x = a, *y = b;
    if (x->off != y->off)
        return x->off < y->off ? -1 : 1;
    return (x->len > y->len) - (x->len < y->len);
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
           h.offset < (uint64_t)LONG_MAX && lseek(fd, (off_t)h.length, SEEK_CUR) >= 0)
        collect_run(&have, (long)h.offset, (long)h.length);
    int rc = have.failed ? -1 : 0;
    if (have.n > 1)
        qsort(have.runs, have.n, sizeof *have.runs, run_cmp);
    for (size_t i = 0; i < l->n && rc == 0; i++) {
        if (have.n && bsearch(&l->runs[i], have.runs, have.n, sizeof *have.runs, run_cmp))
            continue;
        long off = l->runs[i].off, len = l->runs[i].len;
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

/* A fresh file header: a new random salt. */
static int new_file_header(jq_file_header *fh)
{
    memset(fh, 0, sizeof *fh);
    fh->magic = JQ_FILE_MAGIC;
    fh->version = JQ_FORMAT;
    int fd = open("/dev/urandom", O_RDONLY);
    if (fd < 0)
        return -1;
    ssize_t got = read(fd, &fh->salt, sizeof fh->salt);
    close(fd);
    if (got != (ssize_t)sizeof fh->salt)
        return -1;
    fh->crc = jq_crc32(0, fh, offsetof(jq_file_header, crc));
    return 0;
}

/* Write both copies of the file header at the start of the file (cut to
 * keep bytes past them), durably.  A separate descriptor: the appending
 * one would put them at the end. */
static int write_file_header(const char *path, const jq_file_header *fh, long keep)
{
    int fd = open(path, O_WRONLY | O_CREAT, 0644);
    if (fd < 0)
        return -1;
    unsigned char two[JQ_FILE_HEADER_BYTES];
    memcpy(two, fh, sizeof *fh);
    memcpy(two + sizeof *fh, fh, sizeof *fh);
    int rc = 0;
    if (keep < JQ_FILE_HEADER_BYTES && ftruncate(fd, 0) != 0)
        rc = -1;
    for (size_t off = 0; rc == 0 && off < sizeof two;) {
        ssize_t w = pwrite(fd, two + off, sizeof two - off, (off_t)off);
        if (w < 0 && errno == EINTR)
            continue;
        if (w <= 0)
            rc = -1;
        else
            off += (size_t)w;
    }
    if (rc == 0 && fsync(fd) != 0)
        rc = -1;
    close(fd);
    return rc;
}

int jq_journal_open(jq_journal *j, const char *path, jrec_fn fn, void *ctx, jq_scan *scan, char *note,
                    size_t notelen, char *err, size_t errlen)
{
    memset(j, 0, sizeof *j);
    j->fd = -1;
    if (note && notelen)
        note[0] = '\0';
    /* read the header; replay; copy damaged runs aside; write a new or
     * repaired header and cut a torn tail before appending anything */
    long len = 0;
    int missing = 0;
    char *buf = read_all(path, &len, &missing, err, errlen);
    if (!buf && !missing)
        return -1;
    jq_file_header fh;
    head_state head = read_head((const unsigned char *)(buf ? buf : ""), len, &fh);
    if (head == HEAD_OLD || head == HEAD_FOREIGN) {
        head_refusal(head, path, err, errlen);
        free(buf);
        return -1;
    }
    reader rd = {fn, ctx, 0};
    jq_scan sc;
    scan_init(&sc);
    run_list runs = {0};
    const long start = JQ_FILE_HEADER_BYTES;
    if (head == HEAD_NEW) {
        if (new_file_header(&fh) != 0) {
            snprintf(err, errlen, "%s: no random salt for a new journal: %s", path, strerror(errno));
            free(buf);
            return -1;
        }
        if (len > 0)
            collect_run(&runs, 0, len); /* a header torn as it was made */
    } else {
        for (long c = 0; c < start; c += (long)sizeof fh)
            if (len < c + (long)sizeof fh || memcmp(buf + c, &fh, sizeof fh) != 0) {
                sc.repaired++;
                if (len > c)
                    collect_run(&runs, c, (len < c + (long)sizeof fh ? len : c + (long)sizeof fh) - c);
            }
        journal_walk(buf, len, start, fh.salt, read_one, &rd, collect_run, &runs, &sc);
    }
    int refuse = 0;
    if (rd.stopped) {
        snprintf(err, errlen, "%s: replay stopped at a record its reader could not take", path);
        refuse = 1;
    } else if (runs.failed) {
        snprintf(err, errlen, "jobqueue: out of memory replaying %s", path);
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
    long torn_head = head == HEAD_NEW ? len : 0; /* bytes of a header torn as it was made */
    int quarantined = runs.n == 0 || (!runs.failed && quarantine(path, buf, &runs) == 0);
    free(buf);
    free(runs.runs);
    if (head != HEAD_GOOD && write_file_header(path, &fh, head == HEAD_NEW ? 0 : len) != 0) {
        snprintf(err, errlen, "%s: cannot write the journal's header: %s", path, strerror(errno));
        return -1;
    }
    if (head == HEAD_NEW || len < start)
        len = start;
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
    j->salt = fh.salt;
    /* past every id a kept damaged run may hold: the walk's bound for the next record */
    long kept_lost = sc.damaged_bytes + (cut ? 0 : sc.tail_bytes);
    j->last_id = sc.hwm + (uint64_t)kept_lost / sizeof(jq_header);
    long regions = sc.regions + (sc.tail_bytes > 0);
    if (torn_head)
        sc.tail_bytes = torn_head;
    if (note && notelen && (regions || sc.repaired || torn_head)) {
        char skipped[128] = "", refused[112] = "", repaired[160] = "";
        if (regions)
            snprintf(skipped, sizeof skipped, "skipped %ld damaged bytes in %ld runs, the first at offset %ld; ",
                     sc.damaged_bytes + sc.tail_bytes, regions, sc.first_damage);
        if (sc.refused)
            snprintf(refused, sizeof refused, "%ld records refused for an impossible id, the first at offset %ld; ",
                     sc.refused, sc.first_refused);
        if (torn_head)
            snprintf(repaired, sizeof repaired, "a header torn as the journal was made (%ld bytes) written anew; ",
                     torn_head);
        else if (sc.repaired)
            snprintf(repaired, sizeof repaired, "read %ld damaged file header copies and record magics past (%s); ",
                     sc.repaired, head == HEAD_REPAIR ? "the header rewritten from its good copy" : "their CRCs hold");
        snprintf(note, notelen, "%s: %s%s%s%s%s", path, skipped, refused, repaired,
                 quarantined ? "damaged bytes copied to its .quarantine file"
                             : "its .quarantine file could not be written",
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
 * journal in order and a failed append uses up none.  The record's CRCs
 * take the salt and the offset it lands at, known under the lock. */
int jq_journal_append(jq_journal *j, jrec_type type, uint64_t *id, int value, const void *payload, size_t len)
{
    if (len > JQ_MAX_PAYLOAD)
        return -1;
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
    h.hcrc = header_crc(j->salt, (uint64_t)j->size, &h);
    h.crc = jq_crc32(h.hcrc, payload, len);
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
