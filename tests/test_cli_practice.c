/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * napkin practice: the verdict on one answer, as the book's answer boxes
 * show it, and the variant's numbers.  Seed 0's answers are worked by hand
 * from the printed exercise: 12.1 needs 160 GPUs (6 x 13e9 x 2e12 FLOP at 40 %
 * of 989.4 TFLOP/s over 30 days is 152.08, rounded up to servers of eight),
 * the spreadsheet rents 80; 12.7(b) is 73.53 days. */
#include "cli_run.h"
#include "course_seed.h"
#include "practice_set.h"

static char out[OUT_MAX];

static void expect_verdict(const char *args, const char *verdict, const char *hint_word)
{
    char full[1024];
    snprintf(full, sizeof full, "practice --chapter 12 %s --format tsv", args);
    cr_assert_eq(run(full, out, sizeof out), 0, "%s:\n%s", args, out);
    char want[64];
    snprintf(want, sizeof want, "verdict\t%s\t", verdict);
    cr_expect(strstr(out, want) != NULL, "%s: want %s:\n%s", args, verdict, out);
    if (hint_word)
        cr_expect(strstr(out, hint_word) != NULL, "%s: hint should say '%s':\n%s", args, hint_word, out);
}

Test(cli_practice, verdicts_on_hand_answers)
{
    expect_verdict("--part '12.1(b)' --answer 160", "right", NULL);
    expect_verdict("--part '12.1(b)' --answer 80", "slip", "sparsity");
    expect_verdict("--part '12.1(b)' --answer 168", "close", "servers of eight");
    expect_verdict("--part '12.1(b)' --answer 1600", "off", NULL);
    expect_verdict("--part '12.7(b)' --answer 73.5", "right", NULL);
    expect_verdict("--part '12.7(b)' --answer '1,764'", "slip", "hours"); /* 73.53 x 24 = 1764.7 */
    expect_verdict("--part '12.7(b)' --answer 'about 70'", "missing", NULL);
    /* a utilisation of 0.8 (4/s at 0.2 s) typed as a percentage; a goodput in percent stays */
    snprintf(out, sizeof out, "%s", "");
    cr_assert_eq(run("practice --chapter 5 --part '5.2(a)' --answer '80%' --format tsv", out, sizeof out), 0);
    cr_expect(strstr(out, "verdict\tright\t") != NULL, "%s", out);
    expect_verdict("--part '12.5(a2)' --answer '95%'", "right", NULL);
    /* seed 4711 asks about 7B on 15T tokens in 14 days at 38 %: 1,392 GPUs */
    expect_verdict("--seed 4711 --part '12.1(b)' --answer 1,392", "right", NULL);
    expect_verdict("--seed 4711 --part '12.1(b)' --answer 160", "off", NULL);
}

Test(cli_practice, the_variant_never_prints_the_answer)
{
    cr_assert_eq(run("practice --chapter 12 --format json", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "\"ch12_ex1_params_b\", \"value\": 13, \"text\": \"13\"") != NULL, "%s", out);
    cr_expect(strstr(out, "\"text\": \"16,384\"") != NULL, "%s", out);
    /* 160 GPUs, 57.03 days, 73.53 days, 84.37 %: none in the output */
    cr_expect(strstr(out, "160") == NULL && strstr(out, "57.0") == NULL && strstr(out, "73.5") == NULL &&
                  strstr(out, "84.3") == NULL,
              "%s", out);
}

Test(cli_practice, bad_flags)
{
    const struct {
        const char *args, *says;
    } cases[] = {
        {"practice --chapter 99", "--chapter 99 has no exercise variants"},
        {"practice --chapter 12 --seed -3", "--seed"},
        {"practice --chapter 12 --seed 99999999999", "--seed"},
        {"practice --chapter 12 --part '12.9(z)' --answer 3", "no part '12.9(z)'"},
        {"practice --chapter 12 --answer 3", "--answer needs --part"},
        {"practice --chapter 12 --part '12.1(a)'", "--part needs --answer"},
        {"practice", "--chapter"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect_eq(run(cases[i].args, out, sizeof out), 2, "%s:\n%s", cases[i].args, out);
        cr_expect(strstr(out, cases[i].says) != NULL, "%s: should say '%s':\n%s", cases[i].args, cases[i].says, out);
    }
}

/* One seed range: 0 to PRACTICE_MAX_SEED, the range the page draws "new
 * variant" seeds from and the grade program and $NB_SEED take, holding every
 * course seed (1 to COURSE_SEED_MAX); both ends give a variant, one past the
 * end and anything but digits is refused by name with the range. */
Test(cli_practice, seeds_at_the_bounds_of_the_one_range)
{
    const unsigned long long good[] = {0, 1, COURSE_SEED_MAX, COURSE_SEED_MAX + 2, PRACTICE_MAX_SEED};
    for (size_t i = 0; i < sizeof good / sizeof good[0]; i++) {
        char args[128], want[64];
        snprintf(args, sizeof args, "practice --chapter 12 --seed %llu --format tsv", good[i]);
        cr_expect_eq(run(args, out, sizeof out), 0, "%s:\n%s", args, out);
        snprintf(want, sizeof want, "seed\t%llu\t", good[i]);
        cr_expect(strstr(out, want) != NULL, "%s: want '%s':\n%s", args, want, out);
        snprintf(args, sizeof args, "practice --chapter 12 --seed %llu --part '12.1(b)' --answer 160 --format tsv", good[i]);
        cr_expect_eq(run(args, out, sizeof out), 0, "%s:\n%s", args, out);
    }
    char range[64];
    snprintf(range, sizeof range, "from 0 to %llu", PRACTICE_MAX_SEED);
    char past[32];
    snprintf(past, sizeof past, "%llu", PRACTICE_MAX_SEED + 1);
    const char *bad[] = {past, "-1", "abc", "1e3", "+5", "' 5'", "4711x", "18446744073709551617"};
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        char args[128];
        snprintf(args, sizeof args, "practice --chapter 12 --seed %s", bad[i]);
        cr_expect_eq(run(args, out, sizeof out), 2, "%s:\n%s", args, out);
        cr_expect(strstr(out, "--seed") != NULL && strstr(out, range) != NULL, "%s: should name --seed and say '%s':\n%s",
                  args, range, out);
    }
}
