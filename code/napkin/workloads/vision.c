#include "vision.h"

#include "comm.h"
#include "pricing.h"
#include "roofline.h"
#include "specs_tsv.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char napkin_vision_models_tsv[];
extern const char napkin_vision_lms_tsv[];

#define VISION_MAX_SIDE 100000

/* ------------------------------------------------------------ the table */

/* The table is read by the spec-table parser (specs_tsv.h): the one number
 * syntax, file:line: field messages, keys unique. */
static const char *const VISION_COLUMNS[] = {
    "key",    "name",  "family",      "lm",      "image",    "patch",    "merge",        "cls",
    "layers", "hidden", "heads",      "ffn",     "gated",    "window",   "full_layers",  "proj_in",
    "proj_mid", "proj_out", "cross_layers", "tiling", "source"};
#define VISION_NCOLUMNS ((int)(sizeof VISION_COLUMNS / sizeof VISION_COLUMNS[0]))

/* Plausible bounds, far past every released encoder, that keep each token
 * count (at most 65 tiles of (image / patch)^2 + cls tokens, or a native
 * image of max_pixels / patch^2) inside an int. */
#define VISION_MAX_CROP 4096       /* px, the encoder's input side */
#define VISION_MAX_TILES 64        /* tiles of one image (anyres grid, tiles, cross) */
#define VISION_MAX_PIXELS 1e9      /* native min_pixels / max_pixels */

static int parse_family(spec_tsv_ctx *c, const char *s, vision_family *out)
{
    static const char *const names[] = {"fixed", "anyres", "native", "tiles", "cross"};
    for (int i = 0; i < 5; i++)
        if (strcmp(s, names[i]) == 0) {
            *out = (vision_family)i;
            return 0;
        }
    return spec_tsv_fail(c, "family", "'%s' is not a family (choices: fixed, anyres, native, tiles, cross)", s);
}

/* "A<sep>B", the first len bytes of s, into a and b; -1 when it is not that shape. */
static int split_pair(const char *s, size_t len, char sep, char a[32], char b[32])
{
    const char *mid = memchr(s, sep, len);
    if (!mid)
        return -1;
    size_t la = (size_t)(mid - s), lb = len - la - 1;
    if (la >= 32 || lb >= 32 || memchr(mid + 1, sep, lb))
        return -1;
    memcpy(a, s, la);
    a[la] = '\0';
    memcpy(b, mid + 1, lb);
    b[lb] = '\0';
    return 0;
}

static int parse_pinpoints(spec_tsv_ctx *c, const char *s, vision_spec *v)
{
    static const char shape[] = "'%s' must be pinpoints HxW,... in multiples of the image side, at most 64 tiles each";
    char a[32], b[32];
    v->pinpoints = 0;
    for (const char *p = s;; p++) {
        size_t len = strcspn(p, ",");
        int h, w;
        if (v->pinpoints == VISION_MAX_PINPOINTS || split_pair(p, len, 'x', a, b) != 0)
            return spec_tsv_fail(c, "tiling", shape, s);
        if (spec_tsv_int_in(c, "tiling", a, 1, VISION_MAX_SIDE, &h) ||
            spec_tsv_int_in(c, "tiling", b, 1, VISION_MAX_SIDE, &w))
            return -1;
        if (h % v->image || w % v->image || (long long)(h / v->image) * (w / v->image) > VISION_MAX_TILES)
            return spec_tsv_fail(c, "tiling", shape, s);
        v->pin_h[v->pinpoints] = h;
        v->pin_w[v->pinpoints++] = w;
        p += len;
        if (*p == '\0')
            return 0;
    }
}

