/* The `napkin train` subcommand as a reader runs it: the 7B / 1T / three
 * weeks question and the 70B-at-8k memory question against hand arithmetic,
 * the size suffixes, and the exit statuses (1 does not fit, 2 a bad flag). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli_run.h"


/* Field `col` (0-based) of the tsv row whose first field is `key`. */
static double tsv_row(const char *out, const char *key, int col)
{
    size_t len = strlen(key);
    for (const char *line = out; line && *line; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL)
        if (strncmp(line, key, len) == 0 && line[len] == '\t') {
            const char *p = line;
            for (int c = 0; c < col; c++)
                p = strchr(p, '\t') + 1;
            return strtod(p, NULL);
        }
    cr_assert_fail("no row %s in output:\n%s", key, out);
    return NAN;
}

Test(cli_train, seven_b_on_one_t_in_three_weeks)
{
    char out[OUT_MAX];
    cr_assert_eq(run("train --params 7B --tokens 1T --days 21 --gpu h100 --mfu 0.4 --goodput 1 --price 2 "
                     "--format tsv",
                     out, sizeof out),
                 0, "%s", out);
    /* 6 * 7e9 * 1e12 = 4.2e22 FLOP; / (989.4e12 * 0.4) = 1.0612492e8 GPU-s = 29,479.1 GPU-h;
     * over 1,814,400 s: 58.49 GPUs -> 64 (8 nodes) */
    cr_assert_float_eq(tsv_value(out, "flop_model"), 4.2e22, 1e9);
    cr_assert_float_eq(tsv_value(out, "gpu_hours_training"), 4.2e22 / (989.4e12 * 0.4) / 3600, 1e-3);
    cr_assert_float_eq(tsv_value(out, "gpus_exact"), 4.2e22 / (989.4e12 * 0.4) / 1814400, 1e-6);
    cr_assert_eq(tsv_value(out, "gpus_needed"), 64);
    cr_assert_eq(tsv_value(out, "nodes"), 8);
    /* 64 GPUs for 1.0612492e8 / 64 s rent the same 29,479.1 GPU-hours: $58,958 at $2 */
    cr_assert_float_eq(tsv_value(out, "cost"), 2 * 4.2e22 / (989.4e12 * 0.4) / 3600, 1e-2);
}

Test(cli_train, sparse_trap_halves_the_cluster)
{
    char out[OUT_MAX];
    /* the same question with fp8's dense peak (1978.9) asks for about half: 29.24 GPUs -> 32 */
    cr_assert_eq(run("train --params 7e9 --tokens 1e12 --days 21 --dtype fp8 --goodput 1 --format tsv", out,
                     sizeof out),
                 0, "%s", out);
    cr_assert_float_eq(tsv_value(out, "gpus_exact"), 4.2e22 / (1978.9e12 * 0.4) / 1814400, 1e-6);
    cr_assert_eq(tsv_value(out, "gpus_needed"), 32);
}

Test(cli_train, model_adds_the_attention_term_and_days_on_gpus)
{
    char out[OUT_MAX];
    cr_assert_eq(run("train --model llama3-8b --tokens 300B --seq 4096 --gpus 128 --goodput 1 --recompute full "
                     "--format tsv",
                     out, sizeof out),
                 0, "%s", out);
    /* N = 7,504,924,672 (test_train); 6N = 45,029,548,032; attention 12*32*4096*4096 = 6,442,450,944 */
    double per = 6 * 7504924672.0 + 6442450944.0;
    cr_assert_float_eq(tsv_value(out, "flop_per_token_attention"), 6442450944.0, 1);
    cr_assert_float_eq(tsv_value(out, "flop_model"), per * 3e11, per * 3e11 * 1e-12);
    cr_assert_float_eq(tsv_value(out, "days_on_gpus"), per * 3e11 / (989.4e12 * 0.4) / 128 / 86400, 1e-9);
    /* full recompute: hardware adds 2N + 4*32*4096*4096 per token; HFU = 0.4 * hw / model */
    double hw = per + 2 * 7504924672.0 + 2147483648.0;
    cr_assert_float_eq(tsv_value(out, "hfu"), 0.4 * hw / per, 1e-9);
}

Test(cli_train, the_cluster_must_hold_the_model)
{
    char out[OUT_MAX];
    cr_assert_eq(run("train --model llama3-8b --tokens 1T --days 21 --seq 4096 --zero 1 --goodput 1 --format tsv",
                     out, sizeof out),
                 0, "%s", out);
    /* N = 7,504,924,672; (6N + 6,442,450,944) * 1e12 / (989.4e12 * 0.4) / 1,814,400 = 71.71 -> 72 GPUs.
     * tp 1 pp 1 dp 72 with ZeRO-1: 8,030,261,248 params * (2 + 2 + 12/72) B = 33.46 GB; activations
     * 32 layers * 4096 * 139,392 B (test_12) = 18.27 GB; fp32 logits 4 * 4096 * 128256 = 2.10 GB */
    cr_assert_eq(tsv_value(out, "gpus_needed"), 72);
    cr_assert_eq(tsv_value(out, "layout_tp"), 1);
    cr_assert_eq(tsv_value(out, "layout_dp"), 72);
    double want = 8030261248.0 * (4 + 12.0 / 72) + 32 * 4096 * 139392.0 + 4.0 * 4096 * 128256;
    cr_assert_float_eq(tsv_value(out, "layout_memory"), want, 1e3);
    /* 70B on one node: 16 B x 70.6e9 = 1.13 TB over 8 GPUs holds in no layout */
    cr_assert_eq(run("train --model llama3-70b --tokens 1T --gpus 8", out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "no tp x pp x dp layout of 8 GPUs") != NULL, "%s", out);
}

