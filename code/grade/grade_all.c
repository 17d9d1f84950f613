/* Grading a directory into a gradebook; see grade_all.h. */
#include "grade_all.h"

#include "course_roster.h"
#include "course_seed.h"
#include "grade_parts.h"
#include "grade_report.h"
#include "text_escape.h"
#include "text_formats.h"

#include <dirent.h>
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

/* One graded (or expected and missing) chapter of one student. */
typedef struct {
    char id[80];
    const char *name; /* the roster's, or the file's "student" (owned by its document) */
    char *name_copy;
    int chapter;
    unsigned long long seed;
    int graded;
    int n_ex;
    int ex[PRACTICE_MAX_PARTS];
    double ex_score[PRACTICE_MAX_PARTS];
    double total, max;
    char file[4096]; /* the file graded */
} book_row;

typedef struct {
    book_row *rows;
    int n, cap;
    FILE *summary;
    int refused;
} walk;

static void say(walk *w, const char *file, const char *fmt, ...)
{
    va_list ap;
    char buf[512];
    va_start(ap, fmt);
    vsnprintf(buf, sizeof buf, fmt, ap);
    va_end(ap);
    FILE *outs[2] = {w->summary, stdout};
    for (int i = 0; i < 2; i++) {
        if (!outs[i])
            continue;
        if (file) {
            fputs("  \"", outs[i]);
            text_escape_put(file, outs[i]);
            fputs("\": ", outs[i]);
        }
        text_escape_put(buf, outs[i]);
        fputc('\n', outs[i]);
    }
}

static int make_dir(const char *path)
{
    return mkdir(path, 0777) == 0 || errno == EEXIST ? 0 : -1;
}

/* mkdir -p for the folders under out this run writes. */
static int make_dirs(const char *a, const char *b, const char *c)
{
    char p[4096];
    snprintf(p, sizeof p, "%s", a);
    if (make_dir(p))
        return -1;
    if (b) {
        snprintf(p, sizeof p, "%s/%s", a, b);
        if (make_dir(p))
            return -1;
    }
    if (c) {
        snprintf(p, sizeof p, "%s/%s/%s", a, b, c);
        if (make_dir(p))
            return -1;
    }
    return 0;
}

static int by_name(const void *a, const void *b)
{
    return strcmp(*(char *const *)a, *(char *const *)b);
}

static book_row *new_row(walk *w)
{
    if (w->n == w->cap)
        w->rows = realloc(w->rows, (size_t)(w->cap = w->cap ? 2 * w->cap : 64) * sizeof *w->rows);
    book_row *r = &w->rows[w->n++];
    memset(r, 0, sizeof *r);
    return r;
}

static book_row *row_of(walk *w, const char *id, int chapter)
{
    for (int i = 0; i < w->n; i++)
        if (w->rows[i].chapter == chapter && strcmp(w->rows[i].id, id) == 0)
            return &w->rows[i];
    return NULL;
}

/* A folder name for a file without a roster: its stem, each other byte '_'. */
static void id_from_file(const char *name, char *id, size_t n)
{
    size_t k = 0;
    for (const char *p = name; *p && k + 1 < n && strcmp(p, ".json") != 0; p++)
        id[k++] = (strchr("._-", *p) || (*p >= '0' && *p <= '9') || (*p >= 'A' && *p <= 'Z') ||
                   (*p >= 'a' && *p <= 'z'))
                      ? *p
                      : '_';
    id[k] = '\0';
    if (k == 0 || id[0] == '.')
        id[0] = '_';
    if (k == 0)
        id[1] = '\0';
}

static void fill_row(book_row *r, const graded_set *g)
{
    const practice_set *s = &g->set;
    r->n_ex = 0;
    for (int i = 0; i < s->n_parts; i++) {
        if (r->n_ex == 0 || r->ex[r->n_ex - 1] != s->parts[i].exercise) {
            r->ex[r->n_ex] = s->parts[i].exercise;
            r->ex_score[r->n_ex++] = 0;
        }
        r->ex_score[r->n_ex - 1] += g->g[i].points;
    }
    r->total = g->score;
    r->max = g->max;
}

