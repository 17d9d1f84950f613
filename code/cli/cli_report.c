#include "cli_report.h"

#include "text_escape.h"
#include "units.h"

#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

typedef enum { CELL_NUM, CELL_INT, CELL_TEXT } cell_kind;

typedef struct {
    cell_kind kind;
    value_unit unit;
    double num;
    long long i;
    char *text;
} cell;

typedef struct {
    int is_section; /* a heading: label only */
    int machine_only; /* tsv and json only: the table shows it as another field's aside */
    char *key;
    char *label;
    char *aside;    /* table only: words after the value ("runs like this one: ...") */
    cell value;
} field;

typedef struct {
    char *key;
    char *label;
    value_unit unit;
    int flags;
} column;

struct report_table {
    char *key;
    char *title;
    column *cols;
    int ncols, capcols;
    cell *cells;
    int ncells, capcells;
};

struct report {
    char *command;
    field *fields;
    int nfields, capfields;
    report_table **tables;
    int ntables, captables;
    char **notes;
    int nnotes, capnotes;
};

/* ------------------------------------------------------------ allocation */

/* The CLI cannot go on without memory; say so rather than crash later. */
static void *xrealloc(void *p, size_t n)
{
    void *q = realloc(p, n ? n : 1);
    if (!q) {
        fputs("napkin: out of memory\n", stderr);
        exit(1);
    }
    return q;
}

static char *xstrdup(const char *s)
{
    size_t n = strlen(s) + 1;
    return memcpy(xrealloc(NULL, n), s, n);
}

#define GROW(arr, n, cap)                                                                                   \
    do {                                                                                                    \
        if ((n) == (cap)) {                                                                                 \
            (cap) = (cap) ? 2 * (cap) : 8;                                                                  \
            (arr) = xrealloc((arr), (size_t)(cap) * sizeof *(arr));                                         \
        }                                                                                                   \
    } while (0)

const char *out_format_choices(void)
{
    return "table, tsv, json";
}

int out_format_parse(const char *s, out_format *out)
{
    static const char *names[] = {"table", "tsv", "json"};
    for (int i = 0; i < 3; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (out_format)i;
            return 0;
        }
    return -1;
}

report *report_new(const char *command)
{
    report *r = xrealloc(NULL, sizeof *r);
    memset(r, 0, sizeof *r);
    r->command = xstrdup(command);
    return r;
}

static void cell_free(cell *c)
{
    free(c->text);
}

void report_free(report *r)
{
    if (!r)
        return;
    for (int i = 0; i < r->nfields; i++) {
        free(r->fields[i].key);
        free(r->fields[i].label);
        free(r->fields[i].aside);
        cell_free(&r->fields[i].value);
    }
    free(r->fields);
    for (int i = 0; i < r->ntables; i++) {
        report_table *t = r->tables[i];
        for (int c = 0; c < t->ncols; c++) {
            free(t->cols[c].key);
            free(t->cols[c].label);
        }
        for (int c = 0; c < t->ncells; c++)
            cell_free(&t->cells[c]);
        free(t->cols);
        free(t->cells);
        free(t->key);
        free(t->title);
        free(t);
    }
    free(r->tables);
    for (int i = 0; i < r->nnotes; i++)
        free(r->notes[i]);
    free(r->notes);
    free(r->command);
    free(r);
}

/* ------------------------------------------------------------ building */

/* Text (a value, a cell, a note, a label or a title, any of which may
 * quote the reader or a file) is kept escaped (text_escape.h): every format
 * prints it as it is kept. */
static char *xescaped(const char *s)
{
    char *e = text_escape_dup(s ? s : "");
    if (!e) {
        fputs("napkin: out of memory\n", stderr);
        exit(1);
    }
    return e;
}

static field *add_field(report *r, const char *key, const char *label)
{
    GROW(r->fields, r->nfields, r->capfields);
    field *f = &r->fields[r->nfields++];
    memset(f, 0, sizeof *f);
    f->key = key ? xstrdup(key) : NULL;
    f->label = xescaped(label);
    return f;
}

