/* Variety of the exercise variants: over 30 consecutive seeds (1 to 30, a
 * class of 30), how many distinct answer keys each part draws.  Students
 * who share a key can share answers, so most parts of every chapter draw at
 * least 10 distinct keys.  Two keys count as one when they agree to four
 * significant figures (what a student writes: a difference in the last bits
 * of a subtraction is not another answer).  The distribution per exercise
 * of every chapter is printed (the fewest, the most and the parts at 10 or
 * more), so a narrow exercise shows in the test's output. */
#include "practice.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

enum { CLASS = 30, ENOUGH = 10 };

/* x to four significant figures. */
static double four_figures(double x)
{
    if (x == 0 || !isfinite(x))
        return x;
    double scale = pow(10, 3 - floor(log10(fabs(x))));
    return round(x * scale) / scale;
}

/* Distinct expected values of each part of chapter over seeds 1..CLASS,
 * into counts[] in the printed variant's part order; returns the number
 * of parts. */
static int distinct_keys(int chapter, int counts[PRACTICE_MAX_PARTS], practice_set *printed)
{
    cr_assert_eq(practice_build(chapter, 0, printed), 0);
    static practice_set sets[CLASS];
    for (int k = 0; k < CLASS; k++)
        cr_assert_eq(practice_build(chapter, (uint64_t)(k + 1), &sets[k]), 0, "chapter %d seed %d", chapter, k + 1);
    for (int p = 0; p < printed->n_parts; p++) {
        double seen[CLASS];
        int n = 0;
        for (int k = 0; k < CLASS; k++) {
            const practice_part *q = practice_find(&sets[k], printed->parts[p].id);
            cr_assert(q != NULL, "chapter %d seed %d has no %s", chapter, k + 1, printed->parts[p].id);
            double v = four_figures(judge_expected(&q->judge));
            int dup = 0;
            for (int j = 0; j < n && !dup; j++)
                dup = seen[j] == v;
            if (!dup)
                seen[n++] = v;
        }
        counts[p] = n;
    }
    return printed->n_parts;
}

/* "6.1: 1-11 keys, 3 of 4 parts at 10 or more" per exercise; the share of
 * the chapter's parts at ENOUGH or more. */
static double report(int chapter)
{
    practice_set s;
    int counts[PRACTICE_MAX_PARTS];
    int n = distinct_keys(chapter, counts, &s), enough = 0;
    printf("chapter %d, distinct keys over seeds 1-%d:", chapter, CLASS);
    for (int p = 0; p < n;) {
        int e = s.parts[p].exercise, lo = CLASS, hi = 0, parts = 0, ok = 0;
        for (; p < n && s.parts[p].exercise == e; p++, parts++) {
            lo = counts[p] < lo ? counts[p] : lo;
            hi = counts[p] > hi ? counts[p] : hi;
            ok += counts[p] >= ENOUGH;
        }
        enough += ok;
        printf(" %d.%d %d-%d (%d/%d);", chapter, e, lo, hi, ok, parts);
    }
    printf(" %d of %d parts at %d or more\n", enough, n, ENOUGH);
    return (double)enough / n;
}

/* Every chapter: more than half of its parts draw 10 or more keys in a
 * class of 30, and two in three over the book.  The parts that cannot are
 * fixed by their question: a count the model fixes (8.2's kernels, 1.7's
 * Mixtral experts), a yes/no or a next state (11.7), a GPU table with few
 * rows (1.1's dense fp8 rates, 1.5's five GPUs), a tensor-parallel degree
 * of 4 or 8 (1.4(a)), the published figures an exercise quotes (12.7(a)). */
Test(practice_variety, most_parts_of_every_chapter_draw_ten_keys_in_a_class_of_30)
{
    const char *list = practice_chapters();
    int chapters = 0;
    double share_sum = 0;
    for (const char *c = list; *c;) {
        int chapter = 0;
        while (*c >= '0' && *c <= '9')
            chapter = 10 * chapter + (*c++ - '0');
        while (*c == ' ')
            c++;
        double share = report(chapter);
        cr_expect(share > 0.5, "chapter %d: only %.0f %% of its parts draw %d keys over %d seeds", chapter,
                  100 * share, ENOUGH, CLASS);
        share_sum += share;
        chapters++;
    }
    cr_expect(share_sum / chapters >= 2.0 / 3, "over the book, %.0f %% of a chapter's parts draw %d keys (mean)",
              100 * share_sum / chapters, ENOUGH);
}
