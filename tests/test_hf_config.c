/* Hugging Face config.json files (tests/configs/) read as model rows
 * (code/napkin/specs/hf_config.c): each config of a table model gives that row
 * exactly, and parameter counts match the models' published totals, derived
 * by hand below. */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "hf_config.h"
#include "memory.h"
#include "specs.h"
#include "test_text.h"
#include "transformer.h"

#define assert_contains(hay, needle) \
    cr_expect(strstr((hay), (needle)) != NULL, "expected to find:\n%s\n--- in:\n%s", (needle), (hay))

static model_spec load(const char *file, const char *key)
{
    model_spec m;
    char err[512];
    const char *src = need_env("NB_SRC");
    int rc = model_from_hf_config_file(fmt("%s/tests/configs/%s", src, file), key, &m, err, sizeof err);
    cr_assert_eq(rc, 0, "%s: %s", file, err);
    return m;
}

static char *load_error(const char *json)
{
    static char err[512];
    model_spec m;
    cr_assert_neq(model_from_hf_config(json, "config.json", "x", &m, err, sizeof err), 0, "accepted:\n%s", json);
    return err;
}

/* Every table model's config gives its row: the same shape, so the same
 * parameter count and KV bytes per token, and the row's max_position. */
Test(hf_config, table_models_match_their_rows)
{
    static const char *keys[] = {"llama3-8b", "llama3-70b", "llama3-405b", "llama3.2-1b", "llama2-13b", "mixtral-8x7b"};
    for (size_t i = 0; i < sizeof keys / sizeof keys[0]; i++) {
        model_spec row = model_builtin(keys[i]);
        model_spec m = load(fmt("%s.json", keys[i]), keys[i]);
        cr_expect_eq(m.layers, row.layers, "%s layers", keys[i]);
        cr_expect_eq(m.hidden, row.hidden, "%s hidden", keys[i]);
        cr_expect_eq(m.heads, row.heads, "%s heads", keys[i]);
        cr_expect_eq(m.kv_heads, row.kv_heads, "%s kv_heads", keys[i]);
        cr_expect_eq(m.head_dim, row.head_dim, "%s head_dim", keys[i]);
        cr_expect_eq(m.ffn, row.ffn, "%s ffn", keys[i]);
        cr_expect_eq(m.vocab, row.vocab, "%s vocab", keys[i]);
        cr_expect_eq(m.experts, row.experts, "%s experts", keys[i]);
        cr_expect_eq(m.experts_active, row.experts_active, "%s experts_active", keys[i]);
        cr_expect_eq(m.tied_embeddings, row.tied_embeddings, "%s tied", keys[i]);
        cr_expect_eq(m.max_position, row.max_position, "%s max_position", keys[i]);
        cr_expect(m.max_position > 0, "%s: the table row has no max_position", keys[i]);
        cr_expect_eq(model_params(&m).total, model_params(&row).total, "%s parameters", keys[i]);
        cr_expect_eq(kv_bytes_per_token(&m, DT_BF16), kv_bytes_per_token(&row, DT_BF16), "%s KV bytes", keys[i]);
    }
}

/* LLaMA-3-8B, by hand: embedding and head 128,256 x 4,096 = 525,336,576 each;
 * a layer has q and o 4096^2 = 16,777,216 each, k and v 4096 x 1024 =
 * 4,194,304 each, the MLP 3 x 4096 x 14,336 = 176,160,768 and two norms of
 * 4,096: 218,112,000; x 32 = 6,979,584,000; a final norm 4,096.  Total
 * 8,030,261,248 (the published 8.03B).  KV per token in bf16:
 * 2 x 32 layers x 8 heads x 128 x 2 B = 131,072. */
Test(hf_config, llama3_8b_by_hand)
{
    model_spec m = load("llama3-8b.json", "mine");
    cr_expect_eq(model_params(&m).total, 8030261248.0);
    cr_expect_eq(kv_bytes_per_token(&m, DT_BF16), 131072.0);
    cr_expect_str_eq(m.key, "mine");
    cr_expect_eq(m.max_position, 8192);
}

/* Mistral-7B-v0.1 (no head_dim key: 4096 / 32 = 128): the LLaMA-3-8B layer
 * with a 32,000 vocabulary: 2 x 131,072,000 + 6,979,584,000 + 4,096 =
 * 7,241,732,096, the published count. */
