/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * The grade program: answers in as JSON, a score per part, JUnit XML valid
 * against tests/grade/junit.xsd and JSON out; a clear message and exit 2
 * for every bad flag or file.  The answers below are worked by hand from the
 * exercise text (seed 0, the printed book) and from the seed-4711 variant's
 * numbers (7B on 15T tokens in 14 days at 38% MFU). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "scratch_dir.h"
#include "shell_run.h"

TestSuite(grade, .init = scratch_suite_make, .fini = scratch_suite_remove);

static int grade(const char *args, char *out, size_t n)
{
    return shell_run_built("bin/grade", "grade", args, out, n);
}

static const char *schema(void)
{
    static char p[512];
    const char *src = getenv("NB_SRC");
    snprintf(p, sizeof p, "%s/tests/grade/junit.xsd", src && *src ? src : ".");
    return p;
}

/* Seed 0 by hand: 80 and 160 GPUs, 57.0 days (57.028 to 3 figures); goodput
 * 99.4 %, 95 %, 90 %; 8,190 GPUs (8,192); 4.31 a day (466 / 108).  Then
 * 12.7: 34.6 % right, 80 days "close" (73.53 right), 12.7(c) missing. */
static const char *seed0 =
    "{\"chapter\": 12, \"seed\": 0, \"student\": \"A & B <test>\", \"answers\": {"
    "\"12.1(a)\": 80, \"12.1(b)\": 80, \"12.1(c)\": \"57.0\", \"12.5(a1)\": 99.4, \"12.5(a2)\": 95,"
    " \"12.5(a3)\": 90, \"12.5(b)\": 8190, \"12.5(c)\": 4.31, \"12.7(a)\": 34.6, \"12.7(b)\": 80}}";

static json_t *part(json_t *report, const char *id)
{
    size_t i, j;
    json_t *ex, *p;
    json_array_foreach(json_object_get(report, "exercises"), i, ex)
        json_array_foreach(json_object_get(ex, "parts"), j, p)
            if (strcmp(json_string_value(json_object_get(p, "id")), id) == 0)
                return p;
    cr_assert_fail("no part %s in the report", id);
    return NULL;
}

Test(grade, scores_each_part_and_writes_valid_junit)
{
    scratch_write("a.json", seed0);
    char out[16384], args[1024];
    snprintf(args, sizeof args, "--chapter 12 --answers '%s' --junit '%s' --json '%s'", scratch_path("a.json"),
             scratch_path("a.xml"), scratch_path("a.out.json"));
    cr_assert_eq(grade(args, out, sizeof out), 0, "%s", out);
    /* 31 parts, 11 of them answered: 12.1(b) is the spreadsheet's count (a
     * slip), 12.7(b) close, 12.7(c) and the 20 parts of 12.2 to 12.4 and 12.6 missing */
    cr_expect(strstr(out, "score: 8/31") != NULL, "%s", out);
    cr_expect(strstr(out, "exercise 12.2: 0/4") != NULL, "%s", out);
    cr_expect(strstr(out, "exercise 12.1: 2/3") != NULL, "%s", out);
    cr_expect(strstr(out, "exercise 12.5: 5/5") != NULL, "%s", out);
    cr_expect(strstr(out, "exercise 12.7: 1/3") != NULL, "%s", out);

    json_error_t err;
    json_t *r = json_load_file(scratch_path("a.out.json"), 0, &err);
    cr_assert(r != NULL, "report JSON: %s", err.text);
    cr_expect_eq(json_integer_value(json_object_get(r, "score")), 8);
    cr_expect_eq(json_integer_value(json_object_get(r, "max")), 31);
    cr_expect_str_eq(json_string_value(json_object_get(part(r, "12.1(b)"), "verdict")), "slip");
    cr_expect(strstr(json_string_value(json_object_get(part(r, "12.1(b)"), "hint")), "sparsity") != NULL);
    cr_expect_str_eq(json_string_value(json_object_get(part(r, "12.7(b)"), "verdict")), "close");
    cr_expect_str_eq(json_string_value(json_object_get(part(r, "12.7(c)"), "verdict")), "missing");
    cr_expect_str_eq(json_string_value(json_object_get(part(r, "12.1(c)"), "verdict")), "right");
    cr_expect(json_is_null(json_object_get(part(r, "12.7(c)"), "given")));
    json_decref(r);

    char cmd[1536];
    snprintf(cmd, sizeof cmd, "xmllint --noout --schema '%s' '%s'", schema(), scratch_path("a.xml"));
    cr_expect_eq(shell_run(cmd, out, sizeof out), 0, "JUnit XML invalid: %s", out);
    snprintf(cmd, sizeof cmd, "cat '%s'", scratch_path("a.xml"));
    shell_run(cmd, out, sizeof out);
    cr_expect(strstr(out, "tests=\"31\" failures=\"23\"") != NULL, "%s", out);
    cr_expect(strstr(out, "<testsuite name=\"12.7\" tests=\"3\" failures=\"2\"") != NULL, "%s", out);
    cr_expect(strstr(out, "A &amp; B &lt;test&gt;") != NULL, "the student's name is escaped: %s", out);
    /* the report names no expected value: 160 GPUs, 73.53 days (12.7(b)),
     * 84.37 % (12.7(c), the book's 84.4): neither at full precision (73.5...,
     * 84.37...) nor rounded to a decimal (73.5, 84.4) */
    cr_expect(strstr(out, "160") == NULL && strstr(out, "73.5") == NULL, "%s", out);
    cr_expect(strstr(out, "84.3") == NULL && strstr(out, "84.4") == NULL, "%s", out);
}

