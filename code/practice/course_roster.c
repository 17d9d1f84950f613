/* The roster's CSV reader (course_roster.h): RFC 4180 fields, a header checked by
 * name, every id checked before it names a folder. */
#include "course_roster.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { ROSTER_ID_MAX = 64, ROSTER_FIELD_MAX = 4096 };

int roster_id_ok(const char *id)
{
    size_t len = id ? strlen(id) : 0;
    if (len == 0 || len > ROSTER_ID_MAX || id[0] == '.' || id[0] == '-')
        return 0;
    for (size_t i = 0; i < len; i++) {
        char c = id[i];
        if (!((c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '.' || c == '_' ||
              c == '-'))
            return 0;
    }
    return 1;
}

/* One record's fields: at most 3 kept (more is an error), each a fresh
 * string.  Returns the number of fields, 0 at the end of the file, -1 on a
 * malformed record (message in err). */
typedef struct {
    FILE *f;
    int line; /* the line the record starts on */
    int next_line;
} csv_reader;

static int read_record(csv_reader *r, char *fields[3], char *err, size_t n)
{
    char buf[ROSTER_FIELD_MAX];
    int nf = 0, c = fgetc(r->f);
    r->line = r->next_line;
    if (c == EOF)
        return 0;
    for (;;) {
        size_t len = 0;
        int quoted = c == '"';
        if (quoted)
            c = fgetc(r->f);
        for (;;) {
            if (c == EOF) {
                if (quoted) {
                    snprintf(err, n, "line %d: a quoted field is not closed", r->line);
                    goto fail;
                }
                break;
            }
            if (quoted && c == '"') {
                c = fgetc(r->f);
                if (c != '"') {
                    quoted = 0;
                    if (c != ',' && c != '\n' && c != '\r' && c != EOF) {
                        snprintf(err, n, "line %d: text after a closing quote", r->line);
                        goto fail;
                    }
                    break;
                }
            } else if (!quoted && (c == ',' || c == '\n' || c == '\r')) {
                break;
            } else if (!quoted && c == '"') {
                snprintf(err, n, "line %d: a quote inside an unquoted field", r->line);
                goto fail;
            }
            if (c == '\n')
                r->next_line++;
            if (c == '\0') {
                snprintf(err, n, "line %d: a NUL byte", r->line);
                goto fail;
            }
            if (len + 1 >= sizeof buf) {
                snprintf(err, n, "line %d: a field longer than %d bytes", r->line, ROSTER_FIELD_MAX - 1);
                goto fail;
            }
            buf[len++] = (char)c;
            c = fgetc(r->f);
        }
        buf[len] = '\0';
        if (nf == 3) {
            snprintf(err, n, "line %d: more than 3 fields (id,name,email)", r->line);
            goto fail;
        }
        fields[nf] = strdup(buf);
        if (!fields[nf]) {
            snprintf(err, n, "line %d: out of memory", r->line);
            goto fail;
        }
        nf++;
        if (c == ',') {
            c = fgetc(r->f);
            continue;
        }
        if (c == '\r') {
            c = fgetc(r->f);
            if (c != '\n' && c != EOF) {
                snprintf(err, n, "line %d: a carriage return not before a line feed", r->line);
                goto fail;
            }
        }
        if (c == '\n')
            r->next_line++;
        return nf;
    }
fail:
    for (int i = 0; i < nf; i++)
        free(fields[i]);
    return -1;
}

void roster_free(roster *r)
{
    for (int i = 0; i < r->n; i++) {
        free(r->students[i].id);
        free(r->students[i].name);
        free(r->students[i].email);
    }
    free(r->students);
    r->n = 0;
    r->students = NULL;
}

const roster_student *roster_find(const roster *r, const char *id)
{
    for (int i = 0; id && i < r->n; i++)
        if (strcmp(r->students[i].id, id) == 0)
            return &r->students[i];
    return NULL;
}

static void free_fields(char *f[3], int nf)
{
    for (int i = 0; i < nf; i++)
        free(f[i]);
}

int roster_load(const char *path, roster *out, char *err, size_t n)
{
    char msg[512];
    out->n = 0;
    out->students = NULL;
    FILE *f = fopen(path, "rb");
    if (!f) {
        snprintf(err, n, "%s: cannot open", path);
        return -1;
    }
    csv_reader r = {f, 1, 1};
    char *fld[3] = {0};
    int nf = read_record(&r, fld, msg, sizeof msg);
    /* a UTF-8 byte-order mark before the header is allowed */
    if (nf == 3 && strncmp(fld[0], "\xEF\xBB\xBF", 3) == 0)
        memmove(fld[0], fld[0] + 3, strlen(fld[0] + 3) + 1);
    if (nf != 3 || strcmp(fld[0], "id") != 0 || strcmp(fld[1], "name") != 0 || strcmp(fld[2], "email") != 0) {
        if (nf < 0)
            snprintf(err, n, "%s: %s", path, msg);
        else
            snprintf(err, n, "%s:1: the header must be id,name,email", path);
        if (nf > 0)
            free_fields(fld, nf);
        fclose(f);
        return -1;
    }
    free_fields(fld, nf);
    int cap = 0;
    for (;;) {
        nf = read_record(&r, fld, msg, sizeof msg);
        if (nf == 0)
            break;
        if (nf < 0) {
            snprintf(err, n, "%s: %s", path, msg);
            goto fail;
        }
        if (nf == 1 && fld[0][0] == '\0') { /* a blank line */
            free_fields(fld, nf);
            continue;
        }
        if (nf != 3) {
            snprintf(err, n, "%s:%d: %d fields; a row is id,name,email", path, r.line, nf);
            free_fields(fld, nf);
            goto fail;
        }
        if (!roster_id_ok(fld[0])) {
            snprintf(err, n,
                     "%s:%d: id not usable as a folder name (letters, digits, '.', '_', '-'; not first '.' or '-'; "
                     "at most %d bytes)",
                     path, r.line, ROSTER_ID_MAX);
            free_fields(fld, nf);
            goto fail;
        }
        if (roster_find(out, fld[0])) {
            snprintf(err, n, "%s:%d: id %s given twice", path, r.line, fld[0]);
            free_fields(fld, nf);
            goto fail;
        }
        if (out->n == cap) {
            cap = cap ? 2 * cap : 32;
            roster_student *s = realloc(out->students, (size_t)cap * sizeof *s);
            if (!s) {
                snprintf(err, n, "%s: out of memory", path);
                free_fields(fld, nf);
                goto fail;
            }
            out->students = s;
        }
        out->students[out->n++] = (roster_student){fld[0], fld[1], fld[2]};
    }
    fclose(f);
    if (out->n == 0) {
        snprintf(err, n, "%s: no students after the header", path);
        return -1;
    }
    return 0;
fail:
    fclose(f);
    roster_free(out);
    return -1;
}
