/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * grade --all: a directory of answer files into a gradebook, Gradescope
 * results and reports per student.  A broken, a misnamed, a seedless and a
 * wrong-seed file, hostile file names and hostile roster names: each file is
 * graded or named with its reason, the rest are graded, the tree outside the
 * output folder is untouched, and every output parses in its format.  The
 * scores are the hand-worked seed-0 answers of chapter 12 (test_grade.c:
 * 8 of 31 right, 12.1(b) a slip, 12.7(b) close). */
#include <criterion/criterion.h>
#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "course_seed.h"
#include "scratch_dir.h"
#include "shell_run.h"

TestSuite(grade_all, .init = scratch_suite_make, .fini = scratch_suite_remove);

static char *read_all(const char *name)
{
    static char buf[1 << 16];
    FILE *f = fopen(scratch_path(name), "r");
    cr_assert(f != NULL, "no %s", name);
    size_t n = fread(buf, 1, sizeof buf - 1, f);
    buf[n] = '\0';
    fclose(f);
    return buf;
}

static int grade(const char *args, char *out, size_t n)
{
    return shell_run_built("bin/grade", "grade", args, out, n);
}

/* The seed-0 answers of test_grade.c, as student `id` answering `seed`. */
static void answers(const char *file, const char *id, const char *seed)
{
    char text[1024];
    snprintf(text, sizeof text,
             "{\"chapter\": 12, %s%s%s \"student\": \"%s\", \"answers\": {"
             "\"12.1(a)\": 80, \"12.1(b)\": 80, \"12.1(c)\": \"57.0 days\", \"12.5(a1)\": \"99.4%%\", \"12.5(a2)\": 95,"
             " \"12.5(a3)\": 90, \"12.5(b)\": \"8,190\", \"12.5(c)\": 4.31, \"12.7(a)\": 34.6, \"12.7(b)\": 80,"
             " \"1.1(a)\": 3}}",
             seed ? "\"seed\": " : "", seed ? seed : "", seed ? "," : "", id);
    scratch_write(file, text);
}

