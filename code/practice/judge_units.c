/* Units an answer may carry and the unit slips; see judge_units.h. */
#include "judge_units.h"

#include <ctype.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define KI 1024.0
static const answer_unit units[] = {
    {"B", UNIT_BYTES, 1}, {"byte", UNIT_BYTES, 1}, {"bytes", UNIT_BYTES, 1},
    {"kB", UNIT_BYTES, 1e3}, {"KB", UNIT_BYTES, 1e3}, {"MB", UNIT_BYTES, 1e6}, {"GB", UNIT_BYTES, 1e9},
    {"TB", UNIT_BYTES, 1e12}, {"PB", UNIT_BYTES, 1e15},
    {"KiB", UNIT_BYTES, KI}, {"MiB", UNIT_BYTES, KI * KI}, {"GiB", UNIT_BYTES, KI * KI * KI},
    {"TiB", UNIT_BYTES, KI * KI * KI * KI},
    {"B/s", UNIT_BYTE_RATE, 1}, {"kB/s", UNIT_BYTE_RATE, 1e3}, {"MB/s", UNIT_BYTE_RATE, 1e6},
    {"GB/s", UNIT_BYTE_RATE, 1e9}, {"TB/s", UNIT_BYTE_RATE, 1e12}, {"GiB/s", UNIT_BYTE_RATE, KI * KI * KI},
    {"FLOP", UNIT_FLOP, 1}, {"MFLOP", UNIT_FLOP, 1e6}, {"GFLOP", UNIT_FLOP, 1e9}, {"TFLOP", UNIT_FLOP, 1e12},
    {"PFLOP", UNIT_FLOP, 1e15}, {"EFLOP", UNIT_FLOP, 1e18},
    {"FLOP/B", UNIT_FLOP_PER_BYTE, 1}, {"FLOP/byte", UNIT_FLOP_PER_BYTE, 1}, {"OP/B", UNIT_FLOP_PER_BYTE, 1},
    {"s", UNIT_TIME, 1}, {"sec", UNIT_TIME, 1}, {"ms", UNIT_TIME, 1e-3}, {"us", UNIT_TIME, 1e-6},
    {"\xc2\xb5s", UNIT_TIME, 1e-6}, {"\xce\xbcs", UNIT_TIME, 1e-6}, {"ns", UNIT_TIME, 1e-9},
    {"min", UNIT_TIME, 60}, {"h", UNIT_TIME, 3600}, {"day", UNIT_TIME, 86400}, {"days", UNIT_TIME, 86400},
    {"x", UNIT_RATIO, 1}, {"\xc3\x97", UNIT_RATIO, 1}, {"%", UNIT_RATIO, 0.01}, {"a fraction", UNIT_RATIO, 1},
    {"a probability", UNIT_RATIO, 1},
    {"thousand", UNIT_COUNT, 1e3}, {"million", UNIT_COUNT, 1e6}, {"billion", UNIT_COUNT, 1e9},
    {"trillion", UNIT_COUNT, 1e12},
};

const answer_unit *answer_unit_named(const char *name)
{
    for (size_t i = 0; name && i < sizeof units / sizeof units[0]; i++)
        if (strcmp(units[i].name, name) == 0)
            return &units[i];
    return NULL;
}

/* The number at the head of s ("1,392.5", "-4", "1.2e3"), its end in *rest;
 * NAN when s does not start with a decimal number a person writes.
 * Thousands separators only in groups of three ("57,0" is not 570). */
