/* libFuzzer target: the job queue's journal replay on arbitrary bytes.
 * Before replay, every place in the input that starts like a record (the
 * magic "JQR1" and a length that fits) gets its CRC-32 recomputed, so the
 * fuzzer's mutations of ids, types, lengths and values reach replay's own
 * checks instead of stopping at the checksum.  Whatever the bytes, opening
 * the queue succeeds or fails with a message; it never crashes, hangs,
 * leaks or reads out of bounds, it allocates no more than the file's size
 * warrants, and it hands out a next id past every id a good record holds. */
#include "jobqueue.h"

#include "../journal_forge.h" /* the record layout, as the tests forge it */

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define HDR FORGE_HDR

static void fix_crcs(uint8_t *b, size_t n)
{
    const uint32_t magic = FORGE_MAGIC;
    for (size_t off = 0; off + HDR <= n; off++) {
        if (memcmp(b + off, &magic, 4) != 0)
            continue;
        uint32_t len;
        memcpy(&len, b + off + 12, 4);
        if (len > n - off - HDR)
            continue;
        uint32_t crc = forge_crc(b + off, b + off + HDR, len);
        memcpy(b + off + 4, &crc, 4);
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

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    static char path[128], qpath[160];
    if (!path[0]) {
        /* memory-backed where there is one: every journaled step is an fsync */
        const char *tmp = getenv("TMPDIR");
        if (!tmp || !*tmp)
            tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
        snprintf(path, sizeof path, "%s/napkin-fuzz-journal-%ld", tmp, (long)getpid());
        snprintf(qpath, sizeof qpath, "%s.quarantine", path);
    }
    uint8_t *b = malloc(size ? size : 1);
    if (!b)
        return 0;
    memcpy(b, data, size);
    fix_crcs(b, size);
    FILE *f = fopen(path, "wb");
    if (!f) {
        free(b);
        return 0;
    }
    fwrite(b, 1, size, f);
    fclose(f);
    free(b);
    unlink(qpath);

    char err[512] = "";
    jq_scan scan;
    uint64_t hwm = 0;
    if (jobqueue_journal_scan(path, highest, &hwm, &scan, err, sizeof err) != 0)
        abort();
    /* ids are bounded by the file: one past the last, plus one per header of bytes */
    if (scan.hwm != hwm || hwm > (uint64_t)size / HDR + 1)
        abort();
    jobqueue_config cfg = {path, 1, quick_step, NULL, 0, 1.0, 1, 0, 0};
    jobqueue_replay rep;
    jobqueue *q = jobqueue_open(&cfg, &rep, err, sizeof err);
    if (!q) {
        if (!err[0])
            abort(); /* a refusal always says why */
    } else {
        if (rep.next_id <= hwm)
            abort(); /* an id a good record holds would be handed out again */
        jobqueue_close(q, JQ_STOP);
    }
    unlink(path);
    unlink(qpath);
    return 0;
}
