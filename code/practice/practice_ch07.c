/* Chapter 7's exercise variants: 7.1 (the 2880 trap), 7.2 (a min/max_pixels
 * clamp, the token counts), 7.3 (tiles and thumbnails), 7.4 (image tokens
 * that are not context tokens), 7.5 (counting a ViT), 7.6 (does TP speed up
 * the ViT?) and 7.7 (the prefill budget).  The printed numbers are seed 0;
 * other seeds draw from the lists below.  7.1 keeps its two squares and
 * draws the screenshot of part b from wide images of several aspects; 7.2
 * takes screenshots of common sizes, a max_pixels that shrinks them and
 * icons that min_pixels grows; 7.3 draws a wide screenshot, a lower tile
 * cap and a 4:3 or 3:4 photo (the aspect a 12-tile grid matches, so it
 * keeps outgrowing the screenshot); 7.6 draws the image's size; the others
 * keep the image sizes of the printed exercises (a 1080p screenshot, a
 * 560 px tile), so that each preprocessor's count is the one the chapter
 * works out, and vary what a candidate computes with them: the text and
 * output lengths, the ViT's resolution, the scheduler's token budget. */
#include "practice_chapters.h"
#include "practice_set.h"

#include "memory.h"
#include "practice_draw.h"
#include "specs.h"
#include "vision.h"

#include <math.h>
#include <string.h>

static int image_of(const char *key, int width, int height, vision_spec *v, vision_image *im)
{
    char err[256];
    if (vision_lookup(key, v) != 0)
        return -1;
    return vision_image_tokens(v, width, height, im, err, sizeof err);
}

/* ---- 7.1: LLaVA-NeXT's anyres count.  Parts a and c are the printed
 * squares (the 2880 trap and LLaVA-1.5's 336 px image); part b's
 * screenshot is drawn from common sizes of several aspects, all wider than
 * tall, so that the unpadding cuts rows and the count stays under the
 * square's. */

/* screens and phones held sideways, each aspect a different count */
static const double ex1_width[] = {1920, 1024, 1440, 2560, 1280, 2048, 1366, 3440, 5120, 2256, 2400, 2340, 2960, 3840};
static const double ex1_height[] = {1080, 768, 900, 1080, 1024, 1024, 768, 1440, 1440, 1504, 1080, 1080, 1440, 1200};

static int llava_next(int width, int height, vision_image *im)
{
    vision_spec v;
    return image_of("llava-next-7b", width, height, &v, im);
}

static void llava_slips(practice_part *p, const vision_image *im, int base)
{
    practice_add_slip(p, im->tokens - im->newlines, "each row of the unpadded grid ends in a newline token");
    practice_add_slip(p, im->tokens - base, "the base image adds its 576 tokens too");
}

static int exercise_1(practice_set *s, rng_state *r)
{
    int image = s->seed == 0 ? 0 : (int)rng_below(r, PRACTICE_COUNT(ex1_width));
    double w = ex1_width[image], h = ex1_height[image];
    practice_add_input(s, "ch07_ex1_width", w, "%.0f", PRACTICE_RANGE_OF(ex1_width));
    practice_add_input(s, "ch07_ex1_height", h, "%.0f", PRACTICE_RANGE_OF(ex1_height));
    vision_image sq, shot, small;
    if (llava_next(672, 672, &sq) != 0 || llava_next((int)w, (int)h, &shot) != 0 || llava_next(336, 336, &small) != 0)
        return -1;
    int base = sq.tokens - sq.unpadded_h * sq.unpadded_w - sq.newlines; /* the base image's 576 */
    practice_part *p = practice_add_part(s, "7.1(a)", 1, "tokens of the 672 x 672 image", "tokens", JUDGE_EXACT,
                                         sq.tokens, 0);
    practice_add_slip(p, 5 * base, "the four tiles form one 48 x 48 grid whose 48 rows each end in a newline token");
    llava_slips(p, &sq, base);
    p = practice_add_part(s, "7.1(b)", 1, "tokens of the screenshot", "tokens", JUDGE_EXACT, shot.tokens, 0);
    practice_add_slip(p, sq.tokens, "the padding rows of a wide image are cut (unpadded) before the newlines");
    llava_slips(p, &shot, base);
    p = practice_add_part(s, "7.1(c)", 1, "tokens of the 336 x 336 image", "tokens", JUDGE_EXACT, small.tokens, 0);
    practice_add_slip(p, base, "LLaVA-NeXT still picks a pinpoint (336 x 672) and adds the base image");
    llava_slips(p, &small, base);
    return 0;
}

