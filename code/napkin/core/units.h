/* Units and data types.  Inside the library every quantity is an SI double:
 * bytes, FLOP, seconds, bytes/s, FLOP/s.  The fmt_* helpers turn them into
 * text for people; they write into the caller's buffer and return it. */
#ifndef NAPKIN_UNITS_H
#define NAPKIN_UNITS_H

#include <stddef.h>

#define KB 1e3
#define MB 1e6
#define GB 1e9
#define TB 1e12
#define KiB 1024.0
#define MiB (1024.0 * 1024.0)
#define GiB (1024.0 * 1024.0 * 1024.0)
#define TERA 1e12

typedef enum {
    DT_FP32,
    DT_BF16,
    DT_FP16,
    DT_FP8,
    DT_INT8,
    DT_INT4,
    DT_FP4, /* E2M1: the values of the block formats (core/block_formats.h) and the math of
               Blackwell's fp4 tensor cores; not a --dtype (a bare fp4 has no scales) */
    DT_COUNT
} dtype;

/* Bytes one element occupies: 4, 2, 2, 1, 1, 0.5, 0.5. */
double dtype_bytes(dtype d);
/* "fp32", "bf16", ... */
const char *dtype_name(dtype d);
/* Parse a name (case-insensitive, exact names only; not "fp4", which is
 * given as a weight format, nvfp4 or mxfp4, with its scales).
 * Returns 0 and sets *out, or -1 for an unknown name. */
int dtype_parse(const char *s, dtype *out);
/* "fp32, bf16, fp16, fp8, int8, int4": for error messages. */
const char *dtype_choices(void);

/* The one number syntax of flags and tables: digits, an optional fraction
 * and an optional exponent ("8", "0.9", "85.5e9", ".5", "1e-3").  No sign,
 * no spaces, no hex, no "inf" or "nan"; the value must be finite.
 * Returns 0 and sets *out, or -1. */
int parse_plain_number(const char *s, double *out);
/* A number in that syntax followed by at most one suffix letter (either
 * case) from `letters`, which multiplies it by the matching entry of
 * `scales`: with letters "KM" and scales {1024, 1048576}, "8k" is 8192.
 * Returns 0 and sets *out (finite), or -1. */
int parse_suffixed_number(const char *s, const char *letters, const double *scales, double *out);
/* Digits only ("4096"; not "+8", " 8", "0x10", "1e3"), at most max.
 * Returns 0 and sets *out, or -1. */
int parse_whole_number(const char *s, long long max, long long *out);

/* Decimal (SI) and binary (IEC) byte counts: "140.0 GB", "320.0 KiB". */
char *fmt_bytes(double bytes, char *buf, size_t n);
char *fmt_bytes_iec(double bytes, char *buf, size_t n);
/* "12.3 ms", "450 µs", "2.1 s": three significant figures. */
char *fmt_seconds(double s, char *buf, size_t n);
/* "989.4 TFLOP/s", "3.35 TB/s". */
char *fmt_flops(double flop_per_s, char *buf, size_t n);
char *fmt_bandwidth(double bytes_per_s, char *buf, size_t n);
/* Plain count with an SI suffix: "70.55 G", "1.2 M". */
char *fmt_count(double x, char *buf, size_t n);

#endif
