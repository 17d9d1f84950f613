/* The `napkin spec` subcommand: its numbers against hand arithmetic and
 * Leviathan et al., and its errors (exit 2, naming the valid choices). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli_run.h"


Test(cli_spec, tokens_and_speedup_with_given_c)
{
    char out[OUT_MAX];
    cr_assert_eq(run("spec --alpha 0.8 --gamma 4 --c 0.05 --format tsv", out, sizeof out), 0, "%s", out);
    /* 1 + .8 + .64 + .512 + .4096 = 3.3616; regime (i): 3.3616 / 1.2 = 2.801333 */
    cr_assert_float_eq(tsv_value(out, "tokens_per_round"), 3.3616, 1e-9);
    cr_assert_float_eq(tsv_value(out, "speedup_free"), 2.8013333, 1e-6);
    cr_assert_float_eq(tsv_value(out, "c"), 0.05, 1e-12);
    /* sqrt(2.57004544) = 1.603136 (variance worked in test_specdec) */
    cr_assert_float_eq(tsv_value(out, "tokens_stddev"), 1.603136, 1e-6);
    /* at batch 1 verification is nearly free: regime (ii) within 1% of (i) */
    cr_assert(fabs(tsv_value(out, "speedup_roofline") / 2.8013333 - 1.0) < 0.01);
}

Test(cli_spec, leviathan_row)
{
    char out[OUT_MAX];
    /* Leviathan et al. Table 1, alpha 0.6, gamma 2, c 0: 1.96x */
    cr_assert_eq(run("spec --alpha 0.6 --gamma 2 --c 0 --format tsv", out, sizeof out), 0, "%s", out);
    cr_assert_eq(lround(100 * tsv_value(out, "speedup_free")), 196);
}

Test(cli_spec, draft_model_and_json)
{
    char out[OUT_MAX];
    cr_assert_eq(run("spec --alpha 0.7 --draft llama3-8b --model llama3-70b --gpu h100 --tp 8 --batch 64 "
                     "--format json",
                     out, sizeof out),
                 0, "%s", out);
    cr_assert(strstr(out, "\"speedup_roofline\":") != NULL, "%s", out);
    cr_assert(strstr(out, "\"break_even_batch\":") != NULL);
    cr_assert(strstr(out, "\"draft\": \"llama3-8b\"") != NULL, "%s", out);
    /* the table format shows the distribution of N: gamma + 1 = 5 rows */
    cr_assert_eq(run("spec --alpha 0.7", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "regime (ii)") != NULL);
}

Test(cli_spec, bad_input_exits_2_naming_choices)
{
    char out[OUT_MAX];
    cr_assert_eq(run("spec --draft gpt-9", out, sizeof out), 2);
    cr_assert(strstr(out, "llama3.2-1b") != NULL, "choices not named: %s", out);
    cr_assert_eq(run("spec --gpu tpu", out, sizeof out), 2);
    cr_assert(strstr(out, "h100") != NULL, "%s", out);
    cr_assert_eq(run("spec --format xml", out, sizeof out), 2);
    cr_assert(strstr(out, "json") != NULL, "%s", out);
    cr_assert_eq(run("spec --c 0.1 --draft llama3-8b", out, sizeof out), 2);
    cr_assert_eq(run("spec --c -1", out, sizeof out), 2);
    cr_assert_eq(run("spec --alpha 1.5", out, sizeof out), 2);
    cr_assert_eq(run("spec --gamma 0", out, sizeof out), 2);
    cr_assert_eq(run("spec --frobnicate", out, sizeof out), 2);
    /* 64 attention heads do not split over 3 GPUs */
    cr_assert_eq(run("spec --tp 3", out, sizeof out), 2);
    cr_assert(strstr(out, "napkin spec:") != NULL, "%s", out);
}

/* A batch that does not fit is refused (exit 1) with the largest that does.
 * LLaMA-3-70B at TP 4 on H100 with the LLaMA-3.2-1B draft on the same GPUs:
 * usable 0.9 x 85,520,809,984 = 76,968,728,985.6 B; weights 35,276,853,248 +
 * 1,235,814,400 x 2 / 4 = 617,907,200; reserve (the 70B's) 8192 x 84,992 + 2 x
 * 256 x 32,064 x 4 = 761,921,536; left 40,312,047,001.6 B.  KV per token per GPU
 * 81,920 + 2 x 16 x 2 x 64 x 2 = 90,112 B over 4096 + 4 + 1 tokens = 369,549,312
 * B a sequence: 109.08 -> 109. */
Test(cli_spec, batch_beyond_memory_exits_1)
{
    char out[OUT_MAX];
    cr_assert_eq(run("spec --alpha 0.8 --gamma 4 --batch 256 --context 4096", out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "largest batch that fits is 109") != NULL, "%s", out);
    cr_assert_eq(run("spec --alpha 0.8 --gamma 4 --batch 109 --context 4096 --format tsv", out, sizeof out), 0,
                 "%s", out);
    cr_assert_eq(tsv_value(out, "max_batch"), 109);
    cr_assert_eq(run("spec --batch 4096 --context 131072", out, sizeof out), 1, "%s", out);
}

/* The break-even search stops at the memory limit; "none" is null in JSON. */
Test(cli_spec, no_loss_within_memory_is_null)
{
    char out[OUT_MAX];
    cr_assert_eq(run("spec --alpha 0.8 --gamma 4 --context 4096 --format json", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "\"break_even_batch\": null") != NULL, "%s", out);
    cr_assert(strstr(out, "no loss within memory") != NULL, "%s", out);
    cr_assert_eq(run("spec --alpha 0.8 --gamma 4 --context 4096 --format tsv", out, sizeof out), 0, "%s", out);
    cr_assert_eq(tsv_value(out, "break_even_search_max"), 109);
}

/* A TP the draft cannot take names --draft-tp. */
Test(cli_spec, bad_draft_tp_is_named)
{
    char out[OUT_MAX];
    cr_assert_eq(run("spec --tp 64", out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "--draft-tp") != NULL, "%s", out);
}
