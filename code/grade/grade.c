/* grade: scores a student's answers to one chapter's exercise variant.
 *
 *   grade --chapter 12 --seed 4711 --answers answers.json
 *         [--junit out.xml] [--json out.json] [--student NAME]
 *   grade --chapter 12 --seed 4711 --key      (the variant's answer key)
 *   grade --batch < requests.jsonl           (many of either, one process)
 *
 * answers.json is {"chapter": 12, "seed": 4711, "student": "...",
 * "answers": {"12.1(a)": 80, "12.1(c)": "57.0", ...}}, as the page exports
 * it; chapter and seed in the file must agree with the flags when both are
 * given.  Every part scores 1 when judged right, 0 otherwise; the report
 * names the verdict and the hint (never the expected value).  The JUnit XML
 * has one testsuite per exercise and one testcase per part, so CI systems
 * and learning platforms read the score per part.
 *
 * --batch reads one JSON object per line on stdin and writes one line per
 * request on stdout: an answers object (as above) gives the report --json
 * writes; {"chapter": 12, "seed": 4711, "key": true} gives the key, as
 * {"chapter", "seed", "parts": {"12.1(a)": expected, ...}}; a bad line gives
 * {"error": "..."}.  It serves the test tools, which check thousands of
 * variants and would otherwise start the program once for each.
 *
 * Exit status: 0 graded (whatever the score), 2 a bad flag, value or file. */
#include "judge.h"
#include "practice.h"

#include <errno.h>
#include <jansson.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(const char *why)
{
    fprintf(stderr, "grade: %s\n", why);
    fprintf(stderr, "usage: grade --chapter N --seed S --answers FILE [--junit FILE] [--json FILE] [--student NAME]\n"
                    "       grade --chapter N --seed S --key\n"
                    "       grade --batch   (JSON lines on stdin: answers, or {chapter, seed, key: true})\n"
                    "chapters with variants: %s\n", practice_chapters());
    return 2;
}

static int parse_long(const char *s, long lo, long hi, long *out)
{
    char *end;
    errno = 0;
    long v = strtol(s, &end, 10);
    if (errno || end == s || *end || v < lo || v > hi)
        return -1;
    *out = v;
    return 0;
}

/* An answer as a number: a JSON number, or a string holding one as a
 * person types it ("57.0", "1,392", "80%"); NAN for anything else. */
static double answer_number(const practice_part *p, json_t *v)
{
    if (json_is_number(v))
        return json_number_value(v);
    return json_is_string(v) ? practice_parse_answer(p, json_string_value(v)) : NAN;
}

static void xml_escaped(FILE *f, const char *s)
{
    for (; s && *s; s++)
        switch (*s) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        default: fputc(*s, f);
        }
}

typedef struct {
    double given;
    judge_result result;
    int points;
} graded_part;

static int write_junit(const char *path, const practice_set *s, const graded_part *g, const char *student)
{
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "grade: --junit %s: %s\n", path, strerror(errno));
        return -1;
    }
    int total = 0, failed = 0;
    for (int i = 0; i < s->n_parts; i++)
        total++, failed += !g[i].points;
    fprintf(f, "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n");
    fprintf(f, "<testsuites name=\"chapter %d seed %llu", s->chapter, (unsigned long long)s->seed);
    if (student && *student) {
        fputs(" ", f);
        xml_escaped(f, student);
    }
    fprintf(f, "\" tests=\"%d\" failures=\"%d\" errors=\"0\">\n", total, failed);
    for (int i = 0; i < s->n_parts;) {
        int ex = s->parts[i].exercise, n = 0, bad = 0;
        for (int j = i; j < s->n_parts && s->parts[j].exercise == ex; j++)
            n++, bad += !g[j].points;
        fprintf(f, "  <testsuite name=\"%d.%d\" tests=\"%d\" failures=\"%d\" errors=\"0\" skipped=\"0\">\n", s->chapter,
                ex, n, bad);
        for (int j = i; j < i + n; j++) {
            fputs("    <testcase classname=\"", f);
            fprintf(f, "chapter%d.exercise%d\" name=\"", s->chapter, ex);
            xml_escaped(f, s->parts[j].id);
            fputs(" ", f);
            xml_escaped(f, s->parts[j].what);
            fputs("\"", f);
            if (g[j].points)
                fputs("/>\n", f);
            else {
                fprintf(f, ">\n      <failure type=\"%s\" message=\"", judge_verdict_name(g[j].result.verdict));
                xml_escaped(f, g[j].result.hint);
                fputs("\"/>\n    </testcase>\n", f);
            }
        }
        fputs("  </testsuite>\n", f);
        i += n;
    }
    fputs("</testsuites>\n", f);
    return fclose(f) == 0 ? 0 : -1;
}

