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
 * A journal starts with two copies of a 32-byte file header (magic "JQJ2",
 * format 2, a random 64-bit salt drawn when the file is made, a CRC-32);
 * replay uses a copy that checks, or one a single flipped bit made fail,
 * and rewrites a damaged copy from the good one.  Then records: a 32-byte
 * header (magic "JQR2", payload CRC, type, payload length, id, value,
 * header CRC) and the payload.  The header CRC covers the salt, the
 * record's own file offset and every field but the magic and the two
 * CRCs; the payload CRC continues from it over the payload.  So a record
 * checks only where the journal itself wrote it: bytes that look like a
 * record inside a payload, written by someone who cannot read the file's
 * salt, never do, and a payload can smuggle no record into replay.
 * Records are SUBMIT (with the job's payload), STEP k done, DONE, FAILED
 * and CANCELLED.  A record whose magic lost up to three bits but whose
 * CRCs hold is read as it is (a flipped bit in a magic costs nothing).  A
 * damaged record anywhere (a crash mid-write, a flipped bit) is skipped
 * and the walk resynchronises at the next offset where a record checks, so
 * one bad record loses that record only.  The walk is linear in the file:
 * a length over JQ_MAX_PAYLOAD is refused before any CRC, and a payload is
 * read only behind a header whose own CRC, bound to its offset and the
 * salt, holds.  Opening leaves damaged bytes where they are (each replay
 * skips them again) and copies them to "<journal>.quarantine"; only a tail
 * shorter than one record header, which cannot hold an acknowledged
 * record, is cut off.  A file whose header neither copy can give (another
 * file, a journal of the earlier unsalted format "JQR1", or both copies
 * damaged in more than one bit) is refused, never cut.  Ids are handed out
 * in journal order (a SUBMIT takes the next one as it is appended) and
 * never reused: a record whose id is beyond what the journal can have
 * issued (one past the good SUBMITs before it, plus one per header-sized
 * run of damaged bytes) is refused, and a new id starts past every id a
 * damaged run may have held.
 *
 * The sizes live in journal_format.h, for the callers that size a journal
 * without this file's I/O. */
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
    long repaired;      /* records read past a damaged magic, and file header copies
                           recovered (from the other copy or by one bit) */
    uint64_t hwm;       /* the highest id of a good record */
} jq_scan;

/* ------------------------------------------------- reading a journal */

/* Walk a journal's good records in order, resynchronising after damage,
 * without changing it.  0 (also for a missing file, or one whose header was
 * torn as it was made), or -1 with a message: an unreadable file, or one
 * whose header neither copy gives. */
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
    off_t size;         /* bytes through the last good append: a failed one is cut back to
                           here, and the next record's offset (in its CRC) */
    uint64_t salt;      /* the file's, in every record's CRC */
    uint64_t last_id;   /* the highest id issued or possibly issued; under mu */
    pthread_mutex_t mu; /* one append at a time */
} jq_journal;

/* Replay the journal at path (created when missing) and open it for
 * appending: fn (may be NULL) sees every good record in order, *scan (may
 * be NULL) what the walk found, note (may be NULL) the damage skipped and
 * where it was copied, in words ("" when clean).  0, or -1 with a message
 * and nothing left open: an unreadable file, one that is not a journal of
 * this format (the message says which), a walk fn stopped, or no memory.
 * A missing or empty file, or one torn while its header was written, is
 * given a fresh header (a new salt). */
int jq_journal_open(jq_journal *j, const char *path, jrec_fn fn, void *ctx, jq_scan *scan, char *note,
                    size_t notelen, char *err, size_t errlen);

/* Append one record with len payload bytes and make it durable.  A SUBMIT
 * takes the next id and returns it in *id; any other record is for *id.
 * 0, or -1 when it could not be written (the file is cut back to where it
 * was) or len is over JQ_MAX_PAYLOAD. */
int jq_journal_append(jq_journal *j, jrec_type type, uint64_t *id, int value, const void *payload, size_t len);

void jq_journal_close(jq_journal *j);

#endif
