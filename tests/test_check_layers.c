/* tools/check_layers.sh against two small trees (tests/layers/), so the
 * checker itself cannot pass in silence: a clean tree holds, and a broken one
 * is reported breach by breach, file and line, with exit status 1.
 *
 * The broken tree, line by line (counted by hand in tests/layers/broken/):
 *   code/napkin/stray.c                 a file in no floor
 *   code/napkin/attic/old.c             a floor the checker has no rule for
 *   code/napkin/core/reaches_up.c       2 units.h (own floor, fine); 3 step.h
 *                                       (model/, above core); 4 nowhere.h (no
 *                                       floor); 5 <math.h> (a system header)
 *   code/napkin/model/leaks.c           2 pricing.h (the door, fine); 3
 *                                       pricing_internal.h (price/'s parts);
 *                                       4 bytes / mem_bw; 5 b / g->link_bw;
 *                                       6 a division in a comment and 7 one in
 *                                       a string (fine); 8 a marked share
 *                                       (fine); 9 flop / (peak * 2); 10 a
 *                                       share under a marker not the one;
 *                                       11 flop / gpu_peak_flops(g, 0), a
 *                                       rate a function returns
 *   code/napkin/price/pricing.c         3 bytes / bw inside price/ (fine)
 *   code/napkin/runtime/reaches_price.c 2 pricing.h (runtime/ is on core only)
 *   code/napkin/serving/exercises.c     2 practice.h (code/practice/)
 * The report lists the stray files first, then includes file by file, then
 * divisions file by file, in C-locale order. */
#include <criterion/criterion.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "shell_run.h"

#define OUT_MAX 8192

/* Runs the checker on tests/layers/<tree> from the source tree; its stdout
 * (or, with err set, its stderr) lands in out; returns the exit status. */
static int check(const char *tree, int err, char *out, size_t n)
{
    const char *src = getenv("NB_SRC");
    char cmd[1024];
    snprintf(cmd, sizeof cmd, "cd '%s' && tools/check_layers.sh tests/layers/%s %s", src && *src ? src : ".", tree,
             err ? "2>&1 >/dev/null" : "2>/dev/null");
    return shell_run(cmd, out, n);
}

Test(check_layers, a_clean_tree_holds)
{
    char out[OUT_MAX];
    /* core/units.c, price/pricing.c, model/step.c: three sources in three floors */
    cr_assert_eq(check("clean", 0, out, sizeof out), 0, "%s", out);
    cr_assert_str_eq(out, "check_layers: 3 sources in 3 floors hold\n");
}

Test(check_layers, every_breach_by_file_and_line)
{
    static const char *const expected =
        "code/napkin/stray.c:1: a file directly in code/napkin/: put it in the floor of its concept "
        "(ARCHITECTURE.md)\n"
        "code/napkin/attic/old.c:1: floor 'attic' is not in tools/check_layers.sh's table: name the floors it may "
        "include there\n"
        "code/napkin/core/reaches_up.c:3: core/ includes \"step.h\" from model/, which is not below it (core/ may "
        "include: nothing else)\n"
        "code/napkin/core/reaches_up.c:4: includes \"nowhere.h\", which is in no floor of code/napkin\n"
        "code/napkin/model/leaks.c:3: includes \"pricing_internal.h\", the own parts of price/: ask its door "
        "instead\n"
        "code/napkin/runtime/reaches_price.c:2: runtime/ includes \"pricing.h\" from price/, which is not below it "
        "(runtime/ may include: core)\n"
        "code/napkin/serving/exercises.c:2: includes \"practice.h\" from code/practice/: the library never "
        "includes the exercises\n"
        "code/napkin/model/leaks.c:4: divides by a bandwidth or a FLOP rate outside price/: ask price/ for the "
        "time\n"
        "code/napkin/model/leaks.c:5: divides by a bandwidth or a FLOP rate outside price/: ask price/ for the "
        "time\n"
        "code/napkin/model/leaks.c:9: divides by a bandwidth or a FLOP rate outside price/: ask price/ for the "
        "time\n"
        "code/napkin/model/leaks.c:10: divides by a bandwidth or a FLOP rate outside price/: ask price/ for the "
        "time\n"
        "code/napkin/model/leaks.c:11: divides by a bandwidth or a FLOP rate outside price/: ask price/ for the "
        "time\n";
    char out[OUT_MAX];
    cr_assert_eq(check("broken", 0, out, sizeof out), 1, "%s", out);
    cr_assert_str_eq(out, expected);
}

Test(check_layers, a_failure_says_so_on_stderr)
{
    char out[OUT_MAX];
    cr_assert_eq(check("broken", 1, out, sizeof out), 1);
    cr_assert_str_eq(out, "check_layers: the floors do not hold (see ARCHITECTURE.md)\n");
}
