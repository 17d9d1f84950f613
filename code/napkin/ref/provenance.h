/* Where a measurement came from: the header every measured TSV starts with.
 *
 * A measured set is TSV: lines "# key: value" (the provenance), then one
 * header row of column names, then rows.  The CPU twins write it with these
 * functions and the CUDA kernels with kernels/common.cuh, so the same
 * gnuplot scripts and readers take either. */
#ifndef NAPKIN_PROVENANCE_H
#define NAPKIN_PROVENANCE_H

#include <stddef.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

typedef struct {
    char date[32];       /* UTC, ISO 8601 */
    char git[64];        /* short revision ("-dirty" if modified), or "unknown" */
    char host[128];
    char cpu_model[192]; /* from /proc/cpuinfo, or "unknown cpu" */
    int cores;           /* online processors */
    double llc_bytes;    /* largest cache level reported by sysfs; 0 if unknown */
    double mem_bytes;    /* physical memory; 0 if unknown */
    char loadavg[64];    /* /proc/loadavg at collection: other work on the machine skews timings */
} host_info;

/* Fill *h from the running machine.  Never fails: unknown fields say so. */
void host_info_collect(host_info *h);

/* The "model name" of the first processor in /proc/cpuinfo text (x86), or
 * its "Model"/"CPU part" line elsewhere.  Returns 0, or -1 when absent. */
int cpu_model_parse(const char *cpuinfo_text, char *out, size_t n);

/* Cache sizes as sysfs writes them: "480M", "2048K", "32768" (bytes).
 * Returns bytes, or -1 for text it cannot read. */
double cache_size_parse(const char *text);

/* A directory name for a device: lower case, runs of anything but letters
 * and digits become one '-', trademarks "(R)" "(TM)" and the words "CPU"
 * and "@ <clock>" dropped: "Intel(R) Xeon(R) CPU @ 2.1GHz" -> "intel-xeon",
 * "NVIDIA H200" -> "nvidia-h200". */
void device_slug(const char *device_name, char *out, size_t n);

/* The slug of this CPU set: "cpu-" + device_slug(model) + "-<cores>c". */
void cpu_set_slug(const host_info *h, char *out, size_t n);

/* Today's UTC date and time in ISO 8601 ("2026-11-30T10:04:11Z"). */
void utc_now_iso(char *out, size_t n);
/* The revision of the code: $NB_REVISION when set; else `git rev-parse
 * --short HEAD` in the current directory, with "-dirty" when tracked files
 * have uncommitted changes; else the first line of ./REVISION (written
 * before a tree is copied without its .git); else "unknown". */
void git_revision(char *out, size_t n);

/* One provenance line "# key: value\n" (newlines and tabs in value become spaces). */
void provenance_line(FILE *f, const char *key, const char *value);
/* The common CPU header: measurement, kind: cpu, device, device_slug,
 * cores, llc_bytes, mem_bytes, loadavg, host, date, git, and blas when not NULL. */
void provenance_write_cpu(FILE *f, const char *measurement, const host_info *h, const char *blas);

#ifdef __cplusplus
}
#endif

#endif
