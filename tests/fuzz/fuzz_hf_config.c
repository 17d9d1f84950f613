/* libFuzzer target: the config.json importer (hf_config.c) on arbitrary
 * bytes, seeded with the committed fixtures (the JSON files of tests/configs, linked
 * from tests/fuzz/seeds/fuzz_hf_config/).  Whatever the input, a config
 * either gives a model the table's own checks accept, whose parameter
 * count, KV bytes and decode step are finite and positive, or fails with a
 * message that names the file; it never crashes, leaks or reads out of
 * bounds (built with address and undefined-behaviour sanitizers), and no
 * input takes more than its time budget (fuzz_budget.h: 100 ms of CPU).
 *
 * Besides libFuzzer's byte mutations, a custom mutator edits the JSON the
 * way a crafted file would: a count key (layers, experts, steps, widths)
 * set to an extreme (0, -1, the table's limit and one past it, 10^9,
 * 2^31, 2^63 - 1) and a list of layers (mlp_only_layers, moe_layers,
 * no_rope_layers, layer_types) made empty, as long as the layers, one
 * longer, or as long as the input may grow, with duplicates and entries
 * that name no layer; tools/fuzz.sh lets this target's inputs grow to
 * 64 KiB (fuzz_hf_config.flags), room for lists of tens of thousands. */
#include "hf_config.h"
#include "memory.h"
#include "transformer.h"
#include "fuzz_budget.h"
#include "fuzz_text.h"

#include <jansson.h>
#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int finite_pos(double x)
{
    return isfinite(x) && x > 0;
}

static void check_model(const model_spec *m)
{
    if (m->layers < 1 || m->heads < 1 || m->kv_heads < 1 || m->heads % m->kv_heads != 0 ||
        m->experts_active > m->experts || m->experts_active < 1 || m->dense_layers >= m->layers ||
        m->window_layers > m->layers || m->mtp_layers < 0)
        abort();
    param_count p = model_params(m);
    if (!finite_pos(p.total) || !finite_pos(p.active) || p.active > p.total || !(p.mtp >= 0) || !isfinite(p.mtp))
        abort();
    if (!finite_pos(kv_bytes_per_token(m, DT_BF16)))
        abort();
    step_shape s = decode_shape(4, 1024, 1, precision_uniform(DT_BF16));
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(m, &s, ops, DECODER_MAX_OPS);
    if (n < 1)
        abort();
    for (int i = 0; i < n; i++)
        if (!(ops[i].flop >= 0) || !isfinite(ops[i].flop) || !(op_bytes(&ops[i]) >= 0) || !isfinite(op_bytes(&ops[i])))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    char err[1024];
    model_spec m;
    struct timespec t0 = fuzz_budget_start();
    if (model_from_hf_config(text, "fuzz/config.json", "fuzzed", &m, err, sizeof err) == 0)
        check_model(&m);
    else if (strncmp(err, "fuzz/config.json", 16) != 0)
        abort(); /* every message names the file */
    fuzz_budget_check(t0, "config");
    free(text);
    return 0;
}

/* ------------------------------------------------------------ mutators */

size_t LLVMFuzzerMutate(uint8_t *data, size_t size, size_t max_size);

/* The keys hf_config.c reads as counts, and as lists of layers. */
static const char *const COUNT_KEYS[] = {
    "num_hidden_layers", "hidden_size", "num_attention_heads", "num_key_value_heads", "head_dim",
    "intermediate_size", "vocab_size", "num_local_experts", "num_experts_per_tok", "max_position_embeddings",
    "num_experts", "moe_intermediate_size", "decoder_sparse_step", "n_routed_experts", "n_shared_experts",
    "first_k_dense_replace", "moe_layer_freq", "num_nextn_predict_layers", "kv_lora_rank", "q_lora_rank",
    "qk_nope_head_dim", "qk_rope_head_dim", "v_head_dim", "sliding_window", "intermediate_size_mlp",
    "interleave_moe_layer_step", "attention_chunk_size"};
