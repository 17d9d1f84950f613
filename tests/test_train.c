/* Training arithmetic: FLOPs per token, the cluster for a deadline, goodput
 * under failures, activations per Korthikanti et al. and for a Llama-style
 * layer, ZeRO, the 1F1B pipeline, the largest microbatch and the layout
 * search.  Every expected number is worked by hand from the models' config
 * files or taken from a paper, never from the library's output. */
#include "specs.h"
#include "train.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define assert_rel(got, want, rel)                                                                         \
    do {                                                                                                   \
        double g_ = (got), w_ = (want);                                                                    \
        cr_assert(fabs(g_ - w_) <= (rel) * fabs(w_), "got %.10g, want %.10g (rel %g)", g_, w_, (double)(rel)); \
    } while (0)

/* A GPT layer shape as Korthikanti et al. use it (MHA, 4h MLP). */
static model_spec gpt_shape(const char *key, int layers, int hidden, int heads)
{
    model_spec m;
    memset(&m, 0, sizeof m);
    snprintf(m.key, sizeof m.key, "%s", key);
    m.layers = layers;
    m.hidden = hidden;
    m.heads = heads;
    m.kv_heads = heads;
    m.head_dim = hidden / heads;
    m.ffn = 4 * hidden;
    m.vocab = 51200;
    m.experts = m.experts_active = 1;
    return m;
}

static train_layout layout(activation_model a, int seq, int tp, int sp, recompute_kind r)
{
    train_layout l = train_layout_default();
    l.act = a;
    l.seq = seq;
    l.tp = tp;
    l.sp = sp;
    l.recompute = r;
    return l;
}

/* ---------------------------------------------------------------- compute */

Test(train_flop, matmul_params_of_llama3_8b)
{
    /* config.json: L 32, h 4096, 32 heads, 8 KV heads of 128, ffn 14336, vocab 128256.
     * attention 32 * (2*4096*4096 + 2*4096*1024) = 1,342,177,280
     * MLP       32 * 3*4096*14336               = 5,637,144,576
     * norms     32 * 2*4096 + 4096               =       266,240
     * head      128256 * 4096                    =   525,336,576
     * (the embedding, another 525,336,576, is a lookup)  total 7,504,924,672 */
    model_spec m = model_builtin("llama3-8b");
    cr_assert_eq(train_matmul_params(&m), 7504924672.0);
}

Test(train_flop, six_n_and_the_attention_term)
{
    /* 6 * 7e9 = 4.2e10 per token, no attention term without a shape */
    train_flop f = train_flop_per_token(7e9, NULL, 4096, RECOMPUTE_NONE);
    cr_assert_eq(f.dense, 4.2e10);
    cr_assert_eq(f.attention, 0.0);
    cr_assert_eq(f.hardware, f.model);
    /* LLaMA-3-8B at 4096: 12 * 32 layers * 4096 * (32 * 128) = 6,442,450,944 */
    model_spec m = model_builtin("llama3-8b");
    f = train_flop_per_token(7e9, &m, 4096, RECOMPUTE_NONE);
    cr_assert_eq(f.attention, 6442450944.0);
    cr_assert_eq(f.model, 4.2e10 + 6442450944.0);
    /* selective recompute re-runs the attention forward: a third of it, 2,147,483,648 */
    f = train_flop_per_token(7e9, &m, 4096, RECOMPUTE_SELECTIVE);
    cr_assert_eq(f.recompute, 2147483648.0);
    /* full recompute re-runs the whole forward: 2 * 7e9 + 2,147,483,648 */
    f = train_flop_per_token(7e9, &m, 4096, RECOMPUTE_FULL);
    cr_assert_eq(f.recompute, 1.4e10 + 2147483648.0);
}

Test(train_flop, full_recompute_is_8nd_not_6nd)
{
    /* hardware / model = (6N + 2N) / 6N = 4/3 without the attention term */
    train_flop f = train_flop_per_token(70e9, NULL, 8192, RECOMPUTE_FULL);
    assert_rel(f.hardware / f.model, 4.0 / 3.0, 1e-12);
    cr_assert_eq(f.hardware, 8.0 * 70e9);
}