static double scan_number(const char *s, const char **rest)
{
    char buf[64];
    size_t k = 0;
    const char *p = s;
    if (*p == '+' || *p == '-')
        buf[k++] = *p++;
    int run = 0, commas = 0, digits = 0;
    for (; (isdigit((unsigned char)*p) || *p == ',') && k + 1 < sizeof buf; p++) {
        if (*p == ',') {
            if (run == 0 || run > 3 || (commas > 0 && run != 3))
                return NAN;
            commas++, run = 0;
            continue;
        }
        run++, digits++;
        buf[k++] = *p;
    }
    if (commas > 0 && run != 3)
        return NAN;
    if (*p == '.') {
        buf[k++] = *p++;
        for (; isdigit((unsigned char)*p) && k + 1 < sizeof buf; p++)
            buf[k++] = *p, digits++;
    }
    if (!digits)
        return NAN;
    if ((*p == 'e' || *p == 'E') &&
        (isdigit((unsigned char)p[1]) || ((p[1] == '+' || p[1] == '-') && isdigit((unsigned char)p[2])))) {
        buf[k++] = *p++;
        if (*p == '+' || *p == '-')
            buf[k++] = *p++;
        for (; isdigit((unsigned char)*p) && k + 1 < sizeof buf; p++)
            buf[k++] = *p;
    }
    if (k + 1 >= sizeof buf || isdigit((unsigned char)*p) || *p == ',')
        return NAN; /* too long to be a number a person types */
    buf[k] = '\0';
    double v = strtod(buf, NULL);
    *rest = p;
    return isfinite(v) ? v : NAN;
}

static judge_reading refused(const char *why)
{
    judge_reading r = {NAN, why};
    return r;
}

/* The multiplier words a count may carry: "46.7 billion". */
static double multiplier_word(const char **p)
{
    static const struct {
        const char *word;
        double factor;
    } words[] = {{"thousand", 1e3}, {"million", 1e6}, {"billion", 1e9}, {"trillion", 1e12}};
    for (size_t i = 0; i < sizeof words / sizeof words[0]; i++) {
        size_t n = strlen(words[i].word);
        if (strncmp(*p, words[i].word, n) == 0 && ((*p)[n] == '\0' || isspace((unsigned char)(*p)[n]))) {
            *p += n;
            while (isspace((unsigned char)**p))
                (*p)++;
            return words[i].factor;
        }
    }
    return 1;
}

/* A count word said with or without its plural s: "GPU" for "GPUs". */
static int same_word(const char *typed, const char *unit)
{
    size_t a = strlen(typed), b = strlen(unit);
    if (strcmp(typed, unit) == 0)
        return 1;
    if (a + 1 == b && unit[a] == 's' && strncmp(typed, unit, a) == 0)
        return 1;
    return b + 1 == a && typed[b] == 's' && strncmp(typed, unit, b) == 0;
}

judge_reading judge_read_answer(const char *text, const char *unit)
{
    if (!text)
        return refused("no number: give your answer as a number");
    const char *p = text;
    while (isspace((unsigned char)*p))
        p++;
    const char *q = p + (*p == '+' || *p == '-');
    if (q[0] == '0' && (q[1] == 'x' || q[1] == 'X'))
        return refused("hexadecimal is not read: write the number in decimal");
    if (!*p)
        return refused("no number: give your answer as a number");
    const char *rest;
    double v = scan_number(p, &rest);
    if (!isfinite(v))
        return refused("no number: give your answer as a decimal number (1,392 or 1392.5 or 1.2e3)");
    while (isspace((unsigned char)*rest))
        rest++;
    char word[48];
    size_t n = strlen(rest);
    while (n > 0 && isspace((unsigned char)rest[n - 1]))
        n--;
    if (n >= sizeof word)
        return refused("an unknown unit: give a number, in the part's unit or another of its quantity");
    memcpy(word, rest, n);
    word[n] = '\0';
    const answer_unit *want = answer_unit_named(unit);
    judge_reading r = {v, NULL};
    if (!*word)
        return r;
    if (!unit) /* no unit known: a trailing % is only noise */
        return strcmp(word, "%") == 0 ? r : refused("no number: give your answer as a number");
    const char *w = word;
    double mult = multiplier_word(&w);
    if (!*w) { /* "46.7 billion": a count */
        if (want && want->quantity == UNIT_COUNT) {
            r.value = v * mult / want->factor;
            return r;
        }
        if (!want) { /* a count word ("tokens"): the multiplier is the number's */
            r.value = v * mult;
            return r;
        }
        return refused("a count (thousand, million, billion) where the part asks for another quantity");
    }
    const answer_unit *got = answer_unit_named(w);
    if (!got && unit && same_word(w, unit)) {
        r.value = v * mult;
        return r;
    }
    if (!got)
        return refused("an unknown unit: give a number, in the part's unit or another of its quantity");
    if (strcmp(got->name, "%") == 0 && !want) { /* a share of a count: 80% is 0.8 */
        r.value = v * mult / 100;
        return r;
    }
    if (!want || got->quantity != want->quantity)
        return refused("that unit measures another quantity than the part asks for");
    r.value = v * mult * got->factor / want->factor;
    return r;
}