/* The tiling column, read by family. */
static int parse_tiling(spec_tsv_ctx *c, const char *s, vision_spec *v)
{
    char a[32], b[32];
    switch (v->family) {
    case VF_FIXED:
        if (strcmp(s, "-") != 0)
            return spec_tsv_fail(c, "tiling", "'%s' must be '-' for a fixed-crop encoder", s);
        return 0;
    case VF_ANYRES:
        return parse_pinpoints(c, s, v);
    case VF_NATIVE:
        if (split_pair(s, strlen(s), '-', a, b) != 0)
            return spec_tsv_fail(c, "tiling", "'%s' must be MIN_PIXELS-MAX_PIXELS with min <= max", s);
        if (spec_tsv_number_in(c, "tiling", a, 1, VISION_MAX_PIXELS, &v->min_pixels) ||
            spec_tsv_number_in(c, "tiling", b, 1, VISION_MAX_PIXELS, &v->max_pixels))
            return -1;
        if (v->max_pixels < v->min_pixels)
            return spec_tsv_fail(c, "tiling", "'%s' must be MIN_PIXELS-MAX_PIXELS with min <= max", s);
        return 0;
    case VF_TILES:
    case VF_CROSS:
        if (split_pair(s, strlen(s), '-', a, b) != 0)
            return spec_tsv_fail(c, "tiling", "'%s' must be MIN-MAX tiles with 1 <= min <= max <= 64", s);
        if (spec_tsv_int_in(c, "tiling", a, 1, VISION_MAX_TILES, &v->min_tiles) ||
            spec_tsv_int_in(c, "tiling", b, 1, VISION_MAX_TILES, &v->max_tiles))
            return -1;
        if (v->max_tiles < v->min_tiles)
            return spec_tsv_fail(c, "tiling", "'%s' must be MIN-MAX tiles with 1 <= min <= max <= 64", s);
        return 0;
    }
    return -1;
}

static int vision_row(spec_tsv_ctx *c, char **f, int n, void *table)
{
    (void)n;
    vision_table *t = table;
    vision_spec v;
    memset(&v, 0, sizeof v);
    if (spec_tsv_text(c, "key", f[0], v.key, sizeof v.key) || spec_tsv_text(c, "name", f[1], v.name, sizeof v.name) ||
        parse_family(c, f[2], &v.family) || spec_tsv_text(c, "lm", f[3], v.lm, sizeof v.lm))
        return -1;
    if (v.family == VF_NATIVE) {
        if (strcmp(f[4], "-") != 0)
            return spec_tsv_fail(c, "image", "'%s' must be '-' for a native-resolution encoder", f[4]);
    } else if (spec_tsv_int_in(c, "image", f[4], 1, VISION_MAX_CROP, &v.image))
        return -1;
    int *ints[] = {&v.patch, &v.merge, &v.cls, &v.layers, &v.hidden, &v.heads, &v.ffn, &v.gated,
                   &v.window, &v.full_layers, &v.proj_in, &v.proj_mid, &v.proj_out, &v.cross_layers};
    static const int mins[] = {1, 1, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 1, 0};
    static const int maxs[] = {1024, 16, 16, 10000, 1000000, 100000, 10000000, 1,
                               100000000, 10000, 1000000, 10000000, 1000000, 10000};
    for (int i = 0; i < 14; i++)
        if (spec_tsv_int_in(c, VISION_COLUMNS[5 + i], f[5 + i], mins[i], maxs[i], ints[i]))
            return -1;
    if (v.hidden % v.heads)
        return spec_tsv_fail(c, "heads", "'%s' must divide hidden", f[10]);
    if (v.full_layers > v.layers)
        return spec_tsv_fail(c, "full_layers", "'%s' exceeds the layers", f[14]);
    if (v.window == 0 && v.full_layers != 0)
        return spec_tsv_fail(c, "full_layers", "'%s' must be 0 without a window", f[14]);
    if (v.image && v.image % (v.patch * v.merge))
        return spec_tsv_fail(c, "image", "'%s' must be a multiple of patch * merge", f[4]);
    if ((v.family == VF_CROSS) != (v.cross_layers > 0))
        return spec_tsv_fail(c, "cross_layers", "'%s' must be positive for the cross family and 0 otherwise", f[18]);
    if (parse_tiling(c, f[19], &v) || spec_tsv_text(c, "source", f[20], v.source, sizeof v.source))
        return -1;
    vision_spec *rows = realloc(t->rows, (size_t)(t->n + 1) * sizeof *rows);
    if (!rows)
        return spec_tsv_fail(c, NULL, "out of memory%s", "");
    t->rows = rows;
    t->rows[t->n++] = v;
    return spec_tsv_key(c, v.key);
}

int vision_table_parse(const char *text, const char *filename, vision_table *out, char *err, size_t errlen)
{
    out->rows = NULL;
    out->n = 0;
    if (spec_tsv_parse(text, filename, VISION_COLUMNS, VISION_NCOLUMNS, vision_row, out, err, errlen) != 0) {
        vision_table_free(out);
        return -1;
    }
    return 0;
}

int vision_table_load(const char *path, vision_table *out, char *err, size_t errlen)
{
    char *text = spec_read_text_file(path, err, errlen);
    if (!text) {
        out->rows = NULL;
        out->n = 0;
        return -1;
    }
    int rc = vision_table_parse(text, path, out, err, errlen);
    free(text);
    return rc;
}

