/* The mixtures of NVIDIA's measured runs that came after DeepSeek-V3:
 * MiniMax-M2.5 (minimax_m2), GLM-5 (glm_moe_dsa) and Kimi-K2.5 (kimi_k25
 * around a DeepSeek-V3 text_config).  Each config (tests/configs/) read as
 * its table row, parameters counted by hand against the model card's
 * total, Kimi's int4 experts' bytes, and Qwen3.5's linear attention refused
 * with its reason. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "hf_config.h"
#include "memory.h"
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

Test(models_2026, configs_match_their_rows)
{
    static const char *keys[] = {"minimax-m2.5", "glm-5", "kimi-k2.5"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        model_spec row = model_builtin(keys[i]);
        model_spec m = load(fmt("%s.json", keys[i]), keys[i]);
#define SAME(field) cr_expect_eq(m.field, row.field, "%s " #field ": config %d, table %d", keys[i], m.field, row.field)
        SAME(layers); SAME(hidden); SAME(heads); SAME(kv_heads); SAME(head_dim); SAME(ffn); SAME(vocab);
        SAME(experts); SAME(experts_active); SAME(tied_embeddings); SAME(max_position);
        SAME(q_lora_rank); SAME(kv_lora_rank); SAME(qk_nope_dim); SAME(qk_rope_dim); SAME(v_head_dim);
        SAME(moe_ffn); SAME(shared_experts); SAME(dense_layers); SAME(window); SAME(window_layers); SAME(sinks);
        SAME(expert_format); SAME(mtp_layers); SAME(dsa_heads); SAME(dsa_dim); SAME(dsa_topk);
#undef SAME
        cr_expect_eq(model_params(&m).total, model_params(&row).total, "%s parameters", keys[i]);
    }
}

/* MiniMax-M2.5 (config.json: hidden 3072, 62 layers, 48 heads of 128, 8 KV
 * heads, 256 experts of 1536 top 8 on every layer, vocab 200064, untied):
 *   attention per layer  2*3072*48*128 + 2*3072*8*128 =     44,040,192
 *   expert               3*3072*1536                   =     14,155,776
 *   router               3072*256                      =        786,432
 *   embedding = head     200064*3072                   =    614,596,608
 *   total = 2*614,596,608 + 62*(44,040,192 + 256*14,155,776 + 786,432 + 2*3072)
 *         + 3072 = 228,689,304,576
 * The card: 230B total (-0.6 %), 10B active: the active count, 62 layers x
 * 248 experts fewer, is 11,030,092,800, 10.42B without the input embedding
 * (a "10B" rounded to two figures holds 9.5..10.5). */
Test(models_2026, minimax_m2_5_parameters)
{
    model_spec m = model_builtin("minimax-m2.5");
    param_count p = model_params(&m);
    cr_expect_eq(p.total, 228689304576.0, "total %.0f", p.total);
    cr_expect_eq(p.active, 228689304576.0 - 62.0 * 248 * 14155776, "active %.0f", p.active);
    expect_rel(p.total, 230e9, 0.01, "MiniMax-M2.5 total vs 230B");
    expect_rel(p.active_nonembedding, 10e9, 0.05, "MiniMax-M2.5 active vs 10B");
    cr_expect_eq(m.dense_layers, 0);
    cr_expect_eq(m.shared_experts, 0);
}

/* GLM-5 (config.json: hidden 6144, 78 layers, 64 heads, q_lora 2048,
 * kv_lora 512, nope 192, rope 64, v 256, 256 routed experts of 2048 top 8,
 * 1 shared, first 3 layers dense of 12288, vocab 154880, one MTP layer
 * counted apart), with DeepSeek-V3's count (test_models_today.c):
 *   attention per layer  6144*2048 + 2048 + 2048*64*256 + 6144*576 + 512
 *                        + 512*64*448 + 64*256*6144         =   165,022,208
 *   expert               3*6144*2048                        =    37,748,736
 *   dense MLP            3*6144*12288                       =   226,492,416
 *   embedding = head     154880*6144                        =   951,582,720
 *   routers 75*6144*256 = 117,964,800; norms 78*2*6144 + 6144 = 964,608
 *   the sparse-attention indexer per layer: wq_b 2048*32*128 + wk 6144*128
 *     + k_norm 2*128 + weights_proj 6144*32                  =     9,371,904
 *   total = 2*951,582,720 + 78*(165,022,208 + 9,371,904) + 3*226,492,416
 *         + 75*257*37,748,736 + 117,964,800 + 964,608 = 743,911,199,232
 * The card: 744B total (-0.01 %), 40B active (40.83B without the input
 * embedding, +2 %). */
