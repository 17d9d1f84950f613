/* napkin: instructor (the student kit leaves it out: the course program computes keys)
 *
 * The course program (code/course/): a roster read as RFC 4180 CSV, its
 * seeds per chapter (course_seed, checked against the stated formula in
 * test_course_seed.c), names written safely into CSV, Markdown and XML, a
 * hostile roster refused by line, an answer key, and Moodle XML checked
 * field by field with xmllint's XPath.
 *
 * Hand values (seed 0, the printed book's 6.1): LLaMA-3-70B has 80 layers,
 * hidden 8,192, 8 KV heads of 128 (k and v 1,024 wide).  A rank-16 adapter
 * on q, k, v, o holds per layer 16 x (8,192 + 8,192) for q and for o and
 * 16 x (8,192 + 1,024) for k and for v: 16 x 51,200 = 819,200; times 80
 * layers = 65,536,000 parameters, 131.072 MB in bf16 (2 bytes each), which
 * is 131,072,000 / 1,048,576 = 125 MiB (the slip 6.1(c) names). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "course_seed.h"
#include "practice.h"
#include "scratch_dir.h"
#include "shell_run.h"

TestSuite(course, .init = scratch_suite_make, .fini = scratch_suite_remove);

static int course(const char *args, char *out, size_t n)
{
    return shell_run_built("bin/course", "course", args, out, n);
}

/* "--roster <scratch>/name" */
static const char *roster_flag(const char *name)
{
    static char f[600];
    snprintf(f, sizeof f, "--roster '%s'", scratch_path(name));
    return f;
}

static const char *class_csv = "id,name,email\r\n"
                               "s01,\"Smith, Ann\",ann@example.edu\r\n"
                               "s02,\"Bo \"\"the Bold\"\" Lee\",bo@example.edu\r\n"
                               "s03,\"=HYPERLINK(\"\"http://x\"\")\",c@example.edu\r\n"
                               "s04,\"two\nlines\",d@example.edu\r\n";

Test(course, seeds_follow_course_seed_for_every_student_and_chapter)
{
    char out[8192], cmd[800], want[256];
    scratch_write("class.csv", class_csv);
    snprintf(cmd, sizeof cmd, "seeds %s --chapters 1,06 --salt fall-2026", roster_flag("class.csv"));
    cr_assert_eq(course(cmd, out, sizeof out), 0, "%s", out);
    cr_assert(strncmp(out, "id,name,chapter,seed\n", 21) == 0, "%s", out);
    static const char *ids[4] = {"s01", "s02", "s03", "s04"};
    for (int i = 0; i < 4; i++)
        for (int c = 0; c < 2; c++) {
            int ch = c ? 6 : 1;
            snprintf(want, sizeof want, ",%02d,%llu\n", ch, (unsigned long long)course_seed("fall-2026", ids[i], ch));
            cr_expect(strstr(out, want) != NULL, "no %s for %s in\n%s", want, ids[i], out);
        }
    /* the names as one CSV field each: the comma quoted, the quotes
     * doubled, the formula neutralised, the line break kept inside quotes */
    cr_expect(strstr(out, "s01,\"Smith, Ann\",01,") != NULL, "%s", out);
    cr_expect(strstr(out, "s02,\"Bo \"\"the Bold\"\" Lee\",01,") != NULL, "%s", out);
    cr_expect(strstr(out, "s03,\"'=HYPERLINK(\"\"http://x\"\")\",01,") != NULL, "%s", out);
    cr_expect(strstr(out, "s04,\"two\nlines\",01,") != NULL, "%s", out);
}

Test(course, seeds_are_stable_and_differ_by_salt)
{
    char a[4096], b[4096], c[4096], cmd[800];
    scratch_write("class.csv", class_csv);
    snprintf(cmd, sizeof cmd, "seeds %s --chapters 01 --salt spring", roster_flag("class.csv"));
    cr_assert_eq(course(cmd, a, sizeof a), 0, "%s", a);
    cr_assert_eq(course(cmd, b, sizeof b), 0, "%s", b);
    cr_expect_str_eq(a, b, "the same roster and salt gave other seeds");
    snprintf(cmd, sizeof cmd, "seeds %s --chapters 01 --salt autumn", roster_flag("class.csv"));
    cr_assert_eq(course(cmd, c, sizeof c), 0, "%s", c);
    cr_expect_str_neq(a, c, "a new salt gave the same seeds");
}