/* ---- 7.3: InternVL2.5-8B's tiles.  Part a's screenshot and its second
 * tile cap vary; part b's photo is 4:3 or 3:4, the aspect a 12-tile grid
 * matches exactly, so that it keeps outgrowing the screenshot. */

/* 16:9, 16:10, 21:9, 3:2 and 32:9: none of them 4:3, so the photo's grid
 * is larger; the photos stay under the smallest screenshot's pixels */
static const double ex3_width[] = {1920, 1440, 2560, 2256, 5120, 3440, 1920};
static const double ex3_height[] = {1080, 900, 1080, 1504, 1440, 1440, 1200};
static const double ex3_cap[] = {6, 4, 8, 2, 3, 5, 9, 10};
static const double ex3_photo_w[] = {800, 640, 600, 1024, 1280, 960, 768, 1200, 720, 480};
static const double ex3_photo_h[] = {600, 480, 800, 768, 960, 720, 1024, 900, 960, 640};

static int internvl(int width, int height, int max_tiles)
{
    vision_spec v;
    vision_image im;
    char err[256];
    if (vision_lookup("internvl2.5-8b", &v) != 0)
        return -1;
    v.max_tiles = max_tiles;
    return vision_image_tokens(&v, width, height, &im, err, sizeof err) == 0 ? im.tokens : -1;
}

static int exercise_3(practice_set *s, rng_state *r)
{
    int image = s->seed == 0 ? 0 : (int)rng_below(r, PRACTICE_COUNT(ex3_width));
    double cap = practice_pick(r, s->seed, ex3_cap, PRACTICE_COUNT(ex3_cap), 0);
    int photo = s->seed == 0 ? 0 : (int)rng_below(r, PRACTICE_COUNT(ex3_photo_w));
    double w = ex3_width[image], h = ex3_height[image], pw = ex3_photo_w[photo], ph = ex3_photo_h[photo];
    practice_add_input(s, "ch07_ex3_width", w, "%.0f", PRACTICE_RANGE_OF(ex3_width));
    practice_add_input(s, "ch07_ex3_height", h, "%.0f", PRACTICE_RANGE_OF(ex3_height));
    practice_add_input(s, "ch07_ex3_cap", cap, "%.0f", PRACTICE_RANGE_OF(ex3_cap));
    practice_add_input(s, "ch07_ex3_photo_w", pw, "%.0f", PRACTICE_RANGE_OF(ex3_photo_w));
    practice_add_input(s, "ch07_ex3_photo_h", ph, "%.0f", PRACTICE_RANGE_OF(ex3_photo_h));
    int full = internvl((int)w, (int)h, 12), capped = internvl((int)w, (int)h, (int)cap);
    int pic = internvl((int)pw, (int)ph, 12);
    if (full < 0 || capped < 0 || pic < 0)
        return -1;
    const char *thumb = "more than one tile brings a 256-token thumbnail as well";
    practice_part *p = practice_add_part(s, "7.3(a1)", 3, "tokens with up to 12 tiles", "tokens", JUDGE_EXACT, full,
                                         0);
    practice_add_slip(p, full - 256, thumb);
    p = practice_add_part(s, "7.3(a2)", 3, "tokens with the lower tile cap", "tokens", JUDGE_EXACT, capped, 0);
    practice_add_slip(p, capped - 256, thumb);
    if (capped != full)
        practice_add_slip(p, full, "the cap rules out the grid of up to 12 tiles: the closest allowed aspect wins");
    p = practice_add_part(s, "7.3(b)", 3, "tokens of the photo", "tokens", JUDGE_EXACT, pic, 0);
    practice_add_slip(p, pic - 256, thumb);
    practice_add_slip(p, 2 * 256, "tiling follows the aspect ratio, not the pixel count: the photo is upscaled");
    return 0;
}

/* ---- 7.2: Qwen2-VL's min/max_pixels clamp (smart_resize, 28 px a token) */