Test(train_flop, llama3_405b_is_3_8e25)
{
    /* Grattafiori et al. (2024), arXiv 2407.21783: 405B parameters on 15.6T
     * tokens, "3.8 x 10^25 FLOPs"; 6 * 405e9 * 15.6e12 = 3.7908e25.  The
     * multiplying parameters of the config differ from 405e9 by well under 1%. */
    model_spec m = model_builtin("llama3-405b");
    double flop = train_flop_per_token(train_matmul_params(&m), NULL, 8192, RECOMPUTE_NONE).dense * 15.6e12;
    assert_rel(flop, 3.7908e25, 0.01);
    cr_assert(flop > 3.75e25 && flop < 3.85e25, "%g rounds to 3.8e25", flop);
}

Test(train_flop, llama3_mfu_rows)
{
    /* Table 4 of arXiv 2407.21783: 430 TFLOP/s per GPU is 43% BF16 MFU; 380 is 38%.
     * The H100 SXM dense bf16 peak is 989.4 TFLOP/s: 430/989.4 = 0.4346, 380/989.4 = 0.3841 */
    gpu_spec h = gpu_builtin("h100");
    double p = gpu_peak_flops(&h, DT_BF16);
    cr_assert_eq(floor(100 * train_mfu(430e12, p)), 43);
    cr_assert_eq(floor(100 * train_mfu(380e12, p)), 38);
    /* the sparse trap: against the sparse figure, twice the dense one (1978.8), it reads 21.7% */
    assert_rel(train_mfu(430e12, 2 * p), 430.0 / 1978.8, 1e-12);
}

Test(train_flop, llama3_model_card_gpu_hours)
{
    /* Llama 3.1 model card (github.com/meta-llama/llama-models, models/llama3_1/MODEL_CARD.md):
     * 30.84M H100-80GB GPU-hours for 405B.  3.7908e25 / (989.4e12 * 30.84e6 * 3600)
     * = 3.7908e25 / 1.0984718e26 = 0.3451: a third of peak on average, under the
     * 38-43% MFU while training. */
    double u = train_implied_utilisation(3.7908e25, 989.4e12, 30.84e6);
    assert_rel(u, 0.34510, 1e-4);
}

/* ---------------------------------------------------------------- cluster */

Test(train_cluster, seven_b_one_t_three_weeks)
{
    /* 4.2e22 FLOP / (989.4e12 * 0.4) = 1.0612492e8 GPU-seconds = 29,479.1 GPU-hours;
     * over 21 days (1,814,400 s): 58.49 GPUs, so 8 nodes of 8 = 64 */
    gpu_spec h = gpu_builtin("h100");
    train_run r = {4.2e22, gpu_peak_flops(&h, DT_BF16), 0.4, goodput_model_fixed(1.0)};
    assert_rel(train_gpu_seconds(&r) / 3600.0, 29479.1456, 1e-8);
    cluster_plan c;
    cr_assert_eq(train_cluster_for_deadline(&r, 21 * 86400.0, 8, &c), 0);
    assert_rel(c.gpus_exact, (4.2e22 / (989.4e12 * 0.4)) / 1814400.0, 1e-7);
    cr_assert_eq(c.gpus, 64);
    cr_assert_eq(c.nodes, 8);
    /* 64 GPUs finish in 1.061249e8 / 64 s = 19.19 days and rent 29,479 GPU-hours */
    assert_rel(c.seconds / 86400.0, (4.2e22 / (989.4e12 * 0.4)) / 64 / 86400.0, 1e-7);
    /* goodput 0.9 needs 58.49 / 0.9 = 64.99 GPUs: 72 */
    r.goodput = goodput_model_fixed(0.9);
    cr_assert_eq(train_cluster_for_deadline(&r, 21 * 86400.0, 8, &c), 0);
    cr_assert_eq(c.gpus, 72);
}

