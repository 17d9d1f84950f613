/* What opening a crafted journal costs, per megabyte of file.
 *
 * The journal's own writer makes a one-job file; then fake record headers
 * follow every 16 bytes, each with the record magic and a length claiming
 * the rest of the file: the file that once made replay quadratic (a CRC
 * over the rest of the file per candidate, 47 s at 256 KiB).  For 64 KiB,
 * 1 MB and 16 MB it times the read-only walk (jobqueue_journal_scan) and
 * prints milliseconds per MB; a linear walk keeps the figure flat across
 * the sizes.  Prints the figures and their targets (under 50 ms per MB,
 * and 16 MB at most 4x the 1 MB figure per MB); it asserts nothing. */
#include "journal.h"

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

/* The crafted file of `size` bytes at path; 0, or -1 with a message. */
static int crafted(const char *path, long size)
{
    unlink(path);
    jq_journal j;
    char err[512];
    if (jq_journal_open(&j, path, NULL, NULL, NULL, NULL, 0, err, sizeof err) != 0) {
        fprintf(stderr, "journal_bench: %s\n", err);
        return -1;
    }
    long at = (long)j.size;
    uint64_t id = 0;
    int rc = jq_journal_append(&j, JREC_SUBMIT, &id, 1, "12345678", 8);
    long len = (long)j.size;
    jq_journal_close(&j);
    char *b = calloc(1, (size_t)size);
    FILE *f = fopen(path, "rb");
    if (rc != 0 || !b || !f || fread(b, 1, (size_t)len, f) != (size_t)len) {
        fprintf(stderr, "journal_bench: cannot build %s\n", path);
        free(b);
        if (f)
            fclose(f);
        return -1;
    }
    fclose(f);
    uint32_t magic;
    memcpy(&magic, b + at, 4);
    for (long p = len; p + JQ_RECORD_HEADER_BYTES <= size; p += 16) {
        uint32_t type = JREC_SUBMIT, rest = (uint32_t)(size - p - JQ_RECORD_HEADER_BYTES);
        memcpy(b + p, &magic, 4);
        memcpy(b + p + 8, &type, 4);
        memcpy(b + p + 12, &rest, 4);
    }
    f = fopen(path, "wb");
    rc = f && fwrite(b, 1, (size_t)size, f) == (size_t)size ? 0 : -1;
    if (f)
        fclose(f);
    free(b);
    return rc;
}

/* Milliseconds per MB to walk the crafted file of `size` bytes: the best of
 * a few runs (a shared machine only ever adds time). */
static double ms_per_mb(const char *path, long size)
{
    if (crafted(path, size) != 0)
        return -1;
    double best = 1e9;
    for (int r = 0; r < 5; r++) {
        jq_scan sc;
        char err[512];
        double t0 = now_s();
        if (jobqueue_journal_scan(path, NULL, NULL, &sc, err, sizeof err) != 0) {
            fprintf(stderr, "journal_bench: %s\n", err);
            return -1;
        }
        double s = now_s() - t0;
        best = s < best ? s : best;
    }
    unlink(path);
    return best * 1e3 / ((double)size / 1e6);
}

int main(void)
{
    const char *tmp = getenv("TMPDIR");
    if (!tmp || !*tmp)
        tmp = access("/dev/shm", W_OK) == 0 ? "/dev/shm" : "/tmp";
    char path[512];
    snprintf(path, sizeof path, "%s/napkin-journal-bench-%ld", tmp, (long)getpid());
    double k64 = ms_per_mb(path, 64 * 1024), m1 = ms_per_mb(path, 1000 * 1000), m16 = ms_per_mb(path, 16 * 1000 * 1000);
    if (k64 < 0 || m1 < 0 || m16 < 0)
        return 1;
    printf("journal_open_crafted_64k_ms_per_mb\t%.2f\t< 50\n", k64);
    printf("journal_open_crafted_1m_ms_per_mb\t%.2f\t< 50\n", m1);
    printf("journal_open_crafted_16m_ms_per_mb\t%.2f\t< 50\n", m16);
    printf("journal_open_crafted_16m_over_1m\t%.2f\t<= 4 (linear: the same per MB)\n", m16 / m1);
    return 0;
}
