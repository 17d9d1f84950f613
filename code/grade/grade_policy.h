/* The instructor's grading policy: a TSV, one row per part ("*" for every
 * part), columns
 *
 *   part  weight  tolerance  close  slip  carry
 *
 * weight: the part's points (default 1); tolerance: a relative tolerance
 * that replaces the part's own (a part judged exactly becomes judged to it;
 * a range keeps its stated bounds); close, slip: the share of the points an
 * answer judged close, or matching a named slip, earns (default 0); carry:
 * the part an answer's error is carried from ("12.1(a)" when this part is
 * proportional to that one, "1/12.1(a)" when inversely), so a wrong earlier
 * answer used correctly earns the points again, once (default: none).
 * "-" keeps the default; "#" starts a comment line.  A row naming a part no
 * chapter has, a carry that names no part of the same chapter, or a number
 * outside its range is an error naming file:line. */
#ifndef GRADE_POLICY_H
#define GRADE_POLICY_H

#define POLICY_MAX_ROWS 256

typedef struct {
    char part[24];     /* "6.1(c)" or "*" */
    double weight;     /* > 0; NAN: the default */
    double tol;        /* > 0; NAN: the part's own */
    double close;      /* 0..1; NAN: the default */
    double slip;       /* 0..1; NAN: the default */
    char carry[24];    /* "" none; the part carried from */
    int carry_inverse; /* "1/part": inversely proportional */
} policy_row;

typedef struct {
    int n;
    policy_row rows[POLICY_MAX_ROWS];
} grade_policy;

/* The policy every part gets without a file: weight 1, close and slip 0. */
void policy_default(grade_policy *p);
/* Reads path into *p.  Returns 0, or -1 with why written to err. */
int policy_load(const char *path, grade_policy *p, char *err, int n);
/* The row for part id, the "*" row's values filling what it leaves out. */
policy_row policy_for(const grade_policy *p, const char *id);

#endif