Test(hf_config, mistral)
{
    model_spec m = load("mistral-7b.json", "mistral-7b");
    cr_expect_eq(m.head_dim, 128);
    cr_expect_eq(model_params(&m).total, 7241732096.0);
    cr_expect_eq(m.max_position, 32768);
}

/* Mistral-Nemo-12B: head_dim 128 though 5120 / 32 = 160.  q is 5120 x 4096 =
 * 20,971,520, k and v 5120 x 1024 = 5,242,880 each, o 20,971,520: 52,428,800;
 * MLP 3 x 5120 x 14,336 = 220,200,960; norms 10,240: 272,640,000 a layer,
 * x 40 = 10,905,600,000; embedding and head 131,072 x 5,120 = 671,088,640
 * each; final norm 5,120.  Total 12,247,782,400 (the published 12.2B).
 * KV in bf16: 2 x 40 x 8 x 128 x 2 = 163,840 B per token. */
Test(hf_config, separate_head_dim)
{
    model_spec m = load("mistral-nemo-12b.json", "nemo");
    cr_expect_eq(m.head_dim, 128);
    cr_expect_eq(model_params(&m).total, 12247782400.0);
    cr_expect_eq(kv_bytes_per_token(&m, DT_BF16), 163840.0);
}

/* Qwen2-7B: 152,064 x 3,584 embedding and head; a layer has q and o 3584^2,
 * k and v 3584 x 512, MLP 3 x 3584 x 18,944 and two norms; 28 layers: total
 * 7,615,487,488 without the q, k, v biases (3,584 + 512 + 512 a layer, x 28 =
 * 129,024), that is the published 7,615,616,512 less the biases. */
Test(hf_config, qwen2)
{
    model_spec m = load("qwen2-7b.json", "qwen2-7b");
    cr_expect_eq(m.kv_heads, 4);
    cr_expect_eq(model_params(&m).total, 7615616512.0 - 129024.0);
}

/* Mixtral: 8 experts, 2 active, read from num_local_experts and num_experts_per_tok. */
Test(hf_config, mixtral_experts)
{
    model_spec m = load("mixtral-8x7b.json", "mx");
    cr_expect_eq(m.experts, 8);
    cr_expect_eq(m.experts_active, 2);
}

Test(hf_config, unknown_architecture_names_the_missing_key)
{
    model_spec m;
    char err[512];
    const char *src = need_env("NB_SRC");
    cr_assert_neq(model_from_hf_config_file(fmt("%s/tests/configs/unknown-arch.json", src), "x", &m, err, sizeof err), 0);
    assert_contains(err, "key 'num_hidden_layers' is missing");
    assert_contains(err, "architecture GPT2LMHeadModel, model_type gpt2, is not one napkin reads");
}

Test(hf_config, bad_configs_are_refused_with_the_key)
{
    assert_contains(load_error("{\"model_type\": \"llama\", \"num_hidden_layers\": 2}"), "key 'hidden_size' is missing");
    assert_contains(load_error("{\"model_type\": \"llama\", \"num_hidden_layers\": 0, \"hidden_size\": 8, "
                               "\"num_attention_heads\": 2, \"intermediate_size\": 8, \"vocab_size\": 8}"),
                    "key 'num_hidden_layers' is 0, out of range: from 1 to");
    /* 3 KV heads do not divide 4 attention heads: the table's own check */
    assert_contains(load_error("{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 8, "
                               "\"num_attention_heads\": 4, \"num_key_value_heads\": 3, \"intermediate_size\": 8, "
                               "\"vocab_size\": 8}"),
                    "kv_heads");
    assert_contains(load_error("{\"model_type\": \"llama\", \"num_hidden_layers\": 2, \"hidden_size\": 8, "
                               "\"num_attention_heads\": 2, \"intermediate_size\": 8, \"vocab_size\": 8, "
                               "\"tie_word_embeddings\": 1}"),
                    "tie_word_embeddings");
    assert_contains(load_error("{\"model_type\": "), "config.json:1: not JSON");
    assert_contains(load_error("[1, 2]"), "not a config.json");
    assert_contains(load_error("{\"model_type\": \"gpt2\", \"num_hidden_layers\": 2, \"hidden_size\": 8, "
                               "\"num_attention_heads\": 2, \"intermediate_size\": 8, \"vocab_size\": 8}"),
                    "has every key napkin reads, but (architecture (none), model_type gpt2");
}
