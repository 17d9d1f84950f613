/* The napkin command on today's models and serving layouts: a DeepSeek-V3
 * config through memory, gpt-oss through decode, serve --disaggregate and
 * serve --prefix, with their refusals.  Expected numbers by hand. */
#include "cli_run.h"

Test(cli_today, deepseek_config_through_memory)
{
    char out[OUT_MAX];
    cr_assert_eq(run("memory --model-config tests/configs/deepseek-v3.json --gpu h200 --tp 8 --dtype fp8 "
                     "--context 8192 --format tsv", out, sizeof out), 0, "%s", out);
    /* the latent: 61 layers x (512 + 64) values x 1 byte, whole on each GPU */
    cr_expect_eq(tsv_value(out, "kv_bytes_per_token"), 61 * 576);
    cr_expect_eq(tsv_value(out, "kv_bytes_per_token_per_gpu"), 61 * 576);
    cr_expect_eq(tsv_value(out, "params_total"), 671026404352.0);
    /* bf16 weights do not fit 8 H200s: 1.34 TB over 8 is 168 GB each */
    cr_expect_eq(run("memory --model deepseek-v3 --gpu h200 --tp 8", out, sizeof out), 1, "%s", out);
}

Test(cli_today, gpt_oss_decode)
{
    char out[OUT_MAX];
    cr_assert_eq(run("decode --model gpt-oss-120b --gpu h100 --batch 8 --context 8192 --format tsv", out, sizeof out),
                 0, "%s", out);
    double active = tsv_value(out, "params_active_nonembedding");
    cr_expect(fabs(active / 5.13e9 - 1) < 0.01, "active %g", active);
}

/* LLaMA-3-8B, 2048-token prompts: the KV handed over is 131,072 B a token
 * x 2048 = 268,435,456 B; the pools' rates are (pool / tp) / p and
 * (pool / tp) C / ((output - 1) d). */
Test(cli_today, disaggregated_split)
{
    char out[OUT_MAX];
    cr_assert_eq(run("serve --model llama3-8b --gpu h100 --prompt 2048 --output 256 --concurrency 32 --disaggregate "
                     "--prefill-gpus 2 --decode-gpus 6 --kv-link-gb-s 50 --format tsv", out, sizeof out), 0, "%s", out);
    cr_expect_eq(tsv_value(out, "kv_transfer_bytes"), 268435456.0);
    double p = tsv_value(out, "prefill_time"), d = tsv_value(out, "decode_step");
    cr_expect(fabs(tsv_value(out, "kv_transfer_time") - 268435456.0 / 50e9) < 1e-12);
    cr_expect(fabs(tsv_value(out, "prefill_requests_per_s") * p / 2 - 1) < 1e-9);
    cr_expect(fabs(tsv_value(out, "decode_requests_per_s") * 255 * d / (6 * 32) - 1) < 1e-9);
    cr_expect(fabs(tsv_value(out, "ttft") - p - 268435456.0 / 50e9) < 1e-12);
    cr_expect(tsv_value(out, "tpot") < tsv_value(out, "agg_tpot"), "no prefill stalls the decodes");
}

Test(cli_today, disaggregated_refusals)
{
    char out[OUT_MAX];
    cr_expect_eq(run("serve --model llama3-8b --gpu h100 --disaggregate", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--prefill-gpus"), "%s", out);
    cr_expect_eq(run("serve --model llama3-8b --gpu h100 --decode-gpus 2", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("serve --model llama3-70b --gpu h100 --tp 4 --disaggregate --prefill-gpus 2 --decode-gpus 4",
                     out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "multiple of tp"), "%s", out);
    /* a TPOT no decode step reaches: no split serves it */
    cr_expect_eq(run("serve --model llama3-70b --gpu h100 --tp 4 --disaggregate --search --gpus 16 --tpot 0.001",
                     out, sizeof out), 1, "%s", out);
}

Test(cli_today, prefix_caching)
{
    char with[OUT_MAX], without[OUT_MAX];
    cr_assert_eq(run("serve --model llama3-8b --gpu h100 --prompt 4096 --output 256 --concurrency 16 --prefix 3072 "
                     "--format tsv", with, sizeof with), 0, "%s", with);
    cr_assert_eq(run("serve --model llama3-8b --gpu h100 --prompt 4096 --output 256 --concurrency 16 --format tsv",
                     without, sizeof without), 0, "%s", without);
    cr_expect(tsv_value(with, "ttft") < tsv_value(without, "ttft") / 3, "a hit prefills a quarter of the prompt");
    cr_expect(tsv_value(with, "max_concurrency") > 3 * tsv_value(without, "max_concurrency"),
              "a slot holds 1280 tokens of its own instead of 4352");
    char out[OUT_MAX];
    cr_expect_eq(run("serve --model llama3-8b --gpu h100 --prompt 1024 --prefix 1024", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("serve --model llama3-8b --gpu h100 --prefix-hit 0.5", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("serve --model llama3-8b --gpu h100 --prefix 100 --search", out, sizeof out), 2, "%s", out);
}

/* napkin ep: DeepSeek-V3 in fp8 over 8 H200s, 64 sequences each: a GPU
 * dispatches 64 x 8 x 7/8 = 448 hidden vectors of 7168 fp8 bytes =
 * 3,211,264 B a layer, and combines twice that in bf16. */
Test(cli_today, expert_parallel_group)
{
    char out[OUT_MAX];
    cr_assert_eq(run("ep --model deepseek-v3 --gpu h200 --ep 8 --batch 64 --context 8192 --dtype fp8 --format tsv",
                     out, sizeof out), 0, "%s", out);
    cr_expect_eq(tsv_value(out, "dispatch_bytes"), 3211264);
    cr_expect_eq(tsv_value(out, "combine_bytes"), 6422528);
    cr_expect_eq(tsv_value(out, "experts_per_gpu"), 32);
    cr_expect(fabs(tsv_value(out, "tokens_per_s") - 8 * tsv_value(out, "tokens_per_s_per_gpu")) < 1e-6);
    cr_expect_eq(run("ep --model llama3-8b --gpu h100 --ep 2", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "mixture of experts"), "%s", out);
    cr_expect_eq(run("ep --model deepseek-v3 --gpu h200 --ep 7", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("ep --model deepseek-v3 --gpu h200 --ep 8 --imbalance 0.5", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("ep --model deepseek-v3 --gpu h200 --ep 8 --batch 4000 --dtype fp8", out, sizeof out), 1, "%s",
                 out);
    cr_expect(strstr(out, "largest batch that fits"), "%s", out);
}
