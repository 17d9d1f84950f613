#include "units.h"

#include <errno.h>
#include <string.h>
#include <ctype.h>
#include <stdlib.h>

#include <math.h>
#include <stdio.h>
#include <strings.h>

static const struct {
    const char *name;
    double bytes;
} DTYPES[DT_COUNT] = {
    [DT_FP32] = {"fp32", 4.0}, [DT_BF16] = {"bf16", 2.0}, [DT_FP16] = {"fp16", 2.0},
    [DT_FP8] = {"fp8", 1.0},   [DT_INT8] = {"int8", 1.0}, [DT_INT4] = {"int4", 0.5},
    [DT_FP4] = {"fp4", 0.5},
};

double dtype_bytes(dtype d)
{
    return (d >= 0 && d < DT_COUNT) ? DTYPES[d].bytes : NAN;
}

const char *dtype_name(dtype d)
{
    return (d >= 0 && d < DT_COUNT) ? DTYPES[d].name : "?";
}

int dtype_parse(const char *s, dtype *out)
{
    if (!s)
        return -1;
    for (int i = 0; i < DT_COUNT; i++)
        if (i != DT_FP4 && strcasecmp(s, DTYPES[i].name) == 0) {
            *out = (dtype)i;
            return 0;
        }
    return -1;
}

const char *dtype_choices(void)
{
    return "fp32, bf16, fp16, fp8, int8, int4";
}

/* Scale x by `step` until it is below `step`, then print with three
 * significant figures and the matching unit. */
static char *fmt_scaled(double x, double step, const char *const *units, int nunits, const char *suffix,
                        char *buf, size_t n)
{
    int i = 0;
    double v = x;
    while (fabs(v) >= step && i < nunits - 1) {
        v /= step;
        i++;
    }
    int decimals = fabs(v) >= 100 ? 0 : fabs(v) >= 10 ? 1 : 2;
    if (i == 0 && v == floor(v))
        decimals = 0; /* "512 B", not "512.0 B" */
    snprintf(buf, n, "%.*f %s%s", decimals, v, units[i], suffix);
    return buf;
}

char *fmt_bytes(double bytes, char *buf, size_t n)
{
    static const char *const u[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    return fmt_scaled(bytes, 1000.0, u, 6, "", buf, n);
}

char *fmt_bytes_iec(double bytes, char *buf, size_t n)
{
    static const char *const u[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
    return fmt_scaled(bytes, 1024.0, u, 6, "", buf, n);
}

char *fmt_flops(double flop_per_s, char *buf, size_t n)
{
    static const char *const u[] = {"", "k", "M", "G", "T", "P", "E"};
    return fmt_scaled(flop_per_s, 1000.0, u, 7, "FLOP/s", buf, n);
}

char *fmt_bandwidth(double bytes_per_s, char *buf, size_t n)
{
    static const char *const u[] = {"B", "kB", "MB", "GB", "TB", "PB"};
    return fmt_scaled(bytes_per_s, 1000.0, u, 6, "/s", buf, n);
}

char *fmt_count(double x, char *buf, size_t n)
{
    static const char *const u[] = {"", "k", "M", "G", "T", "P"};
    fmt_scaled(x, 1000.0, u, 6, "", buf, n);
    /* drop the trailing space when there is no suffix */
    size_t len = 0;
    while (buf[len])
        len++;
    if (len && buf[len - 1] == ' ')
        buf[len - 1] = '\0';
    return buf;
}

char *fmt_seconds(double s, char *buf, size_t n)
{
    double a = fabs(s);
    const char *unit = "s";
    double v = s;
    if (a == 0) {
        unit = "s";
    } else if (a < 1e-6) {
        v = s * 1e9;
        unit = "ns";
    } else if (a < 1e-3) {
        v = s * 1e6;
        unit = "µs";
    } else if (a < 1) {
        v = s * 1e3;
        unit = "ms";
    }
    double av = fabs(v);
    int decimals = av >= 100 ? 0 : av >= 10 ? 1 : 2;
    snprintf(buf, n, "%.*f %s", decimals, v, unit);
    return buf;
}

//> number_syntax
static int is_digit(char c)
{
    return c >= '0' && c <= '9';
}

int parse_plain_number(const char *s, double *out)
{
    const char *p = s;
    int digits = 0;
    while (is_digit(*p)) p++, digits++;
    if (*p == '.')
        for (p++; is_digit(*p); p++) digits++;
    if (!digits)
        return -1;
    if (*p == 'e' || *p == 'E') {
        p++;
        if (*p == '+' || *p == '-')
            p++;
        if (!is_digit(*p))
            return -1;
        while (is_digit(*p)) p++;
    }
    if (*p)
        return -1;
    errno = 0;
    double v = strtod(s, NULL);
    /* overflow to infinity is an error; underflow to a tiny or zero value is
     * the caller's range check to refuse, with its own reason */
    if (!isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int parse_suffixed_number(const char *s, const char *letters, const double *scales, double *out)
{
    if (!s || !*s)
        return -1;
    size_t len = strlen(s);
    double scale = 1.0;
    const char *hit = strchr(letters, toupper((unsigned char)s[len - 1]));
    if (hit && *hit) {
        scale = scales[hit - letters];
        len--;
    }
    char num[64];
    if (len == 0 || len >= sizeof num)
        return -1;
    memcpy(num, s, len);
    num[len] = '\0';
    double v;
    if (parse_plain_number(num, &v) != 0)
        return -1;
    v *= scale;
    if (!isfinite(v))
        return -1;
    *out = v;
    return 0;
}

int parse_whole_number(const char *s, long long max, long long *out)
{
    if (!is_digit(*s))
        return -1;
    long long v = 0;
    for (const char *p = s; *p; p++) {
        if (!is_digit(*p))
            return -1;
        int d = *p - '0';
        if (v > (max - d) / 10)
            return -1; /* past max: refuse before it can overflow */
        v = 10 * v + d;
    }
    *out = v;
    return 0;
}
//< number_syntax
