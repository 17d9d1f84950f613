/* The job queue's journal under damage: crafted ids with good CRCs, every
 * single bit of a small journal flipped in turn, random bits of a large one,
 * and the quarantine copy.  Journals are forged here byte by byte from the
 * layout (journal_forge.h: the file header's two copies with a salt, then
 * records of magic, payload CRC, type, payload length, id, value, header
 * CRC; 32 bytes, then the payload), not written by the journal itself, so
 * what each job should look like after replay is known without asking the
 * code under test, and records the journal would never write (ids it never
 * issued) can be.  They live in a fresh directory under $TMPDIR (or /tmp). */
#include <criterion/criterion.h>

#include "jobqueue.h"
#include "journal_forge.h"
#include "scratch_dir.h"

#include <pthread.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#define HDR FORGE_HDR
#define SALT UINT64_C(0x5eed0fba7c4e11d2) /* any salt: the forged file carries it */

/* ------------------------------------------------------------ building journals */

typedef struct {
    unsigned char *b;
    size_t n, cap;
} bytes;

static void put(bytes *j, const void *p, size_t n)
{
    if (j->n + n > j->cap) {
        j->cap = (j->n + n) * 2;
        j->b = realloc(j->b, j->cap);
        cr_assert_not_null(j->b);
    }
    memcpy(j->b + j->n, p, n);
    j->n += n;
}

/* A journal's first bytes: the file header with SALT. */
static void file_start(bytes *j)
{
    unsigned char fh[FORGE_FILE_HDR];
    forge_file_header(fh, SALT);
    put(j, fh, sizeof fh);
}

/* Append one forged record (journal_forge.h); returns its offset.  An
 * empty journal gets its file header first. */
static size_t record(bytes *j, jrec_type type, uint64_t id, int32_t value, const void *payload, uint32_t len)
{
    if (j->n == 0)
        file_start(j);
    unsigned char h[HDR];
    forge_header(h, SALT, j->n, type, id, value, payload, len);
    size_t off = j->n;
    put(j, h, HDR);
    if (len)
        put(j, payload, len);
    return off;
}

/* What one job of a built journal is: where its records lie and how it ends. */
typedef struct {
    uint64_t id;
    int steps;
    size_t submit_off, submit_len; /* its SUBMIT record's bytes */
    size_t end_off;                /* its terminal record (0: none) */
    job_state end;                 /* JOB_QUEUED when it has none */
} built_job;

static void write_file(const char *path, const void *p, size_t n)
{
    FILE *f = fopen(path, "wb");
    cr_assert_not_null(f);
    cr_assert_eq(fwrite(p, 1, n, f), n);
    cr_assert_eq(fclose(f), 0);
}

/* ------------------------------------------------------------ a queue that runs nothing */

typedef struct {
    pthread_mutex_t mu;
    pthread_cond_t cv;
    int open;
} gate;

/* Blocks until the gate opens, so replay's result can be read undisturbed. */
static int gated_step(void *ctx, const job_info *job, int step)
{
    (void)job;
    (void)step;
    gate *g = ctx;
    pthread_mutex_lock(&g->mu);
    while (!g->open)
        pthread_cond_wait(&g->cv, &g->mu);
    pthread_mutex_unlock(&g->mu);
    return 0;
}

/* A fresh directory for one test's journal and its quarantine copy. */
typedef struct {
    char dir[SCRATCH_DIR_SIZE], path[SCRATCH_DIR_SIZE + 16], qpath[SCRATCH_DIR_SIZE + 32];
} scratch;

static void scratch_make(scratch *s)
{
    scratch_dir_make(s->dir, "jqd");
    snprintf(s->path, sizeof s->path, "%s/journal", s->dir);
    snprintf(s->qpath, sizeof s->qpath, "%s/journal.quarantine", s->dir);
}

/* Open the journal at path with one gated worker, check every built job
 * against what its intact records say, check the next id is past every
 * built one, and close without running anything more than one step.
 * `damaged` is the byte range a flip touched ([lo, hi), empty if none). */
