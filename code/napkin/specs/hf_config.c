#include "hf_config.h"

#include "text_escape.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const KNOWN_TYPES[] = {"llama",       "mistral",    "mixtral",     "qwen2",
                                          "qwen3",       "qwen3_moe",  "deepseek_v3", "gpt_oss",
                                          "llama4_text", "llama4",     "minimax_m2",  "glm_moe_dsa",
                                          "kimi_k2",     "qwen3_5_moe", "qwen3_5_moe_text"};
static const char *const KNOWN_ARCHS[] = {"LlamaForCausalLM",      "MistralForCausalLM",    "MixtralForCausalLM",
                                          "Qwen2ForCausalLM",      "Qwen3ForCausalLM",      "Qwen3MoeForCausalLM",
                                          "DeepseekV3ForCausalLM", "GptOssForCausalLM",     "Llama4ForCausalLM",
                                          "Llama4ForConditionalGeneration", "MiniMaxM2ForCausalLM",
                                          "GlmMoeDsaForCausalLM",  "KimiK2ForCausalLM",
                                          "Qwen3_5MoeForConditionalGeneration", "Qwen3_5MoeForCausalLM"};
/* Families whose keys differ from llama's (indices into the lists above).
 * minimax_m2 has mixtral's keys (num_local_experts; intermediate_size is
 * the experts' width, every layer has experts, no shared one); GLM-5's
 * glm_moe_dsa and Kimi's kimi_k2 have DeepSeek-V3's. */
enum {
    ARCH_QWEN3_MOE = 5,
    ARCH_DEEPSEEK_V3 = 6,
    ARCH_GPT_OSS = 7,
    ARCH_LLAMA4_TEXT = 8,
    ARCH_LLAMA4 = 9,
    ARCH_MINIMAX_M2 = 10,
    ARCH_GLM_MOE_DSA = 11,
    ARCH_KIMI_K2 = 12,
    ARCH_QWEN3_5_MOE = 13, /* Qwen3.5: qwen3_moe's experts, Gated DeltaNet on the linear_attention layers */
    ARCH_QWEN3_5_MOE_TEXT = 14
};
#define KNOWN_LIST "llama, mistral, mixtral, qwen2, qwen3, qwen3_moe, deepseek_v3, gpt_oss, llama4, minimax_m2, glm_moe_dsa, kimi_k2, qwen3_5_moe"
#define NKNOWN ((int)(sizeof KNOWN_TYPES / sizeof KNOWN_TYPES[0]))