Test(train_cluster, llama3_failure_model)
{
    /* rate 466 / (54 * 16384) per GPU-day, hours lost 0.1 * 54 * 24 / 466:
     * the lost share of a day is rate * G * hours / 24 = 0.1 G / 16384 */
    goodput_model g = goodput_model_llama3();
    assert_rel(goodput_at(&g, 16384), 0.9, 1e-12);
    assert_rel(goodput_at(&g, 64), 1.0 - 6.4 / 16384, 1e-12);
    cr_assert_eq(goodput_at(&g, 163840), 0.0);
    /* the cluster found meets the deadline with its own goodput: G (1 - 0.1 G/16384) >= need */
    train_run r = {4.2e22, 989.4e12, 0.4, g};
    cluster_plan c;
    cr_assert_eq(train_cluster_for_deadline(&r, 21 * 86400.0, 8, &c), 0);
    double need = (4.2e22 / (989.4e12 * 0.4)) / 1814400.0;
    assert_rel(c.gpus_exact * (1 - 0.1 * c.gpus_exact / 16384), need, 1e-7);
    cr_assert_eq(c.gpus, 64);
    /* G (1 - kG) peaks at G = 1/(2k) = 81,920 with 40,960 GPUs' worth of work:
     * Llama 3 405B (3.8e25 at 41% MFU) in 10 days needs 3.8e25 / (989.4e12 * 0.41 * 864000)
     * = 108,420 GPUs' worth, which no cluster delivers */
    train_run big = {3.8e25, 989.4e12, 0.41, g};
    cr_assert_eq(train_cluster_for_deadline(&big, 10 * 86400.0, 8, &c), -1);
    cr_assert(abs(c.gpus - 81920) <= 8, "%d", c.gpus);
    /* at 100 days it needs 10,842: found, and no larger than without failures / 0.9 */
    cr_assert_eq(train_cluster_for_deadline(&big, 100 * 86400.0, 8, &c), 0);
    cr_assert(c.gpus >= 10842 && c.gpus < 10842 / 0.9);
}

Test(train_cluster, days_on_a_given_cluster)
{
    /* 1.061249e8 GPU-s on 128 GPUs at goodput 1: 9.596 days */
    train_run r = {4.2e22, 989.4e12, 0.4, goodput_model_fixed(1.0)};
    assert_rel(train_seconds_on(&r, 128) / 86400.0, (4.2e22 / (989.4e12 * 0.4)) / 128 / 86400.0, 1e-7);
    r.goodput = goodput_model_fixed(0.0);
    cr_assert(isinf(train_seconds_on(&r, 128)));
}

/* ---------------------------------------------------------------- activations */

Test(train_act, korthikanti_table_2_gpt3)
{
    /* GPT-3 175B shape: a 96, h 12288, s 2048, b 1.  5as/h = 5*96*2048/12288 = 80.
     * sbh = 2048 * 12288 = 25,165,824 */
    model_spec m = gpt_shape("gpt3", 96, 12288, 96);
    double sbh = 2048.0 * 12288.0;
    train_layout l = layout(ACT_KORTHIKANTI, 2048, 1, 0, RECOMPUTE_NONE);
    cr_assert_eq(train_layer_activation_bytes(&m, &l), sbh * (34 + 80));
    /* TP 8: 10 + 24/8 + 80/8 = 23 */
    l.tp = 8;
    cr_assert_eq(train_layer_activation_bytes(&m, &l), sbh * 23);
    /* TP 8 + SP: 34/8 + 80/8 = 14.25 */
    l.sp = 1;
    cr_assert_eq(train_layer_activation_bytes(&m, &l), sbh * 14.25);
    /* TP 8 + SP + selective: 34/8 = 4.25 */
    l.recompute = RECOMPUTE_SELECTIVE;
    cr_assert_eq(train_layer_activation_bytes(&m, &l), sbh * 4.25);
    /* TP 8 + selective, no SP: 10 + 3 = 13 */
    l.sp = 0;
    cr_assert_eq(train_layer_activation_bytes(&m, &l), sbh * 13);
    /* full: the layer input, 2 sbh */
    l.recompute = RECOMPUTE_FULL;
    cr_assert_eq(train_layer_activation_bytes(&m, &l), sbh * 2);
    /* selective recompute alone drops 80 of 114: 70% */
    l = layout(ACT_KORTHIKANTI, 2048, 1, 0, RECOMPUTE_SELECTIVE);
    cr_assert_eq(train_layer_activation_bytes(&m, &l), sbh * 34);
}

