/* The config reader's work is bounded by the limits it enforces, whatever
 * counts and lists a file claims: a layer count past the table's limit is
 * refused before any loop uses it, a text too long to be a config.json is
 * refused before it is parsed, and each list of layers is read once, so a
 * crafted file answers in milliseconds with a clear refusal or the right
 * model.  The big fixtures are made here, not committed. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "hf_config.h"
#include "specs.h"
#include "scratch_dir.h"

static double seconds_now(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

/* A Qwen3-MoE config (Qwen3-235B-A22B's numbers) with `layers` layers,
 * decoder_sparse_step `step` and mlp_only_layers holding `list` (JSON
 * array text). */
static char *qwen3_moe(long long layers, int step, const char *list)
{
    const char *fmt = "{\"architectures\": [\"Qwen3MoeForCausalLM\"], \"model_type\": \"qwen3_moe\", "
                      "\"num_hidden_layers\": %lld, \"hidden_size\": 4096, \"num_attention_heads\": 64, "
                      "\"num_key_value_heads\": 4, \"head_dim\": 128, \"intermediate_size\": 12288, "
                      "\"moe_intermediate_size\": 1536, \"num_experts\": 128, \"num_experts_per_tok\": 8, "
                      "\"decoder_sparse_step\": %d, \"vocab_size\": 151936, \"mlp_only_layers\": %s}";
    size_t n = strlen(fmt) + strlen(list) + 64;
    char *s = malloc(n);
    cr_assert_not_null(s);
    snprintf(s, n, fmt, layers, step, list);
    return s;
}

/* A Llama 4 text config (Llama 4 Scout's numbers) with `layers` layers and
 * `extra` keys (", \"moe_layers\": [...]" or ""). */
static char *llama4(long long layers, int step, const char *extra)
{
    const char *fmt = "{\"architectures\": [\"Llama4ForCausalLM\"], \"model_type\": \"llama4_text\", "
                      "\"num_hidden_layers\": %lld, \"hidden_size\": 5120, \"num_attention_heads\": 40, "
                      "\"num_key_value_heads\": 8, \"head_dim\": 128, \"intermediate_size\": 8192, "
                      "\"intermediate_size_mlp\": 16384, \"num_local_experts\": 16, \"num_experts_per_tok\": 1, "
                      "\"interleave_moe_layer_step\": %d, \"vocab_size\": 202048%s}";
    size_t n = strlen(fmt) + strlen(extra) + 64;
    char *s = malloc(n);
    cr_assert_not_null(s);
    snprintf(s, n, fmt, layers, step, extra);
    return s;
}

/* "[0,1,...]" of n entries cycling through 0..modulo-1, compact as a file
 * writer would make it. */
static char *layer_list(long n, long modulo)
{
    size_t cap = (size_t)n * 12 + 3, k = 0;
    char *s = malloc(cap);
    cr_assert_not_null(s);
    s[k++] = '[';
    for (long i = 0; i < n; i++)
        k += (size_t)snprintf(s + k, cap - k, "%s%ld", i ? "," : "", i % modulo);
    s[k++] = ']';
    s[k] = '\0';
    return s;
}

/* Reads text as a config and says how long it took. */
static int read_config(const char *text, model_spec *m, char *err, size_t errlen, double *took)
{
    double t0 = seconds_now();
    int rc = model_from_hf_config(text, "crafted/config.json", "x", m, err, errlen);
    *took = seconds_now() - t0;
    return rc;
}

/* 10^9 layers and a 200-entry mlp_only_layers (a 1.4 kB file): the old
 * reader scanned the list for each of the 10^9 layers. */
Test(hf_config_bounds, a_billion_qwen3_moe_layers_are_refused_at_once, .timeout = 10)
{
    char *list = layer_list(200, 1000), *text = qwen3_moe(1000000000LL, 1, list);
    model_spec m;
    char err[1024];
    double took;
    cr_assert_neq(read_config(text, &m, err, sizeof err, &took), 0);
    cr_expect(strstr(err, "crafted/config.json: key 'num_hidden_layers' is 1000000000, out of range") != NULL, "%s",
              err);
    cr_expect(strstr(err, "from 1 to 10000 layers") != NULL, "%s", err);
    cr_expect_lt(took, 0.1, "%.3f s", took);
    free(list);
    free(text);
}

/* The same for Llama 4, whose old reader looped over the layers too. */
Test(hf_config_bounds, a_billion_llama4_layers_are_refused_at_once, .timeout = 10)
{
    char *text = llama4(1000000000LL, 1, "");
    model_spec m;
    char err[1024];
    double took;
    cr_assert_neq(read_config(text, &m, err, sizeof err, &took), 0);
    cr_expect(strstr(err, "key 'num_hidden_layers' is 1000000000, out of range") != NULL, "%s", err);
    cr_expect_lt(took, 0.1, "%.3f s", took);
    free(text);
}

/* A legal 10,000 layers with a 2-million-entry list (about 6 MB compact):
 * no config.json is that long; refused before the parse. */