static void check_replay(const char *path, const built_job *jobs, int njobs, size_t lo, size_t hi, const char *what)
{
    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 0};
    jobqueue_config cfg = {path, 1, gated_step, &g, 0, 1.0, 1, 0, 0};
    char err[512] = "";
    jobqueue_replay rep;
    jobqueue *q = jobqueue_open(&cfg, &rep, err, sizeof err);
    cr_assert_not_null(q, "%s: %s", what, err);
    uint64_t max_id = 0;
    for (int i = 0; i < njobs; i++) {
        const built_job *b = &jobs[i];
        max_id = b->id > max_id ? b->id : max_id;
        job_status st;
        int rc = jobqueue_status(q, b->id, &st);
        /* damage in a record's magic alone is read past: its CRCs still hold */
        int submit_hit = lo < b->submit_off + b->submit_len && hi > b->submit_off + 4;
        int end_hit = b->end_off && lo < b->end_off + HDR && hi > b->end_off + 4;
        if (submit_hit) {
            /* its payload is gone: the job cannot be run, and is not */
            cr_assert_eq(rc, JQ_ENOENT, "%s: job %llu, its submit damaged, still exists", what,
                         (unsigned long long)b->id);
            continue;
        }
        cr_assert_eq(rc, JQ_OK, "%s: job %llu with an intact submit record was lost", what,
                     (unsigned long long)b->id);
        cr_assert_eq(st.steps, b->steps, "%s: job %llu", what, (unsigned long long)b->id);
        if (b->end != JOB_QUEUED && !end_hit)
            cr_assert_eq(st.state, b->end, "%s: job %llu ended %s, replayed %s", what, (unsigned long long)b->id,
                         job_state_name(b->end), job_state_name(st.state));
        else
            cr_assert(st.state == JOB_QUEUED || st.state == JOB_RUNNING, "%s: job %llu should run again, is %s",
                      what, (unsigned long long)b->id, job_state_name(st.state));
    }
    /* no id is handed out twice: the next one is past every id the journal held */
    cr_assert_gt(rep.next_id, max_id, "%s: next id %llu reuses one of 1..%llu", what,
                 (unsigned long long)rep.next_id, (unsigned long long)max_id);
    if (hi > lo)
        cr_assert((rep.regions >= 1 || rep.repaired >= 1) && rep.note[0] != '\0', "%s: damage not reported", what);
    pthread_mutex_lock(&g.mu);
    g.open = 1;
    pthread_cond_broadcast(&g.cv);
    pthread_mutex_unlock(&g.mu);
    jobqueue_close(q, JQ_STOP);
}

/* ------------------------------------------------------------ the tests */

Test(jobqueue_damage, crafted_ids_with_good_crcs_are_refused_and_named)
{
    scratch d;
    scratch_make(&d);
    bytes j = {0};
    record(&j, JREC_SUBMIT, 1, 1, NULL, 0);
    size_t first_bad = record(&j, JREC_SUBMIT, (UINT64_C(1) << 61) + 1, 1, NULL, 0); /* wrapped grow() */
    record(&j, JREC_SUBMIT, (UINT64_C(1) << 63) + 1, 1, NULL, 0);                    /* looped forever */
    record(&j, JREC_SUBMIT, 100000000, 1, NULL, 0);                                  /* 780 MB, seconds */
    write_file(d.path, j.b, j.n);

    gate g = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER, 1};
    jobqueue_config cfg = {d.path, 1, gated_step, &g, 0, 1.0, 1, 0, 0};
    char err[512] = "";
    jobqueue_replay rep;
    struct timespec t0, t1;
    clock_gettime(CLOCK_MONOTONIC, &t0);
    jobqueue *q = jobqueue_open(&cfg, &rep, err, sizeof err);
    clock_gettime(CLOCK_MONOTONIC, &t1);
    cr_assert_not_null(q, "%s", err);
    double s = (double)(t1.tv_sec - t0.tv_sec) + (t1.tv_nsec - t0.tv_nsec) * 1e-9;
    cr_expect_lt(s, 1.0, "open took %.2f s", s);
    cr_expect_eq(rep.records, 1);
    cr_expect_eq(rep.refused, 3);
    char want[64];
    snprintf(want, sizeof want, "first at offset %zu", first_bad);
    cr_expect(strstr(rep.note, want) != NULL, "note: %s", rep.note);
    /* the three refused records (96 bytes) might have been three real ids
     * after id 1: the next id is 1 + 96/32 + 1 = 5 */
    cr_expect_eq(rep.next_id, 5);
    cr_expect_eq(jobqueue_drain(q, 30), JQ_OK);
    job_status st;
    cr_expect_eq(jobqueue_status(q, 1, &st), JQ_OK);
    cr_expect_eq(st.state, JOB_DONE);
    uint64_t id = 0;
    char reason[128];
    cr_expect_eq(jobqueue_submit(q, NULL, 0, 1, &id, reason, sizeof reason), JQ_OK);
    cr_expect_eq(id, 5);
    jobqueue_close(q, JQ_DRAIN);
    free(j.b);
    scratch_dir_remove(d.dir);
}

