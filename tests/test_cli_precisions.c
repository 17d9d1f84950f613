/* The weight-precision flags (--weights, --moe-weights beside --dtype and
 * --kv) in memory, decode, prefill, serve and ep, their refusals naming the
 * flag, and the ep command's layout flags.  Expected numbers by hand. */
#include "cli_run.h"

/* DeepSeek-V3 in fp8 on 8 H200s: block scales on the routed experts add
 * 653,908,770,816 / 4096 = 159,645,696 B (tests/test_weight_format.c), a
 * GPU's eighth 19,955,712 B; int4_wo experts store 133/256 B a weight,
 * 314,182,729,728 B less, 39,272,841,216 B a GPU. */
Test(cli_precisions, memory_counts_the_experts_at_their_format)
{
    char a[OUT_MAX], b[OUT_MAX], c[OUT_MAX];
    const char *base = "memory --model deepseek-v3 --gpu h200 --tp 8 --dtype fp8 --format tsv --moe-weights ";
    char cmd[256];
    snprintf(cmd, sizeof cmd, "%sfp8", base);
    cr_assert_eq(run(cmd, a, sizeof a), 0, "%s", a);
    snprintf(cmd, sizeof cmd, "%sfp8_block", base);
    cr_assert_eq(run(cmd, b, sizeof b), 0, "%s", b);
    snprintf(cmd, sizeof cmd, "%sint4_wo", base);
    cr_assert_eq(run(cmd, c, sizeof c), 0, "%s", c);
    cr_expect(fabs(tsv_value(b, "weight_bytes_per_gpu") - tsv_value(a, "weight_bytes_per_gpu") - 19955712.0) < 1);
    cr_expect(fabs(tsv_value(a, "weight_bytes_per_gpu") - tsv_value(c, "weight_bytes_per_gpu") - 39272841216.0) < 1);
    cr_expect_eq(tsv_value(b, "moe_weight_bytes_per_weight"), 1.000244140625);
    cr_expect(strstr(b, "moe_weights_format\tfp8_block"), "%s", b);
    /* --dtype fp8 alone: 1 B a weight throughout, as per-tensor fp8 */
    cr_assert_eq(run("memory --model deepseek-v3 --gpu h200 --tp 8 --dtype fp8 --format tsv", b, sizeof b), 0);
    cr_expect_eq(tsv_value(b, "weight_bytes_per_gpu"), tsv_value(a, "weight_bytes_per_gpu"));
    cr_expect(!strstr(b, "moe_weights_format"), "no format line under --dtype alone");
}

/* --weights Q sets the experts too unless --moe-weights gives theirs:
 * Qwen3-235B with --weights int4_wo and --moe-weights int4_wo weigh the same. */
Test(cli_precisions, weights_set_the_experts_unless_moe_weights_does)
{
    char a[OUT_MAX], b[OUT_MAX];
    cr_assert_eq(run("memory --model qwen3-235b-a22b --gpu h200 --tp 4 --weights int4_wo --format tsv", a, sizeof a), 0,
                 "%s", a);
    cr_assert_eq(run("memory --model qwen3-235b-a22b --gpu h200 --tp 4 --weights int4_wo --moe-weights int4_wo "
                     "--format tsv", b, sizeof b), 0, "%s", b);
    cr_expect_eq(tsv_value(a, "weight_bytes_per_gpu"), tsv_value(b, "weight_bytes_per_gpu"));
    cr_assert_eq(run("memory --model qwen3-235b-a22b --gpu h200 --tp 4 --weights int4_wo --moe-weights fp8_block "
                     "--format tsv", b, sizeof b), 0, "%s", b);
    cr_expect_gt(tsv_value(b, "weight_bytes_per_gpu"), tsv_value(a, "weight_bytes_per_gpu"));
}