void report_section(report *r, const char *title)
{
    add_field(r, NULL, title)->is_section = 1;
}

void report_num(report *r, const char *key, const char *label, value_unit u, double v)
{
    field *f = add_field(r, key, label);
    f->value = (cell){CELL_NUM, u, v + 0.0, 0, NULL}; /* + 0.0: -0 reads as 0 */
}

void report_num_machine(report *r, const char *key, value_unit u, double v)
{
    field *f = add_field(r, key, key);
    f->machine_only = 1;
    f->value = (cell){CELL_NUM, u, v + 0.0, 0, NULL};
}

void report_aside(report *r, const char *text)
{
    for (int i = r->nfields - 1; i >= 0; i--) {
        field *f = &r->fields[i];
        if (f->is_section)
            return;
        if (f->machine_only)
            continue;
        free(f->aside);
        f->aside = xescaped(text);
        return;
    }
}

void report_int(report *r, const char *key, const char *label, long long v)
{
    field *f = add_field(r, key, label);
    f->value = (cell){CELL_INT, U_INT, 0, v, NULL};
}

void report_text(report *r, const char *key, const char *label, const char *s)
{
    field *f = add_field(r, key, label);
    f->value = (cell){CELL_TEXT, U_TEXT, 0, 0, xescaped(s)};
}

void report_note(report *r, const char *fmt, ...)
{
    char buf[1024];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    GROW(r->notes, r->nnotes, r->capnotes);
    r->notes[r->nnotes++] = xescaped(buf);
}

report_table *report_table_add(report *r, const char *key, const char *title)
{
    report_table *t = xrealloc(NULL, sizeof *t);
    memset(t, 0, sizeof *t);
    t->key = xstrdup(key);
    t->title = xescaped(title);
    GROW(r->tables, r->ntables, r->captables);
    r->tables[r->ntables++] = t;
    return t;
}

void report_col(report_table *t, const char *key, const char *label, value_unit u, int flags)
{
    GROW(t->cols, t->ncols, t->capcols);
    t->cols[t->ncols++] = (column){xstrdup(key), xescaped(label), u, flags};
}

static void add_cell(report_table *t, cell c)
{
    if (t->ncols == 0) {
        fputs("napkin: internal error: table cell before its columns\n", stderr);
        exit(1);
    }
    c.unit = t->cols[t->ncells % t->ncols].unit;
    GROW(t->cells, t->ncells, t->capcells);
    t->cells[t->ncells++] = c;
}

void report_cell_num(report_table *t, double v)
{
    add_cell(t, (cell){CELL_NUM, U_REAL, v + 0.0, 0, NULL}); /* + 0.0: -0 reads as 0 */
}

void report_cell_int(report_table *t, long long v)
{
    add_cell(t, (cell){CELL_INT, U_INT, 0, v, NULL});
}

void report_cell_text(report_table *t, const char *s)
{
    add_cell(t, (cell){CELL_TEXT, U_TEXT, 0, 0, xescaped(s)});
}

/* ------------------------------------------------------------ formatting */

static const char *unit_symbol(value_unit u)
{
    switch (u) {
    case U_BYTES: return "B";
    case U_SECONDS: return "s";
    case U_FLOP: return "FLOP";
    case U_FLOPS: return "FLOP/s";
    case U_BANDWIDTH: return "B/s";
    case U_INTENSITY: return "FLOP/B";
    case U_PARAMS: return "params";
    case U_TOKENS: return "tokens";
    case U_TOKENS_PER_S: return "tokens/s";
    case U_TEXT: case U_INT: case U_REAL: return "";
    }
    return "";
}