static json_t *number_or_null(double v)
{
    return isfinite(v) ? json_real(v) : json_null();
}

/* The report --json writes: the score per exercise and per part. */
static json_t *report_json(const practice_set *s, const graded_part *g, const char *student)
{
    json_t *root = json_object(), *exercises = json_array();
    int score = 0;
    for (int i = 0; i < s->n_parts;) {
        int ex = s->parts[i].exercise, n = 0, got = 0;
        json_t *parts = json_array();
        for (int j = i; j < s->n_parts && s->parts[j].exercise == ex; j++, n++) {
            got += g[j].points;
            json_array_append_new(parts, json_pack("{s:s, s:s, s:o, s:s, s:s, s:i, s:i}", "id", s->parts[j].id,
                                                   "what", s->parts[j].what, "given", number_or_null(g[j].given),
                                                   "verdict", judge_verdict_name(g[j].result.verdict), "hint",
                                                   g[j].result.hint, "points", g[j].points, "max", 1));
        }
        char name[16];
        snprintf(name, sizeof name, "%d.%d", s->chapter, ex);
        json_array_append_new(exercises, json_pack("{s:s, s:i, s:i, s:o}", "exercise", name, "score", got, "max", n,
                                                   "parts", parts));
        score += got;
        i += n;
    }
    json_object_set_new(root, "chapter", json_integer(s->chapter));
    json_object_set_new(root, "seed", json_integer((json_int_t)s->seed));
    json_object_set_new(root, "student", student ? json_string(student) : json_null());
    json_object_set_new(root, "score", json_integer(score));
    json_object_set_new(root, "max", json_integer(s->n_parts));
    json_object_set_new(root, "exercises", exercises);
    return root;
}