int vision_table_builtin(vision_table *out, char *err, size_t errlen)
{
    return vision_table_parse(napkin_vision_models_tsv, "code/specs/vision_models.tsv", out, err, errlen);
}

void vision_table_free(vision_table *t)
{
    free(t->rows);
    t->rows = NULL;
    t->n = 0;
}

const vision_spec *vision_find(const vision_table *t, const char *key)
{
    int i = spec_key_index(SPEC_ROWS(t), key);
    return i < 0 ? NULL : &t->rows[i];
}

char *vision_keys(const vision_table *t, char *buf, size_t n)
{
    return spec_keys_join(SPEC_ROWS(t), buf, n);
}

const char *vision_family_name(vision_family f)
{
    static const char *const names[] = {"fixed crop", "any resolution (grid pinpoints)", "native resolution",
                                        "dynamic tiles + thumbnail", "tiles into cross-attention"};
    return (f >= VF_FIXED && f <= VF_CROSS) ? names[f] : "?";
}

int vision_lookup(const char *key, vision_spec *out)
{
    vision_table t;
    char err[512];
    if (!key || vision_table_builtin(&t, err, sizeof err) != 0)
        return -1;
    const vision_spec *v = vision_find(&t, key);
    if (v)
        *out = *v;
    vision_table_free(&t);
    return v ? 0 : -1;
}

int vision_lm_lookup(const vision_spec *v, model_spec *out)
{
    model_table t;
    char err[512];
    if (model_table_parse(napkin_vision_lms_tsv, "code/specs/vision_lms.tsv", &t, err, sizeof err) != 0)
        return -1;
    const model_spec *m = model_find(&t, v->lm);
    if (m)
        *out = *m;
    model_table_free(&t);
    return m ? 0 : model_lookup(v->lm, out);
}

/* ------------------------------------------------------------ tokens */

/* Python's round(): half to even (nearbyint in the default rounding mode). */
static double py_round(double x)
{
    return nearbyint(x);
}

//> smart_resize
int vision_smart_resize(int height, int width, int factor, double min_pixels, double max_pixels, int *out_h,
                        int *out_w)
{
    if (height < 1 || width < 1 || factor < 1)
        return -1;
    double h = height, w = width, f = factor;
    double h_bar = py_round(h / f) * f, w_bar = py_round(w / f) * f;
    if (h_bar * w_bar > max_pixels) {
        double beta = sqrt(h * w / max_pixels);
        h_bar = fmax(f, floor(h / beta / f) * f);
        w_bar = fmax(f, floor(w / beta / f) * f);
    } else if (h_bar * w_bar < min_pixels) {
        double beta = sqrt(min_pixels / (h * w));
        h_bar = ceil(h * beta / f) * f;
        w_bar = ceil(w * beta / f) * f;
    }
    *out_h = (int)h_bar;
    *out_w = (int)w_bar;
    return 0;
}
//< smart_resize

/* LLaVA-NeXT: the pinpoint that keeps the most of the image's pixels, then
 * the least padding (transformers select_best_resolution; pinpoints are
 * height x width). */
static int anyres_best(const vision_spec *v, int oh, int ow)
{
    int best = 0;
    double max_eff = 0, min_waste = INFINITY;
    for (int i = 0; i < v->pinpoints; i++) {
        double H = v->pin_h[i], W = v->pin_w[i];
        double scale = fmin(W / ow, H / oh);
        double dw = trunc(ow * scale), dh = trunc(oh * scale);
        double eff = fmin(dw * dh, (double)ow * oh);
        double waste = W * H - eff;
        if (eff > max_eff || (eff == max_eff && waste < min_waste)) {
            max_eff = eff;
            min_waste = waste;
            best = i;
        }
    }
    return best;
}

//> anyres
/* The feature grid of the chosen pinpoint with the padding rows or columns
 * removed, and one newline token per remaining row (vLLM
 * _get_num_unpadded_features; transformers unpad_image). */
static void anyres_unpad(int oh, int ow, int npatches, int grid_h, int grid_w, int *cur_h, int *cur_w)
{
    int ch = npatches * grid_h, cw = npatches * grid_w;
    double original_aspect = (double)ow / oh, current_aspect = (double)cw / ch;
    if (original_aspect > current_aspect) {
        int new_h = (int)trunc(nearbyint(oh * ((double)cw / ow) * 1e7) / 1e7);
        ch -= 2 * ((ch - new_h) / 2);
    } else {
        int new_w = (int)trunc(nearbyint(ow * ((double)ch / oh) * 1e7) / 1e7);
        cw -= 2 * ((cw - new_w) / 2);
    }
    *cur_h = ch;
    *cur_w = cw;
}
//< anyres

