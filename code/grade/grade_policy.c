/* The grading policy file; see grade_policy.h. */
#include "grade_policy.h"

#include "practice.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void policy_default(grade_policy *p)
{
    memset(p, 0, sizeof *p);
}

/* A cell: "-" is NAN (the default), else a number in [lo, hi] (lo exclusive when open). */
static int cell(const char *s, double lo, double hi, int open, double *out)
{
    if (strcmp(s, "-") == 0) {
        *out = NAN;
        return 0;
    }
    char *end;
    double v = strtod(s, &end);
    if (end == s || *end || !isfinite(v) || v < lo || v > hi || (open && v == lo))
        return -1;
    *out = v;
    return 0;
}

/* Whether id names a part of some chapter's variant (the printed book's). */
static int known_part(const char *id)
{
    int chapter = atoi(id);
    static practice_set s; /* large: kept off the stack */
    return chapter > 0 && practice_build(chapter, 0, &s) == 0 && practice_find(&s, id) != NULL;
}

int policy_load(const char *path, grade_policy *p, char *err, int n)
{
    policy_default(p);
    FILE *f = fopen(path, "r");
    if (!f) {
        snprintf(err, (size_t)n, "%s: cannot open", path);
        return -1;
    }
    char line[512];
    int lineno = 0, rc = 0;
    while (rc == 0 && fgets(line, sizeof line, f)) {
        lineno++;
        line[strcspn(line, "\r\n")] = '\0';
        if (!line[0] || line[0] == '#')
            continue;
        char *col[7] = {0};
        int k = 0;
        for (char *c = line; c && k < 7; k++) {
            col[k] = c;
            c = strchr(c, '\t');
            if (c)
                *c++ = '\0';
        }
        if (k != 6) {
            snprintf(err, (size_t)n, "%s:%d: want 6 tab-separated columns (part weight tolerance close slip carry), got %d",
                     path, lineno, k);
            rc = -1;
            break;
        }
        if (strcmp(col[0], "part") == 0)
            continue; /* the header */
        if (p->n >= POLICY_MAX_ROWS || strlen(col[0]) >= sizeof p->rows[0].part ||
            strlen(col[5]) >= sizeof p->rows[0].carry + 2) {
            snprintf(err, (size_t)n, "%s:%d: too many rows or too long a part id", path, lineno);
            rc = -1;
            break;
        }
        policy_row *r = &p->rows[p->n];
        memset(r, 0, sizeof *r);
        snprintf(r->part, sizeof r->part, "%s", col[0]);
        if (strcmp(r->part, "*") != 0 && !known_part(r->part)) {
            snprintf(err, (size_t)n, "%s:%d: no part \"%s\" in any chapter's exercises", path, lineno, r->part);
            rc = -1;
        } else if (cell(col[1], 0, 1e6, 1, &r->weight) || cell(col[2], 0, 1, 1, &r->tol) ||
                   cell(col[3], 0, 1, 0, &r->close) || cell(col[4], 0, 1, 0, &r->slip)) {
            snprintf(err, (size_t)n, "%s:%d: weight > 0, tolerance in (0, 1], close and slip in [0, 1], or -", path,
                     lineno);
            rc = -1;
        } else if (strcmp(col[5], "-") != 0) {
            const char *from = col[5];
            r->carry_inverse = strncmp(from, "1/", 2) == 0;
            from += r->carry_inverse ? 2 : 0;
            snprintf(r->carry, sizeof r->carry, "%s", from);
            if (strcmp(r->part, "*") == 0 || !known_part(r->carry) || atoi(r->carry) != atoi(r->part) ||
                strcmp(r->carry, r->part) == 0) {
                snprintf(err, (size_t)n, "%s:%d: carry names another part of the same chapter (\"12.1(a)\" or \"1/12.1(a)\")",
                         path, lineno);
                rc = -1;
            }
        }
        p->n++;
    }
    fclose(f);
    return rc;
}

policy_row policy_for(const grade_policy *p, const char *id)
{
    policy_row out = {"*", 1, NAN, 0, 0, "", 0};
    for (int pass = 0; pass < 2; pass++)
        for (int i = 0; i < p->n; i++) {
            const policy_row *r = &p->rows[i];
            if (strcmp(r->part, pass == 0 ? "*" : id) != 0)
                continue;
            if (!isnan(r->weight))
                out.weight = r->weight;
            if (!isnan(r->tol))
                out.tol = r->tol;
            if (!isnan(r->close))
                out.close = r->close;
            if (!isnan(r->slip))
                out.slip = r->slip;
            if (pass == 1) {
                memcpy(out.carry, r->carry, sizeof out.carry);
                out.carry_inverse = r->carry_inverse;
            }
        }
    return out;
}