static const char *const LIST_KEYS[] = {"mlp_only_layers", "moe_layers", "no_rope_layers", "layer_types"};
/* 10000 and 10001: the table's layer limit and one past it */
static const long long EXTREMES[] = {0, 1, 2, -1, 9999, 10000, 10001, 1000000000, 1000000001,
                                     2147483647LL, 2147483648LL, 9223372036854775807LL};
#define COUNT_OF(a) (sizeof(a) / sizeof((a)[0]))

/* xorshift64*, seeded by libFuzzer's seed: the mutation is reproducible. */
static uint64_t next_random(uint64_t *s)
{
    *s ^= *s >> 12;
    *s ^= *s << 25;
    *s ^= *s >> 27;
    return *s * 2685821657736338717ULL;
}

static long long layers_of(json_t *cfg)
{
    json_t *v = json_object_get(cfg, "num_hidden_layers");
    long long n = json_is_integer(v) ? json_integer_value(v) : 48;
    return n > 0 && n <= 100000 ? n : 48;
}

/* A count key set to an extreme or to a value near its own. */
static void mutate_count(json_t *cfg, uint64_t *rs)
{
    const char *key = COUNT_KEYS[next_random(rs) % COUNT_OF(COUNT_KEYS)];
    long long v;
    if (next_random(rs) % 4 == 0) {
        json_t *old = json_object_get(cfg, key);
        long long cur = json_is_integer(old) ? json_integer_value(old) : 64;
        v = cur / 2 + (long long)(next_random(rs) % (uint64_t)(cur > 0 && cur < 1000000000 ? cur + 2 : 2));
    } else {
        v = EXTREMES[next_random(rs) % COUNT_OF(EXTREMES)];
    }
    json_object_set_new(cfg, key, json_integer(v));
}

/* A list of layers made a new length: empty, the layers, one more, or as
 * many entries as `room` bytes hold (each up to 6 bytes compact). */
static void mutate_list(json_t *cfg, uint64_t *rs, size_t room)
{
    int which = (int)(next_random(rs) % COUNT_OF(LIST_KEYS));
    long long layers = layers_of(cfg), n;
    switch (next_random(rs) % 5) {
    case 0: n = 0; break;
    case 1: n = layers; break;
    case 2: n = layers + 1; break;
    case 3: n = (long long)(next_random(rs) % 16); break;
    default: n = (long long)(room / (which == 3 ? 20 : 6)); break;
    }
    json_t *a = json_array();
    for (long long i = 0; i < n; i++) {
        uint64_t r = next_random(rs);
        if (which == 3) /* layer_types: which layers slide */
            json_array_append_new(a, json_string(r % 2 ? "sliding_attention" : "full_attention"));
        else if (which == 2) /* no_rope_layers: a 0 or 1 per layer */
            json_array_append_new(a, json_integer((json_int_t)(r % 2)));
        else /* layer numbers, with duplicates and some that name no layer */
            json_array_append_new(a, json_integer((json_int_t)(r % (uint64_t)(layers + 4)) - 2));
    }
    json_object_set_new(cfg, LIST_KEYS[which], a);
}

size_t LLVMFuzzerCustomMutator(uint8_t *data, size_t size, size_t max_size, unsigned int seed)
{
    uint64_t rs = seed * 0x9E3779B97F4A7C15ULL + 1;
    if (next_random(&rs) % 3 == 0)
        return LLVMFuzzerMutate(data, size, max_size);
    json_error_t jerr;
    json_t *root = json_loadb((const char *)data, size, 0, &jerr);
    if (!json_is_object(root)) {
        json_decref(root);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    json_t *text = json_object_get(root, "text_config");
    json_t *cfg = json_is_object(text) && next_random(&rs) % 4 != 0 ? text : root;
    if (next_random(&rs) % 2)
        mutate_count(cfg, &rs);
    else
        mutate_list(cfg, &rs, max_size > size ? max_size - size : 0);
    if (next_random(&rs) % 4 == 0) /* now and then both: a long list and an extreme count */
        mutate_count(cfg, &rs);
    char *out = json_dumps(root, JSON_COMPACT);
    json_decref(root);
    size_t n = out ? strlen(out) : 0;
    if (!out || n > max_size) {
        free(out);
        return LLVMFuzzerMutate(data, size, max_size);
    }
    memcpy(data, out, n);
    free(out);
    return n;
}
