/* Chapter 7 worked answers, computed through the napkin library.  The
 * exercise tests check these functions against hand derivations; main()
 * records the numbers the written solutions quote. */
#include "07-images-as-tokens.h"

#include "comm.h"
#include "notebook.h"
#include "vision.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

static int image_of(const char *key, int width, int height, vision_spec *v, vision_image *im)
{
    char err[256];
    if (!key || vision_lookup(key, v) != 0)
        return -1;
    return vision_image_tokens(v, width, height, im, err, sizeof err);
}

int ex07_llava_next_tokens(int width, int height)
{
    vision_spec v;
    vision_image im;
    return image_of("llava-next-7b", width, height, &v, &im) == 0 ? im.tokens : -1;
}

int ex07_qwen_tokens(int width, int height, double min_pixels, double max_pixels)
{
    vision_spec v;
    vision_image im;
    char err[256];
    if (!(min_pixels > 0) || !(max_pixels >= min_pixels) || vision_lookup("qwen2-vl-7b", &v) != 0)
        return -1;
    v.min_pixels = min_pixels;
    v.max_pixels = max_pixels;
    return vision_image_tokens(&v, width, height, &im, err, sizeof err) == 0 ? im.tokens : -1;
}

int ex07_internvl_tokens(int width, int height, int max_tiles)
{
    vision_spec v;
    vision_image im;
    char err[256];
    if (max_tiles < 1 || max_tiles > 64 || vision_lookup("internvl2.5-8b", &v) != 0)
        return -1;
    v.max_tiles = max_tiles;
    return vision_image_tokens(&v, width, height, &im, err, sizeof err) == 0 ? im.tokens : -1;
}

int ex07_cross_context_tokens(int text_tokens, int images)
{
    vision_spec v;
    vision_image im;
    if (text_tokens < 0 || images < 0 || image_of("llama3.2-11b-vision", 560, 560, &v, &im) != 0)
        return -1;
    return text_tokens + images * im.context_tokens;
}

double ex07_cross_request_kv_bytes(int text_tokens, int output_tokens, int images, int width, int height)
{
    vision_spec v;
    vision_image im;
    model_spec lm;
    if (text_tokens < 0 || output_tokens < 0 || images < 0 ||
        image_of("llama3.2-11b-vision", width, height, &v, &im) != 0 || vision_lm_lookup(&v, &lm) != 0)
        return NAN;
    gpu_spec g = gpu_builtin("h100");
    vision_request q = vision_request_default(&v, &lm, &g);
    q.width = width;
    q.height = height;
    q.images = images;
    q.text_tokens = text_tokens;
    q.output_tokens = output_tokens > 0 ? output_tokens : 1;
    vision_estimate e;
    char err[512];
    if (output_tokens < 1 || vision_estimate_compute(&q, &e, err, sizeof err) != 0)
        return NAN;
    return e.kv_bytes;
}

double ex07_vit_flops(int layers, int hidden, int ffn, int tokens)
{
    if (layers < 1 || hidden < 1 || ffn < 1 || tokens < 1)
        return NAN;
    /* a plain ViT row: no patch embedding, windows or projector counted */
    vision_spec v;
    memset(&v, 0, sizeof v);
    v.family = VF_FIXED;
    v.layers = layers;
    v.hidden = hidden;
    v.ffn = ffn;
    v.heads = 1;
    vision_image im;
    memset(&im, 0, sizeof im);
    im.tiles = 1;
    im.encoder_seq = im.encoder_tokens = tokens;
    vision_encoder_cost c;
    vision_encoder_flops(&v, &im, DT_BF16, &c);
    return c.flop;
}

double ex07_encoder_seconds(const char *vision_key, const char *gpu_key, int width, int height, int images, int tp,
                            int sharded)
{
    vision_spec v;
    vision_image im;
    gpu_spec g;
    if (images < 1 || tp < 1 || (sharded != 0 && sharded != 1) || !gpu_key || gpu_lookup(gpu_key, &g) != 0 ||
        image_of(vision_key, width, height, &v, &im) != 0)
        return NAN;
    vision_encoder_cost c;
    char err[256];
    if (vision_encoder_time(&v, &im, &g, precision_uniform(DT_BF16), 1.0, tp, &c, err, sizeof err) != 0)
        return NAN;
    return sharded ? images * c.time_sharded : ((images + tp - 1) / tp) * c.time;
}

int ex07_requests_per_step(const char *vision_key, int width, int height, int images, int text_tokens, int budget)
{
    vision_spec v;
    vision_image im;
    if (images < 0 || text_tokens < 0 || budget < 1 || image_of(vision_key, width, height, &v, &im) != 0)
        return -1;
    long prompt = text_tokens + (long)images * im.context_tokens;
    return prompt < 1 ? -1 : (int)(budget / prompt);
}