//> intern_ratio
/* InternVL dynamic_preprocess: the tiles-across x tiles-down grid (i x j,
 * min <= i j <= max, in order of i j) whose aspect is closest to the
 * image's; on a tie the later (larger) grid wins when the image has more
 * than half the grid's pixels. */
static void intern_grid(int width, int height, int side, int min_tiles, int max_tiles, int *gi, int *gj)
{
    double aspect = (double)width / height, area = (double)width * height;
    double best_diff = INFINITY;
    int bi = 1, bj = 1;
    for (int n = 1; n <= max_tiles; n++) /* product order, as the sorted ratio list */
        for (int i = 1; i <= n; i++) {
            if (n % i || n < min_tiles)
                continue;
            int j = n / i;
            double diff = fabs(aspect - (double)i / j);
            if (diff < best_diff) {
                best_diff = diff;
                bi = i;
                bj = j;
            } else if (diff == best_diff && area > 0.5 * side * side * i * j) {
                bi = i;
                bj = j;
            }
        }
    *gi = bi;
    *gj = bj;
}
//< intern_ratio

//> mllama_canvas
/* Llama 3.2 Vision get_optimal_tiled_canvas: of the canvases a x b tiles
 * (a b <= max), the smallest upscale that fits the image without
 * distortion, else the mildest downscale; ties go to the smallest area. */
static void mllama_canvas(int width, int height, int tile, int max_tiles, int *rows, int *cols)
{
    double best_up = INFINITY, best_down = -1;
    for (int a = 1; a <= max_tiles; a++)
        for (int b = 1; a * b <= max_tiles; b++) {
            double s = fmin((double)a * tile / height, (double)b * tile / width);
            if (s >= 1 && s < best_up)
                best_up = s;
            if (s < 1 && s > best_down)
                best_down = s;
        }
    double chosen = isfinite(best_up) ? best_up : best_down;
    int best_area = 1 << 30;
    for (int a = 1; a <= max_tiles; a++)
        for (int b = 1; a * b <= max_tiles; b++) {
            double s = fmin((double)a * tile / height, (double)b * tile / width);
            if (s == chosen && a * b < best_area) {
                best_area = a * b;
                *rows = a;
                *cols = b;
            }
        }
}
//< mllama_canvas

int vision_image_tokens(const vision_spec *v, int width, int height, vision_image *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (width < 1 || height < 1 || width > VISION_MAX_SIDE || height > VISION_MAX_SIDE) {
        snprintf(err, errlen, "an image of %d x %d px: each side must be 1 to %d px", width, height,
                 VISION_MAX_SIDE);
        return -1;
    }
    out->width = width;
    out->height = height;
    int side = v->image / v->patch;          /* patches across a tile */
    int tile_tokens = side * side / (v->merge * v->merge); /* LM tokens of one tile */
    out->encoder_seq = side * side + v->cls;
    switch (v->family) {
    case VF_FIXED:
        out->resized_w = out->resized_h = v->image;
        out->grid_w = out->grid_h = out->tiles = 1;
        out->tokens = tile_tokens;
        break;
    case VF_ANYRES: {
        int b = anyres_best(v, height, width);
        out->resized_h = v->pin_h[b];
        out->resized_w = v->pin_w[b];
        out->grid_h = v->pin_h[b] / v->image;
        out->grid_w = v->pin_w[b] / v->image;
        out->tiles = out->grid_h * out->grid_w + 1; /* + the base image */
        anyres_unpad(height, width, side / v->merge, out->grid_h, out->grid_w, &out->unpadded_h,
                     &out->unpadded_w);
        out->newlines = out->unpadded_h;
        out->tokens = tile_tokens + out->unpadded_h * out->unpadded_w + out->newlines;
        break;
    }
    case VF_NATIVE: {
        if ((double)(width > height ? width : height) / (width > height ? height : width) > 200) {
            snprintf(err, errlen, "an image of %d x %d px: the preprocessor refuses an aspect ratio above 200",
                     width, height);
            return -1;
        }
        int factor = v->patch * v->merge;
        vision_smart_resize(height, width, factor, v->min_pixels, v->max_pixels, &out->resized_h,
                            &out->resized_w);
        double rounded = py_round((double)height / factor) * py_round((double)width / factor) * factor * factor;
        out->clamped = rounded > v->max_pixels ? 1 : rounded < v->min_pixels ? -1 : 0;
        out->grid_h = out->resized_h / factor;
        out->grid_w = out->resized_w / factor;
        out->tiles = 1;
        out->encoder_seq = (out->resized_h / v->patch) * (out->resized_w / v->patch);
        out->tokens = out->grid_h * out->grid_w;
        break;
    }
    case VF_TILES: {
        int gi, gj;
        intern_grid(width, height, v->image, v->min_tiles, v->max_tiles, &gi, &gj);
        out->grid_w = gi;
        out->grid_h = gj;
        out->resized_w = gi * v->image;
        out->resized_h = gj * v->image;
        out->tiles = gi * gj + (gi * gj > 1); /* the thumbnail only when there is more than one tile */
        out->tokens = out->tiles * tile_tokens;
        break;
    }
    case VF_CROSS: {
        int a = 1, b = 1;
        mllama_canvas(width, height, v->image, v->max_tiles, &a, &b);
        out->grid_h = a;
        out->grid_w = b;
        out->resized_h = a * v->image;
        out->resized_w = b * v->image;
        out->tiles = a * b;
        out->tokens = out->tiles * out->encoder_seq; /* every tile's patches and class token */
        out->cross_tokens = out->tokens;
        break;
    }
    }
    out->encoder_tokens = out->tiles * out->encoder_seq;
    out->projector_tokens = v->family == VF_CROSS ? out->encoder_tokens
                                                   : (out->encoder_tokens - out->tiles * v->cls) /
                                                         (v->merge * v->merge);
    /* one <|image|> token in the text of the cross family; the others' template delimiters */
    out->context_tokens = v->family == VF_CROSS ? 1 : out->tokens + vision_delimiter_tokens(v);
    return 0;
}

