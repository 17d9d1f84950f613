/* Images as tokens: how many tokens an image becomes in each family of
 * vision-language model, what the vision encoder costs, and what the image
 * tokens do to prefill, time to first token, KV memory and the two capacity
 * numbers (concurrent sequences, requests per second within a prefill budget).
 *
 * Tables: code/specs/vision_models.tsv (encoder and preprocessor per model)
 * and code/specs/vision_lms.tsv (their language models, models.tsv columns).
 *
 * Conventions:
 *  - Token counts follow each released preprocessor exactly (integer and
 *    rounding rules included); the function comments name the code.
 *  - Encoder FLOPs: 2 * P * N for the linear layers (P parameters per token
 *    of a layer, N tokens through it) plus 4 * N * S * d per attention layer
 *    (QK^T and PV; S is the tokens each token attends: the tile, the window
 *    or the whole image), plus the projector into the LM.
 *  - The encoder is small, so it is replicated on every GPU of a
 *    tensor-parallel group and the images of a step are spread over them
 *    (vLLM --mm-encoder-tp-mode data): one image runs on one GPU.
 *  - Times are rooflines at a fraction of the GPU's peak the caller sets
 *    (encoder and LM separately): prefill is compute-bound, and measured
 *    encoders run further below peak than LM prefill does. */
#ifndef NAPKIN_VISION_H
#define NAPKIN_VISION_H

#include "memory.h"
#include "specs.h"
#include "transformer.h"

#include <stddef.h>

typedef enum {
    VF_FIXED,  /* one square crop: LLaVA-1.5 */
    VF_ANYRES, /* grid pinpoints, unpadding, a newline per row, + base: LLaVA-NeXT */
    VF_NATIVE, /* any size in multiples of patch * merge: Qwen2-VL, Qwen2.5-VL */
    VF_TILES,  /* dynamic square tiles + a thumbnail: InternVL */
    VF_CROSS   /* tiles whose tokens feed cross-attention layers: Llama 3.2 Vision */
} vision_family;

#define VISION_MAX_PINPOINTS 16

typedef struct {
    char key[SPEC_KEY_MAX];
    char name[SPEC_NAME_MAX];
    vision_family family;
    char lm[SPEC_KEY_MAX]; /* language model key */
    int image;             /* encoder input side, px (0 for native) */
    int patch, merge, cls;
    int layers, hidden, heads, ffn, gated;
    int window, full_layers; /* window 0: every layer attends the whole tile / image */
    int proj_in, proj_mid, proj_out;
    int cross_layers;
    /* tiling */
    int pinpoints, pin_h[VISION_MAX_PINPOINTS], pin_w[VISION_MAX_PINPOINTS];
    int min_tiles, max_tiles;
    double min_pixels, max_pixels;
    char source[SPEC_SOURCE_MAX];
} vision_spec;

typedef struct {
    vision_spec *rows;
    int n;
} vision_table;

/* Parse TSV text ("file:line: field 'x': reason" on error, table left empty). */
int vision_table_parse(const char *text, const char *filename, vision_table *out, char *err, size_t errlen);
int vision_table_load(const char *path, vision_table *out, char *err, size_t errlen);
int vision_table_builtin(vision_table *out, char *err, size_t errlen);
void vision_table_free(vision_table *t);
const vision_spec *vision_find(const vision_table *t, const char *key);
char *vision_keys(const vision_table *t, char *buf, size_t n);
const char *vision_family_name(vision_family f);
/* The built-in row, or -1 when unknown. */
int vision_lookup(const char *key, vision_spec *out);
/* The language model of a vision row: vision_lms.tsv, else models.tsv; -1 when absent. */
int vision_lm_lookup(const vision_spec *v, model_spec *out);

/* ------------------------------------------------------------ tokens */

typedef struct {
    int width, height;     /* the image as given */
    int resized_w, resized_h; /* what the encoder sees: the crop, the canvas of tiles, or the resize */
    int clamped;           /* native: +1 max_pixels shrank it, -1 min_pixels grew it, 0 neither */
    int grid_w, grid_h;    /* tiles across and down (anyres, tiles, cross); LM tokens across/down (native) */
    int tiles;             /* encoder passes over a tile, base image or thumbnail included */
    int encoder_seq;       /* tokens in one encoder sequence (a tile, or the whole native image) */
    int encoder_tokens;    /* tokens through the encoder for this image */
    int projector_tokens;  /* tokens through the projector */
    int unpadded_h, unpadded_w, newlines; /* anyres: the unpadded feature grid and its newline tokens */
    int tokens;            /* image tokens the LM attends to */
    int context_tokens;    /* tokens the image adds to the self-attention sequence (tokens, or 1 for cross) */
    int cross_tokens;      /* tokens held in cross-attention KV (cross family; else 0) */
} vision_image;

/* Tokens of one width x height image as the model's preprocessor computes
 * them.  Returns 0, or -1 with a message for a size the preprocessor refuses
 * (not positive, above 100000 px a side, or an aspect ratio over 200 for native). */
int vision_image_tokens(const vision_spec *v, int width, int height, vision_image *out, char *err, size_t errlen);

/* Qwen2-VL smart_resize (qwen-vl-utils / transformers image_processing_qwen2_vl):
 * each side to the nearest multiple of factor (round half to even), then
 * scaled down by sqrt(h w / max_pixels) with floor, or up by
 * sqrt(min_pixels / (h w)) with ceil, when the area falls outside. */
