/* napkin serve --disaggregate with each pool's own layout: the concurrency
 * and the hand-off link by hand, the refusals naming the flag, and the
 * search choosing expert-parallel pools for DeepSeek-V3, its printed
 * throughput re-derived from its own printed step times. */
#include "cli_run.h"

/* The value of name + sfx in tsv output. */
static double val(const char *out, const char *name, const char *sfx)
{
    char k[64];
    snprintf(k, sizeof k, "%s%s", name, sfx);
    return tsv_value(out, k);
}

#define DS "serve --model deepseek-v3 --gpu h200 --dtype fp8 --prompt 4096 --output 512 --disaggregate "

/* DEP 8 prefill (1 worker) + DEP 8 decode (1 worker, 32 a rank): 16 GPUs,
 * two nodes of 8, so the hand-off crosses the network at 50 GB/s a GPU:
 * 61 layers x (512 + 64) x 1 B x 4096 tokens = 143,917,056 B in 2.878 ms.
 * In flight: 32 a rank x 8 attention ranks x 1 worker = 256. */
Test(cli_disagg, dep_pools_by_hand)
{
    char out[OUT_MAX];
    cr_assert_eq(run(DS "--prefill-attention-dp 8 --prefill-moe-ep 8 --decode-attention-dp 8 --decode-moe-ep 8 "
                        "--decode-batch 32 --format tsv", out, sizeof out), 0, "%s", out);
    cr_expect_eq(tsv_value(out, "concurrency"), 256);
    cr_expect_eq(tsv_value(out, "prefill_gpus"), 8);
    cr_expect_eq(tsv_value(out, "decode_moe_ep"), 8);
    cr_expect_eq(tsv_value(out, "kv_transfer_bytes"), 143917056.0);
    cr_expect_eq(tsv_value(out, "kv_link_gb_s"), 50);
    cr_expect(fabs(tsv_value(out, "kv_transfer_time") - 143917056.0 / 50e9) < 1e-12, "%s", out);
    cr_expect(strstr(out, "kv_link\tthe network"), "%s", out);
    /* calibrated beside it, the same pools and link */
    cr_expect_eq(tsv_value(out, "concurrency_calibrated"), 256);
    cr_expect(fabs(tsv_value(out, "kv_transfer_time_calibrated") - 143917056.0 / 50e9) < 1e-12, "%s", out);
    /* --net-gb-s moves the network hand-off: 25 GB/s doubles it */
    cr_assert_eq(run(DS "--prefill-attention-dp 8 --prefill-moe-ep 8 --decode-attention-dp 8 --decode-moe-ep 8 "
                        "--decode-batch 32 --net-gb-s 25 --format tsv", out, sizeof out), 0, "%s", out);
    cr_expect(fabs(tsv_value(out, "kv_transfer_time") - 143917056.0 / 25e9) < 1e-12, "%s", out);
}

/* Pools that fit one NVLink domain hand off over NVLink: DEP 8 + DEP 8 in
 * a domain of 16 (--gpus-per-node 16), at the H200 row's link bandwidth;
 * and LLaMA-3-8B on 1 + 1 GPUs of an 8-GPU node. */
Test(cli_disagg, pools_in_one_node_use_nvlink)
{
    char out[OUT_MAX];
    cr_assert_eq(run(DS "--prefill-attention-dp 8 --prefill-moe-ep 8 --decode-attention-dp 8 --decode-moe-ep 8 "
                        "--decode-batch 8 --decode-workers 1 --gpus-per-node 16 --format tsv", out, sizeof out), 0,
                 "%s", out);
    cr_expect(strstr(out, "kv_link\tNVLink"), "%s", out);
    cr_expect_eq(tsv_value(out, "concurrency"), 64, "8 a rank x 8 ranks x 1 worker");
    cr_assert_eq(run("serve --model llama3-8b --gpu h100 --disaggregate --prefill-gpus 1 --decode-gpus 1 "
                     "--concurrency 16 --format tsv", out, sizeof out), 0, "%s", out);
    cr_expect(strstr(out, "kv_link\tNVLink"), "%s", out);
    cr_expect_eq(tsv_value(out, "concurrency"), 16);
    cr_expect_eq(tsv_value(out, "decode_batch"), 16, "--concurrency is the decode batch of the older form");
}

