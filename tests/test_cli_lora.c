/* The `napkin lora` subcommand: its numbers against hand arithmetic from the
 * configs and the GPU row, and its exit codes (1: does not fit, naming the
 * largest that does; 2: a bad flag, naming the valid choices). */
#include "specs.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli_run.h"


#define BASE70 "lora --model llama3-70b --gpu h100 --tp 4 --rank 16 --targets q,k,v,o --adapters 300 --context 4096"

Test(cli_lora, the_issue_example_by_hand)
{
    char out[OUT_MAX];
    cr_assert_eq(run(BASE70 " --slots 8 --distinct 8 --batch 64 --format tsv", out, sizeof out), 0, "%s", out);
    /* 70B r 16 q,k,v,o: (2 x 16(8192+8192) + 2 x 16(8192+1024)) x 80 = 65,536,000 */
    cr_assert_float_eq(tsv_value(out, "adapter_params"), 65536000.0, 0.5);
    /* per GPU at tp 4: (2 x 16(8192+2048) + 2 x 16(8192+256)) x 80 x 2 B = 95,682,560 */
    cr_assert_float_eq(tsv_value(out, "adapter_bytes_per_gpu"), 95682560.0, 0.5);
    cr_assert_float_eq(tsv_value(out, "slots_bytes_per_gpu"), 8 * 95682560.0, 1.0);
    cr_assert_float_eq(tsv_value(out, "kv_budget_without_slots") - tsv_value(out, "kv_budget_bytes"),
                       8 * 95682560.0, 16.0);
    /* 300 copies at tp 4 = 1200 GPUs against 4 */
    cr_assert_eq(tsv_value(out, "copies_gpus"), 1200);
    cr_assert_eq(tsv_value(out, "adapters_gpus"), 4);
    /* Memory per GPU: usable 0.9 x the row's driver capacity; weights
     * 35,276,853,248 B (70.55e9 bf16 parameters / 4); reserve 8192 x 84,992 +
     * 2 x 256 x 32,064 x 4 = 761,921,536 B; KV 2 x 80 x 2 x 128 x 2 = 81,920 B a
     * token, 335,544,320 B a 4096-token sequence. */
    gpu_spec g = gpu_builtin("h100");
    double left = 0.9 * g.mem_bytes - 35276853248.0 - 761921536.0;
    cr_assert_eq(tsv_value(out, "max_batch_without_slots"), floor(left / 335544320.0));
    cr_assert_eq(tsv_value(out, "max_batch"), floor((left - 8 * 95682560.0) / 335544320.0));
    cr_assert_float_eq(tsv_value(out, "kv_tokens_lost"), 8 * 95682560.0 / 81920.0, 1e-3);
    /* load on miss: this GPU's shard over its PCIe link */
    cr_assert_float_eq(tsv_value(out, "load_time"), 95682560.0 / g.host_bw, 1e-12);
    /* 2 kernels x 4 targets x 80 layers, 2.5 us each by default */
    cr_assert_eq(tsv_value(out, "launches"), 640);
    cr_assert_float_eq(tsv_value(out, "adapter_time_launch"), 640 * 2.5e-6, 1e-12);
    /* the adapter weights read: D = 8 shards */
    cr_assert_float_eq(tsv_value(out, "adapter_weight_bytes"), 8 * 95682560.0, 8.0);
    /* B / D = 8 FLOP per weight byte in bf16 (2 FLOP per 2-byte weight per token) */
    cr_assert_float_eq(tsv_value(out, "adapter_intensity"), 8.0, 1e-9);
    double base = tsv_value(out, "base_step_time"), step = tsv_value(out, "step_time");
    cr_assert_float_eq(tsv_value(out, "step_ratio"), step / base, 1e-3);
    cr_assert_float_eq(tsv_value(out, "tokens_per_s"), 64 / step, 1e-3 * 64 / step);
    /* uniform popularity: 300 (1 - (299/300)^64) (exercise 6.6's answer, so the
     * arithmetic rather than its result) */
    cr_assert_float_eq(tsv_value(out, "expected_distinct_uniform"), 300 * (1 - pow(299.0 / 300, 64)), 0.01);
}