#ifndef NB_EXERCISE_TEST
int main(void)
{
    /* 1 */
    nb_value("ch07_ex1_672", "%d", ex07_llava_next_tokens(672, 672));
    nb_value("ch07_ex1_1080", "%d", ex07_llava_next_tokens(1920, 1080));
    nb_value("ch07_ex1_336", "%d", ex07_llava_next_tokens(336, 336));
    /* 2 */
    nb_value("ch07_ex2_default", "%d", ex07_qwen_tokens(1920, 1080, 3136, 12845056));
    nb_value("ch07_ex2_capped", "%d", ex07_qwen_tokens(1920, 1080, 3136, 1280 * 28 * 28));
    nb_value("ch07_ex2_small", "%d", ex07_qwen_tokens(300, 200, 3136, 12845056));
    nb_value("ch07_ex2_floor", "%d", ex07_qwen_tokens(300, 200, 256 * 28 * 28, 12845056));
    /* 3 */
    nb_value("ch07_ex3_1080", "%d", ex07_internvl_tokens(1920, 1080, 12));
    nb_value("ch07_ex3_1080_6", "%d", ex07_internvl_tokens(1920, 1080, 6));
    nb_value("ch07_ex3_800", "%d", ex07_internvl_tokens(800, 600, 12));
    /* 4 */
    nb_value("ch07_ex4_context", "%d", ex07_cross_context_tokens(100, 1));
    nb_value("ch07_ex4_kv_mb", "%.1f", ex07_cross_request_kv_bytes(100, 256, 1, 1920, 1080) / 1e6);
    nb_value("ch07_ex4_text_kv_mb", "%.1f", ex07_cross_request_kv_bytes(100, 256, 0, 1920, 1080) / 1e6);
    nb_value("ch07_ex4_small_kv_mb", "%.1f", ex07_cross_request_kv_bytes(100, 256, 1, 560, 560) / 1e6);
    /* 5 */
    double f = ex07_vit_flops(24, 1024, 4096, 577);
    nb_value("ch07_ex5_gflop", "%.0f", f / 1e9);
    nb_value("ch07_ex5_attn_pct", "%.0f", 100 * (4.0 * 24 * 577 * 577 * 1024) / f);
    double f16 = ex07_vit_flops(24, 1024, 4096, 4 * 576 + 1);
    nb_value("ch07_ex5_x4", "%.1f", f16 / f);
    /* 6 */
    const int tps[] = {1, 2, 4};
    for (int i = 0; i < 3; i++) {
        char n[64];
        snprintf(n, sizeof n, "ch07_ex6_one_shard_tp%d_ms", tps[i]);
        nb_value(n, "%.1f", 1e3 * ex07_encoder_seconds("qwen2.5-vl-7b", "h100", 1920, 1080, 1, tps[i], 1));
        snprintf(n, sizeof n, "ch07_ex6_four_repl_tp%d_ms", tps[i]);
        nb_value(n, "%.1f", 1e3 * ex07_encoder_seconds("qwen2.5-vl-7b", "h100", 1920, 1080, 4, tps[i], 0));
        snprintf(n, sizeof n, "ch07_ex6_four_shard_tp%d_ms", tps[i]);
        nb_value(n, "%.1f", 1e3 * ex07_encoder_seconds("qwen2.5-vl-7b", "h100", 1920, 1080, 4, tps[i], 1));
    }
    nb_value("ch07_ex6_one_shard_tp4_l40s_ms", "%.1f",
             1e3 * ex07_encoder_seconds("qwen2.5-vl-7b", "l40s", 1920, 1080, 1, 4, 1));
    nb_value("ch07_ex6_one_repl_l40s_ms", "%.1f",
             1e3 * ex07_encoder_seconds("qwen2.5-vl-7b", "l40s", 1920, 1080, 1, 1, 0));
    /* 7 */
    nb_value("ch07_ex7_text", "%d", ex07_requests_per_step("qwen2-vl-7b", 1920, 1080, 0, 200, 8192));
    nb_value("ch07_ex7_one", "%d", ex07_requests_per_step("qwen2-vl-7b", 1920, 1080, 1, 200, 8192));
    nb_value("ch07_ex7_three", "%d", ex07_requests_per_step("qwen2-vl-7b", 1920, 1080, 3, 200, 8192));
    nb_value("ch07_ex7_llava", "%d", ex07_requests_per_step("llava-1.5-7b", 1920, 1080, 3, 200, 8192));
    nb_value("ch07_ex7_llama", "%d", ex07_requests_per_step("llama3.2-11b-vision", 1920, 1080, 3, 200, 8192));
    return 0;
}
#endif
