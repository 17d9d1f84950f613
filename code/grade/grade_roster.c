/* The roster CSV; see grade_roster.h. */
#include "grade_roster.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int roster_id_ok(const char *id)
{
    if (!id || !*id || *id == '.' || strlen(id) > 64)
        return 0;
    for (const char *p = id; *p; p++)
        if (!isalnum((unsigned char)*p) && *p != '.' && *p != '_' && *p != '-')
            return 0;
    return 1;
}

/* One record's fields from *p (RFC 4180), *p left after its line end.
 * Returns the field count (up to max), or -1 for a malformed quote. */
static int csv_record(const char **p, char **fields, int max, int *lines)
{
    int n = 0;
    const char *s = *p;
    for (;;) {
        size_t cap = 16, k = 0;
        char *f = malloc(cap);
        if (*s == '"') {
            for (s++;; s++) {
                if (!*s) {
                    free(f);
                    return -1; /* an open quote at the end of the file */
                }
                if (*s == '"') {
                    if (s[1] != '"')
                        break;
                    s++;
                }
                if (*s == '\n')
                    (*lines)++;
                if (k + 2 > cap)
                    f = realloc(f, cap *= 2);
                f[k++] = *s;
            }
            s++;
            if (*s && *s != ',' && *s != '\n' && !(*s == '\r' && s[1] == '\n')) {
                free(f);
                return -1; /* text after a closing quote */
            }
        } else {
            for (; *s && *s != ',' && *s != '\n' && !(*s == '\r' && s[1] == '\n'); s++) {
                if (*s == '"') {
                    free(f);
                    return -1; /* a quote inside an unquoted field */
                }
                if (k + 2 > cap)
                    f = realloc(f, cap *= 2);
                f[k++] = *s;
            }
        }
        f[k] = '\0';
        if (n < max)
            fields[n] = f;
        else
            free(f);
        n++;
        if (*s == ',') {
            s++;
            continue;
        }
        if (*s == '\r')
            s++;
        if (*s == '\n')
            s++, (*lines)++;
        *p = s;
        return n;
    }
}

int roster_load(const char *path, roster *r, char *err, int n)
{
    memset(r, 0, sizeof *r);
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, (size_t)n, "%s: cannot open", path);
        return -1;
    }
    size_t cap = 4096, len = 0;
    char *text = malloc(cap);
    size_t got;
    while ((got = fread(text + len, 1, cap - len - 1, f)) > 0)
        if ((len += got) + 1 >= cap)
            text = realloc(text, cap *= 2);
    fclose(f);
    text[len] = '\0';
    if (strlen(text) != len) {
        snprintf(err, (size_t)n, "%s: a NUL byte: not a CSV file", path);
        free(text);
        return -1;
    }
    const char *p = text;
    if (strncmp(p, "\xEF\xBB\xBF", 3) == 0)
        p += 3; /* a spreadsheet's byte-order mark */
    int line = 1, rc = 0, cap_s = 0, header = 0;
    while (*p && rc == 0) {
        int at = line;
        char *fl[3] = {0};
        int k = csv_record(&p, fl, 3, &line);
        if (k == 1 && !fl[0][0]) { /* a blank line */
            free(fl[0]);
            continue;
        }
        if (k != 3) {
            snprintf(err, (size_t)n, "%s:%d: %s", path, at,
                     k < 0 ? "a malformed quoted field" : "want 3 fields: id,name,email");
            rc = -1;
        } else if (!header) {
            header = 1;
            if (strcmp(fl[0], "id") || strcmp(fl[1], "name") || strcmp(fl[2], "email")) {
                snprintf(err, (size_t)n, "%s:1: the header must be id,name,email", path);
                rc = -1;
            }
        } else if (!roster_id_ok(fl[0])) {
            snprintf(err, (size_t)n, "%s:%d: an id is letters, digits, '.', '_' and '-' (not first '.'), up to 64",
                     path, at);
            rc = -1;
        } else if (roster_find(r, fl[0])) {
            snprintf(err, (size_t)n, "%s:%d: id %s twice", path, at, fl[0]);
            rc = -1;
        } else {
            if (r->n == cap_s)
                r->students = realloc(r->students, (size_t)(cap_s = cap_s ? 2 * cap_s : 64) * sizeof *r->students);
            r->students[r->n++] = (roster_student){fl[0], fl[1], fl[2]};
            continue;
        }
        for (int i = 0; i < 3; i++)
            free(fl[i]);
    }
    if (rc == 0 && !header) {
        snprintf(err, (size_t)n, "%s: empty: the header must be id,name,email", path);
        rc = -1;
    }
    free(text);
    if (rc != 0)
        roster_free(r);
    return rc;
}

void roster_free(roster *r)
{
    for (int i = 0; i < r->n; i++)
        free(r->students[i].id), free(r->students[i].name), free(r->students[i].email);
    free(r->students);
    memset(r, 0, sizeof *r);
}

const roster_student *roster_find(const roster *r, const char *id)
{
    for (int i = 0; id && i < r->n; i++)
        if (strcmp(r->students[i].id, id) == 0)
            return &r->students[i];
    return NULL;
}
