/* The course program: an instructor's tools over a roster and the exercise
 * variants (instructor-only: it computes answer keys, so the student kit
 * leaves code/course/ out).
 *
 *   course seeds  --roster R --chapters 01,06 [--salt S]
 *       id,name,chapter,seed for every student and chapter (CSV on stdout)
 *   course keys   --roster R --chapters 01,06 [--salt S] --out DIR
 *       DIR/<id>/chapter-NN.md: each student's answer key per chapter
 *   course key    --chapter N --seed S
 *       one variant's answer key (Markdown on stdout)
 *   course moodle --chapter N --seeds 1-30 [--out FILE]
 *       Moodle XML: a numerical question per part per seed
 *
 * A seed comes from course_seed (course_seed.h), the same derivation the
 * grader checks a student's file against. */
#include "course_key.h"
#include "course_roster.h"
#include "course_seed.h"
#include "moodle.h"
#include "practice.h"
#include "text_escape.h"
#include "text_formats.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

enum { MAX_CHAPTERS = 13, MAX_SEEDS = 10000 };

static int usage(const char *why)
{
    if (why)
        fprintf(stderr, "course: %s\n", why);
    fputs("usage: course seeds  --roster R --chapters 01,06 [--salt S]\n"
          "       course keys   --roster R --chapters 01,06 [--salt S] --out DIR\n"
          "       course key    --chapter N --seed S\n"
          "       course moodle --chapter N --seeds 1-30 [--out FILE]\n",
          stderr);
    return 2;
}

/* A chapter with variants: "1", "01", "13". */
static int parse_chapter(const char *s, int *out)
{
    char *end;
    errno = 0;
    long v = s && *s >= '0' && *s <= '9' ? strtol(s, &end, 10) : -1;
    if (v < 1 || v > 99 || errno || *end || end - s > 2) {
        fprintf(stderr, "course: chapter '%s': give a number, e.g. 01 or 6; chapters with variants: %s\n", s ? s : "",
                practice_chapters());
        return -1;
    }
    practice_set probe;
    if (practice_build((int)v, 0, &probe) != 0) {
        fprintf(stderr, "course: chapter %ld has no variants; chapters with variants: %s\n", v, practice_chapters());
        return -1;
    }
    *out = (int)v;
    return 0;
}

/* "01,06" into chapters[], each once, in the order given. */
static int parse_chapters(const char *s, int *chapters, int *n)
{
    char buf[256];
    if (!s || strlen(s) >= sizeof buf)
        return usage("--chapters: give a list such as 01,06");
    strcpy(buf, s);
    *n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        int c;
        if (parse_chapter(t, &c) != 0)
            return 2;
        for (int i = 0; i < *n; i++)
            if (chapters[i] == c) {
                fprintf(stderr, "course: --chapters: chapter %d given twice\n", c);
                return 2;
            }
        if (*n == MAX_CHAPTERS)
            return usage("--chapters: too many chapters");
        chapters[(*n)++] = c;
    }
    return *n ? 0 : usage("--chapters: give a list such as 01,06");
}

/* "1-30", "4711", "1-5,9": the seeds in order, each at most once. */
static int parse_seeds(const char *s, uint64_t *seeds, int *n)
{
    char buf[256];
    if (!s || !*s || strlen(s) >= sizeof buf)
        return usage("--seeds: give seeds such as 1-30 or 4711,4712");
    strcpy(buf, s);
    *n = 0;
    for (char *save = NULL, *t = strtok_r(buf, ",", &save); t; t = strtok_r(NULL, ",", &save)) {
        char *dash = strchr(t, '-');
        uint64_t a, b;
        if (dash)
            *dash = '\0';
        if (practice_parse_seed(t, &a) != 0 || !*t || (dash && (practice_parse_seed(dash + 1, &b) != 0 || !dash[1]))) {
            fprintf(stderr, "course: --seeds %s: each seed a whole number from 0 to %llu, a range as 1-30\n", s,
                    PRACTICE_MAX_SEED);
            return 2;
        }
        if (!dash)
            b = a;
        if (b < a || b - a >= MAX_SEEDS || *n + (int)(b - a + 1) > MAX_SEEDS) {
            fprintf(stderr, "course: --seeds %s: a range runs low to high, at most %d seeds in all\n", s, MAX_SEEDS);
            return 2;
        }
        for (uint64_t x = a; x <= b; x++) {
            for (int i = 0; i < *n; i++)
                if (seeds[i] == x) {
                    fprintf(stderr, "course: --seeds %s: seed %llu given twice\n", s, (unsigned long long)x);
                    return 2;
                }
            seeds[(*n)++] = x;
        }
    }
    return 0;
}

typedef struct {
    const char *roster, *chapters, *salt, *out, *chapter, *seed, *seeds;
} flags;

static int parse_flags(int argc, char **argv, flags *f)
{
    static const struct {
        const char *name;
        size_t offset;
    } known[] = {{"--roster", offsetof(flags, roster)},   {"--chapters", offsetof(flags, chapters)},
                 {"--salt", offsetof(flags, salt)},       {"--out", offsetof(flags, out)},
                 {"--chapter", offsetof(flags, chapter)}, {"--seed", offsetof(flags, seed)},
                 {"--seeds", offsetof(flags, seeds)}};
    memset(f, 0, sizeof *f);
    for (int i = 2; i < argc; i++) {
        size_t k = 0;
        while (k < sizeof known / sizeof known[0] && strcmp(argv[i], known[k].name) != 0)
            k++;
        if (k == sizeof known / sizeof known[0]) {
            fprintf(stderr, "course: unknown flag '%s'\n", argv[i]);
            return usage(NULL);
        }
        if (i + 1 >= argc) {
            fprintf(stderr, "course: %s needs a value\n", argv[i]);
            return 2;
        }
        *(const char **)((char *)f + known[k].offset) = argv[++i];
    }
    return 0;
}