/* Refusals name the flag and exit 2. */
Test(cli_disagg, refusals_name_the_flag)
{
    char out[OUT_MAX];
    cr_expect_eq(run(DS "--decode-moe-ep 3", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--decode-moe-ep"), "%s", out);
    cr_expect_eq(run(DS "--prefill-tp 3", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--prefill-tp"), "%s", out);
    /* a mixed expert split that does not cover the replica's 8 GPUs */
    cr_expect_eq(run(DS "--decode-attention-dp 8 --decode-moe-tp 2 --decode-moe-ep 2", out, sizeof out), 2, "%s",
                 out);
    cr_expect(strstr(out, "--decode-moe-tp") || strstr(out, "--decode-moe-ep"), "%s", out);
    cr_expect_eq(run("serve --model llama3-8b --gpu h100 --disaggregate --decode-moe-ep 2", out, sizeof out), 2,
                 "%s", out);
    cr_expect(strstr(out, "--decode-moe-ep") && strstr(out, "dense"), "%s", out);
    cr_expect_eq(run(DS "--prefill-gpus 8 --decode-gpus 8 --prefill-workers 1", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--prefill-gpus"), "%s", out);
    cr_expect_eq(run("serve --model llama3-8b --gpu h100 --decode-batch 4", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--disaggregate"), "%s", out);
    cr_expect_eq(run(DS "--search --decode-workers 2", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--search"), "%s", out);
    /* the pairs of worker counts grow as the square of the GPUs: the search stops at 64 */
    cr_expect_eq(run(DS "--search --gpus 65", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--gpus 65"), "%s", out);
}

/* The search on 16 H200s under TTFT <= 2 s and TPOT <= 50 ms chooses an
 * expert-parallel decode pool with data-parallel attention (tried against
 * every tensor-parallel pool), meets both targets, and its throughput is
 * the arithmetic of its own printed steps: the prefill pool serves
 * workers x ranks x batch / p, the decode pool batch x ranks x workers /
 * (511 d), the split the smaller, x 512 tokens, over the pools' GPUs. */
Test(cli_disagg, search_picks_dep_pools)
{
    char out[OUT_MAX];
    cr_assert_eq(run(DS "--search --gpus 16 --ttft 2 --tpot 0.05 --calibrate published:h200_sxm/sglang --format tsv",
                     out, sizeof out), 0, "%s", out);
    const char *sfx[2] = {"", "_calibrated"};
    for (int i = 0; i < 2; i++) {
#define V(name) val(out, name, sfx[i])
        cr_expect_gt(V("decode_moe_ep"), 1, "%s", out);
        cr_expect_eq(V("decode_moe_tp"), 1, "%s", out);
        cr_expect_gt(V("decode_attention_dp"), 1, "%s", out);
        cr_expect_leq(V("ttft"), 2.0);
        cr_expect_leq(V("tpot"), 0.05);
        const double ranks_p = V("prefill_workers") * V("prefill_attention_dp") * V("prefill_batch");
        const double n = V("decode_batch") * V("decode_attention_dp") * V("decode_workers");
        cr_expect_eq(V("concurrency"), n);
        const double pr = ranks_p / V("prefill_time"), dr = n / (511 * V("decode_step"));
        cr_expect(fabs(V("prefill_requests_per_s") / pr - 1) < 1e-6, "%s", out);
        cr_expect(fabs(V("decode_requests_per_s") / dr - 1) < 1e-6, "%s", out);
        const double x = fmin(pr, dr), gpus = V("prefill_gpus") + V("decode_gpus");
        cr_expect_leq(gpus, 16);
        cr_expect(fabs(V("tokens_per_s_per_gpu") / (512 * x / gpus) - 1) < 1e-6, "%s", out);
        cr_expect_gt(V("agg_tokens_per_s_per_gpu"), 0);
#undef V
    }
    /* calibrated, the split serves more per GPU than the best aggregated layout */
    cr_expect_gt(tsv_value(out, "tokens_per_s_per_gpu_calibrated"), tsv_value(out, "agg_tokens_per_s_per_gpu_calibrated"),
                 "%s", out);
}