Test(models_2026, glm_5_parameters)
{
    model_spec m = model_builtin("glm-5");
    param_count p = model_params(&m);
    cr_expect_eq(p.total, 743911199232.0, "total %.0f", p.total);
    cr_expect_eq(p.active, 743911199232.0 - 75.0 * 248 * 37748736, "active %.0f", p.active);
    expect_rel(p.total, 744e9, 0.01, "GLM-5 total vs 744B");
    expect_rel(p.active_nonembedding, 40e9, 0.03, "GLM-5 active vs 40B");
    cr_expect_eq(m.mtp_layers, 1);
    /* latent attention: 512 + 64 values a token a layer, as DeepSeek-V3's, and the indexer's key:
     * 128 fp8 values and one fp32 scale, 132 bytes */
    cr_expect_eq(kv_bytes_per_token(&m, DT_BF16), 78.0 * (576 * 2 + 132));
}

/* Kimi-K2.5's text_config (hidden 7168, 61 layers, 64 heads, q_lora 1536,
 * kv_lora 512, nope 128, rope 64, v 128, 384 routed experts of 2048 top 8,
 * 1 shared, 1 dense layer of 18432, vocab 163840):
 *   attention per layer  7168*1536 + 1536 + 1536*64*192 + 7168*576 + 512
 *                        + 512*64*256 + 64*128*7168         =   101,124,096
 *   expert               3*7168*2048                        =    44,040,192
 *   dense MLP            3*7168*18432                       =   396,361,728
 *   embedding = head     163840*7168                        = 1,174,405,120
 *   routers 60*7168*384 = 165,150,720; norms 61*2*7168 + 7168 = 881,664
 *   total = 2*1,174,405,120 + 61*101,124,096 + 396,361,728 + 60*385*44,040,192
 *         + 165,150,720 + 881,664 = 1,026,408,209,408
 * The card (Kimi K2's, whose text model this is): 1T total, stated to one
 * figure (+2.6 %), 32B activated (31.69B without the input embedding). */
Test(models_2026, kimi_k2_5_parameters)
{
    model_spec m = model_builtin("kimi-k2.5");
    param_count p = model_params(&m);
    cr_expect_eq(p.total, 1026408209408.0, "total %.0f", p.total);
    cr_expect_eq(p.active, 1026408209408.0 - 60.0 * 376 * 44040192, "active %.0f", p.active);
    cr_expect_eq(p.routed, 60.0 * 384 * 44040192, "routed %.0f", p.routed);
    expect_rel(p.total, 1e12, 0.05, "Kimi-K2.5 total vs 1T");
    expect_rel(p.active_nonembedding, 32e9, 0.015, "Kimi-K2.5 active vs 32B");
}

/* Kimi-K2.5's routed experts as released: int4 with a bf16 scale per 32
 * weights, 4 + 16/32 = 4.5 bits; the rest bf16:
 *   (1,026,408,209,408 - 1,014,686,023,680) * 2 + 1,014,686,023,680 * 4.5/8
 *   = 23,444,371,456 + 570,760,888,320 = 594,205,259,776 bytes. */
Test(models_2026, kimi_int4_experts_bytes)
{
    model_spec m = model_builtin("kimi-k2.5");
    cr_expect_eq(m.expert_format, EXPERTS_INT4_G32);
    cr_expect_eq(weight_bytes(&m, DT_BF16), 594205259776.0, "%.0f", weight_bytes(&m, DT_BF16));
    cr_expect_eq(expert_weight_bytes(&m, DT_BF16), 4.5 / 8);
    /* a config whose int4 covers attention too is not read as int4 experts */
    char err[512];
    model_spec q;
    const char *cfg = "{\"model_type\":\"kimi_k2\",\"num_hidden_layers\":2,\"hidden_size\":64,"
                      "\"num_attention_heads\":4,\"intermediate_size\":128,\"vocab_size\":100,"
                      "\"n_routed_experts\":8,\"num_experts_per_tok\":2,\"moe_intermediate_size\":32,"
                      "\"kv_lora_rank\":16,\"qk_nope_head_dim\":8,\"qk_rope_head_dim\":8,\"v_head_dim\":8,"
                      "\"quantization_config\":{\"quant_method\":\"compressed-tensors\",\"config_groups\":{\"g\":"
                      "{\"weights\":{\"num_bits\":4,\"group_size\":32,\"type\":\"int\",\"symmetric\":true}}},"
                      "\"ignore\":[\"lm_head\"]}}";
    cr_assert_eq(model_from_hf_config(cfg, "k.json", "k", &q, err, sizeof err), 0, "%s", err);
    cr_expect_eq(q.expert_format, EXPERTS_AS_WEIGHTS);
}