Test(grade, the_schema_rejects_a_broken_report)
{
    /* a testcase without a name, and a count that is not a number */
    scratch_write("bad.xml", "<?xml version=\"1.0\"?>\n<testsuites><testsuite name=\"x\" tests=\"many\">"
                             "<testcase classname=\"c\"/></testsuite></testsuites>\n");
    char cmd[1536], out[4096];
    snprintf(cmd, sizeof cmd, "xmllint --noout --schema '%s' '%s'", schema(), scratch_path("bad.xml"));
    cr_expect_neq(shell_run(cmd, out, sizeof out), 0, "%s", out);
}

/* A student's name reaches the terminal through the one escaping
 * (text_escape.h): a right-to-left override (U+202E, E2 80 AE) would show
 * "evil" reversed, so it comes out as text. */
Test(grade, a_bidi_control_in_the_name_is_printed_escaped)
{
    scratch_write("a.json", seed0);
    char args[1024], out[16384];
    snprintf(args, sizeof args, "--chapter 12 --answers '%s' --student 'x\xE2\x80\xAElive'", scratch_path("a.json"));
    cr_assert_eq(grade(args, out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "chapter 12, seed 0, x\\u202elive\n") != NULL, "%s", out);
    cr_expect(strstr(out, "\xE2\x80\xAE") == NULL, "the override reached the terminal: %s", out);
}

Test(grade, a_variant_is_graded_against_its_own_numbers)
{
    /* seed 4711: 6 x 7e9 x 15e12 = 6.3e23 FLOP; / (989.4e12 x 0.38) = 1.67562e9
     * GPU-s over 14 days (1,209,600 s): 1385.3 -> 1392 GPUs; at twice the peak
     * 692.6 -> 696; 696 GPUs take 1.67562e9 / 696 / 86400 = 27.87 days.
     * Seed 0's answers score 0 on it. */
    scratch_write("v.json", "{\"answers\": {\"12.1(a)\": 696, \"12.1(b)\": 1392, \"12.1(c)\": 27.9}}");
    scratch_write("v0.json", "{\"answers\": {\"12.1(a)\": 80, \"12.1(b)\": 160, \"12.1(c)\": 57.0}}");
    char out[16384], args[1024];
    snprintf(args, sizeof args, "--chapter 12 --seed 4711 --answers '%s'", scratch_path("v.json"));
    cr_assert_eq(grade(args, out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "exercise 12.1: 3/3") != NULL, "%s", out);
    snprintf(args, sizeof args, "--chapter 12 --seed 4711 --answers '%s'", scratch_path("v0.json"));
    cr_assert_eq(grade(args, out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "exercise 12.1: 0/3") != NULL, "%s", out);
}

