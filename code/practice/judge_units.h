/* Units an answer may carry, and the unit slips a bare number may show.
 *
 * A part names its unit ("MB", "ms", "x", "tokens"); an answer may carry
 * that unit or any unit of the same quantity ("17.64 GB", "281.25 FLOP/B",
 * "4x", "46.7 billion", "549 MiB") and is converted to the part's unit
 * before it is judged.  A unit of another quantity, an unknown word or a
 * notation the judge does not read (hexadecimal, "inf") is refused with a
 * reason, never guessed at.  A bare number that is the answer in another
 * unit of the part's ladder (bytes for MB, ms for s) or in the binary unit
 * beside it (MiB for MB) is a slip named by both units. */
#ifndef NAPKIN_JUDGE_UNITS_H
#define NAPKIN_JUDGE_UNITS_H

typedef enum {
    UNIT_NONE,      /* a word the table does not know ("GPUs", "tokens") */
    UNIT_BYTES,
    UNIT_BYTE_RATE,
    UNIT_FLOP,
    UNIT_FLOP_PER_BYTE,
    UNIT_TIME,
    UNIT_RATIO,     /* x, %, a fraction */
    UNIT_COUNT      /* thousand, million, billion */
} unit_quantity;

typedef struct {
    const char *name;       /* as typed: "GiB", "ms", "FLOP/B" */
    unit_quantity quantity;
    double factor;          /* the unit in the quantity's base (bytes, s, 1) */
} answer_unit;

/* The unit a name stands for ("MB", "MiB", "µs", "billion"), or NULL. */
const answer_unit *answer_unit_named(const char *name);

/* A typed answer read in the part's unit. */
typedef struct {
    double value;    /* NAN when refused or blank */
    const char *why; /* NULL when read; else why not, without the answer */
} judge_reading;

/* Reads "17.64 GB", "4x", "46.7 billion tokens", "1,392" for a part in
 * unit (NULL: no unit known; only a bare number or a trailing %, whose
 * sign is then noise).  "80%" is 0.8 in a part whose unit is not "%". */
judge_reading judge_read_answer(const char *text, const char *unit);

/* The hint when given is the answer in a neighbouring unit of the part's
 * (a power of 10^3 or a binary prefix away), as near as tol; else NULL. */
const char *judge_unit_slip(const char *unit, double answer, double given, double tol);

#endif
