/* The book's calculator panels hand the WebAssembly module a JSON object of
 * flags (code/web/json_flags.c); these are the argvs it must become, written
 * out by hand from the CLI's flag syntax, and the inputs it must refuse.
 * The parser is plain C, so it is tested natively (and under ASan) here;
 * tools/panel_test.py checks the module itself in a browser. */
#include "web/json_flags.c"

#include <criterion/criterion.h>
#include <string.h>

static void expect_argv(const char *json, const char *const *want, int n)
{
    json_argv a;
    char err[256] = "";
    cr_assert_eq(json_flags_to_argv("decode", json, &a, err, sizeof err), 0, "%s: %s", json, err);
    cr_assert_eq(a.argc, n, "%s: argc %d, want %d", json, a.argc, n);
    for (int i = 0; i < n; i++)
        cr_assert_str_eq(a.argv[i], want[i], "%s: argv[%d]", json, i);
    cr_assert_null(a.argv[n]);
    json_argv_free(&a);
}

static void expect_refused(const char *json, const char *why)
{
    json_argv a;
    char err[256] = "";
    cr_assert_eq(json_flags_to_argv("decode", json, &a, err, sizeof err), -1, "%s was accepted", json);
    cr_assert(strstr(err, why) != NULL, "%s: message '%s' lacks '%s'", json, err, why);
    cr_assert(strncmp(err, "flags: ", 7) == 0, "%s: '%s'", json, err);
    cr_assert_null(a.argv);
}

Test(web_flags, strings_numbers_and_switches)
{
    /* true is the bare flag; false and null leave the flag out; numbers keep
     * their JSON text; --format json comes last. */
    const char *want[] = {"decode", "--model", "llama3-70b", "--tp", "4", "--no-comm", "--alpha", "0.8",
                          "--format", "json"};
    expect_argv("{\"model\": \"llama3-70b\", \"tp\": 4, \"no-comm\": true, \"draft\": null, \"sp\": false, "
                "\"alpha\": 0.8}",
                want, 10);
}

Test(web_flags, empty_object_and_format)
{
    const char *bare[] = {"decode", "--format", "json"};
    expect_argv(" { } ", bare, 3);
    const char *table[] = {"decode", "--gpu", "h100", "--format", "table"};
    expect_argv("{\"gpu\":\"h100\",\"format\":\"table\"}", table, 5);
}

Test(web_flags, values_pass_as_given)
{
    /* The CLI, not the parser, judges values: an empty string, "4k", a
     * negative or exponent number reach it unchanged. */
    const char *want[] = {"decode", "--batch", "", "--context", "4k", "--c", "-0.5", "--hbm", "8.5e10",
                          "--format", "json"};
    expect_argv("{\"batch\": \"\", \"context\": \"4k\", \"c\": -0.5, \"hbm\": 8.5e10}", want, 11);
}

Test(web_flags, escapes_decode_to_utf8)
{
    /* \" \\ \/ and \u00e9 (e acute: UTF-8 C3 A9), \u20ac (euro: E2 82 AC). */
    const char *want[] = {"decode", "--model", "a\"b\\c/d\xc3\xa9\xe2\x82\xac\n", "--format", "json"};
    expect_argv("{\"model\": \"a\\\"b\\\\c\\/d\\u00e9\\u20AC\\n\"}", want, 5);
}

Test(web_flags, malformed_json_is_refused)
{
    expect_refused("", "expected a JSON object");
    expect_refused("[1]", "expected a JSON object");
    expect_refused("{\"tp\": 4,}", "expected a flag name");
    expect_refused("{\"tp\" 4}", "expected ':'");
    expect_refused("{\"tp\": 4} x", "text after the object");
    expect_refused("{\"tp\": 4", "expected ',' or '}'");
    expect_refused("{\"tp\": [4]}", "expected a string, number");
    expect_refused("{\"tp\": {}}", "expected a string, number");
    expect_refused("{\"tp\": 04}", "expected ',' or '}'");
    expect_refused("{\"tp\": 1.}", "malformed number");
    expect_refused("{\"model\": \"abc}", "unterminated string");
    expect_refused("{\"model\": \"a\\u0000\"}", "escape");
    expect_refused("{\"model\": \"\\ud83d\\ude00\"}", "escape");
    expect_refused("{\"model\": \"a\\x\"}", "escape");
}

Test(web_flags, flag_names_are_bare_lower_case)
{
    expect_refused("{\"--tp\": 4}", "flag name");
    expect_refused("{\"Tp\": 4}", "flag name");
    expect_refused("{\"\": 4}", "flag name");
    expect_refused("{\"t p\": 4}", "flag name");
}

Test(web_flags, error_names_the_byte)
{
    json_argv a;
    char err[256];
    /* '{' is byte 0, '"tp"' bytes 1-4, the bad ';' byte 5. */
    cr_assert_eq(json_flags_to_argv("decode", "{\"tp\";4}", &a, err, sizeof err), -1);
    cr_assert_str_eq(err, "flags: expected ':' at byte 5 of the JSON");
}