Test(train_act, korthikanti_five_times)
{
    /* The abstract: sequence parallelism with selective recompute "reduces
     * activation memory by 5x" against TP alone.  MT-NLG 530B shape (a 128,
     * h 20480, s 2048, t 8): 5as/h = 64; TP alone 10 + 3 + 8 = 21; with SP and
     * selective 4.25: 4.94x.  GPT-3 (above): 23 / 4.25 = 5.41x. */
    model_spec m = gpt_shape("mt-nlg", 105, 20480, 128);
    train_layout tp = layout(ACT_KORTHIKANTI, 2048, 8, 0, RECOMPUTE_NONE);
    train_layout best = layout(ACT_KORTHIKANTI, 2048, 8, 1, RECOMPUTE_SELECTIVE);
    assert_rel(train_layer_activation_bytes(&m, &tp) / train_layer_activation_bytes(&m, &best), 21 / 4.25, 1e-12);
}

Test(train_act, modern_layer_llama3_70b_8k)
{
    /* LLaMA-3-70B, s 8192, b 1, per token in bytes:
     *   norm inputs and projection inputs 4 * 2 * 8192      =  65,536
     *   Q 2*8192, K and V 2*2*1024, attention output 2*8192 =  36,864
     *   logsumexp 4 * 64 heads                              =     256
     *   gate, up and their product 3 * 2 * 28672            = 172,032
     *   total 274,688 B per token; * 8192 = 2,250,244,096 B per layer */
    model_spec m = model_builtin("llama3-70b");
    train_layout l = layout(ACT_MODERN, 8192, 1, 0, RECOMPUTE_NONE);
    cr_assert_eq(train_layer_activation_bytes(&m, &l), 2250244096.0);
    /* flash attention already recomputes the scores: selective changes nothing */
    l.recompute = RECOMPUTE_SELECTIVE;
    cr_assert_eq(train_layer_activation_bytes(&m, &l), 2250244096.0);
    /* TP 8 + SP: 65536/8 + (2*1024 + 2*1024) + 4*128 + 4*8 + 6*3584 = 34,336 B per token
     * (one KV head of 128 per GPU) -> 281,280,512 */
    l = layout(ACT_MODERN, 8192, 8, 1, RECOMPUTE_NONE);
    cr_assert_eq(train_layer_activation_bytes(&m, &l), 281280512.0);
    /* TP 8 without SP keeps the 65,536 whole: 65536 + 26,144 = 91,680 -> 751,042,560 */
    l.sp = 0;
    cr_assert_eq(train_layer_activation_bytes(&m, &l), 751042560.0);
    /* TP 16 replicates the 8 KV heads: still one per GPU */
    l.tp = 16;
    l.sp = 1;
    /* 65536/16 + (2*512 + 2*512) + 4*128 + 4*4 + 6*1792 = 4096+2048+512+16+10752 = 17,424 */
    cr_assert_eq(train_layer_activation_bytes(&m, &l), 17424.0 * 8192);
    /* full recompute: the layer input 2 * 8192 * 8192, over 16 with SP */
    l.recompute = RECOMPUTE_FULL;
    cr_assert_eq(train_layer_activation_bytes(&m, &l), 2.0 * 8192 * 8192 / 16);
}

Test(train_act, thirty_four_is_not_universal)
{
    /* The modern coefficient of sbh with t = 1 is 8 + (4 q + 4 kv + 6 f)/h + 4a/h.
     * LLaMA-2-13B (MHA, f 13824 = 2.7 h, a 40): 8 + 4 + 4 + 16.2 + 4*40/5120 */
    model_spec m = model_builtin("llama2-13b");
    train_layout l = layout(ACT_MODERN, 4096, 1, 0, RECOMPUTE_NONE);
    double sbh = 4096.0 * 5120;
    assert_rel(train_layer_activation_bytes(&m, &l) / sbh, 8 + 4 + 4 + 16.2 + 4.0 * 40 / 5120, 1e-12);
}

/* ---------------------------------------------------------------- per GPU */

Test(train_mem, pipeline_in_flight)
{
    cr_assert_eq(pipeline_in_flight(PIPE_1F1B, 4, 16), 4);
    cr_assert_eq(pipeline_in_flight(PIPE_1F1B, 4, 2), 2);
    cr_assert_eq(pipeline_in_flight(PIPE_1F1B, 4, 0), 4); /* default: pp microbatches */
    cr_assert_eq(pipeline_in_flight(PIPE_GPIPE, 4, 16), 16);
}

