/* The journal against a hostile payload and crafted files: records forged
 * inside a job's payload, found after one flipped bit, replay nothing;
 * fake headers claiming the rest of the file cost a linear walk; 200,000
 * damaged runs quarantine in linear time; one flipped bit anywhere in a
 * one-job journal, its file header included, is recovered and reported;
 * a journal of the earlier format or one with both header copies past
 * repair is refused and left as it was.  Where it can, a test has the
 * journal write its own file (journal.h's writer) and only then plays the
 * attacker on the bytes, locating records by the sizes journal.h states
 * (a record header of 32 bytes, then the payload, appended at the file's
 * end). */
#include <criterion/criterion.h>

#include "jobqueue.h"
#include "journal_forge.h"
#include "scratch_dir.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HDR FORGE_HDR

typedef struct {
    char dir[SCRATCH_DIR_SIZE], path[SCRATCH_DIR_SIZE + 16], qpath[SCRATCH_DIR_SIZE + 32];
} scratch;

static void scratch_make(scratch *s)
{
    scratch_dir_make(s->dir, "jqj");
    snprintf(s->path, sizeof s->path, "%s/journal", s->dir);
    snprintf(s->qpath, sizeof s->qpath, "%s/journal.quarantine", s->dir);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

static unsigned char *slurp(const char *path, long *n)
{
    *n = file_size(path);
    cr_assert_geq(*n, 0, "%s missing", path);
    unsigned char *b = malloc((size_t)*n + 1);
    FILE *f = fopen(path, "rb");
    cr_assert_not_null(f);
    cr_assert_eq(fread(b, 1, (size_t)*n, f), (size_t)*n);
    fclose(f);
    return b;
}

static void spit(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(p, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* Append one record with the journal's own writer; returns the offset it
 * landed at (the file's size before it). */
static long append(jq_journal *j, const char *path, jrec_type type, uint64_t *id, int value, const void *payload,
                   size_t len)
{
    long at = file_size(path);
    cr_assert_eq(jq_journal_append(j, type, id, value, payload, len), 0);
    return at;
}

static void open_journal(jq_journal *j, const char *path)
{
    char err[512] = "";
    cr_assert_eq(jq_journal_open(j, path, NULL, NULL, NULL, NULL, 0, err, sizeof err), 0, "%s", err);
}

/* ------------------------------------------------------------ what a replay saw */

enum { MAXJ = 8 };
typedef struct {
    int submits[MAXJ], dones[MAXJ];
    char payload[MAXJ][16];
    int evil; /* records carrying the smuggled payload */
} seen;

static int see(void *ctx, const jrec *r)
{
    seen *s = ctx;
    if (r->payload_len == 4 && memcmp(r->payload, "EVIL", 4) == 0)
        s->evil++;
    if (r->id >= MAXJ)
        return 0;
    if (r->type == JREC_SUBMIT) {
        s->submits[r->id]++;
        size_t n = r->payload_len < 15 ? r->payload_len : 15;
        memcpy(s->payload[r->id], r->payload, n);
        s->payload[r->id][n] = '\0';
    } else if (r->type != JREC_STEP)
        s->dones[r->id]++;
    return 0;
}

/* ------------------------------------------------------------ smuggling */

/* A payload holding a CRC-valid DONE for job 2 and a SUBMIT for job 4
 * ("EVIL"), as an attacker who knows the layout but cannot read the file
 * would write them: once in the earlier format, once in this one with the
 * offsets they will have and a guessed salt of 0.  at: the offset of the
 * record that will carry it. */
static size_t smuggle(unsigned char *p, long at)
{
    size_t n = 0;
    uint64_t base = (uint64_t)at + HDR; /* where the payload starts */
    forge_old_header(p + n, JREC_DONE, 2, 0, NULL, 0);
    n += HDR;
    forge_old_header(p + n, JREC_SUBMIT, 4, 1, "EVIL", 4);
    memcpy(p + n + HDR, "EVIL", 4);
    n += HDR + 4;
    forge_header(p + n, 0, base + n, JREC_DONE, 2, 0, NULL, 0);
    n += HDR;
    forge_header(p + n, 0, base + n, JREC_SUBMIT, 4, 1, "EVIL", 4);
    memcpy(p + n + HDR, "EVIL", 4);
    n += HDR + 4;
    return n;
}

Test(journal, records_smuggled_in_a_payload_never_replay)
{
    scratch d;
    scratch_make(&d);
    jq_journal j;
    open_journal(&j, d.path);
    uint64_t id = 0;
    append(&j, d.path, JREC_SUBMIT, &id, 1, "job-1", 5);
    id = 0;
    append(&j, d.path, JREC_SUBMIT, &id, 1, "job-2", 5);
    long carrier = file_size(d.path);
    unsigned char evil[4 * HDR + 8];
    size_t n = smuggle(evil, carrier);
    id = 0;
    append(&j, d.path, JREC_SUBMIT, &id, 1, evil, n);
    cr_assert_eq(id, 3);
    id = 0;
    append(&j, d.path, JREC_SUBMIT, &id, 1, "job-4", 5);
    cr_assert_eq(id, 4);
    jq_journal_close(&j);

    long len;
    unsigned char *clean = slurp(d.path, &len);
    /* one flipped bit in the carrier's header: in its magic (byte 0), its
     * CRC (4), its length (12), its id (16), its header CRC (28) */
    const int flips[] = {0, 4, 12, 16, 28};
    for (size_t f = 0; f < sizeof flips / sizeof *flips; f++) {
        unsigned char *b = malloc((size_t)len);
        memcpy(b, clean, (size_t)len);
        b[carrier + flips[f]] ^= 0x01;
        spit(d.path, b, (size_t)len);
        free(b);
        seen s = {0};
        jq_scan sc;
        char err[512] = "";
        cr_assert_eq(jobqueue_journal_scan(d.path, see, &s, &sc, err, sizeof err), 0, "%s", err);
        cr_expect_eq(s.evil, 0, "flip in byte %d: the smuggled SUBMIT replayed", flips[f]);
        cr_expect_eq(s.dones[2], 0, "flip in byte %d: the smuggled DONE for job 2 replayed", flips[f]);
        /* exactly the acknowledged jobs, each with its own payload */
        cr_expect_eq(s.submits[1], 1);
        cr_expect_eq(s.submits[2], 1);
        cr_expect_eq(s.submits[4], 1, "flip in byte %d: job 4's own SUBMIT lost", flips[f]);
        cr_expect_str_eq(s.payload[1], "job-1");
        cr_expect_str_eq(s.payload[2], "job-2");
        cr_expect_str_eq(s.payload[4], "job-4", "flip in byte %d", flips[f]);
        /* the carrier itself: a flip in its magic costs nothing, anywhere else it is lost */
        cr_expect_eq(s.submits[3], flips[f] == 0, "flip in byte %d: job 3", flips[f]);
    }
    free(clean);
    scratch_dir_remove(d.dir);
}

/* ------------------------------------------------------------ a linear walk */

/* The journal's own one-job file, then fake record headers every 16 bytes
 * up to `size` bytes, each with the record magic the journal wrote and a
 * length claiming the rest of the file. */
static void crafted_lengths(const char *path, long size)
{
    jq_journal j;
    open_journal(&j, path);
    uint64_t id = 0;
    long at = append(&j, path, JREC_SUBMIT, &id, 1, "12345678", 8);
    jq_journal_close(&j);
    long len;
    unsigned char *b = slurp(path, &len);
    b = realloc(b, (size_t)size);
    uint32_t magic;
    memcpy(&magic, b + at, 4);
    memset(b + len, 0, (size_t)(size - len));
    for (long p = len; p + HDR <= size; p += 16) {
        uint32_t type = JREC_SUBMIT, rest = (uint32_t)(size - p - HDR), crc = (uint32_t)p * 2654435761u;
        memcpy(b + p, &magic, 4);
        memcpy(b + p + 4, &crc, 4);
        memcpy(b + p + 8, &type, 4);
        memcpy(b + p + 12, &rest, 4);
    }
    spit(path, b, (size_t)size);
    free(b);
}

Test(journal, fake_headers_claiming_the_rest_of_the_file_cost_a_linear_walk)
{
    scratch d;
    scratch_make(&d);
    crafted_lengths(d.path, 256 * 1024);
    jq_scan sc;
    char err[512] = "";
    double t0 = now_s();
    cr_assert_eq(jobqueue_journal_scan(d.path, NULL, NULL, &sc, err, sizeof err), 0, "%s", err);
    double s = now_s() - t0;
    /* 16,384 fake headers: each CRC over the rest of the file made this
     * 47 s; a hang bound, the figures per MB are make bench's.  (No
     * Criterion .timeout here: beside another timed test of this suite it
     * leaks 48 bytes inside Criterion's runner under LeakSanitizer.) */
    cr_expect_lt(s, 0.1, "256 KiB of fake headers took %.3f s to walk", s);
    cr_expect_eq(sc.records, 1);
    cr_expect_eq(sc.refused, 0);
    /* and the queue opens on it, with the damage skipped and named */
    jq_journal j;
    char note[512];
    t0 = now_s();
    cr_assert_eq(jq_journal_open(&j, d.path, NULL, NULL, &sc, note, sizeof note, err, sizeof err), 0, "%s", err);
    s = now_s() - t0;
    jq_journal_close(&j);
    cr_expect_lt(s, 1.0, "opening took %.3f s", s);
    cr_expect(strstr(note, "skipped") != NULL, "%s", note);
    scratch_dir_remove(d.dir);
}

/* ------------------------------------------------------------ quarantine */

Test(journal, two_hundred_thousand_damaged_runs_reopen_in_linear_time, .timeout = 60)
{
    /* SUBMIT 1, then 200,000 pairs of (a STEP of job 1, a STEP whose CRC
     * field was scribbled on): 200,000 damaged runs of 32 bytes, 12.8 MB */
    enum { RUNS = 200000 };
    scratch d;
    scratch_make(&d);
    const uint64_t salt = 0x0123456789abcdefULL;
    size_t n = FORGE_FILE_HDR + HDR + (size_t)RUNS * 2 * HDR;
    unsigned char *b = malloc(n);
    forge_file_header(b, salt);
    size_t off = FORGE_FILE_HDR;
    forge_header(b + off, salt, off, JREC_SUBMIT, 1, 1, NULL, 0);
    off += HDR;
    for (int i = 0; i < RUNS; i++) {
        forge_header(b + off, salt, off, JREC_STEP, 1, 1, NULL, 0);
        forge_header(b + off + HDR, salt, off + HDR, JREC_STEP, 1, 1, NULL, 0);
        b[off + HDR + 4] ^= 0xff;
        off += 2 * HDR;
    }
    spit(d.path, b, n);
    free(b);
    double t[3];
    for (int k = 0; k < 3; k++) {
        jq_journal j;
        jq_scan sc;
        char err[512] = "", note[512];
        double t0 = now_s();
        cr_assert_eq(jq_journal_open(&j, d.path, NULL, NULL, &sc, note, sizeof note, err, sizeof err), 0, "%s", err);
        t[k] = now_s() - t0;
        jq_journal_close(&j);
        cr_expect_eq(sc.regions, RUNS - 1, "open %d", k); /* the last run is the tail */
        cr_expect_eq(sc.tail_bytes, HDR);
        cr_expect(strstr(note, "copied to its .quarantine") != NULL, "%s", note);
    }
    /* every run copied once: 200,000 entries of a 24-byte header and 32 bytes */
    cr_expect_eq(file_size(d.qpath), (long)RUNS * (24 + HDR));
    /* a reopen compares each run with those already copied: pairwise, it
     * took 7.9 s; a hang bound, generous for a sanitizer on a busy machine */
    cr_expect_lt(t[1], 3.0, "the second open took %.2f s (the first %.2f s)", t[1], t[0]);
    cr_expect_lt(t[2], 3.0, "the third open took %.2f s", t[2]);
    scratch_dir_remove(d.dir);
}

/* ------------------------------------------------------------ the header */

Test(journal, every_bit_of_a_one_job_journal_flipped_is_recovered_and_reported, .timeout = 60)
{
    scratch d;
    scratch_make(&d);
    jq_journal j;
    open_journal(&j, d.path);
    uint64_t id = 0;
    long at = append(&j, d.path, JREC_SUBMIT, &id, 3, "8 bytes!", 8);
    jq_journal_close(&j);
    long len;
    unsigned char *clean = slurp(d.path, &len);
    cr_assert_eq(len, at + HDR + 8);
    unsigned char *b = malloc((size_t)len);
    for (long bit = 0; bit < 8 * len; bit++) {
        memcpy(b, clean, (size_t)len);
        b[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        spit(d.path, b, (size_t)len);
        unlink(d.qpath);
        seen s = {0};
        jq_scan sc;
        char err[512] = "", note[512] = "";
        int rc = jq_journal_open(&j, d.path, see, &s, &sc, note, sizeof note, err, sizeof err);
        cr_assert_eq(rc, 0, "bit %ld: %s", bit, err);
        jq_journal_close(&j);
        cr_expect(note[0] != '\0', "bit %ld: the damage went unreported", bit);
        /* the record is lost only to a flip past its magic */
        int lost = bit / 8 >= at + 4;
        cr_expect_eq(s.submits[1], !lost, "bit %ld: job 1 %s", bit, lost ? "replayed" : "lost");
        if (!lost)
            cr_expect_str_eq(s.payload[1], "8 bytes!", "bit %ld", bit);
        /* a damaged header copy is rewritten: the next open finds nothing to say */
        if (bit / 8 < at) {
            cr_assert_eq(jq_journal_open(&j, d.path, NULL, NULL, &sc, note, sizeof note, err, sizeof err), 0);
            jq_journal_close(&j);
            cr_expect_eq(note[0], '\0', "bit %ld: reopened: %s", bit, note);
        }
    }
    free(b);
    free(clean);
    scratch_dir_remove(d.dir);
}

Test(journal, both_header_copies_past_repair_or_the_old_format_are_refused_unchanged)
{
    scratch d;
    scratch_make(&d);
    jq_journal j;
    open_journal(&j, d.path);
    uint64_t id = 0;
    append(&j, d.path, JREC_SUBMIT, &id, 3, "payload", 7);
    jq_journal_close(&j);
    long len;
    unsigned char *b = slurp(d.path, &len);
    /* one bit in each copy: each is put right by itself */
    b[9] ^= 0x04;
    b[32 + 20] ^= 0x80;
    spit(d.path, b, (size_t)len);
    seen s = {0};
    char err[512] = "", note[512] = "";
    cr_assert_eq(jq_journal_open(&j, d.path, see, &s, NULL, note, sizeof note, err, sizeof err), 0, "%s", err);
    jq_journal_close(&j);
    cr_expect_eq(s.submits[1], 1);
    cr_expect(strstr(note, "header") != NULL, "%s", note);
    /* two bits in each copy: no salt can be trusted; refused, and not cut */
    free(b);
    b = slurp(d.path, &len);
    b[9] ^= 0x04;
    b[10] ^= 0x04;
    b[32 + 9] ^= 0x04;
    b[32 + 10] ^= 0x04;
    spit(d.path, b, (size_t)len);
    cr_expect_neq(jq_journal_open(&j, d.path, NULL, NULL, NULL, NULL, 0, err, sizeof err), 0);
    cr_expect(strstr(err, "damaged past repair") != NULL, "%s", err);
    cr_expect_eq(file_size(d.path), len);
    jq_scan sc;
    cr_expect_eq(jobqueue_journal_scan(d.path, NULL, NULL, &sc, err, sizeof err), -1);
    free(b);

    /* a journal of the earlier format: named, refused, left as it was */
    unsigned char old[2 * HDR];
    forge_old_header(old, JREC_SUBMIT, 1, 1, NULL, 0);
    forge_old_header(old + HDR, JREC_DONE, 1, 0, NULL, 0);
    spit(d.path, old, sizeof old);
    err[0] = '\0';
    cr_expect_neq(jq_journal_open(&j, d.path, NULL, NULL, NULL, NULL, 0, err, sizeof err), 0);
    cr_expect(strstr(err, "earlier format") != NULL, "%s", err);
    cr_expect_eq(file_size(d.path), (long)sizeof old);
    scratch_dir_remove(d.dir);
}