static int failf(char *err, size_t n, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static int failf(char *err, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    if (err && n)
        vsnprintf(err, n, fmt, ap);
    va_end(ap);
    return -1;
}

/* Which of the known architectures this is: its index, or -1. */
static int architecture(json_t *root, const char **type, const char **arch)
{
    json_t *t = json_object_get(root, "model_type");
    json_t *a = json_array_get(json_object_get(root, "architectures"), 0);
    *type = json_is_string(t) ? json_string_value(t) : "(none)";
    *arch = json_is_string(a) ? json_string_value(a) : "(none)";
    for (int i = 0; i < NKNOWN; i++)
        if (strcmp(*type, KNOWN_TYPES[i]) == 0 || strcmp(*arch, KNOWN_ARCHS[i]) == 0)
            return i;
    return -1;
}

/* The longest config.json read.  A real one is a few kB; the longest list
 * of layers that means anything (every one of MODEL_LAYERS_MAX, "9999,")
 * is 50 kB.  The cap keeps the parse, which costs an allocation per list
 * entry, within milliseconds whatever the file holds. */
#define HF_CONFIG_BYTES_MAX ((size_t)256 << 10)
#define HF_CONFIG_BYTES_MAX_TEXT "256 KiB"

/* The largest count a config may give: the table's own bounds are far
 * below it, and the products of two stay exact. */
#define COUNT_MAX 1000000000LL

/* A whole number from 1 to COUNT_MAX under `name`: 0 and *out set, 1 when
 * absent (or null), -1 with why in `why` when present but not such a number. */
static int get_count(json_t *root, const char *name, long long *out, char *why, size_t whylen)
{
    json_t *v = json_object_get(root, name);
    if (!v || json_is_null(v))
        return 1;
    if (json_is_integer(v) && json_integer_value(v) >= 1 && json_integer_value(v) <= COUNT_MAX) {
        *out = json_integer_value(v);
        return 0;
    }
    if (json_is_integer(v))
        snprintf(why, whylen, "%lld, out of range: from 1 to %lld", (long long)json_integer_value(v), COUNT_MAX);
    else if (json_is_real(v))
        snprintf(why, whylen, "%g, not a whole number", json_real_value(v));
    else
        snprintf(why, whylen, "not a number");
    return -1;
}

/* A whole number >= 0 under `name` (null or absent: *out = dflt): 0, or -1
 * with a message. */
static int get_count0(json_t *cfg, const char *origin, const char *name, long long dflt, long long *out, char *err,
                      size_t errlen)
{
    json_t *v = json_object_get(cfg, name);
    if (!v || json_is_null(v)) {
        *out = dflt;
        return 0;
    }
    if (json_is_integer(v) && json_integer_value(v) >= 0 && json_integer_value(v) <= 100000000) {
        *out = json_integer_value(v);
        return 0;
    }
    return failf(err, errlen, "%s: key '%s' is not a whole number >= 0", origin, name);
}

static int need_count(json_t *cfg, const char *origin, const char *name, long long *out, char *err, size_t errlen)
{
    char why[128];
    int rc = get_count(cfg, name, out, why, sizeof why);
    if (rc == 0)
        return 0;
    return failf(err, errlen, "%s: key '%s' is %s", origin, name, rc > 0 ? "missing" : why);
}

/* How many entries of the array `name` equal the string `value` (or the
 * integer `ivalue` when value is NULL); -1 when it is absent or not an array. */
static long long count_in_array(json_t *cfg, const char *name, const char *value, long long ivalue)
{
    json_t *a = json_object_get(cfg, name);
    if (!json_is_array(a))
        return -1;
    long long n = 0;
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x)
    {
        if (value ? (json_is_string(x) && strcmp(json_string_value(x), value) == 0)
                  : (json_is_integer(x) && json_integer_value(x) == ivalue))
            n++;
    }
    return n;
}

/* The layers the list `name` names, marked in mark[0..layers-1] (layers is
 * at most MODEL_LAYERS_MAX), read once: how many distinct layers it names
 * (an entry that names no layer is ignored, as transformers' membership
 * test ignores it), -1 when the key is absent or null, -2 with a message
 * when it is not a list. */
static long long mark_layers(json_t *cfg, const char *origin, const char *name, long long layers, unsigned char *mark,
                             char *err, size_t errlen)
{
    memset(mark, 0, (size_t)layers);
    json_t *a = json_object_get(cfg, name);
    if (!a || json_is_null(a))
        return -1;
    if (!json_is_array(a)) {
        failf(err, errlen, "%s: key '%s' is not a list of layer numbers", origin, name);
        return -2;
    }
    long long distinct = 0;
    size_t i;
    json_t *x;
    json_array_foreach(a, i, x)
    {
        if (json_is_integer(x) && json_integer_value(x) >= 0 && json_integer_value(x) < layers &&
            !mark[json_integer_value(x)]) {
            mark[json_integer_value(x)] = 1;
            distinct++;
        }
    }
    return distinct;
}

/* A compressed-tensors quantization_config whose one weight group is
 * symmetric int4 in groups of 32 while attention, the shared experts and
 * the dense MLPs stay unquantized (its ignore list names them): the routed
 * experts are int4 (Kimi-K2.5 as released).  Anything else: 0, the experts
 * at the weights' dtype. */
static int int4_group32_experts(json_t *cfg)
{
    json_t *qc = json_object_get(cfg, "quantization_config");
    json_t *method = json_object_get(qc, "quant_method");
    if (!json_is_string(method) || strcmp(json_string_value(method), "compressed-tensors") != 0)
        return 0;
    json_t *groups = json_object_get(qc, "config_groups");
    if (json_object_size(groups) != 1)
        return 0;
    json_t *w = json_object_get(json_object_iter_value(json_object_iter(groups)), "weights");
    json_t *bits = json_object_get(w, "num_bits"), *size = json_object_get(w, "group_size");
    json_t *type = json_object_get(w, "type"), *sym = json_object_get(w, "symmetric");
    if (!json_is_integer(bits) || json_integer_value(bits) != 4 || !json_is_integer(size) ||
        json_integer_value(size) != 32 || !json_is_string(type) || strcmp(json_string_value(type), "int") != 0 ||
        !json_is_true(sym))
        return 0;
    int attention = 0, shared = 0;
    size_t i;
    json_t *x;
    json_array_foreach(json_object_get(qc, "ignore"), i, x)
    {
        const char *pat = json_is_string(x) ? json_string_value(x) : "";
        attention |= strstr(pat, "self_attn") != NULL;
        shared |= strstr(pat, "shared_experts") != NULL;
    }
    return attention && shared;
}