/* Control characters and invalid UTF-8 in a name become U+FFFD; "+", "-"
 * and "@" open a formula too. */
Test(course, hostile_names_stay_one_valid_field)
{
    char out[4096], cmd[800];
    scratch_write("hostile.csv", "id,name,email\n"
                                 "h1,\"+1 \x1b[31mred\x07\",x\n"
                                 "h2,\"-2+3\",x\n"
                                 "h3,\"@SUM(A1)\xff\xfe\",x\n");
    snprintf(cmd, sizeof cmd, "seeds %s --chapters 06", roster_flag("hostile.csv"));
    cr_assert_eq(course(cmd, out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "h1,\"'+1 \xEF\xBF\xBD[31mred\xEF\xBF\xBD\",06,") != NULL, "%s", out);
    cr_expect(strstr(out, "h2,\"'-2+3\",06,") != NULL, "%s", out);
    cr_expect(strstr(out, "h3,\"'@SUM(A1)\xEF\xBF\xBD\xEF\xBF\xBD\",06,") != NULL, "%s", out);
    cr_expect(strchr(out, '\x1b') == NULL && strchr(out, '\x07') == NULL, "a control byte got through");
}

/* Each bad roster: exit 2 and a message naming the file's line and what
 * is wrong; an id that is not a plain folder name never names a folder. */
Test(course, bad_rosters_are_refused_by_line)
{
    static const struct {
        const char *text, *says;
    } bad[] = {
        {"name,id,email\nx,s1,e\n", ":1: the header must be id,name,email"},
        {"id,name,email\n../../etc,Eve,e\n", ":2: id not usable as a folder name"},
        {"id,name,email\ns1,Ann,e\n-rf,Eve,e\n", ":3: id not usable as a folder name"},
        {"id,name,email\nann smith,Ann,e\n", ":2: id not usable as a folder name"},
        {"id,name,email\ns1,Ann,e\ns1,Bob,e\n", ":3: id s1 given twice"},
        {"id,name,email\ns1,\"Ann,e\n", "line 2: a quoted field is not closed"},
        {"id,name,email\ns1,Ann\n", ":2: 2 fields"},
        {"id,name,email\ns1,A\"n,e\n", "line 2: a quote inside an unquoted field"},
        {"id,name,email\n", "no students after the header"},
    };
    char out[4096], cmd[800], keys[600];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        scratch_write("bad.csv", bad[i].text);
        snprintf(keys, sizeof keys, "%s", scratch_path("keys-bad"));
        snprintf(cmd, sizeof cmd, "keys %s --chapters 06 --out '%s'", roster_flag("bad.csv"), keys);
        cr_expect_eq(course(cmd, out, sizeof out), 2, "roster %zu: %s", i, out);
        cr_expect(strstr(out, bad[i].says) != NULL, "roster %zu: want '%s', got %s", i, bad[i].says, out);
        cr_expect(access(keys, F_OK) != 0, "roster %zu: wrote keys anyway", i);
    }
}

/* The roster's path is the user's: a control in it comes out escaped
 * (text_escape.h), not as a terminal command. */
Test(course, a_control_in_the_roster_path_is_printed_escaped)
{
    char out[4096];
    cr_expect_eq(course("seeds --chapters 01 --roster 'no\x1b[2Jsuch.csv'", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "no\\x1b[2Jsuch.csv: cannot open") != NULL, "%s", out);
    cr_expect(strchr(out, '\x1b') == NULL, "a raw escape byte reached the terminal: %s", out);
}