static const double ex2_width[] = {1920, 1280, 2560, 1600, 1024, 1366, 1440, 1680, 2048, 2880, 3840, 1536};
static const double ex2_height[] = {1080, 720, 1440, 900, 768, 768, 900, 1050, 1536, 1800, 2160, 864};
static const double ex2_cap[] = {512, 640, 768, 896, 1024, 1280};
/* icons and banners under min_pixels, of aspects that the floor grows to different counts */
static const double ex2_icon_w[] = {300, 256, 160, 96, 144, 128, 240, 240, 208, 200, 320, 400, 200};
static const double ex2_icon_h[] = {200, 256, 120, 80, 128, 80, 120, 64, 160, 80, 64, 128, 128};

static int qwen_tokens(int width, int height, double min_pixels, double max_pixels, vision_image *im)
{
    vision_spec v;
    char err[256];
    if (vision_lookup("qwen2-vl-7b", &v) != 0)
        return -1;
    v.min_pixels = min_pixels;
    v.max_pixels = max_pixels;
    return vision_image_tokens(&v, width, height, im, err, sizeof err) == 0 ? im->tokens : -1;
}

/* A slip's count: the image scaled by beta with each side rounded to the
 * nearest 28 px instead of down (shrinking) or up (growing). */
static double rounded_scale(double width, double height, double beta)
{
    return fmax(1, round(width * beta / 28)) * fmax(1, round(height * beta / 28));
}

static int exercise_2(practice_set *s, rng_state *r)
{
    vision_spec v;
    if (vision_lookup("qwen2-vl-7b", &v) != 0)
        return -1;
    const double floor_pixels = 256 * 28 * 28;
    int image = 0;
    double cap = 1280;
    vision_image full, capped;
    for (int attempt = 0; attempt < 64; attempt++) {
        image = s->seed == 0 ? 0 : (int)rng_below(r, PRACTICE_COUNT(ex2_width));
        cap = practice_pick(r, s->seed, ex2_cap, PRACTICE_COUNT(ex2_cap), 5);
        if (qwen_tokens((int)ex2_width[image], (int)ex2_height[image], v.min_pixels, v.max_pixels, &full) < 0 ||
            qwen_tokens((int)ex2_width[image], (int)ex2_height[image], v.min_pixels, cap * 784, &capped) < 0)
            return -1;
        if (capped.clamped == 1) /* the lower max_pixels shrinks the image */
            break;
        image = 0, cap = 1280;
    }
    if (qwen_tokens((int)ex2_width[image], (int)ex2_height[image], v.min_pixels, v.max_pixels, &full) < 0 ||
        qwen_tokens((int)ex2_width[image], (int)ex2_height[image], v.min_pixels, cap * 784, &capped) < 0)
        return -1;
    int icon = s->seed == 0 ? 0 : (int)rng_below(r, PRACTICE_COUNT(ex2_icon_w));
    double w = ex2_width[image], h = ex2_height[image], iw = ex2_icon_w[icon], ih = ex2_icon_h[icon];
    practice_add_input(s, "ch07_ex2_width", w, "%.0f", PRACTICE_RANGE_OF(ex2_width));
    practice_add_input(s, "ch07_ex2_height", h, "%.0f", PRACTICE_RANGE_OF(ex2_height));
    practice_add_input(s, "ch07_ex2_cap", cap, "%.0f", PRACTICE_RANGE_OF(ex2_cap));
    practice_add_input(s, "ch07_ex2_icon_w", iw, "%.0f", PRACTICE_RANGE_OF(ex2_icon_w));
    practice_add_input(s, "ch07_ex2_icon_h", ih, "%.0f", PRACTICE_RANGE_OF(ex2_icon_h));
    vision_image small, grown;
    if (qwen_tokens((int)iw, (int)ih, v.min_pixels, v.max_pixels, &small) < 0 ||
        qwen_tokens((int)iw, (int)ih, floor_pixels, v.max_pixels, &grown) < 0 || grown.clamped != -1)
        return -1;
    const char *merge = "Qwen2-VL merges 2 x 2 patches of 14 px: one token per 28 x 28 px";
    practice_part *p = practice_add_part(s, "7.2(a1)", 2, "tokens with the default max_pixels", "tokens", JUDGE_EXACT,
                                         full.tokens, 0);
    practice_add_slip(p, 4.0 * full.tokens, merge);
    p = practice_add_part(s, "7.2(a2)", 2, "tokens with the lower max_pixels", "tokens", JUDGE_EXACT, capped.tokens,
                          0);
    practice_add_slip(p, cap, "max_pixels bounds the area; each side then rounds down to a multiple of 28 px");
    practice_add_slip(p, rounded_scale(w, h, 1 / sqrt(w * h / (cap * 784))),
                      "shrinking rounds each side down (floor), so the area stays under max_pixels");
    practice_add_slip(p, 4.0 * capped.tokens, merge);
    p = practice_add_part(s, "7.2(b1)", 2, "the icon's tokens with the min_pixels floor", "tokens", JUDGE_EXACT,
                          grown.tokens, 0);
    practice_add_slip(p, small.tokens, "the icon's area is under min_pixels: the preprocessor grows it");
    practice_add_slip(p, rounded_scale(iw, ih, sqrt(floor_pixels / (iw * ih))),
                      "growing rounds each side up (ceil), so the area reaches min_pixels");
    p = practice_add_part(s, "7.2(b2)", 2, "the icon's tokens without that floor", "tokens", JUDGE_EXACT, small.tokens,
                          0);
    practice_add_slip(p, grown.tokens, "without the floor the default min_pixels, 4 x 28 x 28, leaves the icon's size");
    practice_add_slip(p, 4.0 * small.tokens, merge);
    return 0;
}

