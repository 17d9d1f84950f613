/* The models of 2025 (Qwen3, DeepSeek-V3, gpt-oss, Llama 4): their configs
 * (tests/configs/) read as their table rows, parameter counts against the
 * published totals, the KV of latent and windowed attention and the bytes
 * of MXFP4 experts against hand arithmetic, and a decode step's ops. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "hf_config.h"
#include "memory.h"
#include "pipeline.h"
#include "specs.h"
#include "test_text.h"
#include "transformer.h"

static model_spec load(const char *file, const char *key)
{
    model_spec m;
    char err[512];
    int rc = model_from_hf_config_file(fmt("%s/tests/configs/%s", need_env("NB_SRC"), file), key, &m, err, sizeof err);
    cr_assert_eq(rc, 0, "%s: %s", file, err);
    return m;
}

#define expect_rel(got, want, tol, what) \
    cr_expect(fabs((got) / (want) - 1) <= (tol), "%s: %.6g, expected %.6g within %g", (what), (got), (want), (tol))

/* Each config gives its row, field by field (the arch column included). */
Test(today, configs_match_their_rows)
{
    static const char *keys[] = {"qwen3-32b",   "qwen3-235b-a22b", "deepseek-v3",    "gpt-oss-120b",
                                 "gpt-oss-20b", "llama4-scout",    "llama4-maverick"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        model_spec row = model_builtin(keys[i]);
        model_spec m = load(fmt("%s.json", keys[i]), keys[i]);
#define SAME(field) cr_expect_eq(m.field, row.field, "%s " #field ": config %d, table %d", keys[i], m.field, row.field)
        SAME(layers); SAME(hidden); SAME(heads); SAME(kv_heads); SAME(head_dim); SAME(ffn); SAME(vocab);
        SAME(experts); SAME(experts_active); SAME(tied_embeddings); SAME(max_position);
        SAME(q_lora_rank); SAME(kv_lora_rank); SAME(qk_nope_dim); SAME(qk_rope_dim); SAME(v_head_dim);
        SAME(moe_ffn); SAME(shared_experts); SAME(dense_layers); SAME(window); SAME(window_layers); SAME(sinks);
        SAME(expert_format); SAME(mtp_layers);
#undef SAME
        cr_expect_eq(model_params(&m).total, model_params(&row).total, "%s parameters", keys[i]);
    }
}

/* DeepSeek-V3 by hand (config.json: hidden 7168, 61 layers, 128 heads,
 * q_lora 1536, kv_lora 512, nope 128, rope 64, v 128, 256 routed experts of
 * 2048 top 8, 1 shared, first 3 layers dense of 18432, vocab 129280):
 *   attention per layer  7168*1536 + 1536 + 1536*128*192 + 7168*576 + 512
 *                        + 512*128*256 + 128*128*7168       = 187,107,328
 *   expert               3*7168*2048                        =  44,040,192
 *   dense MLP            3*7168*18432                       = 396,361,728
 *   embedding = head     129280*7168                        = 926,679,040
 *   routers              58*7168*256 = 106,430,464; norms 61*2*7168 + 7168 = 881,664
 *   total = 2*926,679,040 + 61*187,107,328 + 3*396,361,728 + 58*257*44,040,192
 *         + 106,430,464 + 881,664 = 671,026,404,352
 * The paper's 671B.
 * The multi-token-prediction module (num_nextn_predict_layers 1), as the
 * release stores it: enorm + hnorm 2*7168, eh_proj 14336*7168 = 102,760,448,
 * one MoE layer (187,107,328 + 2*7168 + router 1,835,008 + 257 experts
 * 11,318,329,344), a final norm 7168, and its own embedding and head copies
 * 2*926,679,040: 13,463,426,048 in all.  The model card: "685B, which
 * includes 671B of the Main Model weights and 14B of the MTP Module" (685 -
 * 671 = 14 is a difference of rounded figures: 13.46B lies within 13..15).
 * Used per token in it: 187,107,328 + 14,336 + 102,760,448 + 21,504 +
 * 1,835,008 + 9*44,040,192 = 688,100,352.
 * The report's "37B activated" (section 4.2, for the model as trained, MTP
 * depth 1) is, within 1 %, the parameters a training token passes through,
 * the embedding table aside (a lookup reads one row of it): 36,625,603,584 +
 * 688,100,352 = 37,313,703,936 (+0.85 %).  Counting the embedding gives
 * 37.55B (+1.5 %); leaving the MTP module out, 36.63B (-1.0 %). */