Test(grade_all, grades_the_rest_names_each_refusal_and_writes_valid_outputs)
{
    mkdir(scratch_path("ans"), 0777);
    scratch_write("roster.csv", "id,name,email\r\n"
                                "ann,\"Smith, Ann \"\"A\"\"\",a@x\r\n"
                                "bob,\"=HYPERLINK(\"\"http://x\"\")\",b@x\r\n"
                                "eve,\"Eve \x1b[31mred\xff\",e@x\r\n"
                                "kim,Kim,k@x\r\n");
    /* the page's export of each student, their own seed under salt "t" */
    char seed[32], name[128];
    snprintf(seed, sizeof seed, "%llu", (unsigned long long)course_seed("t", "ann", 12));
    answers("ans/Ann Smith.json", "ann", seed);
    answers("ans/a --json README.md --student x.json", "bob", "0"); /* wrong seed */
    answers("ans/eve's \"quoted\"\nline.json", "eve", NULL);          /* no seed */
    answers("ans/$(touch pwned).json", "nobody", "1");               /* not in the roster */
    scratch_write("ans/broken.json", "{\"chapter\": 12, \"answers\": {");
    scratch_write("ans/notes.txt", "not answers");
    snprintf(name, sizeof name, "ans/-rf.json");
    scratch_write(name, "[1, 2]");
    char args[2048], out[65536];
    snprintf(args, sizeof args, "--all '%s' --roster '%s' --salt t --out '%s'", scratch_path("ans"),
             scratch_path("roster.csv"), scratch_path("out"));
    cr_assert_eq(grade(args, out, sizeof out), 0, "%s", out);

    /* each refusal named with its reason; the name's newline escaped */
    cr_expect(strstr(out, "\"eve's \"quoted\"\\x0aline.json\": not graded: no \"seed\"") != NULL, "%s", out);
    cr_expect(strstr(out, "\"$(touch pwned).json\": not graded: its \"student\" is not a roster id") != NULL, "%s", out);
    cr_expect(strstr(out, "\"broken.json\": not graded: not JSON") != NULL, "%s", out);
    cr_expect(strstr(out, "\"notes.txt\": not graded: not a .json file") != NULL, "%s", out);
    cr_expect(strstr(out, "\"-rf.json\": not graded: no \"answers\" object") != NULL, "%s", out);
    cr_expect(strstr(out, "answered seed 0, not their own") != NULL, "%s", out);
    cr_expect(strstr(out, "unknown part \"1.1(a)\": not graded (the file's other answers were)") != NULL, "%s", out);
    cr_expect(strstr(out, "graded 2 files; 5 not graded") != NULL, "%s", out);
    cr_expect(strstr(out, "\x1b") == NULL, "no raw escape byte reaches the terminal");
    struct stat st;
    cr_expect(stat("pwned", &st) != 0 && stat(scratch_path("pwned"), &st) != 0, "a file name ran as a command");

    /* gradebook: ann's own variant; bob graded against his own seed, not 0 */
    const char *book = read_all("out/gradebook.csv");
    cr_expect(strncmp(book, "id,name,chapter,seed,12.1,12.2,12.3,12.4,12.5,12.6,12.7,total,max\r\n", 66) == 0, "%s",
              book);
    cr_expect(strstr(book, "bob,\"'=HYPERLINK(\"\"http://x\"\")\",12,") != NULL, "formula escaped: %s", book);
    cr_expect(strstr(book, "ann,\"Smith, Ann \"\"A\"\"\",12,") != NULL, "%s", book);
    cr_expect(strstr(book, "eve,Eve \xef\xbf\xbd[31mred\xef\xbf\xbd,12,") != NULL, "controls replaced: %s",
              book);
    cr_expect(strstr(book, "kim,Kim,12,") != NULL, "a student without a file is in the book: %s", book);

    /* every output parses: JUnit against the schema, JSON, results.json's fields */
    char cmd[2048];
    const char *src = getenv("NB_SRC");
    snprintf(cmd, sizeof cmd, "xmllint --noout --schema '%s/tests/grade/junit.xsd' '%s'/*/*.junit.xml",
             src && *src ? src : ".", scratch_path("out/students"));
    cr_expect_eq(shell_run(cmd, out, sizeof out), 0, "%s", out);
    const char *ids[] = {"ann", "bob", "eve", "kim"};
    for (int i = 0; i < 4; i++) {
        char p[256];
        snprintf(p, sizeof p, "out/gradescope/%s/results.json", ids[i]);
        json_error_t err;
        json_t *r = json_load_file(scratch_path(p), 0, &err);
        cr_assert(r != NULL, "%s: %s", p, err.text);
        cr_expect(json_is_number(json_object_get(r, "score")), "%s: score", p);
        cr_expect(json_is_string(json_object_get(r, "output")), "%s: output", p);
        json_t *tests = json_object_get(r, "tests"), *t;
        cr_expect_eq(json_array_size(tests), 31, "%s: a test per part", p);
        size_t k;
        json_array_foreach(tests, k, t) {
            cr_expect(json_is_string(json_object_get(t, "name")), "%s test %zu: name", p, k);
            cr_expect(json_is_number(json_object_get(t, "score")), "%s test %zu: score", p, k);
            cr_expect(json_is_number(json_object_get(t, "max_score")), "%s test %zu: max_score", p, k);
            cr_expect(json_is_string(json_object_get(t, "output")), "%s test %zu: output", p, k);
            const char *status = json_string_value(json_object_get(t, "status"));
            cr_expect(status && (!strcmp(status, "passed") || !strcmp(status, "failed")), "%s: status", p);
        }
        json_decref(r);
    }
}

/* Without a roster each file's own seed; seed 0 is the hand-scored sheet.
 * Policy: 12.1(b) weighs 3 and a slip earns half; close earns a quarter
 * everywhere.  By hand: 8 right (8) + 12.1(b) slip (3 x 0.5 = 1.5) +
 * 12.7(b) close (0.25) = 9.75 of 31 - 1 + 3 = 33; exercise 12.1: 12.1(a)
 * and (c) right, (b) 1.5: 3.5; 12.7: 1 + 0.25 = 1.25. */
