/* Chapter 7 fill-in kit.  Replace each TODO body with your own derivation,
 * then run `make exercise N=07`.  You may call the napkin library (vision.h,
 * roofline.h, comm.h) or work from first principles.  Return -1 or NAN for
 * input you cannot use. */
#include "07-images-as-tokens.h"

#include <math.h>

int ex07_llava_next_tokens(int width, int height)
{
    /* TODO: pick the pinpoint, unpad its 24-patch-per-tile grid, add a
     * newline per row and the 576 of the base image. */
    return -1;
}

int ex07_qwen_tokens(int width, int height, double min_pixels, double max_pixels)
{
    /* TODO: round each side to a multiple of 28, rescale into
     * [min_pixels, max_pixels] (floor when shrinking, ceil when growing),
     * one token per 28 x 28 px. */
    return -1;
}

int ex07_internvl_tokens(int width, int height, int max_tiles)
{
    /* TODO: the closest aspect ratio i/j with i j <= max_tiles (ties go to the
     * larger grid when the image has more than half its pixels), 256 per
     * tile, + a 256-token thumbnail when there is more than one tile. */
    return -1;
}

int ex07_cross_context_tokens(int text_tokens, int images)
{
    /* TODO: how many tokens does an image add to the text sequence? */
    return -1;
}

double ex07_cross_request_kv_bytes(int text_tokens, int output_tokens, int images, int width, int height)
{
    /* TODO: 32 self-attention layers over the context; 8 cross-attention
     * layers over 1601 tokens per 560 px tile; 8 KV heads of 128, bf16. */
    return NAN;
}

double ex07_vit_flops(int layers, int hidden, int ffn, int tokens)
{
    /* TODO: 2 P N + 4 L N^2 d with P = L (4 d^2 + 2 d ffn). */
    return NAN;
}

double ex07_encoder_seconds(const char *vision_key, const char *gpu_key, int width, int height, int images, int tp,
                            int sharded)
{
    /* TODO: one image's FLOPs over the peak; share out the images, or split
     * each image and add 2 all-reduces per layer (comm.h). */
    return NAN;
}

int ex07_requests_per_step(const char *vision_key, int width, int height, int images, int text_tokens, int budget)
{
    /* TODO: the prompt's tokens, then how many whole prompts fit. */
    return -1;
}