/* given = answer * factor: the answer in a neighbouring unit of the part's. */
static const struct {
    const char *unit;
    double factor;
    const char *hint;
} unit_slips[] = {
    {"B", 1e-3, "that number is in kB; the part asks for B"},
    {"B", 1e-6, "that number is in MB; the part asks for B"},
    {"B", 1e-9, "that number is in GB; the part asks for B"},
    {"bytes", 1e-3, "that number is in kB; the part asks for bytes"},
    {"bytes", 1e-6, "that number is in MB; the part asks for bytes"},
    {"bytes", 1e-9, "that number is in GB; the part asks for bytes"},
    {"MB", 1e6, "that number is in bytes; the part asks for MB"},
    {"MB", 1e3, "that number is in kB; the part asks for MB"},
    {"MB", 1e-3, "that number is in GB; the part asks for MB"},
    {"MB", 1e6 / (KI * KI), "that is MiB (2^20 bytes); a MB is 10^6 bytes"},
    {"GB", 1e9, "that number is in bytes; the part asks for GB"},
    {"GB", 1e6, "that number is in kB; the part asks for GB"},
    {"GB", 1e3, "that number is in MB; the part asks for GB"},
    {"GB", 1e-3, "that number is in TB; the part asks for GB"},
    {"GB", 1e9 / (KI * KI * KI), "that is GiB (2^30 bytes); a GB is 10^9 bytes"},
    {"TB/s", 1e12, "that number is in bytes/s; the part asks for TB/s"},
    {"TB/s", 1e3, "that number is in GB/s; the part asks for TB/s"},
    {"TB/s", 1e12 / (KI * KI * KI * KI), "that is TiB/s (2^40 bytes); a TB is 10^12 bytes"},
    {"GFLOP", 1e9, "that number is in FLOP; the part asks for GFLOP"},
    {"GFLOP", 1e-3, "that number is in TFLOP; the part asks for GFLOP"},
    {"GFLOP", 1e-6, "that number is in PFLOP; the part asks for GFLOP"},
    {"PFLOP", 1e15, "that number is in FLOP; the part asks for PFLOP"},
    {"PFLOP", 1e6, "that number is in GFLOP; the part asks for PFLOP"},
    {"PFLOP", 1e3, "that number is in TFLOP; the part asks for PFLOP"},
    {"s", 1e3, "that number is in ms; the part asks for s"},
    {"s", 1e6, "that number is in us; the part asks for s"},
    {"ms", 1e-3, "that number is in s; the part asks for ms"},
    {"ms", 1e3, "that number is in us; the part asks for ms"},
    {"ms", 1e6, "that number is in ns; the part asks for ms"},
    {"us", 1e-6, "that number is in s; the part asks for us"},
    {"us", 1e-3, "that number is in ms; the part asks for us"},
    {"us", 1e3, "that number is in ns; the part asks for us"},
    {"ns", 1e-6, "that number is in ms; the part asks for ns"},
    {"ns", 1e-3, "that number is in us; the part asks for ns"},
    {"million", 1e6, "that number is in ones; the part asks for millions"},
    {"million", 1e-3, "that number is in billions; the part asks for millions"},
    {"billion", 1e9, "that number is in ones; the part asks for billions"},
    {"billion", 1e3, "that number is in millions; the part asks for billions"},
};

const char *judge_unit_slip(const char *unit, double answer, double given, double tol)
{
    for (size_t i = 0; unit && i < sizeof unit_slips / sizeof unit_slips[0]; i++) {
        double target = answer * unit_slips[i].factor;
        if (strcmp(unit_slips[i].unit, unit) == 0 && target != 0 && fabs(given - target) <= tol * fabs(target))
            return unit_slips[i].hint;
    }
    return NULL;
}