/* ---- 7.4: Llama-3.2-11B-Vision keeps an image in cross-attention KV */

/* KV bytes of a request of text_tokens, `images` width x height images and
 * output_tokens (self-attention KV of the prompt and output, plus the
 * image's cross-attention KV), and the self-attention share of it. */
static int cross_request(int text_tokens, int output_tokens, int images, int width, int height, double *kv,
                         double *self_kv)
{
    vision_spec v;
    vision_image im;
    model_spec lm;
    if (image_of("llama3.2-11b-vision", width, height, &v, &im) != 0 || vision_lm_lookup(&v, &lm) != 0)
        return -1;
    gpu_spec g = gpu_builtin("h100");
    vision_request q = vision_request_default(&v, &lm, &g);
    q.width = width;
    q.height = height;
    q.images = images;
    q.text_tokens = text_tokens;
    q.output_tokens = output_tokens;
    vision_estimate e;
    char err[512];
    if (vision_estimate_compute(&q, &e, err, sizeof err) != 0 || !e.fit.fits)
        return -1;
    *kv = e.kv_bytes;
    *self_kv = e.context_tokens * kv_bytes_per_token(&lm, DT_BF16);
    return 0;
}

static const double ex4_text[] = {50, 100, 150, 200, 250, 300, 400, 500, 600, 800, 1000, 1200};
static const double ex4_output[] = {128, 256, 384, 512, 768, 1024, 1536, 2048};

static int exercise_4(practice_set *s, rng_state *r)
{
    double text = PRACTICE_DRAW(s, r, "ch07_ex4_text_tokens", ex4_text, 1, "%.0f");
    double out = PRACTICE_DRAW(s, r, "ch07_ex4_output_tokens", ex4_output, 1, "%.0f");
    vision_spec v;
    vision_image big, small;
    model_spec lm;
    if (image_of("llama3.2-11b-vision", 1920, 1080, &v, &big) != 0 ||
        image_of("llama3.2-11b-vision", 560, 560, &v, &small) != 0 || vision_lm_lookup(&v, &lm) != 0)
        return -1;
    /* K and V of one token in the 32 self-attention layers, bf16 */
    double kv_token = kv_bytes_per_token(&lm, DT_BF16);
    double kv, self, kv_small, self_small, kv_none, self_none;
    if (cross_request((int)text, (int)out, 1, 1920, 1080, &kv, &self) != 0 ||
        cross_request((int)text, (int)out, 1, 560, 560, &kv_small, &self_small) != 0 ||
        cross_request((int)text, (int)out, 0, 1920, 1080, &kv_none, &self_none) != 0)
        return -1;
    double prompt = text + big.context_tokens, cross_kv = kv - self;
    practice_part *p = practice_add_part(s, "7.4(a)", 4, "self-attention prompt", "tokens", JUDGE_EXACT, prompt, 0);
    practice_add_slip(p, text, "the image still puts one <|image|> token into the text");
    practice_add_slip(p, text + big.cross_tokens,
                      "the image's tile tokens sit in the cross-attention KV, not in the self-attention prompt");
    p = practice_add_part(s, "7.4(b1)", 4, "KV of the request", "MB", JUDGE_RELATIVE, kv / 1e6, JUDGE_HAND_TOL);
    practice_add_slip(p, (self + big.cross_tokens * kv_token) / 1e6,
                      "the image's tokens have K and V in the 8 cross-attention layers only, not in all 32");
    practice_add_slip(p, kv_none / 1e6, "the request also holds the image's cross-attention KV");
    practice_add_slip(p, (kv - out * kv_token) / 1e6, "the output tokens' KV is held too, not only the prompt's");
    p = practice_add_part(s, "7.4(b2)", 4, "the image's share of that KV", "%", JUDGE_RELATIVE, 100 * cross_kv / kv,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, 100 * cross_kv / self, "that is the image over the text's KV; a share divides by the whole");
    practice_add_slip(p, 100 * self / kv, "that is the text's share; the image's is the rest");
    p = practice_add_part(s, "7.4(c1)", 4, "KV with a 560 x 560 image", "MB", JUDGE_RELATIVE, kv_small / 1e6,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, kv / 1e6, "a 560 x 560 image is one tile, not the 1080p image's four");
    p = practice_add_part(s, "7.4(c2)", 4, "KV with no image", "MB", JUDGE_RELATIVE, kv_none / 1e6, JUDGE_HAND_TOL);
    practice_add_slip(p, (kv_none - out * kv_token) / 1e6, "the output tokens' KV is held too, not only the prompt's");
    return 0;
}

