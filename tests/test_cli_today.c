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
    /* From the config's dimensions (hidden 7168, 61 layers, 128 heads, q_lora
     * 1536, kv_lora 512, nope 128, rope 64, v 128, 256 experts of 2048, top 8,
     * 1 shared, 3 dense layers of 18432, vocab 129280), by hand:
     *   attention a layer 7168*1536 + 1536 + 1536*128*192 + 7168*576 + 512
     *                     + 512*128*256 + 128*128*7168         = 187,107,328
     *   an expert         3*7168*2048                          =  44,040,192
     *   a dense MLP       3*7168*18432                         = 396,361,728
     *   embedding = head  129280*7168                          = 926,679,040
     *   routers 58*7168*256 = 106,430,464; norms 61*2*7168 + 7168 = 881,664
     *   total = 2*926,679,040 + 61*187,107,328 + 3*396,361,728
     *         + 58*257*44,040,192 + 106,430,464 + 881,664    = 671,026,404,352 */
    cr_expect_eq(tsv_value(out, "params_total"), 671026404352.0);
    /* num_nextn_predict_layers 1, the MTP module: enorm and hnorm 2*7168,
     * eh_proj 14336*7168 = 102,760,448, one MoE layer (187,107,328 + 2*7168
     * + router 7168*256 = 1,835,008 + 257 experts 11,318,329,344), a final
     * norm 7168 and its own embedding and head 2*926,679,040:
     * 13,463,426,048.  Used per token: 187,107,328 + 14,336 + 102,760,448 +
     * 21,504 + 1,835,008 + 9*44,040,192 = 688,100,352.  Active without it:
     * the total less 58 layers x 248 experts not routed to and the embedding,
     * 671,026,404,352 - 58*248*44,040,192 - 926,679,040 = 36,625,603,584
     * (tests/test_models_today.c checks the library's count the same way). */
    cr_expect_eq(tsv_value(out, "params_mtp"), 13463426048.0);
    cr_expect_eq(tsv_value(out, "params_active_with_mtp"),
                 671026404352.0 - 58.0 * 248 * 44040192 - 926679040.0 + 688100352.0);
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
    cr_expect(fabs(tsv_value(out, "ttft") - tsv_value(out, "prefill_queue_wait") - p - 268435456.0 / 50e9) < 1e-9);
    cr_expect_eq(tsv_value(out, "concurrency"), 6 * 32, "32 sequences on each of 6 decode replicas of one rank");
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
    cr_expect_eq(run("serve --model llama3-8b --gpu h100 --prefix 100 --disaggregate --search", out, sizeof out), 2,
                 "%s", out);
}

/* Prefix caching in the search: with 3072 of 4096 prompt tokens cached for
 * every request, a slot holds 4096 + 256 - 3072 = 1280 tokens of its own
 * instead of 4352, so every layout's concurrency grows (here more than 3x,
 * as in the single-replica case above) and its TTFT falls. */
Test(cli_today, prefix_caching_in_the_search)
{
    char with[OUT_MAX], without[OUT_MAX];
    cr_assert_eq(run("serve --model llama3-8b --gpu h100 --prompt 4096 --output 256 --search --gpus 2 --roofline "
                     "--prefix 3072 --format tsv", with, sizeof with), 0, "%s", with);
    cr_assert_eq(run("serve --model llama3-8b --gpu h100 --prompt 4096 --output 256 --search --gpus 2 --roofline "
                     "--format tsv", without, sizeof without), 0, "%s", without);
    /* the tp 1 row: "1<TAB>1<TAB>1<TAB>replicas<TAB>C<TAB>TTFT..." */
    const char *a = strstr(with, "\n1\t1\t1\t"), *b = strstr(without, "\n1\t1\t1\t");
    cr_assert(a && b, "%s\n%s", with, without);
    int ra, ca, rb, cb;
    double ta, tb;
    cr_assert_eq(sscanf(a, "\n1\t1\t1\t%d\t%d\t%lf", &ra, &ca, &ta), 3);
    cr_assert_eq(sscanf(b, "\n1\t1\t1\t%d\t%d\t%lf", &rb, &cb, &tb), 3);
    cr_expect_gt(ca, 3 * cb, "C %d with the prefix, %d without", ca, cb);
    cr_expect_lt(ta, tb, "TTFT %g with the prefix, %g without", ta, tb);
}

