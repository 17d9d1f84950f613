/* DeepSeek sparse attention (model/sparse_attention.h) from GLM-5's config
 * (tests/configs/glm-5.json: index_n_heads 32, index_head_dim 128,
 * index_topk 2048; kv_lora 512 + rope 64): the config read, the indexer's
 * cached key, the indexer's scan and the top-k attention's reads, counted
 * by hand. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "hf_config.h"
#include "memory.h"
#include "sparse_attention.h"
#include "specs.h"
#include "test_text.h"
#include "transformer.h"

static model_spec glm5_config(void)
{
    model_spec m;
    char err[512];
    int rc = model_from_hf_config_file(fmt("%s/tests/configs/glm-5.json", need_env("NB_SRC")), "glm-5", &m, err,
                                       sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    return m;
}

static const op_cost *find_op(const op_cost *ops, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(ops[i].name, name) == 0)
            return &ops[i];
    return NULL;
}

Test(sparse_attention, glm5_config_read)
{
    model_spec m = glm5_config();
    cr_expect_eq(m.dsa_heads, 32);
    cr_expect_eq(m.dsa_dim, 128);
    cr_expect_eq(m.dsa_topk, 2048);
    cr_expect_eq(dsa_enabled(&m), 1);
    model_spec v3 = model_builtin("deepseek-v3"); /* dense MLA: no indexer */
    cr_expect_eq(dsa_enabled(&v3), 0);
    cr_expect_eq(dsa_key_bytes_per_token_layer(&v3), 0);
}

/* A config without index_topk is refused, naming the key. */
Test(sparse_attention, missing_index_key_refused)
{
    const char *path = fmt("%s/tests/configs/glm-5.json", need_env("NB_SRC"));
    FILE *f = fopen(path, "r");
    cr_assert_not_null(f);
    static char text[1 << 16];
    size_t len = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[len] = 0;
    char *k = strstr(text, "\"index_topk\"");
    cr_assert_not_null(k);
    memcpy(k, "\"xndex_topk\"", 12);
    char tmp[] = "/tmp/napkin_dsa_XXXXXX";
    int fd = mkstemp(tmp);
    cr_assert_geq(fd, 0);
    FILE *out = fdopen(fd, "w");
    fputs(text, out);
    fclose(out);
    model_spec m;
    char err[512] = "";
    int rc = model_from_hf_config_file(tmp, "glm-5", &m, err, sizeof err);
    unlink(tmp);
    cr_expect_neq(rc, 0);
    cr_expect_not_null(strstr(err, "index_topk"), "%s", err);
}

/* The cached bytes a token a layer: the latent 512 + 64 at the cache dtype
 * and the indexer key, 128 fp8 values + one fp32 scale per 128 = 132. */
Test(sparse_attention, cached_bytes_by_hand)
{
    model_spec m = glm5_config();
    cr_expect_eq(dsa_key_bytes_per_token_layer(&m), 132.0);
    cr_expect_eq(kv_bytes_per_token(&m, DT_FP8), 78.0 * (576 + 132));     /* 55,224 */
    cr_expect_eq(kv_bytes_per_token(&m, DT_BF16), 78.0 * (1152 + 132));   /* 100,152 */
    cr_expect_eq(kv_bytes_per_token_per_gpu(&m, DT_FP8, 8), 78.0 * 708); /* every GPU keeps it all */
}

/* One decode step, 4 sequences with 8191 cached tokens each, TP 8, fp8:
 *  indexer scan: each sequence reads its 8192 keys once: 4*8192*132 =
 *    4,325,376 bytes; FLOPs 4 * 8192 pairs * 32 heads * (2*128 + 2) =
 *    270,532,608;
 *  top-k attention: each query reads the 2048 picked latents (2047 cached
 *    and the new one): 4 * 2048 * 576 = 4,718,592 bytes (dense MLA would
 *    read 4 * 8192 * 576 = 18,874,368). */
Test(sparse_attention, decode_reads_by_hand)
{
    model_spec m = glm5_config();
    step_shape s = decode_shape(4, 8191, 8, precision_uniform(DT_FP8));
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    cr_assert_gt(n, 0);
    const op_cost *scan = find_op(ops, n, "dsa_indexer"), *score = find_op(ops, n, "attn_score");
    cr_assert_not_null(scan);
    cr_assert_not_null(score);
    cr_expect_eq(scan->kv_bytes, 4.0 * 8192 * 132);
    cr_expect_eq(scan->flop, 4.0 * 8192 * 32 * 258);
    cr_expect_eq(scan->items, 4.0);
    cr_expect_eq(scan->span, 8192.0);
    cr_expect_eq(score->kv_bytes, 4.0 * 2048 * 576);
    /* below the top-k every cached token is read: 1000 cached, 1001 latents */
    s = decode_shape(4, 1000, 8, precision_uniform(DT_FP8));
    n = decoder_step_ops(&m, &s, ops, DECODER_MAX_OPS);
    score = find_op(ops, n, "attn_score");
    cr_assert_not_null(score);
    cr_expect_eq(score->kv_bytes, 4.0 * 1001 * 576);
    /* the new key written: index_k_proj writes 4 tokens * 132 bytes */
    const op_cost *k = find_op(ops, n, "index_k_proj");
    cr_assert_not_null(k);
    cr_expect_eq(k->kv_bytes, 4.0 * 132);
}

/* A prompt of 1000 tokens: every query scores the keys before it and itself,
 * 1000*1001/2 = 500,500 pairs, 500,500 * 32 * 258 FLOPs; prefill attention
 * stays dense (its pairs are the same 500,500 in the MLA kernel). */
Test(sparse_attention, prefill_indexer_by_hand)
{
    model_spec m = glm5_config();
    op_cost scan = dsa_indexer_scan_op(&m, 1, 1000, 0, RC_GEMM_FP8);
    cr_expect_eq(scan.flop, 500500.0 * 32 * 258);
    cr_expect_eq(scan.kv_bytes, 1000.0 * 132);
    cr_expect_eq(dsa_attended_context(&m, 0, 1000), 0.0);
    cr_expect_eq(dsa_attended_context(&m, 5000, 1), 2047.0);
}
