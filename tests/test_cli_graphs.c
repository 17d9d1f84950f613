/* The `napkin graphs` subcommand: its numbers against hand arithmetic, its
 * formats, and its exit codes (1 beyond memory, 2 for bad flags). */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli_run.h"


Test(cli_graphs, kernels_and_host_times_by_hand)
{
    char out[OUT_MAX];
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --tp 1 --batch 1 --context 4096 --launch-us 4 "
                     "--node-us 1 --format tsv",
                     out, sizeof out),
                 0, "%s", out);
    /* 10 kernels x 32 layers + 3 (see test_graphs.c) */
    cr_assert_eq(tsv_value(out, "kernels"), 323);
    /* 323 x 4 us; 4 + 323 x 1 us */
    cr_assert_float_eq(tsv_value(out, "host_eager"), 1292e-6, 1e-12);
    cr_assert_float_eq(tsv_value(out, "host_graph"), 327e-6, 1e-12);
    /* the GPU's 4.5 ms or more (15.0 GB of weights at 3.35 TB/s) is above both: nothing saved */
    cr_assert(tsv_value(out, "gpu_time") > 4.48e-3);
    cr_assert_eq(tsv_value(out, "saved"), 0);
    cr_assert_eq(tsv_value(out, "padded_tokens"), 1);
    /* 51 graphs x 26 MiB = 1,390,411,776 B */
    cr_assert_eq(tsv_value(out, "captured_graphs"), 51);
    cr_assert_float_eq(tsv_value(out, "graph_memory"), 1390411776.0, 1);
    cr_assert_eq(tsv_value(out, "threshold_batch"), 1);
}

Test(cli_graphs, host_bound_saving_and_threshold)
{
    char out[OUT_MAX];
    /* 20 us launches, context 4096: saved = 1 - gpu / 6.46 ms at batch 1;
     * the saving falls below 5% at batch 11 (worked in test_graphs.c) */
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --batch 1 --context 4096 --launch-us 20 --format tsv", out,
                     sizeof out),
                 0, "%s", out);
    cr_assert_float_eq(tsv_value(out, "step_eager"), 6.46e-3, 1e-12);
    double gpu = tsv_value(out, "gpu_time");
    cr_assert_float_eq(tsv_value(out, "saved"), 1 - gpu / 6.46e-3, 1e-9);
    cr_assert_eq(tsv_value(out, "threshold_batch"), 11);
}

Test(cli_graphs, tp_collectives_count_and_reader_capture_list)
{
    char out[OUT_MAX];
    /* 70B at tp 4: 12 x 80 + 5 = 965 kernels, 162 of them collectives;
     * batch 9 on the list 1,8,32 pads to 32; 3 graphs x 10 MiB */
    cr_assert_eq(run("graphs --model llama3-70b --gpu h100 --tp 4 --batch 9 --capture-sizes 32,1,8 --graph-mib 10 "
                     "--format tsv",
                     out, sizeof out),
                 0, "%s", out);
    cr_assert_eq(tsv_value(out, "kernels"), 965);
    cr_assert_eq(tsv_value(out, "comm_kernels"), 162);
    cr_assert_eq(tsv_value(out, "padded_tokens"), 32);
    cr_assert_eq(tsv_value(out, "captured_graphs"), 3);
    cr_assert_float_eq(tsv_value(out, "graph_memory"), 3 * 10 * 1048576.0, 1);
    /* all fusions: 12 - 3 = 9 a layer (two residuals and act_mul folded) x 80 + 5 = 725 */
    cr_assert_eq(run("graphs --model llama3-70b --gpu h100 --tp 4 --fusion all --format tsv", out, sizeof out), 0,
                 "%s", out);
    cr_assert_eq(tsv_value(out, "kernels"), 725);
}

Test(cli_graphs, beyond_the_capture_list_runs_eager)
{
    char out[OUT_MAX];
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --batch 20 --context 512 --capture-sizes 1,2,4,8 "
                     "--launch-us 20 --format json",
                     out, sizeof out),
                 0, "%s", out);
    cr_assert(strstr(out, "\"padded_tokens\": null") != NULL, "%s", out);
    cr_assert(strstr(out, "\"saved\": 0") != NULL, "%s", out);
    cr_assert(strstr(out, "runs eagerly") != NULL, "%s", out);
}