Test(course, bad_flags_exit_2_naming_the_flag)
{
    static const struct {
        const char *args, *says;
    } bad[] = {
        {"moodle --chapter 99 --seeds 1-3", "chapter 99 has no variants"},
        {"moodle --chapter x --seeds 1-3", "chapter 'x'"},
        {"moodle --chapter 6 --seeds 30-1", "a range runs low to high"},
        {"moodle --chapter 6 --seeds 1-x", "--seeds 1-x"},
        {"moodle --chapter 6 --seeds 1,1", "seed 1 given twice"},
        {"moodle --chapter 6 --seeds 2147483648", "--seeds 2147483648"},
        {"key --chapter 6 --seed -1", "--seed -1"},
        {"seeds --chapters 01", "--roster"},
        {"moodle --chapter 6", "give --chapter and --seeds"},
        {"grade --chapter 6", "unknown command 'grade'"},
        {"key --chapter 6 --seed 1 --bogus 1", "unknown flag '--bogus'"},
    };
    char out[4096];
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        cr_expect_eq(course(bad[i].args, out, sizeof out), 2, "%s: %s", bad[i].args, out);
        cr_expect(strstr(out, bad[i].says) != NULL, "%s: want '%s', got %s", bad[i].args, bad[i].says, out);
    }
}

/* A student's key: their name escaped for Markdown, their seed's variant,
 * every part of the chapter with its answer. */
Test(course, keys_per_student_name_the_student_and_every_part)
{
    char out[4096], cmd[800], dir[600], path[700];
    scratch_write("keys.csv", "id,name,email\ns9,\"<b>Eve</b> [x](javascript:1)\",e\n");
    snprintf(dir, sizeof dir, "%s", scratch_path("keys"));
    snprintf(cmd, sizeof cmd, "keys %s --chapters 06 --salt k --out '%s'", roster_flag("keys.csv"), dir);
    cr_assert_eq(course(cmd, out, sizeof out), 0, "%s", out);
    snprintf(path, sizeof path, "%s/s9/chapter-06.md", dir);
    FILE *f = fopen(path, "r");
    cr_assert(f != NULL, "no %s", path);
    static char key[65536];
    size_t n = fread(key, 1, sizeof key - 1, f);
    key[n] = '\0';
    fclose(f);
    char head[128];
    snprintf(head, sizeof head, "# Answer key: chapter 6, seed %llu\n", (unsigned long long)course_seed("k", "s9", 6));
    cr_expect(strncmp(key, head, strlen(head)) == 0, "%s", key);
    cr_expect(strstr(key, "\\<b\\>Eve\\<\\/b\\> \\[x\\]\\(javascript\\:1\\)") != NULL, "name not escaped: %s", key);
    practice_set s;
    cr_assert_eq(practice_build(6, course_seed("k", "s9", 6), &s), 0);
    for (int i = 0; i < s.n_parts; i++) {
        char row[256];
        /* "6.1(a)" as Markdown-escaped text, then its answer */
        char id[64];
        size_t k = 0;
        for (const char *p = s.parts[i].id; *p && k + 2 < sizeof id; p++) {
            if (*p == '.' || *p == '(' || *p == ')')
                id[k++] = '\\';
            id[k++] = *p;
        }
        id[k] = '\0';
        snprintf(row, sizeof row, "| %s | ", id);
        cr_expect(strstr(key, row) != NULL, "no row for %s", s.parts[i].id);
    }
}

/* The printed book's 6.1(a) and (c) in the key, by hand (top of file). */
Test(course, the_printed_key_matches_the_hand_values)
{
    static char out[65536];
    cr_assert_eq(course("key --chapter 06 --seed 0", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "| 6\\.1\\(a\\) | parameters of the 70B adapter | 65.536 | million | to 1\\% | 64.8806 to 66.1914 |"),
              "%s", out);
    cr_expect(strstr(out, "| 6\\.1\\(c\\) | MB of the adapter in bf16 | 131.072 | MB |"), "%s", out);
    cr_expect(strstr(out, "- 6\\.1\\(c\\): 125 MB, that is MiB"), "%s", out);
}

/* xmllint --xpath on the Moodle file: the string value of expr. */
static const char *xpath(const char *file, const char *expr, char *out, size_t n)
{
    char cmd[1400];
    snprintf(cmd, sizeof cmd, "xmllint --xpath \"%s\" '%s'", expr, file);
    int rc = shell_run(cmd, out, n);
    cr_assert(rc == 0 || rc == 10, "xmllint failed (%d): %s", rc, out); /* 10: empty result */
    size_t len = strlen(out);
    if (len > 0 && out[len - 1] == '\n') /* some xmllint versions end a value with a line feed */
        out[len - 1] = '\0';
    return out;
}

#define Q61C "/quiz/question[@type='numerical'][name/text='6.1(c) seed 0']"