static void grade_file(walk *w, const grade_all_opts *o, const roster *ro, const char *name)
{
    char path[4096];
    if ((size_t)snprintf(path, sizeof path, "%s/%s", o->dir, name) >= sizeof path) {
        say(w, name, "not graded: the path is too long"), w->refused++;
        return;
    }
    struct stat st;
    if (lstat(path, &st) != 0 || !S_ISREG(st.st_mode)) {
        say(w, name, "not graded: not a regular file (a folder, a link or a device)"), w->refused++;
        return;
    }
    size_t len = strlen(name);
    if (len < 5 || strcmp(name + len - 5, ".json") != 0) {
        say(w, name, "not graded: not a .json file"), w->refused++;
        return;
    }
    json_error_t jerr;
    json_t *doc = json_load_file(path, JSON_REJECT_DUPLICATES, &jerr);
    if (!doc) {
        say(w, name, "not graded: not JSON (line %d: %s)", jerr.line, jerr.text), w->refused++;
        return;
    }
    json_t *c = json_object_get(doc, "chapter"), *sd = json_object_get(doc, "seed"),
           *st_ = json_object_get(doc, "student"), *answers = json_object_get(doc, "answers");
    const char *why = NULL;
    if (!json_is_object(doc) || !json_is_object(answers))
        why = "not graded: no \"answers\" object ({\"chapter\", \"seed\", \"student\", \"answers\": {...}})";
    else if (!json_is_integer(c) || json_integer_value(c) < 1 || json_integer_value(c) > 99)
        why = "not graded: no whole \"chapter\"";
    else if (!json_is_integer(sd) || json_integer_value(sd) < 0 ||
             json_integer_value(sd) > (json_int_t)PRACTICE_MAX_SEED)
        why = "not graded: no \"seed\" (0 to 2147483647): the page's export writes it; a file without one is not the "
              "printed book's";
    else if (ro && !json_is_string(st_))
        why = "not graded: no \"student\" (the roster id)";
    else if (ro && !roster_find(ro, json_string_value(st_)))
        why = "not graded: its \"student\" is not a roster id";
    if (why) {
        say(w, name, "%s", why), w->refused++;
        json_decref(doc);
        return;
    }
    int chapter = (int)json_integer_value(c);
    unsigned long long file_seed = (unsigned long long)json_integer_value(sd), seed = file_seed;
    char id[80], note[256] = "";
    const char *student = json_is_string(st_) ? json_string_value(st_) : NULL;
    if (ro) {
        const roster_student *rs = roster_find(ro, student);
        snprintf(id, sizeof id, "%s", rs->id);
        student = rs->name;
        seed = course_seed(o->salt, id, chapter);
        if (file_seed != seed)
            snprintf(note, sizeof note, "answered seed %llu, not their own %llu: graded against their own", file_seed,
                     seed);
    } else
        id_from_file(name, id, sizeof id);
    book_row *dup = row_of(w, id, chapter);
    if (dup) {
        say(w, name, "not graded: a second file for %s chapter %d (the first graded)", id, chapter), w->refused++;
        json_decref(doc);
        return;
    }
    static graded_set g; /* large: kept off the stack */
    if (grade_answers(&g, chapter, seed, answers, o->policy) != 0) {
        say(w, name, "not graded: chapter %d has no exercise variants (those with: %s)", chapter,
            practice_chapters());
        w->refused++;
        json_decref(doc);
        return;
    }
    if (note[0])
        say(w, name, "%s", note);
    for (int k = 0; k < g.n_unknown && k < PRACTICE_MAX_PARTS; k++)
        say(w, name, "unknown part \"%s\": not graded (the file's other answers were)", g.unknown[k]);
    if (g.n_unknown > PRACTICE_MAX_PARTS)
        say(w, name, "and %d more unknown parts", g.n_unknown - PRACTICE_MAX_PARTS);
    char dir[4096], out[4200];
    snprintf(dir, sizeof dir, "%s/students/%s", o->out, id);
    report_who who = {student, id, note[0] ? note : NULL};
    if (make_dirs(o->out, "students", id) != 0) {
        say(w, name, "not graded: cannot make %s", dir), w->refused++;
        json_decref(doc);
        return;
    }
    snprintf(out, sizeof out, "%s/chapter-%02d.junit.xml", dir, chapter);
    int bad = report_junit(out, &g, &who);
    snprintf(out, sizeof out, "%s/chapter-%02d.report.json", dir, chapter);
    bad |= report_json_file(out, &g, &who);
    book_row *r = new_row(w);
    snprintf(r->id, sizeof r->id, "%s", id);
    r->name_copy = student ? strdup(student) : NULL;
    r->name = r->name_copy;
    r->chapter = chapter;
    r->seed = seed;
    r->graded = 1;
    snprintf(r->file, sizeof r->file, "%s", name);
    fill_row(r, &g);
    say(w, name, "graded: %s chapter %d, %g/%g%s", id, chapter, g.score, g.max, bad ? " (a report could not be written)" : "");
    json_decref(doc);
}