Test(today, deepseek_v3_parameters)
{
    model_spec m = model_builtin("deepseek-v3");
    param_count p = model_params(&m);
    cr_expect_eq(p.total, 671026404352.0, "total %.0f", p.total);
    expect_rel(p.total, 671e9, 0.01, "DeepSeek-V3 total vs 671B");
    /* active: total less 58 layers x 248 experts not routed to */
    cr_expect_eq(p.active, 671026404352.0 - 58.0 * 248 * 44040192, "active %.0f", p.active);
    cr_expect_eq(p.active_nonembedding, 671026404352.0 - 58.0 * 248 * 44040192 - 926679040.0);
    cr_expect_eq(p.mtp, 13463426048.0, "mtp %.0f", p.mtp);
    cr_expect_eq(p.mtp_active, 688100352.0, "mtp active %.0f", p.mtp_active);
    expect_rel(p.total + p.mtp, 685e9, 0.01, "main model and MTP vs the card's 685B");
    expect_rel(p.active_nonembedding + p.mtp_active, 37e9, 0.01, "active per training token vs 37B");
    /* the other conventions miss by more */
    cr_expect_gt(fabs(p.active / 37e9 - 1), 0.01);
    cr_expect_gt(fabs(p.active_nonembedding / 37e9 - 1), 0.0099);
    /* a model without the module has none */
    model_spec q = model_builtin("qwen3-235b-a22b");
    cr_expect_eq(model_params(&q).mtp, 0);
}

/* gpt-oss model card (arXiv 2508.10925, table 1): 120b has 116.83B total and
 * 5.13B active, 20b 20.91B and 3.61B, active counting the unembedding but
 * not the embedding.  Biases (about 0.03 %) are left out. */
Test(today, gpt_oss_parameters)
{
    model_spec big = model_builtin("gpt-oss-120b"), small = model_builtin("gpt-oss-20b");
    param_count p = model_params(&big), q = model_params(&small);
    expect_rel(p.total, 116.83e9, 0.01, "gpt-oss-120b total");
    expect_rel(p.active_nonembedding, 5.13e9, 0.01, "gpt-oss-120b active");
    expect_rel(q.total, 20.91e9, 0.01, "gpt-oss-20b total");
    expect_rel(q.active_nonembedding, 3.61e9, 0.01, "gpt-oss-20b active");
    /* by hand: per layer 128 experts of 3*2880*2880 = 24,883,200 */
    cr_expect_eq(p.routed, 36.0 * 128 * 24883200, "routed %.0f", p.routed);
}

/* Qwen3 model cards: Qwen3-235B-A22B 235B total, 22B activated (embeddings
 * counted); Qwen3-32B 32.8B, 31.2B without the embedding and the head. */
Test(today, qwen3_parameters)
{
    model_spec m = model_builtin("qwen3-235b-a22b"), d = model_builtin("qwen3-32b");
    param_count moe = model_params(&m);
    param_count dense = model_params(&d);
    expect_rel(moe.total, 235e9, 0.01, "Qwen3-235B-A22B total");
    expect_rel(moe.active, 22e9, 0.01, "Qwen3-235B-A22B active");
    expect_rel(dense.total, 32.8e9, 0.01, "Qwen3-32B total");
    expect_rel(dense.total - dense.embedding - dense.head, 31.2e9, 0.01, "Qwen3-32B non-embedding");
}

/* Llama 4 model cards: Scout 109B total (the vision encoder, left out here,
 * included), Maverick 400B; both 17B active. */