int vision_delimiter_tokens(const vision_spec *v)
{
    return v->family == VF_NATIVE || v->family == VF_TILES ? 2 : 0;
}

/* ------------------------------------------------------------ encoder */

static double layer_params(const vision_spec *v)
{
    double d = v->hidden;
    return 4 * d * d + (v->gated ? 3 : 2) * d * v->ffn;
}

static double patch_embed_params(const vision_spec *v)
{
    int temporal = v->family == VF_NATIVE ? 2 : 1; /* Qwen2-VL embeds two frames per patch (an image twice) */
    return 3.0 * temporal * v->patch * v->patch * v->hidden;
}

static double projector_params(const vision_spec *v)
{
    return v->proj_mid ? (double)v->proj_in * v->proj_mid + (double)v->proj_mid * v->proj_out
                       : (double)v->proj_in * v->proj_out;
}

double vision_encoder_params(const vision_spec *v)
{
    return v->layers * layer_params(v) + patch_embed_params(v) + projector_params(v);
}

//> encoder_flops
void vision_encoder_flops(const vision_spec *v, const vision_image *im, dtype act, vision_encoder_cost *out)
{
    memset(out, 0, sizeof *out);
    double d = v->hidden, n = im->encoder_tokens;
    double patches = im->encoder_tokens - (double)im->tiles * v->cls;
    out->params = vision_encoder_params(v);
    out->flop_linear = 2 * v->layers * layer_params(v) * n + 2 * patch_embed_params(v) * patches;
    /* full attention spans one tile, or the whole image (native), or every
     * tile together (the global layers of the cross family) */
    double full_span = v->family == VF_CROSS ? n : im->encoder_seq;
    double windowed = v->window ? v->layers - v->full_layers : 0;
    double full = v->layers - windowed;
    double window_span = fmin(v->window, im->encoder_seq);
    out->flop_attention = 4 * n * d * (full * full_span + windowed * window_span);
    out->flop_projector = 2 * projector_params(v) * im->projector_tokens;
    out->flop = out->flop_linear + out->flop_attention + out->flop_projector;
    /* weights once; each matrix reads its input and writes its output,
     * attention reads q, k, v and writes its output */
    double ab = dtype_bytes(act), g2 = v->gated ? 2 : 1;
    out->bytes = out->params * ab + v->layers * n * ab * (12 * d + (g2 + 1) * v->ffn);
}
//< encoder_flops

