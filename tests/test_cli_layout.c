/* The layout flags (--tp, --attention-dp, --moe-tp, --moe-ep and its alias
 * --ep) through decode, prefill, serve and memory: refusals exit 2 naming
 * the flag, memory per GPU by hand (tests/test_layout_step.c derives the
 * bytes), the old --ep calls the same as their layout, and the reports'
 * layout lines. */
#include "cli_run.h"

static void refused(const char *args, const char *flag)
{
    char out[OUT_MAX];
    cr_expect_eq(run(args, out, sizeof out), 2, "%s: %s", args, out);
    cr_expect(strstr(out, flag) != NULL, "%s should name %s: %s", args, flag, out);
}

Test(cli_layout, refusals_name_the_flag)
{
    refused("decode --model deepseek-v3 --gpu h200 --dtype fp8 --attention-dp 8 --moe-tp 2 --moe-ep 8", "--moe-ep");
    refused("decode --model deepseek-v3 --gpu h200 --dtype fp8 --attention-dp 8 --moe-tp 3", "--moe-tp");
    refused("decode --model deepseek-v3 --gpu h200 --dtype fp8 --tp 3", "--tp");
    refused("decode --model llama3-70b --gpu h100 --moe-tp 2", "--moe-tp");
    refused("decode --model deepseek-v3 --gpu h200 --dtype fp8 --ep 8 --moe-ep 8", "--moe-ep");
    refused("prefill --model deepseek-v3 --gpu h200 --dtype fp8 --attention-dp 3 --moe-ep 3", "--moe-ep");
    refused("serve --model deepseek-v3 --gpu h200 --dtype fp8 --attention-dp 8 --search", "--attention-dp");
    refused("memory --model deepseek-v3 --gpu h200 --dtype fp8 --tp 4 --moe-ep 6", "--moe-ep");
}

/* 98,856,229,888 B per GPU at DEP 8 and 83,878,300,544 at TP 8 (moe-tp 8). */
Test(cli_layout, memory_of_two_layouts)
{
    char out[OUT_MAX];
    cr_assert_eq(run("memory --model deepseek-v3 --gpu h200 --dtype fp8 --attention-dp 8 --moe-ep 8 --format tsv", out,
                     sizeof out), 0, "%s", out);
    cr_expect_eq(tsv_value(out, "weight_bytes_per_gpu"), 98856229888.0);
    cr_expect_eq(tsv_value(out, "replica_gpus"), 8);
    cr_assert_eq(run("memory --model deepseek-v3 --gpu h200 --dtype fp8 --tp 8 --moe-tp 8 --format tsv", out,
                     sizeof out), 0, "%s", out);
    cr_expect_eq(tsv_value(out, "weight_bytes_per_gpu"), 83878300544.0);
}

/* --tp 2 --ep 8 means tp 2, attention-dp 4, moe-tp 1, moe-ep 8: the same step,
 * and the replica's tokens/s over its 8 GPUs. */
Test(cli_layout, old_ep_call_is_its_layout)
{
    char a[OUT_MAX], b[OUT_MAX];
    cr_assert_eq(run("decode --model deepseek-v3 --gpu h200 --dtype fp8 --tp 2 --ep 8 --batch 64 --format tsv", a,
                     sizeof a), 0, "%s", a);
    cr_assert_eq(run("decode --model deepseek-v3 --gpu h200 --dtype fp8 --tp 2 --attention-dp 4 --moe-tp 1 "
                     "--moe-ep 8 --batch 64 --format tsv", b, sizeof b), 0, "%s", b);
    cr_expect_eq(tsv_value(a, "step_time"), tsv_value(b, "step_time"));
    cr_expect_eq(tsv_value(a, "attention_dp"), 4);
    cr_expect_eq(tsv_value(a, "concurrency_per_replica"), 4 * 64);
    double tps = tsv_value(a, "tokens_per_s");
    cr_expect(fabs(tsv_value(a, "group_tokens_per_s") - 4 * tps) <= 1e-9 * tps);
    cr_expect(fabs(tsv_value(a, "tokens_per_s_per_gpu") - 4 * tps / 8) <= 1e-9 * tps);
}

/* serve at DEP 8: the concurrency is per attention rank, the replica's 8 times it. */
Test(cli_layout, serve_reports_the_layout)
{
    char out[OUT_MAX];
    cr_assert_eq(run("serve --model deepseek-v3 --gpu h200 --dtype fp8 --attention-dp 8 --moe-ep 8 --concurrency 32 "
                     "--roofline --format tsv", out, sizeof out), 0, "%s", out);
    cr_expect_eq(tsv_value(out, "moe_ep"), 8);
    cr_expect_eq(tsv_value(out, "concurrency_per_rank"), 32);
    cr_expect_eq(tsv_value(out, "concurrency_per_replica"), 256);
    double tps = tsv_value(out, "tokens_per_s");
    cr_expect(fabs(tsv_value(out, "tokens_per_s_per_gpu") - tps) <= 1e-9 * tps); /* 8 ranks of one GPU */
}
