/* grade: scores students' answers to a chapter's exercise variant.
 *
 *   grade --chapter 12 --seed 4711 --answers answers.json
 *         [--junit out.xml] [--json out.json] [--student NAME] [--policy P.tsv]
 *   grade --all DIR [--roster roster.csv] [--salt S] [--policy P.tsv] --out DIR
 *   grade --batch < requests.jsonl           (many answers, one process)
 *   grade --chapter 12 --seed 4711 --key      (instructor's build only)
 *
 * answers.json is {"chapter": 12, "seed": 4711, "student": "...",
 * "answers": {"12.1(a)": 80, "12.1(c)": "57.0 days", ...}}, as the page
 * exports it; chapter and seed in the file must agree with the flags when
 * both are given.  A part scores its weight (1 unless the policy file says
 * otherwise, grade_policy.h) when right, the policy's share when close or a
 * named slip; the report names the verdict and the hint, never the
 * expected value.  An answer naming no part is reported by its id, and the
 * rest are graded.  --all grades a directory into a gradebook
 * (grade_all.h).
 *
 * --batch reads one JSON object per line on stdin and writes one line per
 * request: an answers object gives the report --json writes; a bad line
 * (not JSON, a NUL byte inside) gives {"error": "..."}.  In the
 * instructor's build {"chapter", "seed", "key": true} gives the key.
 *
 * Exit status: 0 graded, 1 graded but an answer named no part, 2 a bad
 * flag, value or file. */
#include "grade_all.h"
#include "grade_parts.h"
#include "grade_policy.h"
#include "grade_report.h"
#include "text_escape.h"
#ifdef GRADE_KEY
#include "grade_key.h"
#endif