/* ---- 7.5: CLIP ViT-L/14 at a resolution: (side / 14)^2 patches + a class token */

/* multiples of the 14 px patch, from CLIP's 224 px to 560 px */
static const double ex5_side[] = {224, 252, 280, 308, 336, 364, 392, 420, 448, 476, 504, 532, 560};

static int exercise_5(practice_set *s, rng_state *r)
{
    double side = practice_pick(r, s->seed, ex5_side, PRACTICE_COUNT(ex5_side), 4);
    vision_spec clip;
    if (vision_lookup("llava-1.5-7b", &clip) != 0) /* its encoder is CLIP ViT-L/14-336 */
        return -1;
    /* the plain ViT the exercise counts: its layers, no patch embedding,
     * projector or windows */
    vision_spec v;
    memset(&v, 0, sizeof v);
    v.family = VF_FIXED;
    v.layers = clip.layers + 1; /* LLaVA runs 23 of CLIP's 24 layers; the exercise counts all 24 */
    v.hidden = clip.hidden;
    v.ffn = clip.ffn;
    v.heads = 1;
    double patches = (side / clip.patch) * (side / clip.patch);
    practice_add_input(s, "ch07_ex5_side", side, "%.0f", PRACTICE_RANGE_OF(ex5_side));
    practice_add_input(s, "ch07_ex5_tokens", patches + 1, PRACTICE_GROUPED, 16 * 16 + 1, 40 * 40 + 1);
    practice_add_input(s, "ch07_ex5_patches", patches, PRACTICE_GROUPED, 16 * 16, 40 * 40);
    vision_image im;
    memset(&im, 0, sizeof im);
    im.tiles = 1;
    im.encoder_seq = im.encoder_tokens = (int)patches + 1;
    vision_encoder_cost one, four;
    vision_encoder_flops(&v, &im, DT_BF16, &one);
    im.encoder_seq = im.encoder_tokens = 4 * (int)patches + 1;
    vision_encoder_flops(&v, &im, DT_BF16, &four);
    practice_part *p = practice_add_part(s, "7.5(a)", 5, "FLOPs of one pass", "GFLOP", JUDGE_RELATIVE,
                                         one.flop / 1e9, JUDGE_HAND_TOL);
    practice_add_slip(p, one.flop_linear / 1e9, "the attention term 4 n_L n_tok^2 d counts too");
    practice_add_slip(p, (one.flop_linear + one.flop_attention / 2) / 1e9,
                      "attention is two matrix products (Q K^T and the weighted V): 4, not 2, n_L n_tok^2 d");
    p = practice_add_part(s, "7.5(b)", 5, "attention's share of the FLOPs", "%", JUDGE_RELATIVE,
                          100 * one.flop_attention / one.flop, JUDGE_HAND_TOL);
    practice_add_slip(p, 100 * one.flop_attention / one.flop_linear,
                      "that is attention over the linear layers; a share divides by the whole");
    p = practice_add_part(s, "7.5(c)", 5, "FLOPs of the four tiles as one sequence, in one-tile passes", "x",
                          JUDGE_RELATIVE, four.flop / one.flop, JUDGE_HAND_TOL);
    practice_add_slip(p, 4, "that counts the linear layers only; attention grows as the square of the tokens");
    practice_add_slip(p, 16, "that counts attention only; the linear layers grow with the tokens, not their square");
    return 0;
}

