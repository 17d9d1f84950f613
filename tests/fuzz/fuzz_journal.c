/* libFuzzer target: the job queue's journal replay, two ways.
 *
 * Raw (first byte even): the rest is a journal file.  Before replay, each
 * header copy that starts with the file magic gets its CRC recomputed, and
 * every place that starts like a record (the record magic and a length
 * that fits) gets both CRCs recomputed with the first copy's salt and its
 * own offset, so the fuzzer's mutations of ids, types, lengths and values
 * reach replay's own checks instead of stopping at a checksum.  Whatever
 * the bytes, opening the queue succeeds or fails with a message; it never
 * crashes, hangs, leaks or reads out of bounds, it allocates no more than
 * the file's size warrants, and it hands out a next id past every id a
 * good record holds.
 *
 * Smuggling (first byte odd): the rest describes jobs that the journal's
 * own writer appends, some with payloads that carry CRC-valid records (a
 * DONE for an earlier job, a SUBMIT for the next id with the payload
 * "EVIL"), forged as an attacker who cannot read the file would: in the
 * earlier format, or in this one at their true offsets with a salt guessed
 * from the input.  Then one bit chosen by the input is flipped anywhere.
 * Replay must show only records the writer wrote: every SUBMIT with the
 * payload submitted under its id, every DONE for a job that was done. */
#include "jobqueue.h"

#include "../journal_forge.h" /* the layout, as the tests forge it */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HDR FORGE_HDR

static char path[128], qpath[160];

static void paths(void)
{
    if (path[0])
        return;
    /* memory-backed where there is one: every journaled step is an fsync */
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    snprintf(path, sizeof path, "%s/napkin-fuzz-journal-%ld", tmp, (long)getpid());
    snprintf(qpath, sizeof qpath, "%s.quarantine", path);
}

/* ------------------------------------------------------------ raw bytes */

static void fix_crcs(uint8_t *b, size_t n)
{
    const uint32_t fmagic = FORGE_FILE_MAGIC, magic = FORGE_MAGIC;
    for (size_t c = 0; c + 32 <= n && c < FORGE_FILE_HDR; c += 32)
        if (memcmp(b + c, &fmagic, 4) == 0) {
            uint32_t crc = jq_crc32(0, b + c, 28);
            memcpy(b + c + 28, &crc, 4);
        }
    if (n < FORGE_FILE_HDR)
        return;
    uint64_t salt = forge_salt_of(b);
    for (size_t off = FORGE_FILE_HDR; off + HDR <= n; off++) {
        if (memcmp(b + off, &magic, 4) != 0)
            continue;
        uint32_t len;
        memcpy(&len, b + off + 12, 4);
        if (len > n - off - HDR)
            continue;
        forge_seal(b + off, salt, off, b + off + HDR, len);
    }
}

static int quick_step(void *ctx, const job_info *job, int step)
{
    (void)ctx;
    (void)job;
    return step >= 2; /* short jobs; longer ones fail at their third step */
}

static int highest(void *ctx, const jrec *r)
{
    uint64_t *hwm = ctx;
    if (r->id > *hwm)
        *hwm = r->id;
    return 0;
}

static void raw(const uint8_t *data, size_t size)
{
    uint8_t *b = malloc(size ? size : 1);
    if (!b)
        return;
    memcpy(b, data, size);
    fix_crcs(b, size);
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(b);
        return;
    }
    fwrite(b, 1, size, f);
    fclose(f);
    free(b);

    char err[512] = "";
    jq_scan scan;
    uint64_t hwm = 0;
    if (jobqueue_journal_scan(path, highest, &hwm, &scan, err, sizeof err) != 0) {
        if (!err[0])
            abort(); /* a refusal always says why */
        return;
    }
    /* ids are bounded by the file: one past the last, plus one per header of bytes */
    if (scan.hwm != hwm || hwm > (uint64_t)size / HDR + 1)
        abort();
    jobqueue_config cfg = {path, 1, quick_step, NULL, 0, 1.0, 1, 0, 0};
    jobqueue_replay rep;
    jobqueue *q = jobqueue_open(&cfg, &rep, err, sizeof err);
    if (!q) {
        if (!err[0])
            abort();
    } else {
        if (rep.next_id <= hwm)
            abort(); /* an id a good record holds would be handed out again */
        jobqueue_close(q, JQ_STOP);
    }
}

/* ------------------------------------------------------------ smuggling */

enum { MAXJOBS = 8, MAXPAY = 200 };