/* Qwen3.5's Gated DeltaNet layers (transformers' Qwen3_5MoeGatedDeltaNet):
 * the layer_types marked linear_attention, with linear_num_key_heads x
 * linear_key_head_dim for q and k, linear_num_value_heads x
 * linear_value_head_dim for v, a causal convolution of
 * linear_conv_kernel_dim taps, the state at mamba_ssm_dtype (float32 when
 * absent); attn_output_gate doubles the full-attention layers' q_proj (a
 * sigmoid gate on the output); mtp_num_hidden_layers modules counted apart.
 * Appends "linear=...,linear_conv=...,linear_state=...[,attn_gate][,mtp=n]"
 * to the arch text at buf + *used. */
static int qwen3_5_linear(json_t *cfg, const char *origin, long long layers, char *buf, size_t buflen, size_t *used,
                          char *err, size_t errlen)
{
    long long linear = count_in_array(cfg, "layer_types", "linear_attention", 0), kh, vh, kd, vd, conv, mtp;
    if (linear < 1 || linear >= layers)
        return failf(err, errlen, "%s: key 'layer_types' must mark some but not all of the %lld layers "
                                  "linear_attention", origin, layers);
    if (need_count(cfg, origin, "linear_num_key_heads", &kh, err, errlen) ||
        need_count(cfg, origin, "linear_num_value_heads", &vh, err, errlen) ||
        need_count(cfg, origin, "linear_key_head_dim", &kd, err, errlen) ||
        need_count(cfg, origin, "linear_value_head_dim", &vd, err, errlen) ||
        get_count0(cfg, origin, "linear_conv_kernel_dim", 4, &conv, err, errlen) ||
        get_count0(cfg, origin, "mtp_num_hidden_layers", 0, &mtp, err, errlen))
        return -1;
    json_t *sd = json_object_get(cfg, "mamba_ssm_dtype");
    int state_bytes = 4;
    if (json_is_string(sd) && (strcmp(json_string_value(sd), "bfloat16") == 0 ||
                               strcmp(json_string_value(sd), "float16") == 0))
        state_bytes = 2;
    else if (sd && !json_is_null(sd) && !(json_is_string(sd) && strcmp(json_string_value(sd), "float32") == 0))
        return failf(err, errlen, "%s: key 'mamba_ssm_dtype' is not float32, bfloat16 or float16", origin);
    int w = snprintf(buf + *used, buflen - *used, "%slinear=%lld/%lld/%lld/%lld/%lld,linear_conv=%lld,linear_state=%d%s",
                     *used ? "," : "", linear, kh, vh, kd, vd, conv, state_bytes,
                     json_is_true(json_object_get(cfg, "attn_output_gate")) ? ",attn_gate" : "");
    *used += (size_t)w < buflen - *used ? (size_t)w : buflen - *used - 1;
    if (mtp > 0) {
        w = snprintf(buf + *used, buflen - *used, ",mtp=%lld", mtp);
        *used += (size_t)w < buflen - *used ? (size_t)w : buflen - *used - 1;
    }
    return 0;
}

/* The keys of the families the table's `arch` column describes: Qwen3-MoE
 * (num_experts, moe_intermediate_size, mlp_only_layers, decoder_sparse_step),
 * DeepSeek-V3 (n_routed_experts, n_shared_experts, first_k_dense_replace and
 * the MLA ranks), gpt-oss (sliding windows on the layer_types marked
 * sliding_attention, attention sinks, MXFP4 experts) and Llama 4
 * (intermediate_size is the experts', intermediate_size_mlp the dense
 * layers'; one shared expert; interleave_moe_layer_step; chunked attention
 * on the rope layers of no_rope_layers). */
