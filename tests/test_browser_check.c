/* napkin: no-asan
 * The browser check (tools/browser_check.py, run on the book by make test)
 * can fail: on tests/browser/bad.html, which has one of each defect written
 * in by hand (the phone pass's at 390 px among them), it names every one and
 * exits 1; on tests/browser/good.html it
 * passes.  Needs chromium (tools/bootstrap.sh installs it). */
#include <criterion/criterion.h>

#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "test_text.h"

static int check(const char *fixture, char **err)
{
    const char *src = need_env("NB_SRC"), *build = need_env("NB_BUILD");
    char *out = fmt("%s/test-browser-%s.err", build, fixture);
    int rc = system(fmt("cd '%s' && tools/run_bounded.sh 180 python3 tools/browser_check.py tests/browser/%s.html "
                        "'%s/test-browser-shots' > /dev/null 2> '%s'", src, fixture, build, out));
    *err = slurp(out);
    cr_assert_not_null(*err);
    return WIFEXITED(rc) ? WEXITSTATUS(rc) : -1;
}

Test(browser_check, names_every_defect, .timeout = 200)
{
    char *err;
    cr_assert_eq(check("bad", &err), 1, "expected exit 1 (problems found):\n%s", err);
    /* One line per defect of bad.html, in the words of the check. */
    const char *expected[] = {
        "link to a missing anchor #nowhere",
        "overflows the page width (3000 > 1280 px)",
        "request leaves the file: http://127.0.0.1:9/x.png",
        "console error: fixture error",
        "math without size",
        "figure not drawn",
        /* 10 px text in a 2000 px SVG drawn 300 px wide: 1.5 px */
        "figure text drawn at 1.5 px (< 9 px)",
        /* the bar's link starts at 340 px: whole at 1280 px, cut off at a phone's 390 */
        "at 390 px: navigation link clipped",
        /* the phone pass: one of each defect written into bad.html */
        "at 390 px: figure wider than the screen (760 px)",
        "at 390 px: figure drawn at 760 px natural width (> 480)",
        "at 390 px: table past the screen outside a scrolling box of its own",
        "at 390 px: formula past the screen outside a scrolling box of its own",
        "at 390 px: table caption cut off",
        "at 390 px: panel value off screen",
        "at 390 px: console block wraps its lines",
        "at 390 px: numbered list starting at 52",
        /* a 120 px bar on an 844 px screen: 14 % */
        "at 390 px: the navigation bar takes 14% of the screen's height",
    };
    for (size_t i = 0; i < sizeof expected / sizeof expected[0]; i++)
        cr_expect_neq(strstr(err, expected[i]), NULL, "missing '%s' in:\n%s", expected[i], err);
    cr_expect_eq(strstr(err, "#one: a link that resolves"), NULL, "a resolving link was reported:\n%s", err);
}

Test(browser_check, passes_a_clean_page, .timeout = 200)
{
    char *err;
    cr_assert_eq(check("good", &err), 0, "expected exit 0:\n%s", err);
}