/* ---- 7.6: Qwen2.5-VL-7B's encoder at peak, one image of a common size;
 * H100s (NVLink) and L40S (PCIe), four GPUs */

static const double ex6_width[] = {1920, 1280, 2560, 1024, 1366, 1440, 1600, 1680, 1920, 2048, 2560, 3840, 800, 1280};
static const double ex6_height[] = {1080, 720, 1440, 768, 768, 900, 900, 1050, 1200, 1536, 1600, 2160, 600, 1024};

static int encoder_of(const char *gpu, int width, int height, int tp, vision_encoder_cost *c)
{
    vision_spec v;
    vision_image im;
    gpu_spec g;
    char err[256];
    if (image_of("qwen2.5-vl-7b", width, height, &v, &im) != 0 || gpu_lookup(gpu, &g) != 0)
        return -1;
    return vision_encoder_time(&v, &im, &g, precision_uniform(DT_BF16), 1.0, tp, c, err, sizeof err);
}

static int exercise_6(practice_set *s, rng_state *r)
{
    int image = s->seed == 0 ? 0 : (int)rng_below(r, PRACTICE_COUNT(ex6_width));
    double w = ex6_width[image], h = ex6_height[image];
    practice_add_input(s, "ch07_ex6_width", w, "%.0f", PRACTICE_RANGE_OF(ex6_width));
    practice_add_input(s, "ch07_ex6_height", h, "%.0f", PRACTICE_RANGE_OF(ex6_height));
    vision_encoder_cost one, two, four, l_one, l_four;
    if (encoder_of("h100", (int)w, (int)h, 1, &one) != 0 || encoder_of("h100", (int)w, (int)h, 2, &two) != 0 ||
        encoder_of("h100", (int)w, (int)h, 4, &four) != 0 || encoder_of("l40s", (int)w, (int)h, 1, &l_one) != 0 ||
        encoder_of("l40s", (int)w, (int)h, 4, &l_four) != 0)
        return -1;
    const char *comm = "the two all-reduces a layer of the image's activations do not shrink with the GPUs";
    practice_part *p = practice_add_part(s, "7.6(a1)", 6, "ms of one image on one GPU", "ms", JUDGE_RELATIVE,
                                         one.time * 1e3, JUDGE_HAND_TOL);
    practice_add_slip(p, one.time, "that is seconds; the part asks for milliseconds");
    p = practice_add_part(s, "7.6(a2)", 6, "ms of one image sharded over 2 GPUs", "ms", JUDGE_RELATIVE,
                          two.time_sharded * 1e3, JUDGE_HAND_TOL);
    practice_add_slip(p, one.time / 2 * 1e3, comm);
    p = practice_add_part(s, "7.6(a3)", 6, "ms of one image sharded over 4 GPUs", "ms", JUDGE_RELATIVE,
                          four.time_sharded * 1e3, JUDGE_HAND_TOL);
    practice_add_slip(p, one.time / 4 * 1e3, comm);
    p = practice_add_part(s, "7.6(b1)", 6, "ms of four images, one a GPU", "ms", JUDGE_RELATIVE, one.time * 1e3,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, 4 * one.time * 1e3, "the four GPUs encode their images at the same time");
    p = practice_add_part(s, "7.6(b2)", 6, "ms of four images, each sharded over the four", "ms", JUDGE_RELATIVE,
                          4 * four.time_sharded * 1e3, JUDGE_HAND_TOL);
    practice_add_slip(p, four.time_sharded * 1e3, "each of the four images takes its own sharded pass, in turn");
    practice_add_slip(p, one.time * 1e3, "sharded, the collectives are paid for every image");
    p = practice_add_part(s, "7.6(c1)", 6, "ms of one image sharded over four L40S", "ms", JUDGE_RELATIVE,
                          l_four.time_sharded * 1e3, JUDGE_HAND_TOL);
    practice_add_slip(p, l_one.time / 4 * 1e3, "without NVLink the all-reduces cross PCIe: they cost the most here");
    p = practice_add_part(s, "7.6(c2)", 6, "ms of one image on one L40S", "ms", JUDGE_RELATIVE, l_one.time * 1e3,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, one.time * 1e3, "the L40S's peak is its own, under half the H100's");
    return 0;
}