static int family_shape(json_t *cfg, json_t *root, int family, const char *origin, long long layers,
                        long long *head_dim, long long *ffn, long long *experts, char *arch,
                        size_t archlen, char *err, size_t errlen)
{
    char buf[256] = "";
    size_t used = 0;
#define ARCH_ADD(...)                                                                                            \
    do {                                                                                                         \
        int w_ = snprintf(buf + used, sizeof buf - used, "%s", used ? "," : "");                                 \
        used += (size_t)w_;                                                                                      \
        w_ = snprintf(buf + used, sizeof buf - used, __VA_ARGS__);                                               \
        used += (size_t)w_ < sizeof buf - used ? (size_t)w_ : sizeof buf - used - 1;                             \
    } while (0)
    long long moe_ffn = 0, shared = 0, dense = 0;
    if (family == ARCH_QWEN3_5_MOE || family == ARCH_QWEN3_5_MOE_TEXT) {
        if (qwen3_5_linear(cfg, origin, layers, buf, sizeof buf, &used, err, errlen) != 0)
            return -1;
        long long shared_ffn;
        if (get_count0(cfg, origin, "shared_expert_intermediate_size", 0, &shared_ffn, err, errlen))
            return -1;
        if (shared_ffn > 0 && shared_ffn != *ffn)
            return failf(err, errlen, "%s: key 'shared_expert_intermediate_size' is %lld; napkin reads a shared "
                                      "expert as wide as the routed ones (%lld)", origin, shared_ffn, *ffn);
        shared = shared_ffn > 0;
    }
    if (family == ARCH_QWEN3_MOE || family == ARCH_QWEN3_5_MOE || family == ARCH_QWEN3_5_MOE_TEXT) {
        long long step;
        if (need_count(cfg, origin, "num_experts", experts, err, errlen) ||
            need_count(cfg, origin, "moe_intermediate_size", &moe_ffn, err, errlen) ||
            get_count0(cfg, origin, "decoder_sparse_step", 1, &step, err, errlen))
            return -1;
        /* transformers: experts when (i + 1) % step == 0, unless i is listed */
        unsigned char listed[MODEL_LAYERS_MAX];
        if (mark_layers(cfg, origin, "mlp_only_layers", layers, listed, err, errlen) == -2)
            return -1; /* absent (-1) lists no layer: every step-th layer has experts */
        long long moe_layers = 0;
        for (long long i = step - 1; step > 0 && i < layers; i += step)
            moe_layers += !listed[i];
        dense = layers - moe_layers;
    } else if (family == ARCH_DEEPSEEK_V3 || family == ARCH_GLM_MOE_DSA || family == ARCH_KIMI_K2) {
        long long q, kv, nope, rope, v, freq, mtp;
        if (need_count(cfg, origin, "n_routed_experts", experts, err, errlen) ||
            need_count(cfg, origin, "moe_intermediate_size", &moe_ffn, err, errlen) ||
            need_count(cfg, origin, "kv_lora_rank", &kv, err, errlen) ||
            need_count(cfg, origin, "qk_nope_head_dim", &nope, err, errlen) ||
            need_count(cfg, origin, "qk_rope_head_dim", &rope, err, errlen) ||
            need_count(cfg, origin, "v_head_dim", &v, err, errlen) ||
            get_count0(cfg, origin, "q_lora_rank", 0, &q, err, errlen) ||
            get_count0(cfg, origin, "n_shared_experts", 0, &shared, err, errlen) ||
            get_count0(cfg, origin, "first_k_dense_replace", 0, &dense, err, errlen) ||
            get_count0(cfg, origin, "moe_layer_freq", 1, &freq, err, errlen) ||
            get_count0(cfg, origin, "num_nextn_predict_layers", 0, &mtp, err, errlen))
            return -1;
        if (freq != 1)
            return failf(err, errlen, "%s: key 'moe_layer_freq' is %lld; napkin reads 1 (every layer past "
                                      "first_k_dense_replace has experts)", origin, freq);
        /* GLM-5 (glm_moe_dsa) adds DeepSeek sparse attention: an indexer of
         * index_n_heads x index_head_dim scores every cached token and each
         * query attends to the index_topk best (model/sparse_attention.h). */
        if (family == ARCH_GLM_MOE_DSA) {
            long long ih, id, topk;
            if (need_count(cfg, origin, "index_n_heads", &ih, err, errlen) ||
                need_count(cfg, origin, "index_head_dim", &id, err, errlen) ||
                need_count(cfg, origin, "index_topk", &topk, err, errlen))
                return -1;
            ARCH_ADD("dsa=%lld/%lld/%lld", ih, id, topk);
        }
        *head_dim = nope + rope; /* the query-key width; the config's head_dim, if any, is the rope part */
        ARCH_ADD("mla=%lld/%lld/%lld/%lld/%lld", q, kv, nope, rope, v);
        if (mtp > 0) /* multi-token-prediction modules, counted apart */
            ARCH_ADD("mtp=%lld", mtp);
        if (int4_group32_experts(cfg) || int4_group32_experts(root))
            ARCH_ADD("experts=int4g32");
    } else if (family == ARCH_GPT_OSS) {
        long long window, sliding = count_in_array(cfg, "layer_types", "sliding_attention", 0);
        if (get_count0(cfg, origin, "sliding_window", 0, &window, err, errlen))
            return -1;
        if (sliding < 0) /* without layer_types, transformers alternates, sliding first */
            sliding = (layers + 1) / 2;
        if (window > 0 && sliding > 0)
            ARCH_ADD("window=%lld/%lld", window, sliding);
        ARCH_ADD("sinks");
        json_t *qc = json_object_get(root, "quantization_config");
        json_t *method = json_object_get(qc, "quant_method");
        if (json_is_string(method) && strcmp(json_string_value(method), "mxfp4") == 0)
            ARCH_ADD("experts=mxfp4");
    } else if (family == ARCH_LLAMA4_TEXT || family == ARCH_LLAMA4) {
        long long mlp, step, chunk;
        if (need_count(cfg, origin, "intermediate_size_mlp", &mlp, err, errlen) ||
            get_count0(cfg, origin, "interleave_moe_layer_step", 1, &step, err, errlen) ||
            get_count0(cfg, origin, "attention_chunk_size", 0, &chunk, err, errlen))
            return -1;
        moe_ffn = *ffn; /* intermediate_size: the experts' (and the shared expert's) width */
        *ffn = mlp;
        shared = 1;
        /* transformers: layers step-1, 2*step-1, ... have experts, or those moe_layers lists */
        unsigned char listed[MODEL_LAYERS_MAX];
        long long moe_layers = mark_layers(cfg, origin, "moe_layers", layers, listed, err, errlen);
        if (moe_layers == -2)
            return -1;
        if (moe_layers < 0)
            moe_layers = step > 0 ? layers / step : 0;
        dense = layers - moe_layers;
        long long roped = count_in_array(cfg, "no_rope_layers", NULL, 1); /* 1: rope, chunked; 0: global */
        if (roped <= 0) /* absent or empty: every fourth layer is global (no_rope_layer_interval 4) */
            roped = layers - layers / 4;
        if (chunk > 0 && roped > 0)
            ARCH_ADD("window=%lld/%lld", chunk, roped);
    }
    if (*experts > 1 && moe_ffn > 0 && moe_ffn != *ffn)
        ARCH_ADD("moe_ffn=%lld", moe_ffn);
    else if (*experts > 1 && moe_ffn > 0 && (dense > 0 || shared > 0))
        ARCH_ADD("moe_ffn=%lld", moe_ffn);
    if (*experts > 1 && shared > 0)
        ARCH_ADD("shared=%lld", shared);
    if (*experts > 1 && dense > 0)
        ARCH_ADD("dense=%lld", dense);
#undef ARCH_ADD
    snprintf(arch, archlen, "%s", used ? buf : "-");
    return 0;
}