Test(grade, bad_input_names_the_flag)
{
    scratch_write("a.json", seed0);
    scratch_write("typo.json", "{\"answers\": {\"12.1(z)\": 3}}");
    scratch_write("broken.json", "{\"answers\": {");
    scratch_write("flat.json", "[80, 160]");
    scratch_write("other.json", "{\"chapter\": 12, \"seed\": 5, \"answers\": {}}");
    const struct {
        const char *args, *says;
    } cases[] = {
        {"--chapter 12 --seed -1 --answers A", "--seed"},
        {"--chapter x --answers A", "--chapter"},
        {"--chapter 99 --answers T", "--chapter 99 has no exercise variants"},
        {"--chapter 12", "--answers"},
        {"--chapter 12 --answers /nonexistent/answers.json", "--answers"},
        {"--chapter 12 --answers B", "--answers"},
        {"--chapter 12 --answers F", "expected {"},
        {"--chapter 12 --seed 6 --answers O", "--seed 6"},
        {"--chapter 11 --answers A", "is for chapter 12, not --chapter 11"},
        {"--chapter 12 --answers A --colour red", "unknown flag --colour"},
        {"--chapter", "needs a value"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char args[1024], out[8192];
        const char *a = cases[i].args;
        size_t k = 0;
        for (; *a && k + 300 < sizeof args; a++) {
            const char *sub = NULL;
            if (a[0] == ' ' && strchr("ATBFO", a[1]) && (a[2] == '\0' || a[2] == ' '))
                sub = a[1] == 'A' ? "a.json" : a[1] == 'T' ? "typo.json" : a[1] == 'B' ? "broken.json"
                    : a[1] == 'F' ? "flat.json" : "other.json";
            if (sub) {
                k += (size_t)snprintf(args + k, sizeof args - k, " '%s'", scratch_path(sub));
                a++;
            } else
                args[k++] = *a;
        }
        args[k] = '\0';
        cr_expect_eq(grade(args, out, sizeof out), 2, "%s: exit status, output: %s", cases[i].args, out);
        cr_expect(strstr(out, cases[i].says) != NULL, "%s: output should say '%s': %s", cases[i].args,
                  cases[i].says, out);
    }
}

Test(grade, the_key_is_the_instructors)
{
    char out[16384];
    cr_assert_eq(grade("--chapter 12 --seed 0 --key", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "12.1(b)") != NULL && strstr(out, " 160 [GPUs] (exactly)") != NULL, "%s", out);
    cr_expect(strstr(out, "from 94.5 to 95.5") != NULL, "%s", out);
}

/* --batch: one line per request, the same verdicts as one run per file.  The
 * hand-worked seed-0 answers above score 8 of 31 in a line too; the key of
 * seed 0 holds 12.1(b)'s 160 GPUs (8 x 20: the run needs twice the
 * spreadsheet's 80, the sparse peak undone); bad lines get an error line and
 * the lines after them are still answered; a line with an unknown part id is
 * graded, the id listed. */
Test(grade, a_batch_answers_each_line)
{
    char in[4096];
    snprintf(in, sizeof in, "%s\n{\"chapter\": 12, \"seed\": 0, \"key\": true}\nnot json\n"
                            "{\"chapter\": 12, \"seed\": 0}\n{\"chapter\": 12, \"seed\": 0, \"answers\": {\"12.9(z)\": 1}}\n"
                            "{\"chapter\": 55, \"seed\": 0, \"key\": true}\n%s\n", seed0, seed0);
    scratch_write("batch.jsonl", in);
    char cmd[1024], out[65536];
    snprintf(cmd, sizeof cmd, "--batch < '%s'", scratch_path("batch.jsonl"));
    cr_assert_eq(grade(cmd, out, sizeof out), 0, "%s", out);
    json_t *line[8] = {0};
    int n = 0;
    for (char *s = strtok(out, "\n"); s && n < 8; s = strtok(NULL, "\n"), n++) {
        json_error_t err;
        line[n] = json_loads(s, 0, &err);
        cr_assert(line[n] != NULL, "line %d is not JSON: %s", n + 1, s);
    }
    cr_assert_eq(n, 7, "seven requests, seven lines");
    for (int i = 0; i < 7; i += 6) {
        cr_expect_eq(json_integer_value(json_object_get(line[i], "score")), 8, "line %d", i + 1);
        cr_expect_str_eq(json_string_value(json_object_get(part(line[i], "12.1(b)"), "verdict")), "slip");
        cr_expect_str_eq(json_string_value(json_object_get(part(line[i], "12.7(b)"), "verdict")), "close");
    }
    cr_expect_eq(json_real_value(json_object_get(json_object_get(line[1], "parts"), "12.1(b)")), 160.0);
    for (int i = 2; i < 6; i++)
        if (i != 4)
            cr_expect(json_is_string(json_object_get(line[i], "error")), "line %d should be an error", i + 1);
    /* an answer naming no part is listed, the line still graded (all 31 parts missing) */
    cr_expect_str_eq(json_string_value(json_array_get(json_object_get(line[4], "unknown_parts"), 0)), "12.9(z)");
    cr_expect_eq(json_integer_value(json_object_get(line[4], "max")), 31);
    for (int i = 0; i < n; i++)
        json_decref(line[i]);
}