Test(today, llama4_parameters)
{
    model_spec s = model_builtin("llama4-scout"), v = model_builtin("llama4-maverick");
    param_count ps = model_params(&s), pv = model_params(&v);
    expect_rel(ps.total, 109e9, 0.02, "Scout total (text only)");
    expect_rel(pv.total, 400e9, 0.01, "Maverick total");
    expect_rel(ps.active, 17e9, 0.02, "Scout active");
    expect_rel(pv.active, 17e9, 0.02, "Maverick active");
    /* Maverick: 24 MoE layers (experts 128 + 1 shared of 3*5120*8192), 24 dense of 3*5120*16384 */
    cr_expect_eq(pv.mlp, 24.0 * 129 * 3 * 5120 * 8192 + 24.0 * 3 * 5120 * 16384, "mlp %.0f", pv.mlp);
}

/* MLA caches kv_lora + rope = 576 values per token per layer, whole on every
 * GPU; a GQA model of DeepSeek-V3's size (LLaMA-3.1-405B) caches 2*8*128. */
Test(today, mla_kv_cache)
{
    model_spec m = model_builtin("deepseek-v3");
    cr_expect_eq(kv_bytes_per_token(&m, DT_BF16), 61.0 * 576 * 2);
    cr_expect_eq(kv_bytes_per_token_per_gpu(&m, DT_FP8, 8), 61.0 * 576 * 1);
    cr_expect_eq(kv_bytes_per_sequence(&m, DT_FP8, 8192), 61.0 * 576 * 8192);
}

/* gpt-oss-120b: 18 full layers keep every token, 18 sliding ones the last
 * 128: at 8192 tokens, 2*8*64*2 bytes * (18*8192 + 18*128). */
Test(today, sliding_window_kv)
{
    model_spec m = model_builtin("gpt-oss-120b");
    const double per_layer = 2.0 * 8 * 64 * 2;
    cr_expect_eq(kv_bytes_per_sequence(&m, DT_BF16, 8192), per_layer * (18.0 * 8192 + 18.0 * 128));
    cr_expect_eq(kv_bytes_per_sequence(&m, DT_BF16, 100), per_layer * 36 * 100, "inside the window every layer grows");
    /* the planner's largest batch uses the same bytes */
    gpu_spec g = gpu_builtin("h100");
    replica_memory r;
    char err[256];
    cr_assert_eq(replica_memory_plan(&m, &g, precision_uniform(DT_BF16), 1, memory_policy_default(), &r, err,
                                     sizeof err), 0, "%s", err);
    int b = max_batch_for_memory(&r, 8192);
    double seq = per_layer * (18.0 * 8192 + 18.0 * 128);
    cr_expect_eq(b, (int)floor(r.kv_budget / seq), "batch %d", b);
}

/* MXFP4 experts: 4.25 bits each (4-bit values, an 8-bit scale per 32); the
 * rest at the weights' dtype.  The card's checkpoint is 60.8 GiB. */
Test(today, mxfp4_weight_bytes)
{
    model_spec m = model_builtin("gpt-oss-120b");
    param_count p = model_params(&m);
    double want = (p.total - p.routed) * 2 + p.routed * 4.25 / 8;
    cr_expect_eq(weight_bytes(&m, DT_BF16), want);
    expect_rel(weight_bytes(&m, DT_BF16) / (1024.0 * 1024 * 1024), 60.8, 0.01, "checkpoint GiB");
}

static const op_cost *find_op(const op_cost *ops, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(ops[i].name, name) == 0)
            return &ops[i];
    return NULL;
}

/* A DeepSeek-V3 decode step (absorbed MLA) reads the latent once per layer:
 * B * (context + 1) * 576 values; the dense layers' MLP runs 3 times, the
 * experts' 58. */