Test(train_mem, llama3_70b_tp8_pp4_dp16_zero1)
{
    /* Per layer: attention 2*8192*8192 + 2*8192*1024 = 150,994,944, MLP 3*8192*28672
     * = 704,643,072, norms 16,384: 855,654,400.  The first of 4 stages holds 20 layers
     * and the embedding 128256*8192 = 1,050,673,152: 18,163,761,152 params, over TP 8
     * 2,270,470,144.  Weights and gradients 2 B each: 4,540,940,288; ZeRO-1 over 16
     * shards the 12 B of Adam: 2,270,470,144 * 12 / 16 = 1,702,852,608. */
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    train_layout l = layout(ACT_MODERN, 8192, 8, 1, RECOMPUTE_SELECTIVE);
    l.pp = 4;
    l.dp = 16;
    l.zero = 1;
    train_state_bytes b = train_state_adam_mixed();
    train_memory mem;
    char err[256];
    cr_assert_eq(train_memory_plan(&m, &g, &l, &b, &mem, err, sizeof err), 0, "%s", err);
    cr_assert_eq(mem.params, 2270470144.0);
    cr_assert_eq(mem.weights, 4540940288.0);
    cr_assert_eq(mem.grads, 4540940288.0);
    cr_assert_eq(mem.optimizer, 1702852608.0);
    /* activations: 281,280,512 per layer (above) * 20 layers * 4 in flight = 22,502,440,960 */
    cr_assert_eq(mem.in_flight, 4);
    cr_assert_eq(mem.act_logits, 0.0); /* the loss is on the last stage */
    cr_assert_eq(mem.activations, 22502440960.0);
    double state = 2 * 4540940288.0 + 1702852608.0;
    cr_assert_eq(mem.total, state + 22502440960.0);
    /* usable memory: 90% of what the driver reports, the book's one policy (memory.h) */
    double usable = 0.9 * g.mem_bytes;
    cr_assert_float_eq(mem.capacity, usable, 1);
    cr_assert_eq(mem.fits, state + 22502440960.0 <= usable);
    /* activations grow with the microbatch, the state does not */
    int want = (int)floor((usable - state) / 22502440960.0);
    cr_assert_eq(train_max_micro_batch(&m, &g, &l, &b, 4096), want);
    /* ZeRO-3 shards weights and gradients too: each 4,540,940,288 / 16 */
    l.zero = 3;
    train_memory_plan(&m, &g, &l, &b, &mem, err, sizeof err);
    cr_assert_eq(mem.weights, 4540940288.0 / 16);
    cr_assert_eq(mem.grads, 4540940288.0 / 16);
}

Test(train_mem, single_stage_holds_head_and_logits)
{
    /* LLaMA-3-8B, tp 1, pp 1: all 8,030,261,248 params (7,504,924,672 + the
     * 525,336,576 embedding); fp32 logits 4 * 4096 * 128256 = 2,101,346,304 B */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    train_layout l = layout(ACT_MODERN, 4096, 1, 0, RECOMPUTE_FULL);
    train_state_bytes b = train_state_adam_mixed();
    train_memory mem;
    char err[256];
    cr_assert_eq(train_memory_plan(&m, &g, &l, &b, &mem, err, sizeof err), 0);
    cr_assert_eq(mem.params, 8030261248.0);
    cr_assert_eq(mem.act_logits, 2101346304.0);
    /* 16 B per param = 128.5 GB: no microbatch fits on 80 GB without sharding */
    cr_assert_eq(mem.weights + mem.grads + mem.optimizer, 16 * 8030261248.0);
    if (16 * 8030261248.0 > g.mem_bytes)
        cr_assert_eq(train_max_micro_batch(&m, &g, &l, &b, 64), 0);
    /* full recompute keeps 2 s h per layer and rebuilds one whole layer:
     * 32 * 2*4096*4096 + 4096 * (8*4096 + 2*4096 + 2*2*1024 + 2*4096 + 4*32 + 6*14336) */
    double layer = 4096.0 * (8 * 4096 + 2 * 4096 + 4 * 1024 + 2 * 4096 + 4 * 32 + 6 * 14336);
    cr_assert_eq(mem.act_working, layer);
    cr_assert_eq(mem.activations, 32 * 2.0 * 4096 * 4096 + layer + 2101346304.0);
}