static int load_roster(const flags *f, roster *r)
{
    char err[512];
    if (!f->roster)
        return usage("--roster: give the roster file (id,name,email)");
    if (roster_load(f->roster, r, err, sizeof err) != 0) {
        fputs("course: roster ", stderr);
        text_escape_put(err, stderr); /* the path is the user's */
        fputc('\n', stderr);
        return 2;
    }
    return 0;
}

static int cmd_seeds(const flags *f)
{
    int chapters[MAX_CHAPTERS], nc, rc;
    roster r;
    if ((rc = parse_chapters(f->chapters, chapters, &nc)) != 0 || (rc = load_roster(f, &r)) != 0)
        return rc;
    puts("id,name,chapter,seed");
    for (int i = 0; i < r.n; i++)
        for (int c = 0; c < nc; c++) {
            text_csv(stdout, r.students[i].id);
            putchar(',');
            text_csv(stdout, r.students[i].name);
            printf(",%02d,%llu\n", chapters[c], (unsigned long long)course_seed(f->salt, r.students[i].id, chapters[c]));
        }
    roster_free(&r);
    return 0;
}

static int make_dir(const char *path)
{
    if (mkdir(path, 0777) != 0 && errno != EEXIST) {
        fprintf(stderr, "course: cannot make %s: %s\n", path, strerror(errno));
        return -1;
    }
    return 0;
}

static int cmd_keys(const flags *f)
{
    int chapters[MAX_CHAPTERS], nc, rc;
    roster r;
    if (!f->out)
        return usage("keys: give --out DIR");
    if ((rc = parse_chapters(f->chapters, chapters, &nc)) != 0 || (rc = load_roster(f, &r)) != 0)
        return rc;
    rc = make_dir(f->out) == 0 ? 0 : 1;
    for (int i = 0; rc == 0 && i < r.n; i++) {
        char dir[4096], path[4200];
        /* the id is a safe folder name (course_roster.h) */
        snprintf(dir, sizeof dir, "%s/%s", f->out, r.students[i].id);
        if (make_dir(dir) != 0) {
            rc = 1;
            break;
        }
        for (int c = 0; c < nc; c++) {
            practice_set s;
            uint64_t seed = course_seed(f->salt, r.students[i].id, chapters[c]);
            snprintf(path, sizeof path, "%s/chapter-%02d.md", dir, chapters[c]);
            FILE *o = practice_build(chapters[c], seed, &s) == 0 ? fopen(path, "w") : NULL;
            if (!o) {
                fprintf(stderr, "course: cannot write %s\n", path);
                rc = 1;
                break;
            }
            course_key_write(o, &s, r.students[i].id, r.students[i].name);
            if (fclose(o) != 0) {
                fprintf(stderr, "course: cannot write %s\n", path);
                rc = 1;
            }
        }
    }
    if (rc == 0)
        fprintf(stderr, "course: %d keys in %s/<id>/chapter-NN.md\n", r.n * nc, f->out);
    roster_free(&r);
    return rc;
}

static int cmd_key(const flags *f)
{
    int chapter;
    uint64_t seed;
    if (!f->chapter || !f->seed)
        return usage("key: give --chapter and --seed");
    if (parse_chapter(f->chapter, &chapter) != 0)
        return 2;
    if (practice_parse_seed(f->seed, &seed) != 0 || !*f->seed) {
        fprintf(stderr, "course: --seed %s: give a whole number from 0 to %llu\n", f->seed, PRACTICE_MAX_SEED);
        return 2;
    }
    practice_set s;
    practice_build(chapter, seed, &s);
    course_key_write(stdout, &s, NULL, NULL);
    return 0;
}

static int cmd_moodle(const flags *f)
{
    int chapter, n, rc;
    static uint64_t seeds[MAX_SEEDS];
    if (!f->chapter || !f->seeds)
        return usage("moodle: give --chapter and --seeds");
    if (parse_chapter(f->chapter, &chapter) != 0)
        return 2;
    if ((rc = parse_seeds(f->seeds, seeds, &n)) != 0)
        return rc;
    FILE *o = f->out ? fopen(f->out, "w") : stdout;
    if (!o) {
        fprintf(stderr, "course: cannot write %s\n", f->out);
        return 1;
    }
    int questions = 0;
    moodle_begin(o);
    for (int i = 0; i < n; i++) {
        practice_set s;
        practice_build(chapter, seeds[i], &s);
        moodle_variant(o, &s);
        questions += s.n_parts;
    }
    moodle_end(o);
    if (f->out) {
        if (fclose(o) != 0) {
            fprintf(stderr, "course: cannot write %s\n", f->out);
            return 1;
        }
        fprintf(stderr, "course: %d questions (%d seeds) in %s\n", questions, n, f->out);
    }
    return 0;
}

int main(int argc, char **argv)
{
    flags f;
    if (argc < 2)
        return usage(NULL);
    int rc = parse_flags(argc, argv, &f);
    if (rc != 0)
        return rc;
    if (strcmp(argv[1], "seeds") == 0)
        return cmd_seeds(&f);
    if (strcmp(argv[1], "keys") == 0)
        return cmd_keys(&f);
    if (strcmp(argv[1], "key") == 0)
        return cmd_key(&f);
    if (strcmp(argv[1], "moodle") == 0)
        return cmd_moodle(&f);
    fprintf(stderr, "course: unknown command '%s'\n", argv[1]);
    return usage(NULL);
}
