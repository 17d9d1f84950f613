/* The file formats' writers (text_formats.h) and the one UTF-8 validator
 * (utf8.h) they and the terminal escaping stand on.  Each expected output
 * is written out by hand from the format's rule: XML's five entities and
 * character references, RFC 4180's quoting with a formula guard, Markdown's
 * backslash escapes; U+FFFD is EF BF BD in UTF-8. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "text_formats.h"
#include "utf8.h"

#define FFFD "\xEF\xBF\xBD"

/* What write(f, in) puts in a file, in a buffer the caller frees. */
static char *written(void (*write)(FILE *, const char *), const char *in)
{
    char *buf = NULL;
    size_t n = 0;
    FILE *f = open_memstream(&buf, &n);
    cr_assert_not_null(f);
    write(f, in);
    fclose(f);
    return buf;
}

static void expect_written(void (*write)(FILE *, const char *), const char *in, const char *want)
{
    char *got = written(write, in);
    cr_expect_str_eq(got, want, "input \"%s\"", in ? in : "(null)");
    free(got);
}

Test(text_formats, utf8_sequence_takes_well_formed_utf8_only)
{
    static const struct {
        const char *s;
        int len;
        unsigned cp;
    } cases[] = {
        {"A", 1, 0x41},
        {"\xC3\xA9", 2, 0xE9},              /* e acute: 110 00011, 10 101001 */
        {"\xE2\x80\xAE", 3, 0x202E},        /* right-to-left override */
        {"\xF0\x9F\x99\x82", 4, 0x1F642},   /* an emoji, past the BMP */
        {"\xF4\x8F\xBF\xBF", 4, 0x10FFFF},  /* the last code point */
        {"\xC0\x80", 0, 0},                 /* NUL in two bytes: overlong */
        {"\xE0\x80\x80", 0, 0},             /* overlong in three */
        {"\xED\xA0\x80", 0, 0},             /* U+D800, a surrogate */
        {"\xF4\x90\x80\x80", 0, 0},         /* U+110000, past the end */
        {"\xF5\x80\x80\x80", 0, 0},         /* a lead byte UTF-8 never uses */
        {"\x80", 0, 0},                     /* a continuation byte alone */
        {"\xE2\x80", 0, 0},                 /* cut short by the string's end */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        unsigned cp = 0xdeadbeef;
        int len = utf8_sequence((const unsigned char *)cases[i].s, &cp);
        cr_expect_eq(len, cases[i].len, "case %zu: length %d, want %d", i, len, cases[i].len);
        if (cases[i].len)
            cr_expect_eq(cp, cases[i].cp, "case %zu: U+%04X, want U+%04X", i, cp, cases[i].cp);
    }
    cr_expect_eq(utf8_sequence((const unsigned char *)"\xC3\xA9", NULL), 2, "a NULL code point is allowed");
}

Test(text_formats, xml_escapes_the_markup_and_replaces_what_xml_cannot_hold)
{
    expect_written(text_xml, "a<b>&\"'", "a&lt;b&gt;&amp;&quot;&apos;");
    /* a tab and a line feed survive an attribute only as references */
    expect_written(text_xml, "one\ttwo\nthree", "one&#9;two&#10;three");
    /* XML 1.0 forbids U+0001 and U+001B; C1 U+0085 and a stray 0xFF are replaced too */
    expect_written(text_xml, "\x01\x1b[0m\xC2\x85\xff", FFFD FFFD "[0m" FFFD FFFD);
    expect_written(text_xml, "caf\xC3\xA9", "caf\xC3\xA9");
    expect_written(text_xml, NULL, "");
}

Test(text_formats, csv_quotes_when_needed_and_guards_formulas)
{
    expect_written(text_csv, "plain", "plain");
    expect_written(text_csv, "", "");
    expect_written(text_csv, NULL, "");
    expect_written(text_csv, "Smith, Ann", "\"Smith, Ann\"");
    expect_written(text_csv, "Bo \"B\" Lee", "\"Bo \"\"B\"\" Lee\"");
    expect_written(text_csv, "two\nlines", "\"two\nlines\"");
    /* a spreadsheet runs a cell starting = + - @ (or tab, CR): an apostrophe first */
    expect_written(text_csv, "=HYPERLINK(\"x\")", "\"'=HYPERLINK(\"\"x\"\")\"");
    expect_written(text_csv, "+1", "\"'+1\"");
    expect_written(text_csv, "-2", "\"'-2\"");
    expect_written(text_csv, "@SUM(A1)", "\"'@SUM(A1)\"");
    expect_written(text_csv, "\tx", "\"'\tx\"");
    expect_written(text_csv, "\rx", "\"'" FFFD "x\"");
    /* a minus inside is no formula */
    expect_written(text_csv, "a-b", "a-b");
    expect_written(text_csv, "x\x1b[31m\x07\xfe", "x" FFFD "[31m" FFFD FFFD);
}

Test(text_formats, markdown_escapes_every_ascii_punctuation)
{
    expect_written(text_md, "[x](javascript:1)", "\\[x\\]\\(javascript\\:1\\)");
    expect_written(text_md, "<b>*em*_u_</b>", "\\<b\\>\\*em\\*\\_u\\_\\<\\/b\\>");
    expect_written(text_md, "# one\ttwo\nthree", "\\# one two three");
    expect_written(text_md, "6.1 caf\xC3\xA9 \x1b\xff", "6\\.1 caf\xC3\xA9 " FFFD FFFD);
}

Test(text_formats, utf8_valid_keeps_controls_for_json_and_replaces_bad_bytes)
{
    char *v = text_utf8_valid("a\x01\n\xff\xC3\xA9\xE2\x80");
    cr_assert_not_null(v);
    /* the control and the line feed kept (JSON escapes them), 0xFF and the
     * cut sequence's two bytes each replaced */
    cr_expect_str_eq(v, "a\x01\n" FFFD "\xC3\xA9" FFFD FFFD);
    free(v);
    cr_expect_null(text_utf8_valid(NULL));
}
