/* napkin practice: an exercise variant's numbers and parts, and the verdict
 * on one answer, as the book's answer boxes show it.  The expected value is
 * never printed: the verdict says right, close (with a hint) or which slip. */
#include "cli_args.h"
#include "commands.h"
#include "judge.h"
#include "practice.h"
#include "practice_set.h"

#include <limits.h>
#include <stdio.h>

static const cli_doc DOC = {
    "practice",
    "exercise variants: a seed's numbers, and the verdict on your answer to one part",
    "--chapter N [--seed S] [--part ID --answer X] [--format table|tsv|json]",
    "Seed 0 is the printed book's version; any other seed draws the inputs from\n"
    "the ranges the exercise states and the library computes the answers.  With\n"
    "--part and --answer (\"57.0\", \"1,392\"), says whether the answer is right\n"
    "by the part's rule (exactly, to 1%, or within a range), close (within 10%),\n"
    "a typical slip (x2, x1000, bits for bytes, ...) or off, with a hint, and\n"
    "never the expected value.  `make grade` scores a whole set of answers.",
};

int cmd_practice(int argc, char **argv)
{
    int chapter = 0;
    const char *seed_text = NULL, *part_id = NULL, *answer = NULL;
    /* The seed range is practice_set.h's, the one every reader of a variant
     * takes (the page, the grade program, $NB_SEED): parsed by the same call. */
    char seed_help[96];
    snprintf(seed_help, sizeof seed_help, "variant, 0 to %llu (default 0, the printed book)", PRACTICE_MAX_SEED);
    cli_opt opts[] = {
        {"--chapter", OPT_POS_INT, &chapter, "N", "chapter number, e.g. 12 (one without variants is refused with the list)", 1, 0},
        {"--seed", OPT_STRING, &seed_text, "S", seed_help, 0, 0},
        {"--part", OPT_STRING, &part_id, "ID", "part to judge, as the exercise numbers it: 12.1(a)", 0, 0},
        {"--answer", OPT_STRING, &answer, "X", "your answer to --part, a number", 0, 0},
    };
    cli_common common;
    int rc = cli_parse(&DOC, argc, argv, opts, CLI_NOPTS(opts), &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    uint64_t seed = 0;
    if (practice_parse_seed(seed_text, &seed) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--seed: '%.64s' is not a seed: a whole number from 0 to %llu", seed_text,
                        PRACTICE_MAX_SEED);
    practice_set s;
    if (practice_build(chapter, seed, &s) != 0)
        return cli_fail(DOC.name, EXIT_USAGE, "--chapter %d has no exercise variants (chapters with variants: %s)",
                        chapter, practice_chapters());
    if ((answer != NULL) != (part_id != NULL))
        return cli_fail(DOC.name, EXIT_USAGE, "%s needs %s", answer ? "--answer" : "--part",
                        answer ? "--part ID" : "--answer X");
    const practice_part *part = part_id ? practice_find(&s, part_id) : NULL;
    if (part_id && !part) {
        char list[512];
        int k = 0;
        for (int i = 0; i < s.n_parts && k < (int)sizeof list - 16; i++)
            k += snprintf(list + k, sizeof list - (size_t)k, "%s%s", i ? ", " : "", s.parts[i].id);
        return cli_fail(DOC.name, EXIT_USAGE, "--part: no part '%s' in chapter %d (parts: %s)", part_id, chapter, list);
    }

    report *r = report_new(DOC.name);
    report_section(r, "Variant");
    report_int(r, "chapter", "chapter", chapter);
    report_int(r, "seed", "seed", (long long)seed);
    if (part) {
        judge_result j = judge_answer(&part->judge, practice_parse_answer(part, answer));
        char rule[64];
        report_section(r, "Your answer");
        report_text(r, "part", "part", part->id);
        report_text(r, "answer", "answer", answer);
        report_text(r, "rule", "judged", judge_rule_text(&part->judge, rule, sizeof rule));
        report_text(r, "verdict", "verdict", judge_verdict_name(j.verdict));
        report_text(r, "hint", "hint", j.hint);
    }
    report_table *t = report_table_add(r, "inputs", "The variant's numbers");
    report_col(t, "name", "name", U_TEXT, 0);
    report_col(t, "value", "value", U_REAL, 0);
    report_col(t, "text", "as printed", U_TEXT, 0);
    report_col(t, "lo", "from", U_REAL, 0);
    report_col(t, "hi", "to", U_REAL, 0);
    for (int i = 0; i < s.n_inputs; i++) {
        report_cell_text(t, s.inputs[i].name);
        char text[64];
        report_cell_num(t, s.inputs[i].value);
        report_cell_text(t, practice_input_text(&s.inputs[i], text, sizeof text));
        report_cell_num(t, s.inputs[i].lo);
        report_cell_num(t, s.inputs[i].hi);
    }
    t = report_table_add(r, "parts", "The parts");
    report_col(t, "id", "part", U_TEXT, 0);
    report_col(t, "exercise", "exercise", U_INT, 0);
    report_col(t, "what", "asks for", U_TEXT, 0);
    report_col(t, "unit", "unit", U_TEXT, 0);
    report_col(t, "rule", "judged", U_TEXT, 0);
    for (int i = 0; i < s.n_parts; i++) {
        char rule[64];
        report_cell_text(t, s.parts[i].id);
        report_cell_int(t, s.parts[i].exercise);
        report_cell_text(t, s.parts[i].what);
        report_cell_text(t, s.parts[i].unit);
        report_cell_text(t, judge_rule_text(&s.parts[i].judge, rule, sizeof rule));
    }
    rc = report_print(r, common.format, stdout);
    report_free(r);
    return rc;
}
