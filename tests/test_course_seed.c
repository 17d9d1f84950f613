/* A course's seeds: stable, different per salt, student and chapter, and
 * inside the range every tool accepts.  The expected seeds were computed
 * apart from this code, in Python, from the formula course_seed.h states:
 *   h = FNV-1a-64 over salt + b"\x1f" + id + b"\x1f" + b"%02d" % chapter
 *   (offset basis 0xcbf29ce484222325, prime 0x100000001b3), seed = 1 + h % 16777215 */
#include "course_seed.h"

#include <criterion/criterion.h>
#include <stdio.h>

Test(course_seed, matches_the_stated_formula)
{
    cr_assert_eq(course_seed("", "s001", 1), 9455224);
    cr_assert_eq(course_seed("fall2026", "s001", 1), 15696141);
    cr_assert_eq(course_seed("fall2026", "s001", 6), 16025996);
    cr_assert_eq(course_seed("fall2026", "s002", 1), 14709360);
    /* A NULL salt is the empty salt. */
    cr_assert_eq(course_seed(NULL, "s001", 1), 9455224);
}

Test(course_seed, refuses_what_names_no_student_or_chapter)
{
    cr_assert_eq(course_seed("x", NULL, 1), 0);
    cr_assert_eq(course_seed("x", "", 1), 0);
    cr_assert_eq(course_seed("x", "s001", 0), 0);
    cr_assert_eq(course_seed("x", "s001", 100), 0);
}

/* Over a class of 300 ids and every chapter, no seed is 0 (the printed
 * book) or past the range, and a salt change moves most of them. */
Test(course_seed, stays_in_range_and_moves_with_the_salt)
{
    int moved = 0, n = 0;
    for (int i = 0; i < 300; i++) {
        char id[16];
        snprintf(id, sizeof id, "%d", 1000 + i);
        for (int ch = 1; ch <= 13; ch++, n++) {
            uint64_t a = course_seed("2026", id, ch), b = course_seed("2027", id, ch);
            cr_assert(a >= 1 && a <= COURSE_SEED_MAX);
            cr_assert(b >= 1 && b <= COURSE_SEED_MAX);
            moved += a != b;
        }
    }
    /* Two independent draws from 2^24 - 1 values coincide with odds
     * 1 in 16.8 million; among 3,900 pairs none is expected. */
    cr_assert_eq(moved, n);
}