Test(cli_train, failure_rate_flags)
{
    char out[OUT_MAX];
    /* 1 interruption per GPU-day, 1 hour each: lost share 64 / 24 at 64 GPUs is over 1;
     * at 8 GPUs 8/24: goodput 2/3 */
    cr_assert_eq(run("train --params 7B --tokens 1T --gpus 8 --interruptions 1 --hours-lost 1 --format tsv", out,
                     sizeof out),
                 0, "%s", out);
    cr_assert_float_eq(tsv_value(out, "goodput_given"), 1 - 8.0 / 24, 1e-12);
    cr_assert_eq(run("train --params 7B --tokens 1T --gpus 8 --goodput 0.9 --hours-lost 1", out, sizeof out), 2);
}

Test(cli_train, deadline_out_of_reach_exits_1)
{
    char out[OUT_MAX];
    /* 3.8e25 FLOP in 10 days at 41% needs 108,420 GPUs' worth; with Llama 3's failure
     * rate no cluster delivers more than 40,960 (test_train) */
    cr_assert_eq(run("train --params 405B --tokens 15.6T --days 10 --mfu 0.41", out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "no cluster meets") != NULL, "%s", out);
}

Test(cli_train, seventy_b_at_8k_memory)
{
    char out[OUT_MAX];
    cr_assert_eq(run("train --model llama3-70b --seq 8192 --micro-batch 1 --tp 8 --pp 4 --dp 16 --sp "
                     "--recompute selective --zero 1 --format tsv",
                     out, sizeof out),
                 0, "%s", out);
    /* hand arithmetic in test_train: 281,280,512 B per layer, 20 layers, 4 in flight;
     * weights and gradients 4,540,940,288 B each, optimizer 1,702,852,608 B */
    cr_assert_eq(tsv_value(out, "act_per_layer"), 281280512.0);
    cr_assert_eq(tsv_value(out, "activations"), 281280512.0 * 20 * 4);
    cr_assert_eq(tsv_value(out, "weights"), 4540940288.0);
    cr_assert_eq(tsv_value(out, "optimizer"), 1702852608.0);
    double state = 2 * 4540940288.0 + 1702852608.0;
    double cap = tsv_value(out, "capacity");
    cr_assert_eq(tsv_value(out, "fits"), state + 281280512.0 * 80 <= cap);
    cr_assert_eq(tsv_value(out, "max_micro_batch"), floor((cap - state) / (281280512.0 * 80)));
    /* the settings table: sp+full keeps 2 * 8192 * 8192 / 8 = 16,777,216 B per layer */
    cr_assert_eq(tsv_row(out, "sp+full", 1), 16777216.0);
    /* without SP the 8 h of norm and projection inputs stay whole: 751,042,560 */
    cr_assert_eq(tsv_row(out, "none", 1), 751042560.0);
}

Test(cli_train, does_not_fit_exits_1_naming_what_does)
{
    char out[OUT_MAX];
    /* microbatch 8 at the layout above: 8 * 22.5 GB of activations cannot fit 80 GB */
    cr_assert_eq(run("train --model llama3-70b --tp 8 --pp 4 --dp 16 --sp --zero 1 --micro-batch 8", out,
                     sizeof out),
                 1, "%s", out);
    cr_assert(strstr(out, "the largest that fits is") != NULL, "%s", out);
    /* 70B on one GPU: 16 B x 70.6e9 params alone exceed any GPU in the table */
    cr_assert_eq(run("train --model llama3-70b", out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "not even microbatch 1 fits") != NULL, "%s", out);
}

Test(cli_train, search_lists_layouts)
{
    char out[OUT_MAX];
    cr_assert_eq(run("train --model llama3-70b --search --gpus 64 --sp --recompute selective --format json", out,
                     sizeof out),
                 0, "%s", out);
    cr_assert(strstr(out, "\"layouts\": [") != NULL, "%s", out);
    /* the first that fits on 80 GB (hand check in test_train) */
    cr_assert(strstr(out, "{\"tp\": 8, \"pp\": 4, \"dp\": 2") != NULL, "%s", out);
    cr_assert_eq(run("train --model llama3-405b --search --gpus 8", out, sizeof out), 1, "%s", out);
}