#include <errno.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int usage(const char *why)
{
    fprintf(stderr, "grade: %s\n", why);
    fprintf(stderr, "usage: grade --chapter N --seed S --answers FILE [--junit FILE] [--json FILE] [--student NAME] [--policy FILE]\n"
                    "       grade --all DIR [--roster FILE] [--salt S] [--policy FILE] --out DIR\n"
                    "       grade --batch   (JSON lines of answers on stdin)\n"
#ifdef GRADE_KEY
                    "       grade --chapter N --seed S --key\n"
#endif
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
    int chapter = json_integer_value(c) < 1 || json_integer_value(c) > 99 ? 0 : (int)json_integer_value(c);
    static graded_set g; /* large: kept off the stack */
    if (key) {
#ifdef GRADE_KEY
        if (chapter && practice_build(chapter, (uint64_t)json_integer_value(sd), &g.set) == 0)
            return key_json(&g.set);
        *err = "that chapter has no exercise variants";
#else
        *err = "the answer key is the instructor's: this grade program is built without it";
#endif
        return NULL;
    }
    if (!json_is_object(answers)) {
        *err = "each line needs \"answers\": {\"12.1(a)\": 80, ...}";
        return NULL;
    }
    grade_policy none;
    policy_default(&none);
    if (!chapter || grade_answers(&g, chapter, (uint64_t)json_integer_value(sd), answers, &none) != 0) {
        *err = "that chapter has no exercise variants";
        return NULL;
    }
    json_t *st = json_object_get(req, "student");
    report_who who = {json_is_string(st) ? json_string_value(st) : NULL, NULL, NULL};
    return report_json(&g, &who);
}

static int batch(void)
{
    char *line = NULL;
    size_t cap = 0;
    ssize_t len;
    while ((len = getline(&line, &cap, stdin)) > 0) {
        json_error_t jerr;
        const char *err = NULL;
        json_t *req = NULL, *reply = NULL;
        if (strlen(line) != (size_t)len)
            err = "a NUL byte inside the line: each line must be one JSON object";
        else if (req = json_loads(line, 0, &jerr), !json_is_object(req)) /* a macro: its argument twice */
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

/* A message about the answers file, its name escaped for the terminal. */
static int file_fail(const char *path, const char *what)
{
    fputs("grade: --answers ", stderr);
    text_escape_put(path, stderr);
    fprintf(stderr, "%s\n", what);
    return 2;
}

int main(int argc, char **argv)
{
    if (argc == 2 && strcmp(argv[1], "--batch") == 0)
        return batch();
    const char *answers_path = NULL, *junit = NULL, *json_out = NULL, *student = NULL, *policy_path = NULL;
    const char *all = NULL, *roster = NULL, *salt = NULL, *out_dir = NULL;
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
        else if (strcmp(a, "--policy") == 0)
            policy_path = v;
        else if (strcmp(a, "--all") == 0)
            all = v;
        else if (strcmp(a, "--roster") == 0)
            roster = v;
        else if (strcmp(a, "--salt") == 0)
            salt = v;
        else if (strcmp(a, "--out") == 0)
            out_dir = v;
        else {
            fputs("grade: unknown flag ", stderr);
            text_escape_put(a, stderr);
            fputc('\n', stderr);
            return usage("flags: --chapter, --seed, --answers, --junit, --json, --student, --policy, --all, --roster, "
                         "--salt, --out, --batch");
        }
    }
#ifndef GRADE_KEY
    if (key)
        return usage("--key: the answer key is the instructor's; this grade program is built without it");
#endif
    static grade_policy policy;
    char err[512];
    if (policy_path && policy_load(policy_path, &policy, err, sizeof err) != 0) {
        fputs("grade: --policy ", stderr);
        text_escape_put(err, stderr);
        fputc('\n', stderr);
        return 2;
    } else if (!policy_path)
        policy_default(&policy);
    if (all) {
        if (!out_dir)
            return usage("--all needs --out DIR (where the gradebook goes)");
        grade_all_opts o = {all, roster, salt, out_dir, &policy};
        return grade_all(&o);
    }
    if (roster || salt || out_dir)
        return usage("--roster, --salt and --out go with --all DIR");
    json_t *doc = NULL, *answers = NULL;
    if (!key) {
        if (!answers_path)
            return usage("--answers: name the answers file (JSON)");
        json_error_t jerr;
        doc = json_load_file(answers_path, JSON_REJECT_DUPLICATES, &jerr);
        if (!doc) {
            char what[256];
            snprintf(what, sizeof what, ":%d: %s", jerr.line, jerr.text);
            return file_fail(answers_path, what);
        }
        answers = json_object_get(doc, "answers");
        json_t *c = json_object_get(doc, "chapter"), *sd = json_object_get(doc, "seed");
        const char *bad = NULL;
        char what[256];
        if (!json_is_object(doc) || !json_is_object(answers))
            bad = ": expected {\"answers\": {\"12.1(a)\": 80, ...}}";
        else if (c && !json_is_integer(c))
            bad = ": \"chapter\" must be a whole number";
        else if (c && chapter >= 0 && json_integer_value(c) != chapter) {
            snprintf(what, sizeof what, " is for chapter %lld, not --chapter %ld", (long long)json_integer_value(c),
                     chapter);
            bad = what;
        } else if (sd && (!json_is_integer(sd) || json_integer_value(sd) < 0 ||
                          json_integer_value(sd) > (json_int_t)PRACTICE_MAX_SEED ||
                          (have_seed && (uint64_t)json_integer_value(sd) != seed))) {
            snprintf(what, sizeof what, " holds another seed than --seed %llu", (unsigned long long)seed);
            bad = what;
        }
        if (bad) {
            json_decref(doc);
            return file_fail(answers_path, bad);
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
    static graded_set g; /* large: kept off the stack */
    if (grade_answers(&g, (int)chapter, seed, answers, &policy) != 0) {
        fprintf(stderr, "grade: --chapter %ld has no exercise variants; chapters with variants: %s\n", chapter,
                practice_chapters());
        json_decref(doc);
        return 2;
    }
#ifdef GRADE_KEY
    if (key) {
        key_print(&g.set);
        return 0;
    }
#endif
    for (int k = 0; k < g.n_unknown && k < PRACTICE_MAX_PARTS; k++) {
        fputs("grade: --answers ", stderr);
        text_escape_put(answers_path, stderr);
        fputs(": no part \"", stderr);
        text_escape_put(g.unknown[k], stderr);
        fprintf(stderr, "\" in chapter %ld (not graded; the other answers are); parts:", chapter);
        for (int i = 0; i < g.set.n_parts; i++)
            fprintf(stderr, " %s", g.set.parts[i].id);
        fputc('\n', stderr);
    }
    report_who who = {student, NULL, NULL};
    report_terminal(stdout, &g, &who);
    int rc = g.n_unknown ? 1 : 0;
    if (junit && report_junit(junit, &g, &who) != 0)
        rc = 2;
    if (json_out && report_json_file(json_out, &g, &who) != 0)
        rc = 2;
    json_decref(doc);
    return rc;
}
