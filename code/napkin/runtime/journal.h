/* The job queue's journal: an append-only file of records, so that nothing
 * the queue accepted is lost when its process dies.
 *
 *   jq_journal_open(&j, path, fn, ctx, &scan, note, n, err, n);
 *                         replay: fn sees every good record in order; then
 *                         the file is open for appending
 *   jq_journal_append(&j, JREC_SUBMIT, &id, steps, payload, len);
 *                         one record, durable (fsync) when it returns 0
 *   jq_journal_close(&j);
 *   jobqueue_journal_scan(path, fn, ctx, &scan, err, n);   read only
 *
 * A record is a 32-byte header (magic, CRC-32, type, payload length, id,
 * value) and its payload; the CRC covers everything after its own field.
 * Records are SUBMIT (with the job's payload), STEP k done, DONE, FAILED
 * and CANCELLED.  A damaged record anywhere (a crash mid-write, a flipped
 * bit) is skipped and the walk resynchronises at the next record whose
 * magic and CRC hold, so one bad record loses that record only.  Opening
 * leaves damaged bytes where they are (each replay skips them again) and
 * copies them to "<journal>.quarantine"; only a tail shorter than one
 * record header, which cannot hold an acknowledged record, is cut off.  A
 * file with no good record that does not start like a journal is refused,
 * never cut.  Ids are handed out in journal order (a SUBMIT takes the next
 * one as it is appended) and never reused: a record whose id is beyond
 * what the journal can have issued (one past the good SUBMITs before it,
 * plus one per header-sized run of damaged bytes) is refused, and a new id
 * starts past every id a damaged run may have held.
 *
 * The record's size lives in journal_format.h, for the callers that size a
 * journal without this file's I/O. */
#ifndef NAPKIN_JOURNAL_H
#define NAPKIN_JOURNAL_H

#include "journal_format.h" /* JQ_RECORD_HEADER_BYTES, jq_job_journal_bytes */

#include <pthread.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

typedef enum { JREC_SUBMIT = 1, JREC_STEP = 2, JREC_DONE = 3, JREC_FAILED = 4, JREC_CANCELLED = 5 } jrec_type;

/* One record as a reader sees it. */
typedef struct {
    jrec_type type;
    uint64_t id;
    int value; /* SUBMIT: steps; STEP: steps done; FAILED: the error */
    const void *payload;
    size_t payload_len;
} jrec;

typedef int (*jrec_fn)(void *ctx, const jrec *r); /* non-zero stops the walk */

/* What a walk over a journal found. */
typedef struct {
    long records;       /* good records */
    long good_end;      /* offset just past the last good record */
    long tail_bytes;    /* bytes after it */
    long damaged_bytes; /* bytes skipped before it */
    long regions;       /* damaged runs before it */
    long refused;       /* records with a good CRC and an impossible id (counted as damage) */
    long first_refused; /* offset of the first of those */
    long first_damage;  /* offset of the first skipped byte, -1 if none */
    uint64_t hwm;       /* the highest id of a good record */
} jq_scan;

/* ------------------------------------------------- reading a journal */

/* Walk a journal's good records in order, resynchronising after damage,
 * without changing it.  0 (also for a missing file), or -1 with a message. */
int jobqueue_journal_scan(const char *path, jrec_fn fn, void *ctx, jq_scan *scan, char *err, size_t errlen);

/* jobqueue_journal_scan's walk, told briefly: *good_bytes and *torn_bytes
 * (may be NULL) say where the good records end. */
int jobqueue_journal_read(const char *path, jrec_fn fn, void *ctx, long *good_bytes, long *torn_bytes, char *err,
                          size_t errlen);

/* The CRC-32 (IEEE 802.3, reflected, as zlib's crc32) of len bytes. */
uint32_t jq_crc32(uint32_t crc, const void *data, size_t len);

/* ------------------------------------------------- writing a journal */

typedef struct {
    int fd;
    off_t size;         /* bytes through the last good append: a failed one is cut back to here */
    uint64_t last_id;   /* the highest id issued or possibly issued; under mu */
    pthread_mutex_t mu; /* one append at a time */
} jq_journal;

/* Replay the journal at path (created when missing) and open it for
 * appending: fn (may be NULL) sees every good record in order, *scan (may
 * be NULL) what the walk found, note (may be NULL) the damage skipped and
 * where it was copied, in words ("" when clean).  0, or -1 with a message
 * and nothing left open: an unreadable file, one that is not a journal, a
 * walk fn stopped, or no memory. */
int jq_journal_open(jq_journal *j, const char *path, jrec_fn fn, void *ctx, jq_scan *scan, char *note,
                    size_t notelen, char *err, size_t errlen);

/* Append one record with len payload bytes and make it durable.  A SUBMIT
 * takes the next id and returns it in *id; any other record is for *id.
 * 0, or -1 when it could not be written (the file is cut back to where it
 * was). */
int jq_journal_append(jq_journal *j, jrec_type type, uint64_t *id, int value, const void *payload, size_t len);

void jq_journal_close(jq_journal *j);

#endif