/* A model's name from its file: "Meta-Llama-3-8B/config.json" ->
 * "Meta-Llama-3-8B", "configs/nemo.json" -> "nemo". */
static void file_name(const char *origin, char *out, size_t n)
{
    size_t len = strlen(origin);
    const char *end = origin + len;
    if (len >= 11 && strcmp(end - 11, "config.json") == 0 && (len == 11 || end[-12] == '/'))
        end = len > 11 ? end - 12 : end;
    else if (len > 5 && strcmp(end - 5, ".json") == 0)
        end -= 5;
    const char *start = end;
    while (start > origin && start[-1] != '/')
        start--;
    if (start == end) { /* a bare "config.json" */
        start = origin;
        end = origin + len;
    }
    snprintf(out, n, "%.*s", (int)(end - start), start);
}

int model_from_hf_config(const char *json_text, const char *path, const char *key, model_spec *out, char *err,
                         size_t errlen)
{
    /* the file's name as messages print it, and as the row's source column
     * holds it: escaped, and its tail when too long for the column */
    char origin[4096 * 4 + 1];
    text_escape(path, origin, sizeof origin);
    char source[SPEC_SOURCE_MAX];
    size_t olen = strlen(origin);
    if (olen < sizeof source) {
        memcpy(source, origin, olen + 1);
    } else { /* "..." and the last sizeof source - 4 bytes, with the NUL */
        memcpy(source, "...", 3);
        memcpy(source + 3, origin + olen - (sizeof source - 4), sizeof source - 3);
    }
    /* the size is checked before the parse: parsing is what a long list costs */
    if (strnlen(json_text, HF_CONFIG_BYTES_MAX + 1) > HF_CONFIG_BYTES_MAX)
        return failf(err, errlen, "%s: over " HF_CONFIG_BYTES_MAX_TEXT ", not a config.json", origin);
    json_error_t jerr;
    json_t *root = json_loads(json_text, JSON_REJECT_DUPLICATES, &jerr);
    if (!root)
        return failf(err, errlen, "%s:%d: not JSON: %s", origin, jerr.line, jerr.text);
    if (!json_is_object(root)) {
        json_decref(root);
        return failf(err, errlen, "%s: not a config.json (the top level is not an object)", origin);
    }
    /* A multimodal config keeps the language model under text_config. */
    json_t *text = json_object_get(root, "text_config");
    json_t *cfg = json_is_object(text) ? text : root;
    const char *type, *arch;
    int known = architecture(cfg, &type, &arch);
    if (known < 0 && cfg != root)
        known = architecture(root, &type, &arch);

    /* Layers of linear attention keep a fixed-size state per sequence, not a
     * growing KV cache: read (Qwen3.5's qwen3_5_moe, family_shape) or, in a
     * family whose keys napkin does not know, refused rather than priced as
     * softmax attention. */
    long long linear = count_in_array(cfg, "layer_types", "linear_attention", 0);
    if (linear > 0 && known != ARCH_QWEN3_5_MOE && known != ARCH_QWEN3_5_MOE_TEXT) {
        failf(err, errlen,
              "%s: %lld of the layers in layer_types are linear_attention (Gated DeltaNet: a fixed-size state per "
              "sequence, not a KV cache); napkin reads linear attention in qwen3_5_moe configs only",
              origin, linear);
        json_decref(root);
        return -1;
    }

    char unknown_note[384] = "", arch_shown[96], type_shown[96];
    text_escape(arch, arch_shown, sizeof arch_shown);
    text_escape(type, type_shown, sizeof type_shown);
    if (known < 0)
        snprintf(unknown_note, sizeof unknown_note,
                 " (architecture %s, model_type %s, is not one napkin reads: " KNOWN_LIST ")", arch_shown,
                 type_shown);

    static const char *const required[] = {"num_hidden_layers", "hidden_size", "num_attention_heads",
                                           "intermediate_size", "vocab_size"};
    long long v[5];
    char why[128];
    for (int i = 0; i < 5; i++) {
        int rc = get_count(cfg, required[i], &v[i], why, sizeof why);
        /* Qwen3.5 has no dense MLP and no intermediate_size: the experts' width stands for it */
        if (rc > 0 && i == 3 && (known == ARCH_QWEN3_5_MOE || known == ARCH_QWEN3_5_MOE_TEXT))
            rc = get_count(cfg, "moe_intermediate_size", &v[i], why, sizeof why);
        if (rc != 0) {
            failf(err, errlen, "%s: key '%s' is %s%s", origin, required[i], rc > 0 ? "missing" : why, unknown_note);
            json_decref(root);
            return -1;
        }
    }
    if (known < 0) {
        failf(err, errlen, "%s: has every key napkin reads, but%s", origin, unknown_note);
        json_decref(root);
        return -1;
    }
    long long layers = v[0], hidden = v[1], heads = v[2], ffn = v[3], vocab = v[4];
    if (layers > MODEL_LAYERS_MAX) { /* before anything loops over the layers or reads a list of them */
        failf(err, errlen, "%s: key 'num_hidden_layers' is %lld, out of range: napkin reads from 1 to %d layers", origin,
              layers, MODEL_LAYERS_MAX);
        json_decref(root);
        return -1;
    }
    long long kv_heads = heads, head_dim = hidden / heads, experts = 1, active = 1, max_pos = 0;
    static const char *const optional[] = {"num_key_value_heads", "head_dim", "num_local_experts",
                                           "num_experts_per_tok", "max_position_embeddings"};
    long long *dests[] = {&kv_heads, &head_dim, &experts, &active, &max_pos};
    int head_dim_given = 0;
    for (int i = 0; i < 5; i++) {
        int rc = get_count(cfg, optional[i], dests[i], why, sizeof why);
        if (rc < 0) {
            failf(err, errlen, "%s: key '%s' is %s", origin, optional[i], why);
            json_decref(root);
            return -1;
        }
        head_dim_given |= i == 1 && rc == 0;
    }
    if (!head_dim_given && hidden % heads != 0) {
        /* transformers would fail too: hidden_size / heads must be whole */
        failf(err, errlen, "%s: hidden_size %lld is not a multiple of num_attention_heads %lld, and no head_dim is given",
              origin, hidden, heads);
        json_decref(root);
        return -1;
    }
    char arch_col[256] = "-";
    if (known >= ARCH_QWEN3_MOE &&
        family_shape(cfg, root, known, origin, layers, &head_dim, &ffn, &experts, arch_col, sizeof arch_col,
                     err, errlen) != 0) {
        json_decref(root);
        return -1;
    }
    if (experts == 1)
        active = 1; /* a dense model's num_experts_per_tok, if any, means nothing */
    json_t *tied = json_object_get(cfg, "tie_word_embeddings");
    if (!tied || json_is_null(tied))
        tied = json_object_get(root, "tie_word_embeddings");
    if (tied && !json_is_null(tied) && !json_is_boolean(tied)) {
        json_decref(root);
        return failf(err, errlen, "%s: key 'tie_word_embeddings' is not true or false", origin);
    }
    int tie = tied && json_is_true(tied);

    json_t *named = json_object_get(root, "_name_or_path");
    char raw[SPEC_NAME_MAX * 4], name[SPEC_NAME_MAX];
    if (json_is_string(named) && json_string_length(named))
        snprintf(raw, sizeof raw, "%s", json_string_value(named));
    else
        file_name(origin, raw, sizeof raw);
    text_escape(raw, name, sizeof name); /* a table cell, and printed: no control bytes */

    /* One validation path: the row goes through the table's own parser. */
    char row[2048];
    char pos[32];
    if (max_pos > 0)
        snprintf(pos, sizeof pos, "%lld", max_pos);
    else
        snprintf(pos, sizeof pos, "-");
    snprintf(row, sizeof row,
             "key\tname\tlayers\thidden\theads\tkv_heads\thead_dim\tffn\tvocab\texperts\texperts_active\ttied\tsource\t"
             "max_position\tarch\n%s\t%s\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%d\t%s\t%s\t%s\n",
             key, name, layers, hidden, heads, kv_heads, head_dim, ffn, vocab, experts, active, tie, source, pos,
             arch_col);
    json_decref(root);
    model_table t;
    char terr[512];
    if (model_table_parse(row, origin, &t, terr, sizeof terr) != 0) {
        /* "origin:2: field 'kv_heads': ..." names the table's column; say which config key it is. */
        const char *field = strstr(terr, "field '");
        return failf(err, errlen, "%s: the config's numbers do not make a model: %s", origin,
                     field ? field : terr);
    }
    *out = t.rows[0];
    model_table_free(&t);
    return 0;
}

int model_from_hf_config_file(const char *path, const char *key, model_spec *out, char *err, size_t errlen)
{
    char shown[4096 * 4 + 1]; /* the path as messages print it */
    text_escape(path, shown, sizeof shown);
    FILE *f = fopen(path, "rb");
    if (!f)
        return failf(err, errlen, "%s: cannot be read", shown);
    /* one byte past the limit tells a file at the limit from one over it */
    char *buf = malloc(HF_CONFIG_BYTES_MAX + 2);
    if (!buf) {
        fclose(f);
        return failf(err, errlen, "%s: out of memory", shown);
    }
    size_t n = fread(buf, 1, HF_CONFIG_BYTES_MAX + 1, f);
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return failf(err, errlen, "%s: cannot be read", shown);
    }
    buf[n] = 0;
    if (n > HF_CONFIG_BYTES_MAX || memchr(buf, 0, n)) {
        free(buf);
        return failf(err, errlen, "%s: %s, not a config.json", shown,
                     n > HF_CONFIG_BYTES_MAX ? "over " HF_CONFIG_BYTES_MAX_TEXT : "holds a NUL byte");
    }
    int rc = model_from_hf_config(buf, path, key, out, err, errlen);
    free(buf);
    return rc;
}
