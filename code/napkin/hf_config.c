#include "hf_config.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const KNOWN_TYPES[] = {"llama", "mistral", "mixtral", "qwen2"};
static const char *const KNOWN_ARCHS[] = {"LlamaForCausalLM", "MistralForCausalLM", "MixtralForCausalLM",
                                          "Qwen2ForCausalLM"};
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

/* Text from a file, fit to print: every control byte (a tab, a newline,
 * a terminal's escape) becomes \xHH, so a name can neither break a table
 * row nor drive the reader's terminal. */
static void escape_text(const char *in, char *out, size_t n)
{
    size_t k = 0;
    for (const unsigned char *p = (const unsigned char *)in; *p && k + 5 < n; p++) {
        if (*p < 0x20 || *p == 0x7f)
            k += (size_t)snprintf(out + k, n - k, "\\x%02x", *p);
        else
            out[k++] = (char)*p;
    }
    if (n)
        out[k < n ? k : n - 1] = '\0';
}

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
    escape_text(path, origin, sizeof origin);
    char source[SPEC_SOURCE_MAX];
    size_t olen = strlen(origin);
    if (olen < sizeof source) {
        memcpy(source, origin, olen + 1);
    } else { /* "..." and the last sizeof source - 4 bytes, with the NUL */
        memcpy(source, "...", 3);
        memcpy(source + 3, origin + olen - (sizeof source - 4), sizeof source - 3);
    }
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

    char unknown_note[384] = "", arch_shown[96], type_shown[96];
    escape_text(arch, arch_shown, sizeof arch_shown);
    escape_text(type, type_shown, sizeof type_shown);
    if (known < 0)
        snprintf(unknown_note, sizeof unknown_note,
                 " (architecture %s, model_type %s, is not one napkin reads: llama, mistral, mixtral, qwen2)",
                 arch_shown, type_shown);

    static const char *const required[] = {"num_hidden_layers", "hidden_size", "num_attention_heads",
                                           "intermediate_size", "vocab_size"};
    long long v[5];
    char why[128];
    for (int i = 0; i < 5; i++) {
        int rc = get_count(cfg, required[i], &v[i], why, sizeof why);
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
    escape_text(raw, name, sizeof name); /* a table cell, and printed: no control bytes */

    /* One validation path: the row goes through the table's own parser. */
    char row[2048];
    char pos[32];
    if (max_pos > 0)
        snprintf(pos, sizeof pos, "%lld", max_pos);
    else
        snprintf(pos, sizeof pos, "-");
    snprintf(row, sizeof row,
             "key\tname\tlayers\thidden\theads\tkv_heads\thead_dim\tffn\tvocab\texperts\texperts_active\ttied\tsource\t"
             "max_position\n%s\t%s\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%lld\t%d\t%s\t%s\n",
             key, name, layers, hidden, heads, kv_heads, head_dim, ffn, vocab, experts, active, tie, source, pos);
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
    FILE *f = fopen(path, "rb");
    if (!f)
        return failf(err, errlen, "%s: cannot be read", path);
    size_t cap = 1 << 16, n = 0;
    char *buf = malloc(cap + 1);
    if (!buf) {
        fclose(f);
        return failf(err, errlen, "%s: out of memory", path);
    }
    size_t got;
    while ((got = fread(buf + n, 1, cap - n, f)) > 0) {
        n += got;
        if (n == cap) {
            if (cap >= (size_t)16 << 20) { /* a config.json is a few kB */
                free(buf);
                fclose(f);
                return failf(err, errlen, "%s: over 16 MiB, not a config.json", path);
            }
            char *more = realloc(buf, 2 * cap + 1);
            if (!more) {
                free(buf);
                fclose(f);
                return failf(err, errlen, "%s: out of memory", path);
            }
            buf = more;
            cap *= 2;
        }
    }
    int bad = ferror(f);
    fclose(f);
    if (bad) {
        free(buf);
        return failf(err, errlen, "%s: cannot be read", path);
    }
    buf[n] = 0;
    int rc = model_from_hf_config(buf, path, key, out, err, errlen);
    free(buf);
    return rc;
}