static int write_json(const char *path, const practice_set *s, const graded_part *g, const char *student)
{
    json_t *root = report_json(s, g, student);
    int rc = json_dump_file(root, path, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
    json_decref(root);
    if (rc != 0)
        fprintf(stderr, "grade: --json %s: cannot write\n", path);
    return rc;
}

/* A part's expected value as the key prints it (to 10 figures), so the
 * printed key and the batch's agree digit for digit. */
static double key_value(const judge_part *j)
{
    char buf[32];
    snprintf(buf, sizeof buf, "%.10g", judge_expected(j));
    return strtod(buf, NULL);
}

static void print_key(const practice_set *s)
{
    printf("chapter %d, seed %llu: the answer key\n", s->chapter, (unsigned long long)s->seed);
    for (int i = 0; i < s->n_inputs; i++) {
        /* a choice names its table row: "input ch01_ex1_gpu_a 2 (b200)" */
        printf("  input %-22s %g", s->inputs[i].name, s->inputs[i].value);
        printf(s->inputs[i].key ? " (%s)\n" : "\n", s->inputs[i].key);
    }
    for (int i = 0; i < s->n_parts; i++) {
        const judge_part *j = &s->parts[i].judge;
        char rule[64];
        if (j->rule == JUDGE_RANGE)
            snprintf(rule, sizeof rule, "from %g to %g", j->lo, j->hi);
        else
            judge_rule_text(j, rule, sizeof rule);
        printf("  %-9s %-44s %.10g [%s] (%s)\n", s->parts[i].id, s->parts[i].what, judge_expected(j), s->parts[i].unit,
               rule);
    }
}

/* Judges every part of s against answers (an object of part id -> answer). */
static int grade_parts(const practice_set *s, json_t *answers, graded_part *g)
{
    int score = 0;
    for (int i = 0; i < s->n_parts; i++) {
        g[i].given = answer_number(&s->parts[i], json_object_get(answers, s->parts[i].id));
        g[i].result = judge_answer(&s->parts[i].judge, g[i].given);
        g[i].points = g[i].result.verdict == VERDICT_RIGHT;
        score += g[i].points;
    }
    return score;
}

/* The first answer that names a part s does not have (a typo worth
 * naming), or NULL. */
static const char *unknown_part(const practice_set *s, json_t *answers)
{
    const char *k;
    json_t *val;
    json_object_foreach(answers, k, val) {
        if (!practice_find(s, k))
            return k;
    }
    return NULL;
}

/* One --batch request: the line's reply, or NULL with why in *err. */
static json_t *batch_reply(json_t *req, const char **err)
{
    json_t *c = json_object_get(req, "chapter"), *sd = json_object_get(req, "seed"), *answers = json_object_get(req, "answers");
    if (!json_is_integer(c) || !json_is_integer(sd) || json_integer_value(sd) < 0 ||
        json_integer_value(sd) > (json_int_t)PRACTICE_MAX_SEED) {
        *err = "each line needs a whole \"chapter\" and \"seed\" (0 to 2147483647)";
        return NULL;
    }
    int key = json_is_true(json_object_get(req, "key"));
    if (!key && !json_is_object(answers)) {
        *err = "each line needs \"answers\": {\"12.1(a)\": 80, ...} or \"key\": true";
        return NULL;
    }
    static practice_set s; /* large: kept off the stack */
    if (json_integer_value(c) < 1 || json_integer_value(c) > 99 ||
        practice_build((int)json_integer_value(c), (uint64_t)json_integer_value(sd), &s) != 0) {
        *err = "that chapter has no exercise variants";
        return NULL;
    }
    if (key) {
        json_t *parts = json_object();
        for (int i = 0; i < s.n_parts; i++)
            json_object_set_new(parts, s.parts[i].id, json_real(key_value(&s.parts[i].judge)));
        return json_pack("{s:i, s:I, s:o}", "chapter", s.chapter, "seed", (json_int_t)s.seed, "parts", parts);
    }
    if (unknown_part(&s, answers)) {
        *err = "an answer names a part the variant does not have";
        return NULL;
    }
    graded_part g[PRACTICE_MAX_PARTS];
    grade_parts(&s, answers, g);
    json_t *st = json_object_get(req, "student");
    return report_json(&s, g, json_is_string(st) ? json_string_value(st) : NULL);
}

static int batch(void)
{
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        json_error_t jerr;
        const char *err = NULL;
        json_t *req = json_loads(line, 0, &jerr), *reply = NULL;
        if (!json_is_object(req))
            err = "each line must be one JSON object";
        else
            reply = batch_reply(req, &err);
        if (!reply)
            reply = json_pack("{s:s}", "error", err);
        char *text = json_dumps(reply, JSON_COMPACT | JSON_PRESERVE_ORDER);
        if (text)
            puts(text);
        free(text);
        json_decref(reply);
        json_decref(req);
    }
    free(line);
    return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 2;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--batch") == 0)
        return batch();
    const char *answers_path = NULL, *junit = NULL, *json_out = NULL, *student = NULL;
    long chapter = -1;
    uint64_t seed = 0;
    int have_seed = 0, key = 0;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--key") == 0) {
            key = 1;
            continue;
        }
        if (strcmp(a, "--help") == 0) {
            usage("scores answers to an exercise variant");
            return 0;
        }
        if (i + 1 >= argc)
            return usage(strncmp(a, "--", 2) == 0 ? "a flag needs a value" : "unexpected argument");
        const char *v = argv[++i];
        if (strcmp(a, "--chapter") == 0) {
            if (parse_long(v, 1, 99, &chapter) != 0)
                return usage("--chapter: give a chapter number, e.g. --chapter 12");
        } else if (strcmp(a, "--seed") == 0) {
            if (!*v || practice_parse_seed(v, &seed) != 0)
                return usage("--seed: give a whole number from 0 to 2147483647, e.g. --seed 4711");
            have_seed = 1;
        } else if (strcmp(a, "--answers") == 0)
            answers_path = v;
        else if (strcmp(a, "--junit") == 0)
            junit = v;
        else if (strcmp(a, "--json") == 0)
            json_out = v;
        else if (strcmp(a, "--student") == 0)
            student = v;
        else {
            fprintf(stderr, "grade: unknown flag %s\n", a);
            return usage("flags: --chapter, --seed, --answers, --junit, --json, --student, --key, --batch");
        }
    }
    json_t *doc = NULL, *answers = NULL;
    if (!key) {
        if (!answers_path)
            return usage("--answers: name the answers file (JSON)");
        json_error_t err;
        doc = json_load_file(answers_path, 0, &err);
        if (!doc) {
            fprintf(stderr, "grade: --answers %s:%d: %s\n", answers_path, err.line, err.text);
            return 2;
        }
        answers = json_object_get(doc, "answers");
        if (!json_is_object(doc) || !json_is_object(answers)) {
            fprintf(stderr, "grade: --answers %s: expected {\"answers\": {\"12.1(a)\": 80, ...}}\n", answers_path);
            json_decref(doc);
            return 2;
        }
        json_t *c = json_object_get(doc, "chapter"), *sd = json_object_get(doc, "seed");
        if (c && !json_is_integer(c)) {
            fprintf(stderr, "grade: --answers %s: \"chapter\" must be a whole number\n", answers_path);
            json_decref(doc);
            return 2;
        }
        if (c && chapter >= 0 && json_integer_value(c) != chapter) {
            fprintf(stderr, "grade: --answers %s is for chapter %lld, not --chapter %ld\n", answers_path,
                    (long long)json_integer_value(c), chapter);
            json_decref(doc);
            return 2;
        }
        if (sd && (!json_is_integer(sd) || json_integer_value(sd) < 0 || json_integer_value(sd) > (json_int_t)PRACTICE_MAX_SEED ||
                   (have_seed && (uint64_t)json_integer_value(sd) != seed))) {
            fprintf(stderr, "grade: --answers %s holds another seed than --seed %llu\n", answers_path,
                    (unsigned long long)seed);
            json_decref(doc);
            return 2;
        }
        if (chapter < 0 && c)
            chapter = (long)json_integer_value(c);
        if (!have_seed && sd)
            seed = (uint64_t)json_integer_value(sd), have_seed = 1;
        json_t *st = json_object_get(doc, "student");
        if (!student && json_is_string(st))
            student = json_string_value(st);
    }
    if (chapter < 0) {
        json_decref(doc);
        return usage("--chapter: which chapter's exercises?");
    }
    practice_set s;
    if (practice_build((int)chapter, seed, &s) != 0) {
        fprintf(stderr, "grade: --chapter %ld has no exercise variants; chapters with variants: %s\n", chapter,
                practice_chapters());
        json_decref(doc);
        return 2;
    }
    if (key) {
        print_key(&s);
        return 0;
    }
    /* an answer for a part the variant does not have is a typo worth naming */
    const char *k = unknown_part(&s, answers);
    if (k) {
        fprintf(stderr, "grade: --answers %s: no part \"%s\" in chapter %ld; parts:", answers_path, k, chapter);
        for (int i = 0; i < s.n_parts; i++)
            fprintf(stderr, " %s", s.parts[i].id);
        fputc('\n', stderr);
        json_decref(doc);
        return 2;
    }
    graded_part g[PRACTICE_MAX_PARTS];
    int score = grade_parts(&s, answers, g);
    printf("chapter %ld, seed %llu%s%s\n", chapter, (unsigned long long)seed, student ? ", " : "",
           student ? student : "");
    for (int i = 0; i < s.n_parts; i++) {
        printf("  %-9s %d/1  %-7s %s\n", s.parts[i].id, g[i].points, judge_verdict_name(g[i].result.verdict),
               g[i].points ? "" : g[i].result.hint);
        if (i + 1 == s.n_parts || s.parts[i + 1].exercise != s.parts[i].exercise) {
            int got = 0, n = 0;
            for (int j = i; j >= 0 && s.parts[j].exercise == s.parts[i].exercise; j--)
                got += g[j].points, n++;
            printf("  exercise %ld.%d: %d/%d\n", chapter, s.parts[i].exercise, got, n);
        }
    }
    printf("score: %d/%d\n", score, s.n_parts);
    int rc = 0;
    if (junit && write_junit(junit, &s, g, student) != 0)
        rc = 2;
    if (json_out && write_json(json_out, &s, g, student) != 0)
        rc = 2;
    json_decref(doc);
    return rc;
}
