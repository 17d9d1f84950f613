/* Judging a person's answer to one part of an exercise.
 *
 * A part says how it is judged: exactly (counts: GPUs, tokens, layers), to a
 * relative tolerance a careful hand computation meets (1 % unless the
 * exercise states otherwise: "to 3 significant figures"), or inside a range
 * where the chapter accepts a reasoned estimate.  An answer that misses gets
 * feedback without the expected value: "close" when it is within 10 % (a
 * rounding, or 2 against 2.5 bytes), or the hint of the typical slip it
 * matches (a part's own wrong turn, whose value the exercise's generator
 * computes; the answer in a neighbouring unit of the part's, bytes for MB;
 * x2, x1000, bits for bytes), or plain "off".
 *
 * The kit's checks, the grade program and the page's answer boxes all call
 * judge_answer, so a verdict is the same wherever it is given. */
#ifndef NAPKIN_JUDGE_H
#define NAPKIN_JUDGE_H

typedef enum {
    JUDGE_EXACT,    /* the integer nearest the answer, nothing else */
    JUDGE_RELATIVE, /* |given - answer| <= tol * |answer| */
    JUDGE_RANGE     /* lo <= given <= hi */
} judge_rule;

typedef enum {
    VERDICT_RIGHT,
    VERDICT_CLOSE,   /* within JUDGE_CLOSE of the answer, not within tolerance */
    VERDICT_SLIP,    /* matches a typical slip (hint says which) */
    VERDICT_OFF,     /* none of the above */
    VERDICT_MISSING  /* no number (NAN, infinite) */
} judge_verdict;

/* "close" is within 10 % of the answer. */
#define JUDGE_CLOSE 0.10
/* The default relative tolerance: three significant figures, worked by hand. */
#define JUDGE_HAND_TOL 0.01
/* A part's own slips, besides the generic factors judge_answer always tries. */
#define JUDGE_MAX_SLIPS 4

typedef struct {
    double value;     /* what the slip gives, computed for this variant */
    const char *hint; /* what went wrong, without the answer */
} judge_slip;

typedef struct {
    judge_rule rule;
    double answer;    /* EXACT and RELATIVE: the expected value */
    double tol;       /* RELATIVE: the relative tolerance */
    double lo, hi;    /* RANGE: the accepted interval (answer lies inside) */
    const char *close_hint; /* said when close; NULL: a generic hint */
    const char *rule_note;  /* how the exercise states the rule, if not the generic words */
    const char *unit;       /* the part's unit ("MB", "ms"), NULL when unknown: names unit slips */
    int n_slips;
    judge_slip slips[JUDGE_MAX_SLIPS];
} judge_part;

typedef struct {
    judge_verdict verdict;
    const char *hint; /* never NULL; never states the expected value */
} judge_result;

judge_result judge_answer(const judge_part *p, double given);

/* "right", "close", "slip", "off", "missing". */
const char *judge_verdict_name(judge_verdict v);
/* "exactly", "to 1%", "between 90 and 95", written into buf. */
const char *judge_rule_text(const judge_part *p, char *buf, int n);

/* A typed answer as a number: "57.0", " 1,392 ", "1.2e3", "95%" (the sign
 * is only noise to strip, the part says its unit); thousands separators
 * only in groups of three ("57,0" is not 570).  NAN for anything else:
 * blank, "about 80", "1.2.3", "0x2E".  With a unit: judge_read_answer
 * (judge_units.h). */
double judge_parse_answer(const char *s);

/* A typed answer judged: read in the part's unit (judge_read_answer), a
 * refused reading "missing" with its reason as the hint. */
judge_result judge_typed_answer(const judge_part *p, const char *text);

/* The part's centre: the answer, or the middle of a range. */
double judge_expected(const judge_part *p);

#endif
