/* Provenance of measured sets; see provenance.h. */
#include "provenance.h"

#include <ctype.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

static void copy_trimmed(char *out, size_t n, const char *s, size_t len)
{
    while (len && isspace((unsigned char)*s)) {
        s++;
        len--;
    }
    while (len && isspace((unsigned char)s[len - 1]))
        len--;
    if (n == 0)
        return;
    if (len >= n)
        len = n - 1;
    memcpy(out, s, len);
    out[len] = '\0';
}

int cpu_model_parse(const char *text, char *out, size_t n)
{
    static const char *const keys[] = {"model name", "Model", "CPU part"};
    for (size_t k = 0; k < sizeof keys / sizeof keys[0]; k++) {
        size_t klen = strlen(keys[k]);
        for (const char *line = text; line && *line;) {
            const char *end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line);
            if (len > klen && strncmp(line, keys[k], klen) == 0 &&
                (line[klen] == ':' || isspace((unsigned char)line[klen]))) {
                const char *colon = memchr(line, ':', len);
                if (colon) {
                    copy_trimmed(out, n, colon + 1, len - (size_t)(colon + 1 - line));
                    if (out[0])
                        return 0;
                }
            }
            line = end ? end + 1 : NULL;
        }
    }
    return -1;
}

double cache_size_parse(const char *text)
{
    char *end;
    double v = strtod(text, &end);
    if (end == text || v < 0)
        return -1;
    while (*end == ' ')
        end++;
    double mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = 1024.0, end++;
    else if (*end == 'M')
        mult = 1024.0 * 1024.0, end++;
    else if (*end == 'G')
        mult = 1024.0 * 1024.0 * 1024.0, end++;
    while (*end == '\n' || *end == ' ')
        end++;
    return *end ? -1 : v * mult;
}

//> device_slug
void device_slug(const char *name, char *out, size_t n)
{
    size_t o = 0;
    int dash = 0; /* a '-' is owed before the next letter or digit */
    if (n == 0)
        return;
    for (const char *p = name; *p && o + 1 < n;) {
        if (strncmp(p, "(R)", 3) == 0 || strncmp(p, "(r)", 3) == 0) {
            p += 3;
            continue;
        }
        if (strncmp(p, "(TM)", 4) == 0 || strncmp(p, "(tm)", 4) == 0) {
            p += 4;
            continue;
        }
        if (*p == '@') /* "@ 2.10GHz": the clock is not the device */
            break;
        if (isalnum((unsigned char)*p)) {
            /* drop the word "CPU" standing alone */
            int word_start = p == name || !isalnum((unsigned char)p[-1]);
            if (word_start && strncmp(p, "CPU", 3) == 0 && !isalnum((unsigned char)p[3])) {
                p += 3;
                continue;
            }
            if (dash && o > 0 && o + 2 < n)
                out[o++] = '-';
            dash = 0;
            out[o++] = (char)tolower((unsigned char)*p++);
        } else {
            dash = 1;
            p++;
        }
    }
    out[o] = '\0';
    if (o == 0)
        snprintf(out, n, "unknown");
}
//< device_slug

void cpu_set_slug(const host_info *h, char *out, size_t n)
{
    char model[160];
    device_slug(h->cpu_model, model, sizeof model);
    snprintf(out, n, "cpu-%s-%dc", model, h->cores);
}

void utc_now_iso(char *out, size_t n)
{
    time_t t = time(NULL);
    struct tm tm;
    if (gmtime_r(&t, &tm) == NULL || strftime(out, n, "%Y-%m-%dT%H:%M:%SZ", &tm) == 0)
        snprintf(out, n, "unknown");
}

/* The first line of a REVISION file in the current directory, written
 * before a tree is copied to a machine without git. */