Test(jobqueue_damage, a_damaged_run_vouches_for_its_own_ids_once)
{
    /* SUBMIT 1, then 64 damaged bytes (room for two lost SUBMITs, ids 2 and 3), then SUBMIT 4:
     * good.  A SUBMIT 7 straight after claims the same damage again (5 and 6 would have to
     * be in it too): refused, whatever its CRC.  Before, the bound was the highest id plus the
     * damage so far, so each record could spend the same bytes; a fuzzer drove the highest id
     * past the file's size that way. */
    scratch d;
    scratch_make(&d);
    bytes j = {0};
    record(&j, JREC_SUBMIT, 1, 1, NULL, 0);
    unsigned char junk[64];
    memset(junk, 0xab, sizeof junk);
    put(&j, junk, sizeof junk);
    record(&j, JREC_SUBMIT, 4, 1, NULL, 0);
    size_t reused = record(&j, JREC_SUBMIT, 7, 1, NULL, 0);
    write_file(d.path, j.b, j.n);
    jq_scan sc;
    char err[512] = "";
    cr_assert_eq(jobqueue_journal_scan(d.path, NULL, NULL, &sc, err, sizeof err), 0, "%s", err);
    cr_expect_eq(sc.records, 2);
    cr_expect_eq(sc.hwm, 4);
    cr_expect_eq(sc.refused, 1);
    cr_expect_eq(sc.first_refused, (long)reused);
    /* the highest id never passes one per header of the file, plus one */
    cr_expect_leq(sc.hwm, j.n / HDR + 1);
    free(j.b);
    scratch_dir_remove(d.dir);
}

/* Nine records, four jobs: 1 done after two steps, 2 (a payload) queued
 * after one step, 3 queued, 4 cancelled. */
static int small_journal(bytes *j, built_job *jobs)
{
    const char pay[5] = "abcd";
    jobs[0] = (built_job){1, 2, record(j, JREC_SUBMIT, 1, 2, NULL, 0), HDR, 0, JOB_DONE};
    record(j, JREC_STEP, 1, 1, NULL, 0);
    jobs[1] = (built_job){2, 3, record(j, JREC_SUBMIT, 2, 3, pay, 4), HDR + 4, 0, JOB_QUEUED};
    record(j, JREC_STEP, 1, 2, NULL, 0);
    jobs[0].end_off = record(j, JREC_DONE, 1, 0, NULL, 0);
    jobs[2] = (built_job){3, 1, record(j, JREC_SUBMIT, 3, 1, NULL, 0), HDR, 0, JOB_QUEUED};
    record(j, JREC_STEP, 2, 1, NULL, 0);
    jobs[3] = (built_job){4, 1, record(j, JREC_SUBMIT, 4, 1, NULL, 0), HDR, 0, JOB_CANCELLED};
    jobs[3].end_off = record(j, JREC_CANCELLED, 4, 0, NULL, 0);
    return 4;
}

