/* The job queue's journal as bytes: a record header's length, the file's
 * own header, the largest payload a record may carry, and what a job leaves
 * in the journal.  Header-only, with no threads and no I/O, so the
 * exercises and the page's WebAssembly module (which leave runtime/'s code
 * out) size a journal with the formula the queue itself keeps. */
#ifndef NAPKIN_JOURNAL_FORMAT_H
#define NAPKIN_JOURNAL_FORMAT_H

#include <stddef.h>

/* The bytes of a journal record's header (journal.c checks it against the
 * header itself). */
#define JQ_RECORD_HEADER_BYTES 32

/* The bytes at the start of a journal, once per file: two copies of a
 * 32-byte header holding the journal's random salt. */
#define JQ_FILE_HEADER_BYTES 64

/* The largest payload a record may carry: a job's request, not its data.
 * Replay refuses a longer length before reading a byte of it. */
#define JQ_MAX_PAYLOAD (16u << 20)

/* Journal bytes a job leaves when it completes: its SUBMIT record with the
 * payload, one STEP record per step and its DONE record, each a record
 * header long besides the payload. */
static inline double jq_job_journal_bytes(int steps, size_t payload_bytes)
{
    return (double)(steps + 2) * JQ_RECORD_HEADER_BYTES + (double)payload_bytes;
}

#endif
