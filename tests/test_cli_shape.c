/* tools/check_cli_shape.sh, which make test runs over code/cli: it names
 * each function longer than 120 lines with file:line and its length, and
 * fails; it passes one of exactly 120.  The fixture
 * (tests/cli_shape_fixture/long_function.c) is counted by hand: just_fits
 * spans lines 8 to 127 (120 lines: signature, brace, 116 statements, return,
 * brace), too_long lines 129 to 249 (121: a signature over two lines). */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell_run.h"

#define OUT_MAX 8192

/* The script's exit status and output, run from the source tree. */
static int check(const char *env, const char *dir, char *out, size_t n)
{
    const char *src = getenv("NB_SRC");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && %s tools/check_cli_shape.sh %s", src && *src ? src : ".", env, dir);
    return shell_run(cmd, out, n);
}

Test(cli_shape, an_over_long_function_fails_naming_it)
{
    char out[OUT_MAX];
    cr_assert_eq(check("", "tests/cli_shape_fixture", out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "tests/cli_shape_fixture/long_function.c:129: too_long is 121 lines (limit 120)") != NULL,
              "%s", out);
    cr_assert(strstr(out, "just_fits") == NULL, "a function of exactly 120 lines is within the limit:\n%s", out);
    cr_assert(strstr(out, "table") == NULL && strstr(out, "same_line_brace") == NULL, "%s", out);
}

Test(cli_shape, the_limit_is_a_setting)
{
    char out[OUT_MAX];
    /* at 119 both long functions are over; at 121 neither is */
    cr_assert_eq(check("CLI_FUNCTION_MAX=119", "tests/cli_shape_fixture", out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "long_function.c:8: just_fits is 120 lines (limit 119)") != NULL, "%s", out);
    cr_assert(strstr(out, "long_function.c:129: too_long is 121 lines (limit 119)") != NULL, "%s", out);
    cr_assert_eq(check("CLI_FUNCTION_MAX=121", "tests/cli_shape_fixture", out, sizeof out), 0, "%s", out);
    cr_assert_str_eq(out, "");
    /* the brace that ends a signature's line opens the function too: 3 lines */
    cr_assert_eq(check("CLI_FUNCTION_MAX=2", "tests/cli_shape_fixture", out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "long_function.c:251: same_line_brace is 3 lines (limit 2)") != NULL, "%s", out);
}

Test(cli_shape, the_command_line_is_within_the_limit)
{
    char out[OUT_MAX];
    cr_assert_eq(check("", "", out, sizeof out), 0, "functions in code/cli over 120 lines:\n%s", out);
    cr_assert_eq(check("", "no/such/dir", out, sizeof out), 2, "%s", out);
}