int vision_smart_resize(int height, int width, int factor, double min_pixels, double max_pixels, int *out_h,
                        int *out_w);

/* ------------------------------------------------------------ encoder */

typedef struct {
    double params;        /* ViT layers, patch embedding and projector */
    double flop_linear;   /* 2 P N over the ViT layers and patch embedding */
    double flop_attention;
    double flop_projector;
    double flop;          /* the three above */
    double bytes;         /* weights read once, activations in and out of each matrix */
    double time;          /* one image on one GPU: roofline at the encoder efficiency */
    double time_sharded;  /* the same image with the encoder split over tp GPUs, collectives included */
    double time_comm;     /* of which: two all-reduces of the image's activations per layer */
} vision_encoder_cost;

/* Parameters of the encoder and projector (what every GPU holds). */
double vision_encoder_params(const vision_spec *v);
/* FLOPs and bytes of one image (time fields 0). */
void vision_encoder_flops(const vision_spec *v, const vision_image *im, dtype act, vision_encoder_cost *out);
/* Flops and bytes, and the times on g at `efficiency` of its peak for
 * prec.compute; time_sharded for tp GPUs.  -1 with a message for a GPU
 * without the rate or without link figures at tp > 1. */
int vision_encoder_time(const vision_spec *v, const vision_image *im, const gpu_spec *g, precision prec,
                        double efficiency, int tp, vision_encoder_cost *out, char *err, size_t errlen);

/* ------------------------------------------------------------ requests */

typedef struct {
    const vision_spec *vision;
    const model_spec *lm;
    const gpu_spec *gpu;
    precision prec;
    int tp;
    int width, height;   /* every image of the request */
    int images;          /* images per request (0 = text only) */
    int text_tokens;     /* text tokens of the prompt */
    int output_tokens;   /* tokens generated: their KV is held too */
    int budget_tokens;   /* prefill tokens per scheduler step (max_num_batched_tokens) */
    double preprocess;   /* seconds of CPU preprocessing per request (an input) */
    double encoder_efficiency, lm_efficiency; /* fractions of peak, (0, 1] */
    double ttft_target;  /* seconds */
    memory_policy policy; /* activation_tokens is set to budget_tokens */
} vision_request;

/* The usual request: 1 image, bf16, tp 1, 200 text and 256 output tokens,
 * budget 8192, no preprocessing time, efficiencies 1, TTFT target 1 s. */
vision_request vision_request_default(const vision_spec *v, const model_spec *lm, const gpu_spec *g);

typedef struct {
    vision_image image;       /* one image (zeros for text only) */
    int prompt_tokens;        /* self-attention tokens of the prompt */
    int context_tokens;       /* prompt + output: KV held per sequence */
    int cross_tokens;         /* cross-attention KV tokens of the request */
    int fit_context;          /* context_tokens + the cross KV as self-attention tokens: what memory_fit holds */
    vision_encoder_cost encoder; /* one image */
    double encoder_time;      /* the request's images spread over tp GPUs, plus the all-gather of their embeddings */
    double prefill_flop;      /* per GPU, logits for the last token only */
    double prefill_time;
    double decode_time;       /* the first decode step, alone */
    double ttft;              /* preprocess + encoder + prefill + first decode step */
    double kv_bytes;          /* per request, all GPUs: self-attention KV (+ cross-attention KV) */
    double vision_bytes;      /* per GPU: encoder weights (replicated) + this GPU's share of cross layers */
    fit_check fit;            /* one request */
    int max_batch;            /* concurrent sequences the KV budget holds */
    int budget_requests;      /* requests one prefill step of budget_tokens admits (>= 1) */
    int step_requests;        /* requests per prefill step whose TTFT meets the target (0: not even one) */
    double step_ttft;         /* the TTFT of a request in such a step */
    double requests_per_s;    /* step_requests / (their encoder time + their prefill step) */
} vision_estimate;

/* Everything above for one request shape.  Returns 0 (a request that does
 * not fit has fit.fits = 0, max_batch 0 and no rates), or -1 with a message
 * for bad input. */
int vision_estimate_compute(const vision_request *q, vision_estimate *out, char *err, size_t errlen);

/* Seconds of a prefill step of `batch` requests of `prompt` tokens each, at
 * the LM efficiency, with logits for the last position of each sequence
 * only; cross layers (Llama 3.2 Vision) over `cross_tokens` image tokens per
 * request included.  *flop (may be NULL) gets the FLOPs per GPU. */
/* Tokens a family's prompt template puts around each image besides the
 * processor's count: Qwen2-VL's <|vision_start|> and <|vision_end|>,
 * InternVL's <img> and </img> (2); none for LLaVA, whose features replace the
 * <image> token, nor for the cross family. */
int vision_delimiter_tokens(const vision_spec *v);

/* The FLOP efficiencies (share of the dense peak the GEMMs and attention
 * reach; memory-bound work stays at the full bandwidth) at which request q
 * takes exactly `encoder_s` in its encoder and `prefill_s` in its prefill.
 * Calibrating the share that the model applies, rather than a ratio of
 * roofline times, is what lets the model give back its calibration point.
 * 0, or -1 with a message when a time is shorter than the roofline at peak. */
int vision_calibrate(const vision_request *q, double encoder_s, double prefill_s, double *encoder_efficiency,
                     double *lm_efficiency, char *err, size_t errlen);

int vision_prefill_time(const vision_request *q, int batch, int prompt, int cross_tokens, double *flop,
                        double *time, char *err, size_t errlen);

#endif
