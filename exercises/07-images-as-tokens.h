/* Chapter 7 exercises: images as tokens.
 *
 * Sizes are width x height in px.  Model keys are those of
 * code/specs/vision_models.tsv ("qwen2.5-vl-7b"), GPU keys those of
 * code/specs/gpus.tsv ("h100").  Everything is bf16.  Every function
 * returns -1 (a count) or NAN (a real) for input it cannot use, and never
 * crashes. */
#ifndef EXERCISES_07_IMAGES_AS_TOKENS_H
#define EXERCISES_07_IMAGES_AS_TOKENS_H

/* 1. LLaVA-NeXT-7B: tokens of one image (pinpoints 336x672, 672x336,
 *    672x672, 1008x336, 336x1008; unpadding; a newline per row; base 576). */
int ex07_llava_next_tokens(int width, int height);
/* 2. Qwen2-VL: tokens of one image with the given min_pixels / max_pixels. */
int ex07_qwen_tokens(int width, int height, double min_pixels, double max_pixels);
/* 3. InternVL2.5: tokens of one image with at most max_tiles 448 px tiles
 *    (256 tokens each) plus the thumbnail. */
int ex07_internvl_tokens(int width, int height, int max_tiles);
/* 4. Llama-3.2-11B-Vision: the self-attention context tokens of a prompt of
 *    text_tokens and `images` images, and the KV bytes of the whole request
 *    (prompt + output tokens of self-attention KV, plus cross-attention KV). */
int ex07_cross_context_tokens(int text_tokens, int images);
double ex07_cross_request_kv_bytes(int text_tokens, int output_tokens, int images, int width, int height);
/* 5. FLOPs of a plain ViT (MLP of two matrices, full attention) over
 *    `tokens` tokens: 2 P N + 4 L N^2 d, P the parameters of its layers. */
double ex07_vit_flops(int layers, int hidden, int ffn, int tokens);
/* 6. Seconds to encode `images` images of one size on tp GPUs at peak:
 *    sharded = 0: every GPU holds the encoder and encodes its share of the
 *    images (the slowest GPU sets the time; no all-gather); sharded = 1: each
 *    image in turn with the encoder split over the tp GPUs, two ring
 *    all-reduces of the image's activations per layer. */
double ex07_encoder_seconds(const char *vision_key, const char *gpu_key, int width, int height, int images, int tp,
                            int sharded);
/* 7. Whole prompts of text_tokens and `images` images that fit one prefill
 *    step of `budget` tokens (0 when one prompt needs several steps). */
int ex07_requests_per_step(const char *vision_key, int width, int height, int images, int text_tokens, int budget);

#endif