Test(cli_train, bad_flags_exit_2_naming_them)
{
    char out[OUT_MAX];
    cr_assert_eq(run("train --model llama3-70b --tp 3", out, sizeof out), 2);
    cr_assert(strstr(out, "--tp 3") && strstr(out, "64 heads"), "%s", out);
    cr_assert_eq(run("train --model llama3-70b --pp 3", out, sizeof out), 2);
    cr_assert(strstr(out, "--pp 3") && strstr(out, "80 layers"), "%s", out);
    cr_assert_eq(run("train --params 7B --tokens 1TB", out, sizeof out), 2);
    cr_assert(strstr(out, "--tokens") && strstr(out, "1TB"), "%s", out);
    cr_assert_eq(run("train --params 7B --tokens -1T", out, sizeof out), 2);
    cr_assert_eq(run("train --model llama3-70b --recompute some", out, sizeof out), 2);
    cr_assert(strstr(out, "none, selective, full") != NULL, "%s", out);
    cr_assert_eq(run("train --model llama3-70b --zero 4", out, sizeof out), 2);
    cr_assert_eq(run("train --model llama3-70b --activations gpt", out, sizeof out), 2);
    cr_assert_eq(run("train --tokens 1T", out, sizeof out), 2);
    cr_assert(strstr(out, "--model or --params") != NULL, "%s", out);
    cr_assert_eq(run("train", out, sizeof out), 2);
    cr_assert_eq(run("train --model gpt-9 --tokens 1T", out, sizeof out), 2);
    cr_assert(strstr(out, "llama3-70b") != NULL, "%s", out);
    cr_assert_eq(run("train --params 7B --tokens 1T --mfu 1.5", out, sizeof out), 2);
    cr_assert_eq(run("train --params 7B --tokens 1T --gpu a100 --dtype fp8", out, sizeof out), 2);
    cr_assert_eq(run("train --model llama3-70b --search", out, sizeof out), 2);
    cr_assert(strstr(out, "--gpus") != NULL, "%s", out);
}

Test(cli_train, help_and_suffixes)
{
    char out[OUT_MAX];
    cr_assert_eq(run("train --help", out, sizeof out), 0);
    cr_assert(strstr(out, "--recompute") && strstr(out, "--zero") && strstr(out, "1T"), "%s", out);
    cr_assert_eq(run("help", out, sizeof out), 0);
    cr_assert(strstr(out, "train") != NULL);
    /* 300B = 3e11 and 15.6T = 1.56e13 tokens; 2.5K is 2,500 */
    cr_assert_eq(run("train --params 7B --tokens 300B --format tsv", out, sizeof out), 0, "%s", out);
    cr_assert_eq(tsv_value(out, "tokens"), 3e11);
    cr_assert_eq(tsv_value(out, "params"), 7e9);
    cr_assert_eq(run("train --params 2.5K --tokens 15.6T --format tsv", out, sizeof out), 0, "%s", out);
    cr_assert_float_eq(tsv_value(out, "tokens"), 1.56e13, 1);
    cr_assert_eq(tsv_value(out, "params"), 2500);
}

Test(cli_train, gradient_and_master_dtypes)
{
    char out[OUT_MAX];
    /* The first stage of TP 8 x PP 4 holds 2,270,470,144 parameters a GPU
     * (tests/test_ch12.c): fp32 gradients 4 B each, 9.0819 GB; with bf16
     * master weights the ZeRO-1 optimizer over 16 is 8 B / 16 each, 1.1352 GB. */
    cr_assert_eq(run("train --model llama3-70b --tp 8 --pp 4 --dp 16 --zero 1 --sp --grad-dtype fp32 "
                     "--master-dtype bf16 --format tsv",
                     out, sizeof out),
                 0, "%s", out);
    cr_assert_float_eq(tsv_value(out, "grads"), 2270470144.0 * 4, 1);
    cr_assert_float_eq(tsv_value(out, "optimizer"), 2270470144.0 * 8 / 16, 1);
    cr_assert_eq(run("train --model llama3-70b --grad-dtype fp16", out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "--grad-dtype") && strstr(out, "fp32"), "%s", out);
    cr_assert_eq(run("train --model llama3-70b --master-dtype fp8", out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "--master-dtype"), "%s", out);
}

Test(cli_train, suggestions_leave_out_what_is_set)
{
    char out[OUT_MAX];
    /* 405B on 8 GPUs: 6.5 TB of state cannot fit whatever the layout */
    cr_assert_eq(run("train --model llama3-405b --search --gpus 8 --sp", out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "try --zero 3, --recompute full or more GPUs") != NULL, "%s", out);
    cr_assert(strstr(out, "try --zero 3, --sp") == NULL, "suggests --sp though it is set: %s", out);
    cr_assert_eq(run("train --model llama3-405b --search --gpus 8 --sp --zero 3 --recompute full", out, sizeof out), 1,
                 "%s", out);
    cr_assert(strstr(out, "try more GPUs") != NULL, "%s", out);
}