Test(today, deepseek_decode_ops)
{
    model_spec m = model_builtin("deepseek-v3");
    step_shape s = decode_shape(16, 4096, 8, precision_uniform(DT_FP8));
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    cr_assert_gt(n, 0);
    const op_cost *score = find_op(ops, n, "attn_score"), *value = find_op(ops, n, "attn_value");
    cr_assert(score && value && find_op(ops, n, "q_absorb") && !find_op(ops, n, "kv_b_proj"));
    cr_expect_eq(score->kv_bytes, 16.0 * 4097 * 576);
    cr_expect_eq(value->kv_bytes, 0);
    /* 16 heads per GPU, 576-wide scores over 4096 + 1 positions */
    cr_expect_eq(value->flop, 2.0 * 16 * 16 * 512 * 4097);
    /* the 16 heads of a sequence are the rows of one 64-row FlashMLA query tile against its
     * latent: the measured latent attention class of an fp8 cache, 16 sequences x ceil(16/64)
     * = 16 items over the two halves, each walking the 4097 positions */
    cr_expect_eq(score->rate, RC_MLA_DECODE_FP8);
    cr_expect_eq(value->rate, RC_MLA_DECODE_FP8);
    cr_expect_eq(score->items + value->items, 16);
    cr_expect_eq(score->span, 4097);
    const op_cost *dense = find_op(ops, n, "dense_down_proj"), *experts = find_op(ops, n, "routed_experts"),
                  *shared = find_op(ops, n, "shared_down_proj");
    cr_assert(dense && experts && shared);
    cr_expect_eq(op_repeats(&m, dense), 3);
    cr_expect_eq(op_repeats(&m, experts), 58);
    cr_expect_eq(op_repeats(&m, shared), 58);
    /* 16 tokens touch E(1-(1-8/256)^16) routed experts, each gate, up and down
     * 2048/8 wide here, fp8; the shared one by its own ops */
    double touched = 256 * (1 - pow(1 - 8.0 / 256, 16));
    cr_expect(fabs(experts->weight_bytes - touched * 3 * 256 * 7168) < 1e-3 * experts->weight_bytes);
    cr_expect_eq(shared->weight_bytes, 256.0 * 7168);
    cr_expect_eq(experts->rate, RC_MOE_FP8_BLOCK, "DeepSeek-V3's fp8 experts are block-scaled");
    /* a prefill expands the latent instead */
    step_shape p = prefill_shape(1, 0, 1024, 8, precision_uniform(DT_FP8));
    n = decoder_step_ops(&m, &p, ops, DECODER_MAX_OPS);
    cr_assert(find_op(ops, n, "kv_b_proj") && !find_op(ops, n, "q_absorb"));
}

/* gpt-oss: half the layers attend to at most 128 cached positions. */
Test(today, gpt_oss_window_ops)
{
    model_spec m = model_builtin("gpt-oss-120b");
    step_shape s = decode_shape(1, 8192, 1, precision_uniform(DT_BF16));
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    const op_cost *w = find_op(ops, n, "attn_value_window"), *f = find_op(ops, n, "attn_value");
    cr_assert(w && f);
    cr_expect_eq(op_repeats(&m, w), 18);
    cr_expect_eq(op_repeats(&m, f), 18);
    /* K or V of the 128 positions the window holds (the new token's
     * included) plus the new token's write, 8 KV heads of 64, bf16; the full
     * layers read all 8192 + 1 */
    cr_expect_eq(w->kv_bytes, (128.0 + 1) * 8 * 64 * 2);
    cr_expect_eq(f->kv_bytes, (8193.0 + 1) * 8 * 64 * 2);
    cr_expect_eq(w->flop, 2.0 * 64 * 64 * 128, "P V over 128 positions, 64 heads of 64");
    /* the experts are read at MXFP4's 4.25 bits: 4 touched at batch 1 */
    const op_cost *experts = find_op(ops, n, "routed_experts");
    cr_assert_not_null(experts);
    cr_expect_eq(experts->weight_bytes, 4.0 * 3 * 2880 * 2880 * 4.25 / 8);
    cr_expect_eq(experts->rate, RC_MOE_W4A16);
}