typedef struct {
    unsigned char payload[MAXJOBS + 1][MAXPAY];
    size_t len[MAXJOBS + 1];
    int done[MAXJOBS + 1];
    uint64_t njobs;
} written;

/* Every record replay shows must be one the writer wrote. */
static int check(void *ctx, const jrec *r)
{
    const written *w = ctx;
    if (r->id < 1 || r->id > w->njobs)
        abort(); /* an id the writer never issued */
    if (r->type == JREC_SUBMIT &&
        (r->payload_len != w->len[r->id] || memcmp(r->payload, w->payload[r->id], r->payload_len) != 0))
        abort(); /* a SUBMIT with a payload its job never had */
    if (r->type == JREC_DONE && !w->done[r->id])
        abort(); /* a DONE for a job that was not done */
    if (r->type != JREC_SUBMIT && r->type != JREC_DONE)
        abort(); /* the writer wrote no other kind here */
    return 0;
}

/* Forged records for the carrier's payload at p (room for 2 * HDR + 4 +
 * the old format's as many), whose first byte lands at file offset base. */
static size_t forge_into(unsigned char *p, uint64_t base, unsigned style, uint64_t victim, uint64_t next,
                         uint64_t guess)
{
    size_t n = 0;
    if (style & 1) { /* the earlier format */
        forge_old_header(p + n, JREC_DONE, victim, 0, NULL, 0);
        n += HDR;
        forge_old_header(p + n, JREC_SUBMIT, next, 1, "EVIL", 4);
        memcpy(p + n + HDR, "EVIL", 4);
        n += HDR + 4;
    }
    uint64_t salt = (style & 2) ? guess : 0;
    forge_header(p + n, salt, base + n, JREC_DONE, victim, 0, NULL, 0);
    n += HDR;
    forge_header(p + n, salt, base + n, JREC_SUBMIT, next, 1, "EVIL", 4);
    memcpy(p + n + HDR, "EVIL", 4);
    n += HDR + 4;
    return n;
}

static void smuggling(const uint8_t *d, size_t n)
{
    if (n < 13)
        return;
    uint32_t flip;
    uint64_t guess;
    memcpy(&flip, d, 4);
    memcpy(&guess, d + 4, 8);
    unsigned jobs = d[12] % MAXJOBS + 1;
    d += 13;
    n -= 13;
    unlink(path);
    jq_journal j;
    char err[512] = "";
    if (jq_journal_open(&j, path, NULL, NULL, NULL, NULL, 0, err, sizeof err) != 0)
        abort();
    static written w;
    memset(&w, 0, sizeof w);
    for (unsigned k = 0; k < jobs; k++) {
        unsigned kind = n ? d[0] : 0, plen = n > 1 ? d[1] % 32 : 0;
        d += n >= 2 ? 2 : n;
        n -= n >= 2 ? 2 : n;
        uint64_t id = w.njobs + 1;
        unsigned char *p = w.payload[id];
        size_t len = 0;
        p[len++] = 'G'; /* a genuine payload never starts like "EVIL" */
        if (kind & 2) {
            uint64_t victim = id > 1 ? 1 + (kind >> 4) % (id - 1) : 1;
            len += forge_into(p + len, (uint64_t)j.size + HDR + len, kind >> 2, victim, id + 1, guess);
        }
        for (unsigned i = 0; i < plen && n; i++, n--)
            p[len++] = *d++;
        uint64_t got = 0;
        if (jq_journal_append(&j, JREC_SUBMIT, &got, 1, p, len) != 0 || got != id)
            abort();
        w.len[id] = len;
        w.njobs = id;
        if (kind & 1) {
            if (jq_journal_append(&j, JREC_DONE, &got, 0, NULL, 0) != 0)
                abort();
            w.done[id] = 1;
        }
    }
    long size = (long)j.size;
    jq_journal_close(&j);
    FILE *f = fopen(path, "r+b");
    if (!f)
        abort();
    long bit = (long)(flip % (uint32_t)(8 * size));
    fseek(f, bit / 8, SEEK_SET);
    int c = fgetc(f);
    fseek(f, bit / 8, SEEK_SET);
    fputc(c ^ (1 << (bit % 8)), f);
    fclose(f);
    jq_scan scan;
    if (jobqueue_journal_scan(path, check, &w, &scan, err, sizeof err) != 0)
        abort(); /* one flipped bit never costs the whole journal */
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    paths();
    unlink(qpath);
    if (size && (data[0] & 1))
        smuggling(data + 1, size - 1);
    else
        raw(data + (size > 0), size - (size > 0));
    unlink(path);
    unlink(qpath);
    return 0;
}