Test(grade_all, the_gradebook_totals_a_hand_scored_sheet_under_a_policy)
{
    mkdir(scratch_path("ans2"), 0777);
    answers("ans2/s.json", "s", "0");
    scratch_write("policy.tsv", "# part\tweight\ttolerance\tclose\tslip\tcarry\n"
                                "part\tweight\ttolerance\tclose\tslip\tcarry\n"
                                "*\t-\t-\t0.25\t-\t-\n"
                                "12.1(b)\t3\t-\t-\t0.5\t-\n");
    char args[2048], out[65536];
    snprintf(args, sizeof args, "--all '%s' --policy '%s' --out '%s'", scratch_path("ans2"), scratch_path("policy.tsv"),
             scratch_path("out2"));
    cr_assert_eq(grade(args, out, sizeof out), 0, "%s", out);
    const char *book = read_all("out2/gradebook.csv");
    cr_expect(strstr(book, "s,s,12,0,3.5,0,0,0,5,0,1.25,9.75,33\r\n") != NULL, "%s", book);

    scratch_write("bad.tsv", "12.1(zz)\t1\t-\t-\t-\t-\n");
    snprintf(args, sizeof args, "--all '%s' --policy '%s' --out '%s'", scratch_path("ans2"), scratch_path("bad.tsv"),
             scratch_path("out3"));
    cr_expect_eq(grade(args, out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "bad.tsv:1: no part \"12.1(zz)\"") != NULL, "%s", out);
}

/* Error carried forward: 12.1(c)'s days are inversely proportional to the
 * GPUs of 12.1(a) (the same FLOP on more GPUs).  Seed 0: 80 GPUs and 57.028
 * days; a student who says 40 GPUs and then 114.06 days (57.028 x 80 / 40)
 * carried the error correctly. */
Test(grade_all, an_error_carried_forward_earns_the_later_part)
{
    scratch_write("ecf.json", "{\"chapter\": 12, \"seed\": 0, \"answers\": {\"12.1(a)\": 40, \"12.1(c)\": 114.06}}");
    scratch_write("ecf.tsv", "12.1(c)\t-\t-\t-\t-\t1/12.1(a)\n");
    char args[2048], out[65536];
    snprintf(args, sizeof args, "--answers '%s' --json '%s'", scratch_path("ecf.json"), scratch_path("ecf.out"));
    cr_assert_eq(grade(args, out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "12.1(c)   0/1") != NULL, "without the policy, not carried: %s", out);
    snprintf(args, sizeof args, "--answers '%s' --policy '%s'", scratch_path("ecf.json"), scratch_path("ecf.tsv"));
    cr_assert_eq(grade(args, out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "12.1(c)   1/1  carried") != NULL, "%s", out);
    cr_expect(strstr(out, "12.1(a)   0/1") != NULL, "%s", out);
}

/* The roster is the course program's (course_roster.h): an id that could
 * pass for a flag where it names a folder, and a roster without students,
 * are refused by line with exit 2. */
Test(grade_all, a_roster_the_course_program_refuses_is_refused)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"id,name,email\ns1,Ann,e\n-rf,Eve,e\n", "roster.csv:3: id not usable as a folder name"},
        {"id,name,email\r\n", "roster.csv: no students after the header"},
    };
    mkdir(scratch_path("none"), 0777);
    char args[2048], out[4096];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        scratch_write("roster.csv", bad[i].text);
        snprintf(args, sizeof args, "--all '%s' --roster '%s' --out '%s'", scratch_path("none"),
                 scratch_path("roster.csv"), scratch_path("out"));
        cr_expect_eq(grade(args, out, sizeof out), 2, "roster %zu: %s", i, out);
        cr_expect(strstr(out, bad[i].says) != NULL, "roster %zu: want '%s', got %s", i, bad[i].says, out);
    }
}

/* A NUL inside a --batch line: the line is refused, not cut at the NUL and
 * run; the next line is still answered. */
Test(grade_all, a_nul_inside_a_batch_line_is_refused)
{
    FILE *f = fopen(scratch_path("nul.jsonl"), "wb");
    cr_assert(f != NULL);
    const char line[] = "{\"chapter\": 12, \"seed\": 0, \"answers\": {}}\0garbage\n";
    fwrite(line, 1, sizeof line - 1, f);
    fputs("{\"chapter\": 12, \"seed\": 0, \"answers\": {}}\n", f);
    fclose(f);
    char cmd[1536], out[65536];
    snprintf(cmd, sizeof cmd, "--batch < '%s'", scratch_path("nul.jsonl"));
    cr_assert_eq(grade(cmd, out, sizeof out), 0, "%s", out);
    char *nl = strchr(out, '\n');
    cr_assert(nl != NULL, "%s", out);
    *nl = '\0';
    cr_expect(strstr(out, "\"error\"") != NULL && strstr(out, "NUL") != NULL, "first line: %s", out);
    cr_expect(strstr(nl + 1, "\"max\": 31") != NULL || strstr(nl + 1, "\"max\":31") != NULL, "second: %s", nl + 1);
}