/* For people: through the library's fmt_* helpers. */
static const char *human(const cell *c, char *buf, size_t n)
{
    if (c->kind == CELL_TEXT)
        return c->text;
    if (c->kind == CELL_INT) {
        snprintf(buf, n, "%lld", c->i);
        return buf;
    }
    double v = c->num;
    if (!isfinite(v)) { /* "none" (a rate a part lacks, no crossing): never inf or nan */
        snprintf(buf, n, "-");
        return buf;
    }
    char num[64];
    switch (c->unit) {
    case U_BYTES: return fmt_bytes(v, buf, n);
    case U_SECONDS: return fmt_seconds(v, buf, n);
    case U_FLOPS: return fmt_flops(v, buf, n);
    case U_BANDWIDTH: return fmt_bandwidth(v, buf, n);
    case U_FLOP: { /* "2.40 TFLOP", "512 FLOP" */
        const char *c = fmt_count(v, num, sizeof num);
        size_t len = strlen(c);
        int prefix = len && c[len - 1] >= 'A' && c[len - 1] <= 'z';
        snprintf(buf, n, "%s%sFLOP", c, prefix ? "" : " ");
        return buf;
    }
    case U_PARAMS: /* the label says parameters */
        return fmt_count(v, buf, n);
    case U_TOKENS:
    case U_TOKENS_PER_S:
        snprintf(buf, n, "%s %s", fmt_count(v, num, sizeof num), unit_symbol(c->unit));
        return buf;
    case U_INTENSITY: snprintf(buf, n, "%.1f FLOP/B", v); return buf;
    case U_REAL: case U_INT: case U_TEXT: snprintf(buf, n, "%.4g", v); return buf;
    }
    return "";
}

/* For machines: raw SI numbers; text without tabs or line breaks. */
static void put_tsv(const cell *c, FILE *out)
{
    if (c->kind == CELL_INT)
        fprintf(out, "%lld", c->i);
    else if (c->kind == CELL_NUM && !isfinite(c->num))
        fputc('-', out); /* none, as in the tables */
    else if (c->kind == CELL_NUM)
        fprintf(out, "%.15g", c->num);
    else
        for (const char *p = c->text; *p; p++)
            fputc((*p == '\t' || *p == '\n' || *p == '\r') ? ' ' : *p, out);
}

static void put_json_string(const char *s, FILE *out)
{
    fputc('"', out);
    for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
        switch (*p) {
        case '"': fputs("\\\"", out); break;
        case '\\': fputs("\\\\", out); break;
        case '\n': fputs("\\n", out); break;
        case '\r': fputs("\\r", out); break;
        case '\t': fputs("\\t", out); break;
        case '\b': fputs("\\b", out); break;
        case '\f': fputs("\\f", out); break;
        default:
            if (*p < 0x20 || *p == 0x7f)
                fprintf(out, "\\u%04x", *p);
            else
                fputc(*p, out);
        }
    }
    fputc('"', out);
}

void report_json_string(const char *s, FILE *out)
{
    put_json_string(s, out);
}

static void put_json(const cell *c, FILE *out)
{
    if (c->kind == CELL_INT)
        fprintf(out, "%lld", c->i);
    else if (c->kind == CELL_NUM) {
        if (isfinite(c->num))
            fprintf(out, "%.15g", c->num);
        else
            fputs("null", out); /* JSON has no inf or nan */
    } else
        put_json_string(c->text, out);
}

/* Display width of UTF-8 text (fmt_seconds writes "µs"). */
static int text_width(const char *s)
{
    int w = 0;
    for (const unsigned char *p = (const unsigned char *)s; *p; p++)
        if ((*p & 0xC0) != 0x80)
            w++;
    return w;
}

static void pad(FILE *out, int n)
{
    for (int i = 0; i < n; i++)
        fputc(' ', out);
}

/* ------------------------------------------------------------ rendering */