/* Qwen3.5-397B-A17B (tests/configs/qwen3.5-397b-a17b.json): 45 of its 60
 * layers Gated DeltaNet, 15 full attention with an output gate.  By hand,
 * h = 4096:
 *  - a full-attention layer: q_proj with its gate 4096 x 2 x 32 x 256 =
 *    67,108,864, k and v 2 x 4096 x 2 x 256 = 4,194,304, o 8192 x 4096 =
 *    33,554,432, q_norm and k_norm 512: 104,858,112;
 *  - a linear layer: in_proj_qkvz 4096 x (2 x 2048 + 2 x 8192) = 83,886,080,
 *    in_proj_ba 4096 x 128 = 524,288, conv1d 12,288 x 4 = 49,152, dt_bias
 *    and A_log 128, norm 128, out_proj 8192 x 4096 = 33,554,432: 118,014,208;
 *  - experts 60 x 512 x 3 x 4096 x 1024 = 386,547,056,640, the shared
 *    expert 60 x 12,582,912 = 754,974,720, routers 60 x 4096 x 512 =
 *    125,829,120, embedding and head 2 x 248,320 x 4096 = 2,034,237,440,
 *    norms 60 x 8192 + 4096 = 495,616;
 *  total 15 x 104,858,112 + 45 x 118,014,208 + the rest = 396,346,104,576
 *  (the card's 397B counts the vision encoder too: within 0.5 %); active:
 *  the total less 60 x 502 x 12,582,912 idle experts = 17,348,795,136
 *  (the card: 17B, within 2.1 %). */
Test(models_2026, qwen3_5_linear_attention_is_read)
{
    model_spec m = load("qwen3.5-397b-a17b.json", "q");
    cr_expect_eq(m.layers, 60);
    cr_expect_eq(m.linear_layers, 45);
    cr_expect_eq(m.linear_k_heads, 16);
    cr_expect_eq(m.linear_v_heads, 64);
    cr_expect_eq(m.linear_k_dim, 128);
    cr_expect_eq(m.linear_v_dim, 128);
    cr_expect_eq(m.linear_conv, 4);
    cr_expect_eq(m.linear_state_bytes, 4); /* mamba_ssm_dtype float32 */
    cr_expect_eq(m.attn_gate, 1);
    cr_expect_eq(m.experts, 512);
    cr_expect_eq(m.experts_active, 10);
    cr_expect_eq(m.shared_experts, 1);
    cr_expect_eq(m.mtp_layers, 1);
    param_count p = model_params(&m);
    cr_expect_eq(p.total, 396346104576.0, "%.0f", p.total);
    cr_expect_eq(p.active, 17348795136.0, "%.0f", p.active);
    expect_rel(p.total, 397e9, 0.005, "total against the card's 397B");
    expect_rel(p.active, 17e9, 0.025, "active against the card's 17B");
    /* KV only in the 15 full-attention layers: 15 x 2 x 2 heads x 256 x 2 bytes */
    cr_expect_eq(kv_bytes_per_token(&m, DT_BF16), 30720.0);
}

/* A config of another family with linear layers is still refused, naming why. */
Test(models_2026, linear_attention_in_another_family_is_refused)
{
    const char *cfg = "{\"model_type\":\"qwen3\",\"num_hidden_layers\":2,\"hidden_size\":64,"
                      "\"num_attention_heads\":4,\"intermediate_size\":128,\"vocab_size\":100,"
                      "\"layer_types\":[\"linear_attention\",\"full_attention\"]}";
    model_spec m;
    char err[512];
    cr_expect_eq(model_from_hf_config(cfg, "x.json", "x", &m, err, sizeof err), -1);
    cr_expect(strstr(err, "1 of the layers in layer_types are linear_attention") != NULL, "%s", err);
}