/* ---- 7.7: whole prompts per prefill step of a token budget */

static const double ex7_budget[] = {4096, 8192, 16384, 5120, 6144, 10240, 12288, 20480, 24576, 32768};
static const double ex7_text[] = {50, 100, 150, 200, 250, 300, 350, 400, 450, 500};

static int prompts_per_step(const char *key, int images, double text, double budget, double *image_tokens)
{
    vision_spec v;
    vision_image im;
    if (image_of(key, 1920, 1080, &v, &im) != 0)
        return -1;
    *image_tokens = im.context_tokens;
    return (int)floor(budget / (text + images * im.context_tokens));
}

static int exercise_7(practice_set *s, rng_state *r)
{
    double budget = PRACTICE_DRAW(s, r, "ch07_ex7_budget", ex7_budget, 1, "%.0f");
    double text = PRACTICE_DRAW(s, r, "ch07_ex7_text_tokens", ex7_text, 3, "%.0f");
    double qwen, llava, llama;
    int one = prompts_per_step("qwen2-vl-7b", 1, text, budget, &qwen);
    int three = prompts_per_step("qwen2-vl-7b", 3, text, budget, &qwen);
    int lv = prompts_per_step("llava-1.5-7b", 3, text, budget, &llava);
    int ll = prompts_per_step("llama3.2-11b-vision", 3, text, budget, &llama);
    if (one < 0 || three < 0 || lv < 0 || ll < 0)
        return -1;
    const char *down = "a step admits whole prompts: round down";
    practice_part *p = practice_add_part(s, "7.7(a)", 7, "text-only prompts per step", "prompts", JUDGE_EXACT,
                                         floor(budget / text), 0);
    practice_add_slip(p, floor(budget / text) + 1, down);
    p = practice_add_part(s, "7.7(b1)", 7, "Qwen2-VL prompts with one 1080p image", "prompts", JUDGE_EXACT, one, 0);
    practice_add_slip(p, floor(budget / qwen), "each prompt brings its text tokens as well as the image's");
    practice_add_slip(p, one + 1, down);
    p = practice_add_part(s, "7.7(b2)", 7, "Qwen2-VL prompts with three 1080p images", "prompts", JUDGE_EXACT, three,
                          0);
    practice_add_slip(p, floor(budget / (text + qwen)), "each of the three images brings its own tokens");
    practice_add_slip(p, three + 1, down);
    p = practice_add_part(s, "7.7(c1)", 7, "LLaVA-1.5 prompts with three images", "prompts", JUDGE_EXACT, lv, 0);
    practice_add_slip(p, floor(budget / (text + llava)), "each of the three images brings its own tokens");
    practice_add_slip(p, lv + 1, down);
    p = practice_add_part(s, "7.7(c2)", 7, "Llama-3.2-11B-Vision prompts with three images", "prompts", JUDGE_EXACT,
                          ll, 0);
    practice_add_slip(p, floor(budget / text), "each image still puts one <|image|> token into the prompt");
    practice_add_slip(p, ll + 1, down);
    (void)llama;
    return 0;
}

int practice_build_ch07(uint64_t seed, practice_set *out)
{
    /* one stream per exercise, so a change to one leaves the others' draws */
    rng_state st[7];
    practice_streams(seed, st, 7);
    rng_state r4 = st[0], r5 = st[1], r7 = st[2], r2 = st[3], r1 = st[4], r3 = st[5], r6 = st[6];
    if (exercise_1(out, &r1) != 0 || exercise_2(out, &r2) != 0 || exercise_3(out, &r3) != 0 ||
        exercise_4(out, &r4) != 0 || exercise_5(out, &r5) != 0 || exercise_6(out, &r6) != 0 ||
        exercise_7(out, &r7) != 0)
        return -1;
    return 0;
}