Test(course, moodle_xml_is_well_formed_with_a_question_per_part_per_seed)
{
    char out[8192], cmd[800], file[600];
    snprintf(file, sizeof file, "%s", scratch_path("m.xml"));
    snprintf(cmd, sizeof cmd, "moodle --chapter 6 --seeds 0,1-2 --out '%s'", file);
    cr_assert_eq(course(cmd, out, sizeof out), 0, "%s", out);
    snprintf(cmd, sizeof cmd, "xmllint --noout '%s'", file);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 0, "not well-formed XML: %s", out);
    practice_set s;
    cr_assert_eq(practice_build(6, 0, &s), 0);
    char want[32];
    snprintf(want, sizeof want, "%d", 3 * s.n_parts);
    cr_expect_str_eq(xpath(file, "count(/quiz/question[@type='numerical'])", out, sizeof out), want);
    cr_expect_str_eq(xpath(file, "count(/quiz/question[@type='category'])", out, sizeof out), "3");
    cr_expect_str_eq(xpath(file, "string(/quiz/question[@type='category'][1]/category/text)", out, sizeof out),
                     "$course$/top/napkin/chapter-06/seed-0");
    /* every numerical question has one full-credit answer and a unit */
    cr_expect_str_eq(xpath(file, "count(/quiz/question[@type='numerical'][count(answer[@fraction='100']) != 1])", out,
                           sizeof out),
                     "0");
    cr_expect_str_eq(xpath(file, "count(/quiz/question[@type='numerical'][not(units/unit/unit_name != '')])", out,
                           sizeof out),
                     "0");
}

Test(course, moodle_question_fields_hold_the_hand_values)
{
    char out[8192], cmd[800], file[600];
    snprintf(file, sizeof file, "%s", scratch_path("m0.xml"));
    snprintf(cmd, sizeof cmd, "moodle --chapter 06 --seeds 0 --out '%s'", file);
    cr_assert_eq(course(cmd, out, sizeof out), 0, "%s", out);
    cr_expect_str_eq(xpath(file, "string(" Q61C "/answer[@fraction='100']/text)", out, sizeof out), "131.072");
    /* Moodle's tolerance is absolute: 1 % of 131.072 */
    cr_expect_str_eq(xpath(file, "string(" Q61C "/answer[@fraction='100']/tolerance)", out, sizeof out), "1.31072");
    cr_expect_str_eq(xpath(file, "string(" Q61C "/answer[@fraction='100']/@format)", out, sizeof out),
                     "moodle_auto_format");
    cr_expect_str_eq(xpath(file, "string(" Q61C "/answer[@fraction='0'][text='125']/feedback/text)", out, sizeof out),
                     "that is MiB; a MB is 10^6 bytes");
    cr_expect_str_eq(xpath(file, "string(" Q61C "/units/unit/unit_name)", out, sizeof out), "MB");
    cr_expect_str_eq(xpath(file, "string(" Q61C "/units/unit/multiplier)", out, sizeof out), "1");
    /* units optional to type (0), typed in a box (0), after the number (0) */
    cr_expect_str_eq(xpath(file, "string(" Q61C "/unitgradingtype)", out, sizeof out), "0");
    cr_expect_str_eq(xpath(file, "string(" Q61C "/showunits)", out, sizeof out), "0");
    cr_expect_str_eq(xpath(file, "string(" Q61C "/unitsleft)", out, sizeof out), "0");
    cr_expect_str_eq(xpath(file, "string(" Q61C "/defaultgrade)", out, sizeof out), "1");
    cr_expect_str_eq(xpath(file, "string(" Q61C "/questiontext/@format)", out, sizeof out), "html");
    xpath(file, "string(" Q61C "/questiontext/text)", out, sizeof out);
    cr_expect(strstr(out, "<li>rank: 16</li>") != NULL, "the question text lacks the variant's rank: %s", out);
    cr_expect(strstr(out, "MB of the adapter in bf16, in MB (to 1%)") != NULL, "%s", out);
    /* a count is exact: tolerance 0 */
    cr_expect_str_eq(xpath(file,
                           "string(/quiz/question[name/text='6.3(a1) seed 0']/answer[@fraction='100']/tolerance)",
                           out, sizeof out),
                     "0");
}