static void print_table_fields(const report *r, FILE *out)
{
    int w = 0;
    for (int i = 0; i < r->nfields; i++)
        if (!r->fields[i].is_section && !r->fields[i].machine_only && text_width(r->fields[i].label) > w)
            w = text_width(r->fields[i].label);
    for (int i = 0; i < r->nfields; i++) {
        const field *f = &r->fields[i];
        if (f->is_section) {
            fprintf(out, "%s%s\n", i ? "\n" : "", f->label);
            continue;
        }
        if (f->machine_only)
            continue;
        char buf[128];
        fprintf(out, "  %s", f->label);
        pad(out, w - text_width(f->label));
        fprintf(out, "  %s", human(&f->value, buf, sizeof buf));
        if (f->aside)
            fprintf(out, ", %s", f->aside);
        fputc('\n', out);
    }
}

static void print_table_grid(const report_table *t, FILE *out)
{
    int rows = t->ncols ? t->ncells / t->ncols : 0;
    int *w = xrealloc(NULL, (size_t)t->ncols * sizeof *w);
    char buf[128];
    for (int c = 0; c < t->ncols; c++)
        w[c] = text_width(t->cols[c].label);
    for (int i = 0; i < rows * t->ncols; i++) {
        int c = i % t->ncols;
        int tw = text_width(human(&t->cells[i], buf, sizeof buf));
        if (!(t->cols[c].flags & COL_NOTE) && tw > w[c])
            w[c] = tw;
    }
    fprintf(out, "%s\n", t->title);
    for (int pass = 0; pass < 2; pass++) { /* the header, then a rule */
        fputs(" ", out);
        for (int c = 0; c < t->ncols; c++) {
            if (t->cols[c].flags & COL_NOTE)
                continue;
            fputs(" ", out);
            if (pass == 0) {
                int right = t->cols[c].unit != U_TEXT;
                if (right)
                    pad(out, w[c] - text_width(t->cols[c].label));
                fputs(t->cols[c].label, out);
                if (!right && c + 1 < t->ncols)
                    pad(out, w[c] - text_width(t->cols[c].label));
            } else
                for (int k = 0; k < w[c]; k++)
                    fputc('-', out);
        }
        fputc('\n', out);
    }
    for (int row = 0; row < rows; row++) {
        fputs(" ", out);
        for (int c = 0; c < t->ncols; c++) {
            if (t->cols[c].flags & COL_NOTE)
                continue;
            const cell *x = &t->cells[row * t->ncols + c];
            const char *s = human(x, buf, sizeof buf);
            fputs(" ", out);
            if (x->kind != CELL_TEXT)
                pad(out, w[c] - text_width(s));
            fputs(s, out);
            if (x->kind == CELL_TEXT && c + 1 < t->ncols)
                pad(out, w[c] - text_width(s));
        }
        fputc('\n', out);
    }
    /* Note columns: "key  text" under the table, keyed by the first column. */
    for (int c = 0; c < t->ncols; c++) {
        if (!(t->cols[c].flags & COL_NOTE))
            continue;
        fprintf(out, "%s:\n", t->cols[c].label);
        for (int row = 0; row < rows; row++) {
            const cell *k = &t->cells[row * t->ncols];
            const cell *x = &t->cells[row * t->ncols + c];
            char kb[128];
            const char *ks = human(k, kb, sizeof kb);
            fprintf(out, "  %s", ks);
            pad(out, w[0] - text_width(ks));
            fprintf(out, "  %s\n", human(x, buf, sizeof buf));
        }
    }
    free(w);
}

static void print_as_table(const report *r, FILE *out)
{
    int blocks = 0;
    if (r->nfields) {
        print_table_fields(r, out);
        blocks++;
    }
    for (int i = 0; i < r->ntables; i++) {
        if (blocks++)
            fputc('\n', out);
        print_table_grid(r->tables[i], out);
    }
    if (r->nnotes && blocks)
        fputc('\n', out);
    for (int i = 0; i < r->nnotes; i++)
        fprintf(out, "%s\n", r->notes[i]);
}