/* decode --ep 8 --tp 2: DeepSeek-V3 in fp8, four attention replicas of two
 * H200s, 64 sequences each.  Each GPU dispatches 64 / 2 = 32 tokens, each
 * once to every other GPU its top-8 reaches: a GPU's 32 experts are missed
 * with probability prod_{i<8} (224 - i)/(256 - i) = 0.33816850, so a token
 * reaches 8 (1 - 0.33816850) x 7/8 = 4.6328205 other GPUs, 7168 fp8 bytes
 * each: 32 x 4.6328205 x 7168 = 1,062,657.8 B.  Weights per
 * GPU: the 14,563,302,400 that are neither routed nor shared experts halved,
 * the shared 2,554,331,136 whole, the routed 653,908,770,816 over 8:
 * 7,281,651,200 + 2,554,331,136 + 81,738,596,352 = 91,574,578,688 B.  The
 * whole model over the two GPUs of one replica (335.5 GB each) does not fit. */
Test(cli_today, decode_with_expert_parallelism_and_tp)
{
    char out[OUT_MAX];
    cr_assert_eq(run("decode --model deepseek-v3 --gpu h200 --dtype fp8 --tp 2 --ep 8 --batch 64 --format tsv", out,
                     sizeof out), 0, "%s", out);
    cr_expect(fabs(tsv_value(out, "dispatch_bytes") / 1062657.8 - 1) < 1e-5);
    cr_expect(fabs(tsv_value(out, "combine_bytes") / (2 * 1062657.8) - 1) < 1e-5);
    cr_expect_eq(tsv_value(out, "weight_bytes_per_gpu"), 91574578688.0);
    cr_expect_eq(tsv_value(out, "attention_replicas"), 4);
    cr_expect_eq(tsv_value(out, "experts_per_gpu"), 32);
    cr_expect(fabs(tsv_value(out, "group_tokens_per_s") / tsv_value(out, "tokens_per_s") - 4) < 1e-9);
    cr_expect(tsv_value(out, "step_time_calibrated") > 0, "the calibrated answer stays");
    cr_expect_eq(run("decode --model deepseek-v3 --gpu h200 --dtype fp8 --tp 2 --batch 64", out, sizeof out), 1,
                 "%s", out);
    /* refusals name the flag */
    cr_expect_eq(run("decode --model llama3-8b --gpu h100 --ep 2", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--ep"), "%s", out);
    cr_expect_eq(run("decode --model deepseek-v3 --gpu h200 --dtype fp8 --ep 4 --tp 8", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("decode --model deepseek-v3 --gpu h200 --dtype fp8 --ep 6", out, sizeof out), 2, "%s", out);
    cr_expect_eq(run("decode --model deepseek-v3 --gpu h200 --dtype fp8 --tp 8 --imbalance 1.5", out, sizeof out), 2,
                 "%s", out);
    cr_expect(strstr(out, "--imbalance"), "%s", out);
    cr_expect_eq(run("decode --model deepseek-v3 --gpu h200 --dtype fp8 --ep 8 --imbalance 1.5 --routing-skew 1", out,
                     sizeof out), 2, "%s", out);
    cr_expect_eq(run("decode --model deepseek-v3 --gpu h200 --dtype fp8 --ep 8 --imbalance 0.5", out, sizeof out), 2,
                 "%s", out);
    cr_expect_eq(run("decode --model deepseek-v3 --gpu h200 --dtype fp8 --ep 8 --no-comm", out, sizeof out), 2, "%s",
                 out);
    /* an imbalance of 1.5 sends 1.5 times the bytes from the busiest GPU */
    cr_assert_eq(run("decode --model deepseek-v3 --gpu h200 --dtype fp8 --tp 2 --ep 8 --batch 64 --imbalance 1.5 "
                     "--format tsv", out, sizeof out), 0, "%s", out);
    cr_expect(fabs(tsv_value(out, "dispatch_bytes") / (1.5 * 1062657.8) - 1) < 1e-5);
}

/* A skewed router in decode: Mixtral's 8 experts, top 2, Zipf(1), batch 2:
 * 4 - 4 S_8 / H_8^2 = 3.1729 experts touched against the uniform
 * 8 (1 - (3/4)^2) = 3.5 (tests/test_moe.c derives it). */
Test(cli_today, decode_with_a_skewed_router)
{
    char out[OUT_MAX];
    cr_assert_eq(run("decode --model mixtral-8x7b --gpu h100 --tp 2 --batch 2 --routing-skew 1 --format tsv", out,
                     sizeof out), 0, "%s", out);
    cr_expect(fabs(tsv_value(out, "experts_touched") - 3.1729) < 1e-4);
    cr_expect(fabs(tsv_value(out, "experts_touched_uniform") - 3.5) < 1e-12);
    cr_expect_eq(run("decode --model llama3-8b --gpu h100 --routing-skew 1", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "dense"), "%s", out);
}

/* prefill --ep 8 --tp 2 of one 4096-token prompt: each GPU dispatches
 * 4096 / 2 = 2048 tokens, each to 4.6328205 other GPUs (copies merged,
 * decode_with_expert_parallelism_and_tp) x 7168 B = 68,010,101 B. */
Test(cli_today, prefill_with_expert_parallelism)
{
    char out[OUT_MAX];
    cr_assert_eq(run("prefill --model deepseek-v3 --gpu h200 --dtype fp8 --tp 2 --ep 8 --prompt 4096 --format tsv",
                     out, sizeof out), 0, "%s", out);
    cr_expect_eq(tsv_value(out, "tokens_dispatched_per_gpu"), 2048);
    cr_expect(fabs(tsv_value(out, "dispatch_bytes") / 68010101 - 1) < 1e-5);
    cr_expect(fabs(tsv_value(out, "group_tokens_per_s") / tsv_value(out, "tokens_per_s") - 4) < 1e-9);
}

/* serve --ep 8: one attention replica's closed loop, GPU-seconds per request
 * tp x e2e / C; the group serves 8 replicas' requests.  The search over 16
 * GPUs tries EP groups (the ep column) and its row for ep 8, tp 1 is the
 * same estimate as serve --ep 8 at that row's concurrency. */
Test(cli_today, serve_and_search_with_expert_parallelism)
{
    char out[OUT_MAX], one[OUT_MAX];
    cr_assert_eq(run("serve --model deepseek-v3 --gpu h200 --dtype fp8 --search --gpus 16 --prompt 4096 --output 512 "
                     "--tpot 0.05 --roofline --format tsv", out, sizeof out), 0, "%s", out);
    const char *row = strstr(out, "\n1\t1\t8\t");
    cr_assert(row, "no ep 8, tp 1 row:\n%s", out);
    int replicas, c;
    double ttft, ttft_closed, tpot, tokens;
    cr_assert_eq(sscanf(row, "\n1\t1\t8\t%d\t%d\t%lf\t%lf\t%lf\t%lf", &replicas, &c, &ttft, &ttft_closed, &tpot, &tokens),
                 6);
    cr_expect_eq(replicas, 16, "two groups of 8, one replica per GPU");
    char cmd[256];
    snprintf(cmd, sizeof cmd, "serve --model deepseek-v3 --gpu h200 --dtype fp8 --ep 8 --concurrency %d --prompt 4096 "
             "--output 512 --roofline --format tsv", c);
    cr_assert_eq(run(cmd, one, sizeof one), 0, "%s", one);
    cr_expect(fabs(tsv_value(one, "tpot") - tpot) < 1e-12);
    cr_expect(fabs(tsv_value(one, "tokens_per_s") * 16 - tokens) < 1e-6 * tokens);
    cr_expect(fabs(tsv_value(one, "gpu_seconds_per_request") - tsv_value(one, "e2e") / c) < 1e-12);
    cr_expect(fabs(tsv_value(one, "group_tokens_per_s") - 8 * tsv_value(one, "tokens_per_s")) < 1e-6);
    /* --rate is the group's: 20 requests/s over four attention replicas of tp 2, 5 each */
    cr_assert_eq(run("serve --model deepseek-v3 --gpu h200 --dtype fp8 --ep 8 --tp 2 --rate 20 --roofline --format tsv",
                     one, sizeof one), 0, "%s", one);
    cr_expect_geq(tsv_value(one, "group_requests_per_s"), 20);
    cr_expect_geq(tsv_value(one, "requests_per_s"), 5);
    cr_expect(fabs(tsv_value(one, "group_requests_per_s") - 4 * tsv_value(one, "requests_per_s")) < 1e-9);
    cr_expect_eq(run("serve --model deepseek-v3 --gpu h200 --dtype fp8 --ep 8 --search", out, sizeof out), 2, "%s",
                 out);
    cr_expect_eq(run("serve --model deepseek-v3 --gpu h200 --dtype fp8 --ep 8 --pp 2", out, sizeof out), 2, "%s", out);
}

/* Disaggregation refuses what it does not model, naming the flags. */
Test(cli_today, disaggregated_combinations)
{
    char out[OUT_MAX];
    /* a rate on one split: the smallest decode concurrency that keeps up (test_disagg.c checks it) */
    cr_assert_eq(run("serve --model llama3-8b --gpu h100 --disaggregate --prefill-gpus 2 --decode-gpus 6 --rate 20 "
                     "--roofline --format tsv", out, sizeof out), 0, "%s", out);
    cr_expect_geq(tsv_value(out, "requests_per_s"), 20);
    cr_expect_geq(tsv_value(out, "agg_requests_per_s"), 20);
    /* a rate above what the prefill pool of one GPU serves (1 / p, about 30 requests/s) names the pool */
    cr_expect_eq(run("serve --model llama3-8b --gpu h100 --disaggregate --prefill-gpus 1 --decode-gpus 6 --rate 60",
                     out, sizeof out), 1, "%s", out);
    cr_expect(strstr(out, "prefill pool") && strstr(out, "--prefill-gpus"), "%s", out);
    cr_expect_eq(run("serve --model llama3-8b --gpu h100 --disaggregate --search --rate 2", out, sizeof out), 2, "%s",
                 out);
    cr_expect(strstr(out, "--rate"), "%s", out);
    cr_expect_eq(run("serve --model llama3-8b --gpu h100 --disaggregate --prefill-gpus 1 --decode-gpus 1 "
                     "--chunked-prefill 512", out, sizeof out), 2, "%s", out);
    cr_expect(strstr(out, "--chunked-prefill") && strstr(out, "no meaning"), "%s", out);
    cr_expect_eq(run("serve --model deepseek-v3 --gpu h200 --disaggregate --prefill-gpus 8 --decode-gpus 8 --ep 8", out,
                     sizeof out), 2, "%s", out);
}

/* napkin ep: DeepSeek-V3 in fp8 over 8 H200s, 64 sequences each: a GPU
 * dispatches each token once to the 4.6328205 other GPUs its top-8 reaches
 * (decode_with_expert_parallelism_and_tp), 7168 fp8 bytes each =
 * 2,125,315.7 B a layer, and combines twice that in bf16. */
Test(cli_today, expert_parallel_group)
{
    char out[OUT_MAX];
    cr_assert_eq(run("ep --model deepseek-v3 --gpu h200 --ep 8 --batch 64 --context 8192 --dtype fp8 --format tsv",
                     out, sizeof out), 0, "%s", out);
    cr_expect(fabs(tsv_value(out, "dispatch_bytes") / 2125315.7 - 1) < 1e-5);
    cr_expect(fabs(tsv_value(out, "combine_bytes") / 4250631.3 - 1) < 1e-5);
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