Test(cli_precisions, every_pricing_command_takes_the_flags)
{
    static const char *const CMDS[] = {
        "decode --model qwen3-235b-a22b --gpu h200 --tp 8 --batch 16 --weights fp8 --moe-weights fp8_block --kv fp8",
        "prefill --model qwen3-235b-a22b --gpu h200 --tp 8 --weights fp8_block --moe-weights int4_wo --kv fp8",
        "serve --model qwen3-235b-a22b --gpu h200 --tp 8 --concurrency 8 --weights bf16 --moe-weights fp8",
        "serve --model qwen3-235b-a22b --gpu h200 --dtype fp8 --moe-weights fp8_block --search --gpus 8",
        "serve --model qwen3-235b-a22b --gpu h200 --tp 8 --dtype fp8 --moe-weights fp8_block --disaggregate "
        "--prefill-gpus 8 --decode-gpus 8",
        "ep --model qwen3-235b-a22b --gpu h200 --ep 8 --moe-weights int4_wo",
    };
    static char out[OUT_MAX];
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++)
        cr_expect_eq(run(CMDS[i], out, sizeof out), 0, "%s: %s", CMDS[i], out);
}

Test(cli_precisions, refusals_name_the_flag)
{
    static const struct {
        const char *cmd, *flag;
    } cases[] = {
        {"memory --model llama3-8b --gpu h100 --weights fp9", "--weights"},
        {"memory --model deepseek-v3 --gpu h200 --tp 8 --moe-weights int4", "--moe-weights"},
        {"decode --model llama3-8b --gpu h100 --moe-weights fp8", "--moe-weights"},
        {"decode --model deepseek-v3 --gpu a100 --tp 8 --moe-weights fp8", "--moe-weights"},
        {"prefill --model qwen3-235b-a22b --gpu h200 --tp 8 --moe-weights nvfp4", "--moe-weights"},
        {"serve --model qwen3-235b-a22b --gpu h200 --tp 8 --weights bogus", "--weights"},
        {"ep --model deepseek-v3 --gpu h200 --ep 8 --moe-weights fp4", "--moe-weights"},
    };
    static char out[OUT_MAX];
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cr_expect_eq(run(cases[i].cmd, out, sizeof out), 2, "%s: %s", cases[i].cmd, out);
        cr_expect(strstr(out, cases[i].flag), "%s: %s", cases[i].cmd, out);
    }
}

/* ep with the layout flags: 8 attention ranks of one GPU, the experts split
 * moe-tp 2 x moe-ep 4 (2 x 4 = 8).  Each GPU holds 256 / 4 = 64 experts'
 * halves, and the group decodes 8 x 32 = 256 sequences a step. */
Test(cli_precisions, ep_takes_the_layout)
{
    char out[OUT_MAX];
    cr_assert_eq(run("ep --model deepseek-v3 --gpu h200 --attention-dp 8 --moe-tp 2 --moe-ep 4 --batch 32 --dtype fp8 "
                     "--format tsv", out, sizeof out), 0, "%s", out);
    cr_expect_eq(tsv_value(out, "attention_dp"), 8);
    cr_expect_eq(tsv_value(out, "moe_tp"), 2);
    cr_expect_eq(tsv_value(out, "moe_ep"), 4);
    cr_expect_eq(tsv_value(out, "concurrency_per_replica"), 256);
    cr_expect_eq(tsv_value(out, "experts_per_gpu"), 64);
    cr_expect(fabs(tsv_value(out, "tokens_per_s") / tsv_value(out, "tokens_per_s_per_gpu") - 8) < 1e-9);
    /* the default layout of --ep 8 is attention-dp 8, moe-tp 1 */
    cr_assert_eq(run("ep --model deepseek-v3 --gpu h200 --ep 8 --dtype fp8 --format tsv", out, sizeof out), 0);
    cr_expect_eq(tsv_value(out, "attention_dp"), 8);
    cr_expect_eq(tsv_value(out, "moe_tp"), 1);
    cr_expect_eq(run("ep --model deepseek-v3 --gpu h200 --attention-dp 8 --moe-tp 3 --moe-ep 4", out, sizeof out), 2,
                 "%s", out);
    cr_expect(strstr(out, "--moe-tp") || strstr(out, "--moe-ep") || strstr(out, "--attention-dp"), "%s", out);
    cr_expect_eq(run("ep --model deepseek-v3 --gpu h200 --ep 8 --moe-ep 8", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("ep --model deepseek-v3 --gpu h200 --batch 4", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--ep"), "%s", out);
}