/* A config missing a key its family needs names the key. */
Test(today, missing_family_key_is_named)
{
    model_spec m;
    char err[512];
    const char *json = "{\"model_type\": \"deepseek_v3\", \"num_hidden_layers\": 4, \"hidden_size\": 256, "
                       "\"num_attention_heads\": 8, \"intermediate_size\": 512, \"vocab_size\": 1000, "
                       "\"n_routed_experts\": 8, \"num_experts_per_tok\": 2, \"moe_intermediate_size\": 64, "
                       "\"qk_nope_head_dim\": 16, \"qk_rope_head_dim\": 16, \"v_head_dim\": 16}";
    cr_assert_neq(model_from_hf_config(json, "config.json", "x", &m, err, sizeof err), 0);
    cr_expect(strstr(err, "'kv_lora_rank' is missing") != NULL, "%s", err);
}

/* A pipeline stage holds its share of each kind of layer: Maverick's 48
 * layers over 2 stages are 24, of which 12 dense and 18 chunked. */
Test(today, pipeline_stage_shares_the_layer_kinds)
{
    model_spec m = model_builtin("llama4-maverick"), st;
    char err[256];
    cr_assert_eq(pipeline_stage_model(&m, 2, &st, err, sizeof err), 0, "%s", err);
    cr_expect_eq(st.layers, 24);
    cr_expect_eq(st.dense_layers, 12);
    cr_expect_eq(st.window_layers, 18);
    cr_expect_eq(model_moe_layers(&st), 12);
}

/* A prefill of 1024 tokens through a 128-token window: query i sees
 * min(i + 1, 128) keys, 128*129/2 + (1024 - 128) * 128 = 8,256 + 114,688 =
 * 122,944 pairs a head, against 1024*1025/2 = 524,800 in a full layer. */
Test(today, window_caps_a_prefill)
{
    model_spec m = model_builtin("gpt-oss-120b");
    step_shape s = prefill_shape(1, 0, 1024, 1, precision_uniform(DT_BF16));
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    const op_cost *w = find_op(ops, n, "attn_value_window"), *f = find_op(ops, n, "attn_value");
    cr_assert(w && f);
    cr_expect_eq(w->flop, 2.0 * 64 * 64 * 122944);
    cr_expect_eq(f->flop, 2.0 * 64 * 64 * 524800);
    /* the window reads 1024 positions' K (all of them are someone's window) */
    cr_expect_eq(w->kv_bytes, (1024.0 + 1024) * 8 * 64 * 2);
}

/* The arch column: a row may leave it out (a plain model), and a bad item
 * names the column and says what it should be. */
Test(today, arch_column_parses_and_refuses)
{
    const char *head = "key\tname\tlayers\thidden\theads\tkv_heads\thead_dim\tffn\tvocab\texperts\texperts_active\ttied\t"
                       "source\tmax_position\tarch\n";
    const char *plain = "a\tA\t2\t64\t4\t2\t16\t128\t100\t1\t1\t0\tsrc\t-\n";
    model_table t;
    char err[512];
    cr_assert_eq(model_table_parse(fmt("%s%s", head, plain), "t.tsv", &t, err, sizeof err), 0, "%s", err);
    cr_expect_eq(t.rows[0].kv_lora_rank, 0);
    cr_expect_eq(t.rows[0].window_layers, 0);
    model_table_free(&t);
    /* a dense row: two mla numbers of five, a window without its layers, an expert width, an unknown item */
    const char *bad[] = {"mla=1/2", "window=128", "moe_ffn=64", "frobnicate=3"};
    const char *row = "b\tB\t2\t64\t4\t4\t16\t128\t100\t1\t1\t0\tsrc\t-\t%s\n";
    for (int i = 0; i < 4; i++) {
        cr_expect_eq(model_table_parse(fmt("%s%s", head, fmt(row, bad[i])), "t.tsv", &t, err, sizeof err), -1,
                     "accepted %s", bad[i]);
        cr_expect(strstr(err, "t.tsv:2: field 'arch'") != NULL, "%s: %s", bad[i], err);
    }
}