int vision_encoder_time(const vision_spec *v, const vision_image *im, const gpu_spec *g, precision prec,
                        double efficiency, int tp, vision_encoder_cost *out, char *err, size_t errlen)
{
    vision_encoder_flops(v, im, prec.act, out);
    out->params = vision_encoder_params(v);
    out->bytes += out->params * (dtype_bytes(prec.weights) - dtype_bytes(prec.act));
    double peak = gpu_peak_flops(g, prec.compute) * efficiency;
    if (!(peak > 0) || !(efficiency > 0 && efficiency <= 1)) {
        snprintf(err, errlen, "%s has no dense %s rate (or the efficiency is not in (0, 1])", g->key,
                 dtype_name(prec.compute));
        return -1;
    }
    if (tp > 1 && !gpu_has_links(g)) {
        snprintf(err, errlen, "%s has no link figures for a tensor-parallel group", g->key);
        return -1;
    }
    /* the whole encoder as one lump of GEMM work: its kernels' fixed costs are not counted */
    rate_class c = rate_class_gemm(prec.weights, prec.compute);
    /* (its bytes, weights and activations, are one sum: counted as activations here) */
    op_cost encoder = op_lump("vision_encoder", c, out->flop, 0, 0, out->bytes);
    out->time = price_op(&encoder, g, peak, 1, NULL);
    /* Megatron split of every layer: two all-reduces of the residual stream per layer */
    op_cost residual_ar = {.name = "encoder_allreduce",
                           .kind = OP_ALLREDUCE,
                           .comm_bytes = im->encoder_tokens * v->hidden * dtype_bytes(prec.act)};
    out->time_comm = tp > 1 ? 2.0 * v->layers * price_op(&residual_ar, g, peak, tp, NULL) : 0;
    op_cost shard = op_lump("vision_encoder_shard", c, out->flop / tp, 0, 0, out->bytes / tp);
    out->time_sharded = price_op(&shard, g, peak, tp, NULL) + out->time_comm;
    return 0;
}

/* ------------------------------------------------------------ requests */

vision_request vision_request_default(const vision_spec *v, const model_spec *lm, const gpu_spec *g)
{
    vision_request q;
    memset(&q, 0, sizeof q);
    q.vision = v;
    q.lm = lm;
    q.gpu = g;
    q.prec = precision_uniform(DT_BF16);
    q.tp = 1;
    q.width = 1920;
    q.height = 1080;
    q.images = 1;
    q.text_tokens = 200;
    q.output_tokens = 256;
    q.budget_tokens = 8192;
    q.preprocess = 0;
    q.encoder_efficiency = q.lm_efficiency = 1.0;
    q.ttft_target = 1.0;
    q.policy = memory_policy_default();
    return q;
}

/* Time and FLOPs of the logits ops (and their gather) in a step shape. */
/* The cross-attention layers of a cross-family LM over one step: `batch`
 * sequences of `tokens` text-side tokens each, attending `cross` image tokens
 * each; image_kv: whether the step also projects the image tokens into K and V
 * (prefill) rather than reading them from the cache (decode). */
static void cross_layers_cost(const vision_request *q, const gpu_spec *g, int batch, double tokens, double cross,
                              int image_kv, double *flop, double *time)
{
    const model_spec *m = q->lm;
    double d = m->hidden, kvd = (double)m->kv_heads * m->head_dim, tp = q->tp;
    double wb = dtype_bytes(q->prec.weights), kb = dtype_bytes(q->prec.kv), ab = dtype_bytes(q->prec.act);
    double L = q->vision->cross_layers;
    double weights = (2 * d * d + 2 * d * kvd + 3 * d * m->ffn) * wb / tp;
    double f = batch * (2 * tokens * (2 * d * d + 3 * d * m->ffn) + 4 * tokens * cross * d) / tp;
    double kv = batch * 2 * cross * kvd * kb / tp; /* written in prefill, read in decode */
    if (image_kv)
        f += batch * 2 * cross * 2 * d * kvd / tp;
    double act = batch * tokens * d * ab * 8;
    *flop = L * f;
    /* each cross layer as one lump of GEMM work: its kernels' fixed costs are not counted */
    op_cost layer = op_lump("cross_layer", rate_class_gemm(q->prec.weights, q->prec.compute), f, weights, kv, act);
    op_cost residual_ar = {.name = "cross_allreduce", .kind = OP_ALLREDUCE, .comm_bytes = batch * tokens * d * ab};
    *time = L * price_op(&layer, g, gpu_peak_flops(g, q->prec.compute), q->tp, NULL) +
            (q->tp > 1 ? 2 * L * price_op(&residual_ar, g, 0, q->tp, NULL) : 0);
}