static int by_id_chapter(const void *a, const void *b)
{
    const book_row *x = a, *y = b;
    int c = strcmp(x->id, y->id);
    return c ? c : x->chapter - y->chapter;
}

static int write_gradebook(const walk *w, const char *out)
{
    /* the columns: every exercise of every chapter graded, in order */
    int cols[256][2], n_cols = 0;
    for (int i = 0; i < w->n; i++)
        for (int e = 0; e < w->rows[i].n_ex; e++) {
            int have = 0;
            for (int k = 0; k < n_cols; k++)
                have |= cols[k][0] == w->rows[i].chapter && cols[k][1] == w->rows[i].ex[e];
            if (!have && n_cols < 256)
                cols[n_cols][0] = w->rows[i].chapter, cols[n_cols++][1] = w->rows[i].ex[e];
        }
    for (int i = 1; i < n_cols; i++) /* insertion sort by chapter, exercise */
        for (int k = i; k > 0 && (cols[k - 1][0] * 1000 + cols[k - 1][1] > cols[k][0] * 1000 + cols[k][1]); k--) {
            int t0 = cols[k][0], t1 = cols[k][1];
            cols[k][0] = cols[k - 1][0], cols[k][1] = cols[k - 1][1];
            cols[k - 1][0] = t0, cols[k - 1][1] = t1;
        }
    char path[4096];
    snprintf(path, sizeof path, "%s/gradebook.csv", out);
    FILE *f = fopen(path, "w");
    if (!f)
        return -1;
    fputs("id,name,chapter,seed", f);
    for (int k = 0; k < n_cols; k++)
        fprintf(f, ",%d.%d", cols[k][0], cols[k][1]);
    fputs(",total,max\r\n", f);
    for (int i = 0; i < w->n; i++) {
        const book_row *r = &w->rows[i];
        text_csv(f, r->id);
        fputc(',', f);
        text_csv(f, r->name ? r->name : "");
        fprintf(f, ",%d,%llu", r->chapter, r->seed);
        for (int k = 0; k < n_cols; k++) {
            fputc(',', f);
            for (int e = 0; e < r->n_ex; e++)
                if (cols[k][0] == r->chapter && cols[k][1] == r->ex[e])
                    fprintf(f, "%.6g", r->graded ? r->ex_score[e] : 0.0);
        }
        fprintf(f, ",%.6g,%.6g\r\n", r->total, r->max);
    }
    return fclose(f);
}

/* gradescope/<id>/results.json: each student's parts of every chapter graded. */
static int write_gradescope(const walk *w, const grade_all_opts *o)
{
    int rc = 0;
    for (int i = 0; i < w->n; i++) {
        if (i > 0 && strcmp(w->rows[i - 1].id, w->rows[i].id) == 0)
            continue; /* rows are sorted: one file per student */
        json_t *tests = json_array();
        double score = 0;
        char output[1024] = "";
        size_t k = 0;
        for (int j = i; j < w->n && strcmp(w->rows[j].id, w->rows[i].id) == 0; j++) {
            const book_row *r = &w->rows[j];
            json_t *answers = json_object();
            static graded_set g;
            if (r->graded) { /* the parts again, from the student's report */
                char p[4300];
                snprintf(p, sizeof p, "%s/students/%s/chapter-%02d.report.json", o->out, r->id, r->chapter);
                json_t *rep = json_load_file(p, 0, NULL);
                json_t *ex;
                size_t a, b;
                json_array_foreach(json_object_get(rep, "exercises"), a, ex) {
                    json_t *part;
                    json_array_foreach(json_object_get(ex, "parts"), b, part) {
                        json_t *pts = json_object_get(part, "points"), *mx = json_object_get(part, "max");
                        char out[320];
                        snprintf(out, sizeof out, "%s: %s", json_string_value(json_object_get(part, "verdict")),
                                 json_string_value(json_object_get(part, "hint")));
                        char name_[160];
                        snprintf(name_, sizeof name_, "%s %s", json_string_value(json_object_get(part, "id")),
                                 json_string_value(json_object_get(part, "what")));
                        json_array_append_new(
                            tests, json_pack("{s:s, s:s, s:O, s:O, s:s, s:s}", "name", name_, "number",
                                             json_string_value(json_object_get(part, "id")), "score", pts,
                                             "max_score", mx, "output", out, "status",
                                             json_number_value(pts) >= json_number_value(mx) ? "passed" : "failed"));
                    }
                }
                json_decref(rep);
            } else if (grade_answers(&g, r->chapter, r->seed, answers, o->policy) == 0)
                report_gradescope_tests(tests, &g);
            json_decref(answers);
            score += r->total;
            if (k < sizeof output)
                k += (size_t)snprintf(output + k, sizeof output - k, "chapter %d, seed %llu: %g/%g%s\n", r->chapter,
                                      r->seed, r->total, r->max, r->graded ? "" : " (no answers received)");
        }
        char dir[4096], path[4200];
        snprintf(dir, sizeof dir, "%s/gradescope/%s", o->out, w->rows[i].id);
        snprintf(path, sizeof path, "%s/results.json", dir);
        json_t *root = json_pack("{s:o, s:s, s:o}", "score", json_points(score), "output", output, "tests", tests);
        if (make_dirs(o->out, "gradescope", w->rows[i].id) != 0 ||
            json_dump_file(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER) != 0)
            rc = -1;
        json_decref(root);
    }
    return rc;
}