static int revision_file(char *out, size_t n)
{
    FILE *f = fopen("REVISION", "r");
    if (!f)
        return -1;
    char buf[64];
    int ok = fgets(buf, sizeof buf, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\r\n \t")] = '\0';
    if (!buf[0])
        return -1;
    snprintf(out, n, "%s", buf);
    return 0;
}

void git_revision(char *out, size_t n)
{
    const char *env = getenv("NB_REVISION");
    if (env && env[0]) {
        snprintf(out, n, "%.*s", (int)strcspn(env, "\r\n\t"), env);
        return;
    }
    snprintf(out, n, "unknown");
    FILE *p = popen("git rev-parse --short HEAD 2>/dev/null", "r");
    if (!p)
        return;
    char buf[64];
    if (fgets(buf, sizeof buf, p)) {
        buf[strcspn(buf, "\r\n")] = '\0';
        if (buf[0])
            snprintf(out, n, "%s", buf);
    }
    if (pclose(p) != 0 || strcmp(out, "unknown") == 0) {
        revision_file(out, n);
        return;
    }
    /* Uncommitted changes to tracked files: the revision alone does not
     * name the code that ran. */
    p = popen("git status --porcelain --untracked-files=no 2>/dev/null", "r");
    if (!p)
        return;
    int dirty = fgetc(p) != EOF;
    pclose(p);
    if (dirty && strlen(out) + 7 <= n - 1)
        strcat(out, "-dirty");
}

static char *read_small_file(const char *path, char *buf, size_t n)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return NULL;
    size_t got = fread(buf, 1, n - 1, f);
    fclose(f);
    buf[got] = '\0';
    return buf;
}

static double largest_cache_bytes(void)
{
    double best = 0;
    int best_level = 0;
    for (int i = 0; i < 16; i++) {
        char path[128], level[32], size[32];
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/level", i);
        if (!read_small_file(path, level, sizeof level))
            break;
        snprintf(path, sizeof path, "/sys/devices/system/cpu/cpu0/cache/index%d/size", i);
        if (!read_small_file(path, size, sizeof size))
            continue;
        int lv = atoi(level);
        double bytes = cache_size_parse(size);
        if (bytes > 0 && lv >= best_level) {
            best_level = lv;
            best = bytes;
        }
    }
    return best;
}

void host_info_collect(host_info *h)
{
    memset(h, 0, sizeof *h);
    utc_now_iso(h->date, sizeof h->date);
    git_revision(h->git, sizeof h->git);
    if (gethostname(h->host, sizeof h->host - 1) != 0)
        snprintf(h->host, sizeof h->host, "unknown");
    snprintf(h->cpu_model, sizeof h->cpu_model, "unknown cpu");
    FILE *f = fopen("/proc/cpuinfo", "r");
    if (f) {
        size_t cap = 1 << 16, len = 0;
        char *text = malloc(cap);
        if (text) {
            len = fread(text, 1, cap - 1, f);
            text[len] = '\0';
            char model[192];
            if (cpu_model_parse(text, model, sizeof model) == 0)
                snprintf(h->cpu_model, sizeof h->cpu_model, "%s", model);
            free(text);
        }
        fclose(f);
    }
    long cores = sysconf(_SC_NPROCESSORS_ONLN);
    h->cores = cores > 0 ? (int)cores : 1;
    h->llc_bytes = largest_cache_bytes();
    long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGE_SIZE);
    h->mem_bytes = pages > 0 && page > 0 ? (double)pages * (double)page : 0;
    char load[64];
    if (read_small_file("/proc/loadavg", load, sizeof load)) {
        load[strcspn(load, "\n")] = '\0';
        snprintf(h->loadavg, sizeof h->loadavg, "%s", load);
    } else
        snprintf(h->loadavg, sizeof h->loadavg, "unknown");
}

void provenance_line(FILE *f, const char *key, const char *value)
{
    fprintf(f, "# %s: ", key);
    for (const char *p = value; *p; p++)
        fputc(*p == '\n' || *p == '\t' || *p == '\r' ? ' ' : *p, f);
    fputc('\n', f);
}

void provenance_write_cpu(FILE *f, const char *measurement, const host_info *h, const char *blas)
{
    char buf[64], slug[192];
    provenance_line(f, "measurement", measurement);
    provenance_line(f, "kind", "cpu");
    provenance_line(f, "device", h->cpu_model);
    cpu_set_slug(h, slug, sizeof slug);
    provenance_line(f, "device_slug", slug);
    snprintf(buf, sizeof buf, "%d", h->cores);
    provenance_line(f, "cores", buf);
    snprintf(buf, sizeof buf, "%.0f", h->llc_bytes);
    provenance_line(f, "llc_bytes", buf);
    snprintf(buf, sizeof buf, "%.0f", h->mem_bytes);
    provenance_line(f, "mem_bytes", buf);
    provenance_line(f, "loadavg", h->loadavg);
    provenance_line(f, "host", h->host);
    provenance_line(f, "date", h->date);
    provenance_line(f, "git", h->git);
    if (blas)
        provenance_line(f, "blas", blas);
}