//> prefill_time
int vision_prefill_time(const vision_request *q, int batch, int prompt, int cross_tokens, double *flop,
                        double *time, char *err, size_t errlen)
{
    gpu_spec g = gpu_derated(q->gpu, 1.0, q->lm_efficiency);
    /* a prefill samples only the last position of each sequence */
    step_shape s = prefill_shape(batch, 0, prompt, q->tp, q->prec);
    step_cost c;
    if (decoder_step_cost(q->lm, &g, &s, &c, err, errlen) != 0)
        return -1;
    double f = c.flop, t = c.time;
    if (cross_tokens > 0) {
        double cf, ct;
        cross_layers_cost(q, &g, batch, prompt, cross_tokens, 1, &cf, &ct);
        f += cf;
        t += ct;
    }
    if (flop)
        *flop = f;
    *time = t;
    return 0;
}
//< prefill_time

/* The efficiency in (0, 1] at which time_at(eff) = target; time_at falls as eff grows. */
static int solve_efficiency(double (*time_at)(const vision_request *, double), const vision_request *q,
                            double target, double *out)
{
    if (!(time_at(q, 1.0) <= target))
        return -1;
    double lo = 1e-4, hi = 1.0;
    if (time_at(q, lo) < target)
        return -1;
    for (int i = 0; i < 100 && hi - lo > 1e-12; i++) {
        double mid = 0.5 * (lo + hi);
        if (time_at(q, mid) > target)
            lo = mid;
        else
            hi = mid;
    }
    *out = 0.5 * (lo + hi);
    return 0;
}

static double encoder_time_at(const vision_request *q, double eff)
{
    vision_request r = *q;
    r.encoder_efficiency = eff;
    vision_estimate e;
    char err[256];
    return vision_estimate_compute(&r, &e, err, sizeof err) == 0 ? e.encoder_time : NAN;
}

static double prefill_time_at(const vision_request *q, double eff)
{
    vision_request r = *q;
    r.lm_efficiency = eff;
    vision_estimate e;
    char err[256];
    return vision_estimate_compute(&r, &e, err, sizeof err) == 0 ? e.prefill_time : NAN;
}

//> calibrate
int vision_calibrate(const vision_request *q, double encoder_s, double prefill_s, double *encoder_efficiency,
                     double *lm_efficiency, char *err, size_t errlen)
{
    /* bisect each share of the peak until the model's own time equals the measured one */
    if (solve_efficiency(encoder_time_at, q, encoder_s, encoder_efficiency) != 0 ||
        solve_efficiency(prefill_time_at, q, prefill_s, lm_efficiency) != 0) {
        snprintf(err, errlen, "a measured time (encoder %g s, prefill %g s) is shorter than the roofline at peak "
                              "or longer than at 0.01%% of it",
                 encoder_s, prefill_s);
        return -1;
    }
    return 0;
}
//< calibrate

static int request_check(const vision_request *q, char *err, size_t errlen)
{
    if (!q->vision || !q->lm || !q->gpu) {
        snprintf(err, errlen, "a request needs a vision model, its LM and a GPU");
        return -1;
    }
    if (q->images < 0 || q->images > 1000 || q->text_tokens < 0 || q->output_tokens < 1 || q->budget_tokens < 1 ||
        q->tp < 1 || !(q->preprocess >= 0) || !(q->ttft_target > 0) || !(q->encoder_efficiency > 0) ||
        q->encoder_efficiency > 1 || !(q->lm_efficiency > 0) || q->lm_efficiency > 1) {
        snprintf(err, errlen,
                 "a request needs 0-1000 images, text tokens >= 0, output tokens >= 1, a budget >= 1, tp >= 1, "
                 "preprocessing >= 0 s, a TTFT target > 0 and efficiencies in (0, 1]");
        return -1;
    }
    if (q->images + q->text_tokens < 1) {
        snprintf(err, errlen, "a request needs at least one image or one text token");
        return -1;
    }
    return 0;
}

/* Encoder seconds for `requests` requests' images spread over the tp GPUs,
 * plus the all-gather that gives every GPU all their embeddings. */
static double encoder_span(const vision_request *q, const vision_estimate *e, int requests)
{
    if (q->images == 0)
        return 0;
    long images = (long)requests * q->images;
    long per_gpu = (images + q->tp - 1) / q->tp;
    double embed_bytes = (double)images * e->image.projector_tokens * q->lm->hidden * dtype_bytes(q->prec.act);
    op_cost gather = {.name = "embedding_gather", .kind = OP_ALLGATHER, .comm_bytes = embed_bytes};
    return per_gpu * e->encoder.time + (q->tp > 1 ? price_op(&gather, q->gpu, 0, q->tp, NULL) : 0);
}