int grade_all(const grade_all_opts *o)
{
    char err[512];
    roster ro, *rp = NULL;
    if (o->roster) {
        if (roster_load(o->roster, &ro, err, sizeof err) != 0) {
            fputs("grade: --roster ", stderr);
            text_escape_put(err, stderr);
            fputc('\n', stderr);
            return 2;
        }
        rp = &ro;
    }
    DIR *d = opendir(o->dir);
    if (!d) {
        fputs("grade: --all ", stderr);
        text_escape_put(o->dir, stderr);
        fprintf(stderr, ": %s\n", strerror(errno));
        if (rp)
            roster_free(rp);
        return 2;
    }
    char **names = NULL;
    int n = 0, cap = 0;
    struct dirent *e;
    while ((e = readdir(d))) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        if (n == cap)
            names = realloc(names, (size_t)(cap = cap ? 2 * cap : 64) * sizeof *names);
        names[n++] = strdup(e->d_name);
    }
    closedir(d);
    qsort(names, (size_t)n, sizeof *names, by_name);
    char path[4096];
    snprintf(path, sizeof path, "%s/summary.txt", o->out);
    walk w = {0};
    if (make_dir(o->out) != 0 || !(w.summary = fopen(path, "w"))) {
        fputs("grade: --out ", stderr);
        text_escape_put(o->out, stderr);
        fputs(": cannot write there\n", stderr);
        for (int i = 0; i < n; i++)
            free(names[i]);
        free(names);
        if (rp)
            roster_free(rp);
        return 2;
    }
    say(&w, NULL, "grading %d entries", n);
    for (int i = 0; i < n; i++)
        grade_file(&w, o, rp, names[i]);
    int graded = w.n;
    /* a roster student without a file for a chapter someone answered: a row of 0 */
    for (int i = 0; rp && i < graded; i++) {
        int ch = w.rows[i].chapter;
        for (int s = 0; s < rp->n; s++) {
            if (row_of(&w, rp->students[s].id, ch))
                continue;
            static graded_set g;
            json_t *none = json_object();
            unsigned long long seed = course_seed(o->salt, rp->students[s].id, ch);
            grade_answers(&g, ch, seed, none, o->policy);
            json_decref(none);
            book_row *r = new_row(&w);
            snprintf(r->id, sizeof r->id, "%s", rp->students[s].id);
            r->name = rp->students[s].name;
            r->chapter = ch, r->seed = seed;
            fill_row(r, &g);
            r->total = 0;
            say(&w, NULL, "no answers from %s for chapter %d: 0 in the gradebook", r->id, ch);
        }
    }
    qsort(w.rows, (size_t)w.n, sizeof *w.rows, by_id_chapter);
    int bad = write_gradebook(&w, o->out) != 0;
    bad |= write_gradescope(&w, o) != 0;
    say(&w, NULL, "graded %d file%s; %d not graded (named above)%s", graded, graded == 1 ? "" : "s", w.refused,
        bad ? "; a gradebook or results file could not be written" : "");
    fclose(w.summary);
    for (int i = 0; i < w.n; i++)
        free(w.rows[i].name_copy);
    free(w.rows);
    for (int i = 0; i < n; i++)
        free(names[i]);
    free(names);
    if (rp)
        roster_free(rp);
    return bad ? 2 : 0;
}