Test(hf_config_bounds, a_six_megabyte_list_is_refused_before_it_is_parsed, .timeout = 10)
{
    char *list = layer_list(2000000, 10000), *text = qwen3_moe(10000, 1, list);
    cr_assert_gt(strlen(text), (size_t)5 << 20);
    model_spec m;
    char err[1024];
    double took;
    cr_assert_neq(read_config(text, &m, err, sizeof err, &took), 0);
    cr_expect(strstr(err, "crafted/config.json: over 256 KiB, not a config.json") != NULL, "%s", err);
    cr_expect_lt(took, 0.1, "%.3f s", took);
    free(list);
    free(text);

    /* and as a file: the reader stops at the limit, not at the end */
    char dir[SCRATCH_DIR_SIZE];
    scratch_dir_make(dir, "hfb");
    char path[SCRATCH_DIR_SIZE + 32];
    snprintf(path, sizeof path, "%s/config.json", dir);
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f);
    list = layer_list(2000000, 10000);
    text = qwen3_moe(10000, 1, list);
    fputs(text, f);
    fclose(f);
    double t0 = seconds_now();
    cr_assert_neq(model_from_hf_config_file(path, "x", &m, err, sizeof err), 0);
    took = seconds_now() - t0;
    cr_expect(strstr(err, "config.json: over 256 KiB, not a config.json") != NULL, "%s", err);
    cr_expect_lt(took, 0.1, "%.3f s", took);
    free(list);
    free(text);
    scratch_dir_remove(dir);
}

/* The longest list that means anything (every one of 10,000 layers named,
 * 50 kB) is read, once, and gives the right count.  10,000 layers, step 1:
 * every layer would have experts; listing 0..4999 twice over (10,000
 * entries, each named twice) makes exactly 5,000 of them dense. */
Test(hf_config_bounds, the_longest_meaningful_list_is_read_once_and_right, .timeout = 10)
{
    char *list = layer_list(10000, 5000), *text = qwen3_moe(10000, 1, list);
    model_spec m;
    char err[1024];
    double took;
    cr_assert_eq(read_config(text, &m, err, sizeof err, &took), 0, "%s", err);
    cr_expect_eq(m.layers, 10000);
    cr_expect_eq(m.dense_layers, 5000);
    cr_expect_lt(took, 0.1, "%.3f s", took);
    free(list);
    free(text);
}

/* transformers' rule, by hand: with decoder_sparse_step 2 the layers i with
 * (i + 1) % 2 == 0 (1, 3, ..., 47: 24 of 48) have experts unless
 * mlp_only_layers names them.  [1, 1, 3, 4, 100, -1, "7"] names 1 and 3 of
 * those (twice for 1; 4 has no experts anyway; 100, -1 and "7" name no
 * layer), so 22 have experts and 48 - 22 = 26 are dense. */
Test(hf_config_bounds, mlp_only_layers_counts_each_layer_once)
{
    char *text = qwen3_moe(48, 2, "[1, 1, 3, 4, 100, -1, \"7\"]");
    model_spec m;
    char err[1024];
    double took;
    cr_assert_eq(read_config(text, &m, err, sizeof err, &took), 0, "%s", err);
    cr_expect_eq(m.dense_layers, 26);
    free(text);
    text = qwen3_moe(48, 2, "{\"1\": true}");
    cr_assert_neq(read_config(text, &m, err, sizeof err, &took), 0);
    cr_expect(strstr(err, "key 'mlp_only_layers' is not a list of layer numbers") != NULL, "%s", err);
    free(text);
}

/* Llama 4's moe_layers names the layers with experts (transformers tests
 * `layer_idx in config.moe_layers`): [1, 1, 3, 47, 48] names layers 1, 3
 * and 47 of 48 (1 twice, 48 is no layer), so 3 have experts and 45 are
 * dense.  The old reader took the list's length, 5, and said 43. */
Test(hf_config_bounds, llama4_moe_layers_counts_each_layer_once)
{
    char *text = llama4(48, 1, ", \"moe_layers\": [1, 1, 3, 47, 48]");
    model_spec m;
    char err[1024];
    double took;
    cr_assert_eq(read_config(text, &m, err, sizeof err, &took), 0, "%s", err);
    cr_expect_eq(m.dense_layers, 45);
    free(text);
    /* without the list, interleave_moe_layer_step 2: layers 1, 3, ..., 47 (24) have experts */
    text = llama4(48, 2, "");
    cr_assert_eq(read_config(text, &m, err, sizeof err, &took), 0, "%s", err);
    cr_expect_eq(m.dense_layers, 24);
    free(text);
}

/* A Qwen3-MoE config without mlp_only_layers lists no dense layer (as
 * transformers reads the absent key): with decoder_sparse_step 1 all 94
 * layers have experts; with a step past the last layer none do, a mixture
 * without an expert layer, refused by the table's own check with a message
 * naming the file.  Both were refused with no message. */
Test(hf_config_bounds, a_qwen3_moe_config_without_mlp_only_layers_is_read)
{
    const char *fmt = "{\"architectures\": [\"Qwen3MoeForCausalLM\"], \"model_type\": \"qwen3_moe\", "
                      "\"num_hidden_layers\": 94, \"hidden_size\": 4096, \"num_attention_heads\": 64, "
                      "\"num_key_value_heads\": 4, \"head_dim\": 128, \"intermediate_size\": 12288, "
                      "\"moe_intermediate_size\": 1536, \"num_experts\": 128, \"num_experts_per_tok\": 8, "
                      "\"decoder_sparse_step\": %d, \"vocab_size\": 151936}";
    char text[1024], err[1024];
    model_spec m;
    double took;
    snprintf(text, sizeof text, fmt, 1);
    cr_assert_eq(read_config(text, &m, err, sizeof err, &took), 0, "%s", err);
    cr_expect_eq(m.dense_layers, 0);
    snprintf(text, sizeof text, fmt, 9999);
    cr_assert_neq(read_config(text, &m, err, sizeof err, &took), 0);
    cr_expect(strstr(err, "crafted/config.json: ") == err && strstr(err, "dense and window layers must be fewer") != NULL,
              "%s", err);
}