static int decode_first(const vision_request *q, const vision_estimate *e, int batch, double *t, char *err,
                        size_t errlen)
{
    gpu_spec g = gpu_derated(q->gpu, 1.0, q->lm_efficiency);
    step_shape s = decode_shape(batch, e->prompt_tokens, q->tp, q->prec);
    step_cost c;
    if (decoder_step_cost(q->lm, &g, &s, &c, err, errlen) != 0)
        return -1;
    *t = c.time;
    if (e->cross_tokens > 0) {
        double cf, ct;
        cross_layers_cost(q, &g, batch, 1, e->cross_tokens, 0, &cf, &ct);
        *t += ct;
    }
    return 0;
}

//> estimate
int vision_estimate_compute(const vision_request *q, vision_estimate *out, char *err, size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (request_check(q, err, errlen) != 0)
        return -1;
    vision_estimate e;
    memset(&e, 0, sizeof e);
    const vision_spec *v = q->vision;
    if (q->images > 0) {
        if (vision_image_tokens(v, q->width, q->height, &e.image, err, errlen) != 0)
            return -1;
        if (vision_encoder_time(v, &e.image, q->gpu, q->prec, q->encoder_efficiency, q->tp, &e.encoder, err,
                                errlen) != 0)
            return -1;
    }
    e.prompt_tokens = q->text_tokens + q->images * e.image.context_tokens;
    e.context_tokens = e.prompt_tokens + q->output_tokens;
    e.cross_tokens = q->images * e.image.cross_tokens;
    const model_spec *m = q->lm;

    /* memory: the encoder is replicated on every GPU; cross layers are split like the LM */
    double cross_layer_weights =
        v->cross_layers * (2.0 * m->hidden * m->hidden + 2.0 * m->hidden * m->kv_heads * m->head_dim +
                           3.0 * m->hidden * m->ffn) * dtype_bytes(q->prec.weights) / q->tp;
    e.vision_bytes = vision_encoder_params(v) * dtype_bytes(q->prec.weights) + cross_layer_weights;
    double cross_kv = e.cross_tokens * 2.0 * v->cross_layers * m->kv_heads * m->head_dim * dtype_bytes(q->prec.kv);
    e.kv_bytes = kv_bytes_per_sequence(m, q->prec.kv, e.context_tokens) + cross_kv;
    /* cross KV has the self-attention KV's shape per layer: as context tokens it is cross * cross_layers / layers */
    int cross_equiv = (int)ceil((double)e.cross_tokens * v->cross_layers / m->layers);
    memory_policy pol = q->policy;
    pol.activation_tokens = q->budget_tokens;
    resident_model rm = {m, q->prec, q->tp};
    e.fit_context = e.context_tokens + cross_equiv;
    if (memory_fit(q->gpu, pol, &rm, 1, e.vision_bytes, 1, e.fit_context, &e.fit, err, errlen) != 0)
        return -1;
    e.max_batch = e.fit.max_batch;

    /* one request alone */
    if (q->images > 0)
        e.encoder_time = encoder_span(q, &e, 1);
    if (vision_prefill_time(q, 1, e.prompt_tokens, e.cross_tokens, &e.prefill_flop, &e.prefill_time, err, errlen) ||
        decode_first(q, &e, 1, &e.decode_time, err, errlen))
        return -1;
    /* the prefill's last position yields the first token */
    e.ttft = q->preprocess + e.encoder_time + e.prefill_time;
    e.budget_requests = q->budget_tokens / e.prompt_tokens > 0 ? q->budget_tokens / e.prompt_tokens : 1;
    if (!e.fit.fits) {
        *out = e;
        return 0;
    }

    /* the most requests per prefill step, within the budget and memory,
     * whose time to first token meets the target */
    int r = e.budget_requests < e.max_batch ? e.budget_requests : e.max_batch;
    for (; r >= 1; r--) {
        double t_pre;
        if (vision_prefill_time(q, r, e.prompt_tokens, e.cross_tokens, NULL, &t_pre, err, errlen) != 0)
            return -1;
        double t_enc = encoder_span(q, &e, r);
        double ttft = q->preprocess + t_enc + t_pre;
        if (ttft <= q->ttft_target) {
            e.step_requests = r;
            e.step_ttft = ttft;
            e.requests_per_s = r / (t_enc + t_pre);
            break;
        }
    }
    *out = e;
    return 0;
}
//< estimate