Test(cli_lora, adapter_ops_by_hand_tp1)
{
    char out[OUT_MAX];
    cr_assert_eq(run("lora --model llama3-8b --gpu h100 --rank 16 --targets q --batch 64 --distinct 8 --slots 8 "
                     "--launch-us 0 --format tsv",
                     out, sizeof out),
                 0, "%s", out);
    /* per layer: shrink 1,574,912 B and expand 2,099,200 B (worked in
     * test_lora.c), both memory-bound on the H100, x 32 layers */
    gpu_spec g = gpu_builtin("h100");
    cr_assert_float_eq(tsv_value(out, "adapter_time_ops"), 32 * 3674112.0 / g.mem_bw, 1e-9);
    cr_assert_float_eq(tsv_value(out, "adapter_time_launch"), 0.0, 1e-15);
    /* the 8B with r 16 on q: 16 x 8192 x 32 = 4,194,304 parameters */
    cr_assert_float_eq(tsv_value(out, "adapter_params"), 4194304.0, 0.5);
}

Test(cli_lora, json_and_table)
{
    char out[OUT_MAX];
    cr_assert_eq(run(BASE70 " --slots 8 --batch 64 --format json", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "\"by_distinct\":") != NULL, "%s", out);
    cr_assert(strstr(out, "\"step_ratio\":") != NULL, "%s", out);
    /* default D: the uniform expectation (58) held to the 8 slots */
    cr_assert(strstr(out, "\"distinct\": 8") != NULL, "%s", out);
    cr_assert_eq(run(BASE70 " --slots 8 --batch 64", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "The memory limit") != NULL, "%s", out);
    cr_assert_eq(run("lora --help", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "--max-rank") != NULL, "%s", out);
}

Test(cli_lora, padded_rank_costs_more)
{
    char out[OUT_MAX];
    cr_assert_eq(run(BASE70 " --rank 8 --max-rank 64 --slots 8 --batch 64 --distinct 8 --format tsv", out, sizeof out),
                 0, "%s", out);
    /* a slot at rank 64 is 8 times a rank-8 adapter */
    cr_assert_float_eq(tsv_value(out, "slot_bytes_per_gpu"), 8 * tsv_value(out, "adapter_bytes_per_gpu"), 1.0);
    cr_assert(tsv_value(out, "padded_step_ratio") > tsv_value(out, "step_ratio"));
}

Test(cli_lora, does_not_fit_exits_1)
{
    char out[OUT_MAX];
    gpu_spec g = gpu_builtin("h100");
    double left = 0.9 * g.mem_bytes - 35276853248.0 - 761921536.0; /* as above */
    int largest = (int)floor((left - 8 * 95682560.0) / 335544320.0);
    cr_assert_eq(run(BASE70 " --slots 8 --batch 400", out, sizeof out), 1, "%s", out);
    char want[64];
    snprintf(want, sizeof want, "largest batch that fits is %d", largest);
    cr_assert(strstr(out, want) != NULL, "%s", out);
    /* more distinct adapters than slots */
    cr_assert_eq(run(BASE70 " --slots 4 --distinct 5 --batch 64", out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "largest --distinct that fits is 4") != NULL, "%s", out);
    /* no slot, no adapter */
    cr_assert_eq(run(BASE70 " --slots 0 --batch 8", out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "--slots") != NULL, "%s", out);
    /* slots that eat the whole KV budget */
    cr_assert_eq(run(BASE70 " --slots 2000 --batch 1", out, sizeof out), 1, "%s", out);
}

Test(cli_lora, bad_flags_exit_2)
{
    char out[OUT_MAX];
    cr_assert_eq(run(BASE70 " --targets q,qkv", out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "'qkv'") && strstr(out, "gate") && strstr(out, "down"), "%s", out);
    cr_assert_eq(run(BASE70 " --rank 0", out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "--rank") != NULL, "%s", out);
    cr_assert_eq(run(BASE70 " --rank 8193", out, sizeof out), 2, "%s", out); /* hidden is 8192 */
    cr_assert(strstr(out, "8192") != NULL, "%s", out);
    cr_assert_eq(run(BASE70 " --max-rank 8", out, sizeof out), 2, "%s", out);
    cr_assert_eq(run(BASE70 " --distinct 65 --batch 64", out, sizeof out), 2, "%s", out);
    cr_assert_eq(run(BASE70 " --launch-us -1", out, sizeof out), 2, "%s", out);
    cr_assert_eq(run(BASE70 " --adapter-dtype fp7", out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "bf16") != NULL, "%s", out);
    cr_assert_eq(run("lora --model llama3-70b --gpu h100 --tp 3", out, sizeof out), 2, "%s", out);
    cr_assert_eq(run("lora --model gpt-9 --gpu h100", out, sizeof out), 2, "%s", out);
    cr_assert_eq(run(BASE70 " --frobnicate", out, sizeof out), 2, "%s", out);
}