static void print_as_tsv(const report *r, FILE *out)
{
    int blocks = 0;
    for (int i = 0; i < r->nnotes; i++) {
        fputs("# ", out);
        put_tsv(&(cell){CELL_TEXT, U_TEXT, 0, 0, r->notes[i]}, out);
        fputc('\n', out);
    }
    int nvalues = 0;
    for (int i = 0; i < r->nfields; i++)
        nvalues += !r->fields[i].is_section;
    if (nvalues) {
        fputs("name\tvalue\tunit\n", out);
        for (int i = 0; i < r->nfields; i++) {
            const field *f = &r->fields[i];
            if (f->is_section)
                continue;
            fprintf(out, "%s\t", f->key);
            put_tsv(&f->value, out);
            fprintf(out, "\t%s\n", unit_symbol(f->value.unit));
        }
        blocks++;
    }
    for (int i = 0; i < r->ntables; i++) {
        const report_table *t = r->tables[i];
        if (blocks++)
            fputc('\n', out);
        for (int c = 0; c < t->ncols; c++)
            fprintf(out, "%s%s", c ? "\t" : "", t->cols[c].key);
        fputc('\n', out);
        int rows = t->ncols ? t->ncells / t->ncols : 0;
        for (int row = 0; row < rows; row++) {
            for (int c = 0; c < t->ncols; c++) {
                if (c)
                    fputc('\t', out);
                put_tsv(&t->cells[row * t->ncols + c], out);
            }
            fputc('\n', out);
        }
    }
}

static void print_as_json(const report *r, FILE *out)
{
    fputs("{\"command\": ", out);
    put_json_string(r->command, out);
    fputs(", \"values\": {", out);
    int first = 1;
    for (int i = 0; i < r->nfields; i++) {
        const field *f = &r->fields[i];
        if (f->is_section)
            continue;
        fputs(first ? "" : ", ", out);
        first = 0;
        put_json_string(f->key, out);
        fputs(": ", out);
        put_json(&f->value, out);
    }
    fputs("}, \"units\": {", out);
    first = 1;
    for (int i = 0; i < r->nfields; i++) {
        const field *f = &r->fields[i];
        if (f->is_section || !*unit_symbol(f->value.unit))
            continue;
        fputs(first ? "" : ", ", out);
        first = 0;
        put_json_string(f->key, out);
        fputs(": ", out);
        put_json_string(unit_symbol(f->value.unit), out);
    }
    fputs("}", out);
    for (int i = 0; i < r->ntables; i++) {
        const report_table *t = r->tables[i];
        fputs(", ", out);
        put_json_string(t->key, out);
        fputs(": [", out);
        int rows = t->ncols ? t->ncells / t->ncols : 0;
        for (int row = 0; row < rows; row++) {
            fputs(row ? ",\n  {" : "\n  {", out);
            for (int c = 0; c < t->ncols; c++) {
                fputs(c ? ", " : "", out);
                put_json_string(t->cols[c].key, out);
                fputs(": ", out);
                put_json(&t->cells[row * t->ncols + c], out);
            }
            fputs("}", out);
        }
        fputs("]", out);
    }
    fputs(", \"notes\": [", out);
    for (int i = 0; i < r->nnotes; i++) {
        fputs(i ? ", " : "", out);
        put_json_string(r->notes[i], out);
    }
    fputs("]}\n", out);
}

int report_print(const report *r, out_format f, FILE *out)
{
    for (int i = 0; i < r->ntables; i++)
        if (r->tables[i]->ncols && r->tables[i]->ncells % r->tables[i]->ncols) {
            fprintf(stderr, "napkin: internal error: table '%s' has a partial row\n", r->tables[i]->key);
            return 1;
        }
    switch (f) {
    case FMT_TABLE: print_as_table(r, out); break;
    case FMT_TSV: print_as_tsv(r, out); break;
    case FMT_JSON: print_as_json(r, out); break;
    }
    return (fflush(out) != 0 || ferror(out)) ? 1 : 0;
}