Test(cli_graphs, table_format_and_help)
{
    char out[OUT_MAX];
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "kernels per step") != NULL, "%s", out);
    cr_assert(strstr(out, "Share saved by batch") != NULL, "%s", out);
    cr_assert_eq(run("graphs --help", out, sizeof out), 0);
    cr_assert(strstr(out, "--capture-sizes") != NULL, "%s", out);
    cr_assert(strstr(out, "max(GPU time, launch time)") && strstr(out, "--step-host-us"), "%s", out);
    cr_assert_eq(run("help", out, sizeof out), 0);
    cr_assert(strstr(out, "graphs") != NULL, "%s", out);
}

Test(cli_graphs, does_not_fit_exits_1_naming_the_largest)
{
    char out[OUT_MAX];
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --batch 200 --context 4096", out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "largest batch that fits is") != NULL, "%s", out);
    cr_assert(strstr(out, "captured graphs") != NULL, "%s", out);
    /* 405B on one H100: weights do not fit */
    cr_assert_eq(run("graphs --model llama3-405b --gpu h100", out, sizeof out), 1, "%s", out);
}

Test(cli_graphs, bad_flags_exit_2_naming_choices)
{
    char out[OUT_MAX];
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --fusion bogus", out, sizeof out), 2);
    cr_assert(strstr(out, "norm-residual") != NULL, "%s", out);
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --capture-sizes 1,,2", out, sizeof out), 2);
    cr_assert(strstr(out, "--capture-sizes") != NULL, "%s", out);
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --threshold 1", out, sizeof out), 2);
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --launch-us -3", out, sizeof out), 2);
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --batch 0", out, sizeof out), 2);
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --format yaml", out, sizeof out), 2);
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --bogus", out, sizeof out), 2);
    cr_assert_eq(run("graphs --model gpt-9 --gpu h100", out, sizeof out), 2);
    cr_assert(strstr(out, "llama3-8b") != NULL, "%s", out);
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --tp 3", out, sizeof out), 2);
}

Test(cli_graphs, speculative_tokens_pad_in_tokens)
{
    char out[OUT_MAX];
    /* 9 sequences x (1 + 3) tokens = 36, padded to 40 on vLLM's list */
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --batch 9 --new-tokens 4 --context 1024 --format tsv", out,
                     sizeof out),
                 0, "%s", out);
    cr_assert_eq(tsv_value(out, "tokens"), 36);
    cr_assert_eq(tsv_value(out, "padded_tokens"), 40);
    /* 129 x 4 = 516 tokens: past the largest size (512), eager, nothing saved */
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --batch 129 --new-tokens 4 --context 512 --launch-us 20 "
                     "--format tsv",
                     out, sizeof out),
                 0, "%s", out);
    cr_assert_eq(tsv_value(out, "saved"), 0);
    cr_assert_eq(tsv_value(out, "largest_capture"), 512);
}

Test(cli_graphs, step_host_work_adds_to_both_steps)
{
    char out[OUT_MAX];
    /* the same step with 1,500 us of host work a step: eager 1.5 + 6.46 ms, graph 1.5 ms + the GPU */
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --batch 1 --context 4096 --launch-us 20 --step-host-us 1500 "
                     "--format tsv",
                     out, sizeof out),
                 0, "%s", out);
    cr_assert_float_eq(tsv_value(out, "step_host_s"), 1.5e-3, 1e-12);
    cr_assert_float_eq(tsv_value(out, "step_eager"), 1.5e-3 + 6.46e-3, 1e-12);
    double gpu = tsv_value(out, "gpu_time");
    cr_assert_float_eq(tsv_value(out, "step_graph"), 1.5e-3 + gpu, 1e-12);
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --step-host-us -3", out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "--step-host-us") != NULL, "%s", out);
}