Test(jobqueue_damage, every_single_bit_flip_of_a_small_journal, .timeout = 120)
{
    scratch d;
    scratch_make(&d);
    bytes j = {0};
    built_job jobs[4];
    int n = small_journal(&j, jobs);
    cr_assert_eq(j.n, FORGE_FILE_HDR + 9 * HDR + 4);
    check_replay(d.path, jobs, 0, 0, 0, "no journal");
    write_file(d.path, j.b, j.n);
    check_replay(d.path, jobs, n, 0, 0, "intact");
    unsigned char *copy = malloc(j.n);
    for (size_t bit = 0; bit < 8 * j.n; bit++) {
        memcpy(copy, j.b, j.n);
        copy[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        write_file(d.path, copy, j.n);
        unlink(d.qpath);
        char what[64];
        snprintf(what, sizeof what, "bit %zu flipped", bit);
        check_replay(d.path, jobs, n, bit / 8, bit / 8 + 1, what);
    }
    free(copy);
    free(j.b);
    scratch_dir_remove(d.dir);
}

Test(jobqueue_damage, random_bit_flips_of_a_large_journal, .timeout = 120)
{
    /* 3,000 jobs: every third done, every third failed after a step, the rest queued */
    enum { NJ = 3000 };
    scratch d;
    scratch_make(&d);
    bytes j = {0};
    built_job *jobs = calloc(NJ, sizeof *jobs);
    for (int i = 0; i < NJ; i++) {
        uint64_t id = (uint64_t)i + 1;
        uint32_t plen = (uint32_t)(i % 7);
        char pay[8] = "payload";
        jobs[i] = (built_job){id, 2, record(&j, JREC_SUBMIT, id, 2, pay, plen), HDR + plen, 0, JOB_QUEUED};
        if (i % 3 == 0) {
            record(&j, JREC_STEP, id, 1, NULL, 0);
            record(&j, JREC_STEP, id, 2, NULL, 0);
            jobs[i].end_off = record(&j, JREC_DONE, id, 0, NULL, 0);
            jobs[i].end = JOB_DONE;
        } else if (i % 3 == 1) {
            record(&j, JREC_STEP, id, 1, NULL, 0);
            jobs[i].end_off = record(&j, JREC_FAILED, id, 9, NULL, 0);
            jobs[i].end = JOB_FAILED;
        }
    }
    unsigned char *copy = malloc(j.n);
    uint64_t x = 0x9e3779b97f4a7c15ULL; /* a fixed seed: the same bits every run */
    for (int trial = 0; trial < 24; trial++) {
        x ^= x << 13, x ^= x >> 7, x ^= x << 17;
        size_t bit = (size_t)(x % (8 * j.n));
        memcpy(copy, j.b, j.n);
        copy[bit / 8] ^= (unsigned char)(1u << (bit % 8));
        write_file(d.path, copy, j.n);
        unlink(d.qpath);
        char what[64];
        snprintf(what, sizeof what, "bit %zu of %zu flipped", bit, 8 * j.n);
        check_replay(d.path, jobs, NJ, bit / 8, bit / 8 + 1, what);
    }
    free(copy);
    free(jobs);
    free(j.b);
    scratch_dir_remove(d.dir);
}

static long file_size(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 ? (long)st.st_size : -1;
}

Test(jobqueue_damage, damaged_bytes_are_kept_in_place_and_quarantined_once)
{
    scratch d;
    scratch_make(&d);
    bytes j = {0};
    built_job jobs[4];
    int n = small_journal(&j, jobs);
    size_t at = jobs[2].submit_off + 20; /* inside job 3's SUBMIT, mid-file */
    j.b[at] ^= 0x10;
    write_file(d.path, j.b, j.n);
    check_replay(d.path, jobs, n, at, at + 1, "mid-file flip");
    check_replay(d.path, jobs, n, at, at + 1, "reopened");
    /* nothing was cut: whatever ran was appended behind the damage */
    cr_expect_geq(file_size(d.path), (long)j.n);
    FILE *f = fopen(d.path, "rb");
    unsigned char *now = malloc(j.n);
    cr_assert_eq(fread(now, 1, j.n, f), j.n);
    fclose(f);
    cr_expect_eq(memcmp(now, j.b, j.n), 0, "the journal's first bytes changed");
    free(now);
    /* one quarantine entry (24-byte header: magic, reserved, offset, length), not two */
    f = fopen(d.qpath, "rb");
    cr_assert_not_null(f, "no quarantine file");
    unsigned char qh[24];
    cr_assert_eq(fread(qh, 1, 24, f), 24);
    uint64_t off, len;
    memcpy(&off, qh + 8, 8);
    memcpy(&len, qh + 16, 8);
    cr_expect_eq(off, jobs[2].submit_off);
    cr_expect_eq(len, HDR); /* the damaged record: the walk found the next record's magic right after it */
    unsigned char *q = malloc(len);
    cr_assert_eq(fread(q, 1, len, f), len);
    cr_expect_eq(memcmp(q, j.b + off, len), 0);
    cr_expect_eq(fread(qh, 1, 1, f), 0, "a second quarantine entry");
    fclose(f);
    free(q);
    free(j.b);
    scratch_dir_remove(d.dir);
}