Test(train_mem, bad_layouts_name_the_flag)
{
    model_spec m = model_builtin("llama3-70b");
    train_layout l = train_layout_default();
    char err[256];
    l.tp = 3; /* 64 heads */
    cr_assert_eq(train_layout_check(&m, &l, err, sizeof err), -1);
    cr_assert(strstr(err, "--tp") && strstr(err, "64 heads"), "%s", err);
    l.tp = 16; /* divides 64 heads; a multiple of 8 KV heads */
    cr_assert_eq(train_layout_check(&m, &l, err, sizeof err), 0);
    l.tp = 1;
    l.pp = 3; /* 80 layers */
    cr_assert_eq(train_layout_check(&m, &l, err, sizeof err), -1);
    cr_assert(strstr(err, "--pp") && strstr(err, "80 layers"), "%s", err);
    l.pp = 1;
    l.zero = 4;
    cr_assert_eq(train_layout_check(&m, &l, err, sizeof err), -1);
    cr_assert(strstr(err, "--zero"), "%s", err);
}

Test(train_mem, layout_search_for_70b_on_64_h100)
{
    /* SP + selective, microbatch 1, ZeRO 0.  tp 8 pp 2 (16-way): 40 layers + embedding
     * = 35,276,849,152 params / 8 * 16 B = 70.55 GB of state before activations
     * (281,280,512 * 40 * 2 = 22.5 GB): 93 GB, too much.  tp 4 pp 8 (32-way):
     * 38.4 GB of state plus 562,561,024 * 10 * 8 = 45.0 GB: 83.4 GB, too much.
     * tp 8 pp 4 (32-way): 36.3 GB + 22.5 GB = 58.8 GB: the first that fits. */
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    train_layout l = layout(ACT_MODERN, 8192, 1, 1, RECOMPUTE_SELECTIVE);
    train_state_bytes b = train_state_adam_mixed();
    layout_fit fits[16];
    int n = train_layout_search(&m, &g, 64, 8, &l, &b, fits, 16);
    cr_assert(n >= 1);
    /* usable: 90% of the driver's 85.5 GB = 76.95 GB, between 58.8 and 83.4 */
    double usable = 0.9 * g.mem_bytes;
    cr_assert(usable >= 58.9e9 && usable < 83e9, "usable %g", usable);
    cr_assert_eq(fits[0].tp, 8);
    cr_assert_eq(fits[0].pp, 4);
    cr_assert_eq(fits[0].dp, 2);
    for (int i = 0; i < n && i < 16; i++) {
        cr_assert_eq(fits[i].tp * fits[i].pp * fits[i].dp, 64);
        cr_assert(fits[i].total <= usable);
        if (i > 0)
            cr_assert(fits[i - 1].tp * fits[i - 1].pp <= fits[i].tp * fits[i].pp);
    }
    /* a 405B model on 8 GPUs: nothing fits (6.5 TB of state over 8 GPUs) */
    model_spec big = model_builtin("llama3-405b");
    cr_assert_eq(train_layout_search(&big, &g, 8, 8, &l, &b, fits, 16), 0);
}

Test(train_names, parse_and_name)
{
    recompute_kind r;
    cr_assert_eq(recompute_parse("Selective", &r), 0);
    cr_assert_eq(r, RECOMPUTE_SELECTIVE);
    cr_assert_eq(recompute_parse("some", &r), -1);
    cr_assert_str_eq(recompute_name(RECOMPUTE_FULL), "full");
    activation_model a;
    cr_assert_eq(activation_model_parse("korthikanti", &a), 0);
    cr_assert_eq(a, ACT_KORTHIKANTI);
    pipe_schedule p;
    cr_assert_eq(pipe_schedule_parse("gpipe", &p), 0);
    cr_assert_eq(p, PIPE_GPIPE);
    cr_assert_eq(pipe_schedule_parse("zb", &p), -1);
}
