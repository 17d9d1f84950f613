/* Images as tokens: token counts against each preprocessor's rule worked by
 * hand, encoder FLOPs counted by hand from the configs, KV and memory from
 * the GPU row's capacity, and the vision table's parser. */
#include "memory.h"
#include "test_text.h"
#include "transformer.h"
#include "vision.h"

#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "scratch_dir.h"

static vision_spec row(const char *key)
{
    vision_spec v;
    cr_assert_eq(vision_lookup(key, &v), 0, "no vision row %s", key);
    return v;
}

static vision_image tokens(const char *key, int w, int h)
{
    vision_spec v = row(key);
    vision_image im;
    char err[256];
    cr_assert_eq(vision_image_tokens(&v, w, h, &im, err, sizeof err), 0, "%s", err);
    return im;
}

#define assert_rel(got, want, tol)                                                                          \
    do {                                                                                                    \
        double g_ = (got), w_ = (want);                                                                     \
        cr_assert(fabs(g_ - w_) <= (tol) * fabs(w_), "got %.10g, want %.10g (rel tol %g)", g_, w_, (double)(tol)); \
    } while (0)

/* ---------------------------------------------------------------- tables */

Test(vision, table_has_every_family_with_sources_and_its_lm)
{
    vision_table t;
    char err[512];
    cr_assert_eq(vision_table_builtin(&t, err, sizeof err), 0, "%s", err);
    const char *keys[] = {"llava-1.5-7b", "llava-next-7b", "qwen2-vl-7b", "qwen2.5-vl-7b", "internvl2.5-8b",
                          "llama3.2-11b-vision"};
    for (int i = 0; i < 6; i++) {
        const vision_spec *v = vision_find(&t, keys[i]);
        cr_assert(v, "missing %s", keys[i]);
        cr_assert(strstr(v->source, "https://huggingface.co/") != NULL, "%s has no config URL", keys[i]);
        model_spec m;
        cr_assert_eq(vision_lm_lookup(v, &m), 0, "no LM %s for %s", v->lm, keys[i]);
    }
    vision_table_free(&t);
    /* Qwen2-VL-7B's LM from its config: 28 layers, hidden 3584, 4 KV heads */
    vision_spec q = row("qwen2-vl-7b");
    model_spec m;
    vision_lm_lookup(&q, &m);
    cr_assert(m.layers == 28 && m.hidden == 3584 && m.kv_heads == 4 && m.vocab == 152064);
    cr_assert_float_eq(q.min_pixels, 3136, 0);
    cr_assert_float_eq(q.max_pixels, 12845056, 0);
}

Test(vision, malformed_rows_name_file_line_and_field)
{
    vision_spec good = row("llava-1.5-7b");
    (void)good;
    const char *hdr = "key\tname\tfamily\tlm\timage\tpatch\tmerge\tcls\tlayers\thidden\theads\tffn\tgated\twindow\t"
                      "full_layers\tproj_in\tproj_mid\tproj_out\tcross_layers\ttiling\tsource\n";
    char text[2048];
    vision_table t;
    char err[512];
    snprintf(text, sizeof text, "# comment\n%sx\tX\tsquare\tlm\t336\t14\t1\t1\t23\t1024\t16\t4096\t0\t0\t0\t1024\t"
                                "4096\t4096\t0\t-\tsrc\n", hdr);
    cr_assert_eq(vision_table_parse(text, "v.tsv", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "v.tsv:3: field 'family'") != NULL, "%s", err);
    cr_assert(strstr(err, "fixed, anyres") != NULL, "%s", err);
    cr_assert_eq(t.n, 0);
    snprintf(text, sizeof text, "%sx\tX\tnative\tlm\t-\t14\t2\t0\t32\t1280\t16\t5120\t0\t0\t0\t5120\t5120\t3584\t0\t"
                                "9-3\tsrc\n", hdr);
    cr_assert_eq(vision_table_parse(text, "v.tsv", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "v.tsv:2: field 'tiling'") != NULL, "%s", err);
    snprintf(text, sizeof text, "%sx\tX\tfixed\tlm\t336\t14\t1\t1\t23\n", hdr);
    cr_assert_eq(vision_table_parse(text, "v.tsv", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "v.tsv:2: field 'hidden'") != NULL && strstr(err, "9 fields") != NULL, "%s", err);
    cr_assert_eq(vision_table_parse("key\tname\n", "v.tsv", &t, err, sizeof err), -1);
    cr_assert(strstr(err, "v.tsv:1:") != NULL, "%s", err);
}

/* The LLaVA-1.5 row of the built-in table, for tables written by the tests. */
#define VISION_HEADER                                                                                         \
    "key\tname\tfamily\tlm\timage\tpatch\tmerge\tcls\tlayers\thidden\theads\tffn\tgated\twindow\t"            \
    "full_layers\tproj_in\tproj_mid\tproj_out\tcross_layers\ttiling\tsource\n"
#define LLAVA_ROW(key, image, tiling)                                                                         \
    key "\tX\tfixed\tlm\t" image "\t14\t1\t1\t23\t1024\t16\t4096\t0\t0\t0\t1024\t4096\t4096\t0\t" tiling "\tsrc\n"

static int parse_text(const char *text, char *err, size_t errlen)
{
    vision_table t;
    int rc = vision_table_parse(text, "v.tsv", &t, err, errlen);
    vision_table_free(&t);
    return rc;
}

Test(vision, values_outside_a_plausible_range_are_refused_with_file_line)
{
    char err[512];
    /* the row as written parses: line 1 header, line 2 the row */
    cr_assert_eq(parse_text(VISION_HEADER LLAVA_ROW("x", "336", "-"), err, sizeof err), 0, "%s", err);
    /* a crop side of a million px, a signed or hex number, an exponent where a whole number goes */
    const char *bad_image[] = {"1000000", "+336", "0x150", "3.36e2", " 336"};
    for (size_t i = 0; i < sizeof bad_image / sizeof bad_image[0]; i++) {
        char text[1024];
        snprintf(text, sizeof text, "# c\n" VISION_HEADER "x\tX\tfixed\tlm\t%s\t14\t1\t1\t23\t1024\t16\t4096\t0\t0\t0\t"
                                    "1024\t4096\t4096\t0\t-\tsrc\n", bad_image[i]);
        cr_expect_eq(parse_text(text, err, sizeof err), -1, "image '%s' accepted", bad_image[i]);
        cr_expect(strstr(err, "v.tsv:3: field 'image'") != NULL, "%s", err);
    }
    /* 65 tiles is one over the 64 a row may have; 1e300 pixels is no image */
    const char *tiles = "# c\n" VISION_HEADER "t\tT\ttiles\tlm\t448\t14\t2\t1\t24\t1024\t16\t4096\t0\t0\t0\t4096\t"
                        "4096\t4096\t0\t1-65\tsrc\n";
    cr_expect_eq(parse_text(tiles, err, sizeof err), -1);
    cr_expect(strstr(err, "v.tsv:3: field 'tiling': '65' must be from 1 to 64") != NULL, "%s", err);
    const char *pixels = VISION_HEADER "q\tQ\tnative\tlm\t-\t14\t2\t0\t32\t1280\t16\t5120\t0\t0\t0\t5120\t5120\t"
                         "3584\t0\t3136-1e300\tsrc\n";
    cr_expect_eq(parse_text(pixels, err, sizeof err), -1);
    cr_expect(strstr(err, "v.tsv:2: field 'tiling': '1e300'") != NULL, "%s", err);
    /* a 3 x 3 grid of 336 px tiles is a pinpoint; "+336" is not a number; 9 x 9 = 81 tiles is too many */
    const char *pins[] = {"1008x1008", "+336x672", "3024x3024"};
    const int ok[] = {1, 0, 0};
    for (int i = 0; i < 3; i++) {
        char text[1024];
        snprintf(text, sizeof text, VISION_HEADER "n\tN\tanyres\tlm\t336\t14\t1\t1\t23\t1024\t16\t4096\t0\t0\t0\t1024\t"
                                    "4096\t4096\t0\t336x672,%s\tsrc\n", pins[i]);
        int rc = parse_text(text, err, sizeof err);
        cr_expect_eq(rc, ok[i] ? 0 : -1, "pinpoint %s: %s", pins[i], rc ? err : "accepted");
        if (!ok[i])
            cr_expect(strstr(err, "v.tsv:2: field 'tiling'") != NULL, "%s", err);
    }
    /* a key repeated in another case is named on its second line, with the first */
    cr_expect_eq(parse_text(VISION_HEADER LLAVA_ROW("x", "336", "-") LLAVA_ROW("X", "336", "-"), err, sizeof err), -1);
    cr_expect(strstr(err, "v.tsv:3: field 'key': 'X' appears twice (first on line 2)") != NULL, "%s", err);
}

Test(vision, files_that_are_not_tables_are_refused)
{
    char dir[SCRATCH_DIR_SIZE], path[4096], err[512];
    scratch_dir_make(dir, "vision");
    vision_table t;
    cr_assert_eq(vision_table_load(dir, &t, err, sizeof err), -1);
    cr_expect(strstr(err, "is a directory") != NULL, "%s", err);
    cr_expect_eq(t.n, 0);
    /* a NUL byte inside the third line's row would hide the rest of the file */
    snprintf(path, sizeof path, "%s/nul.tsv", dir);
    char text[2048];
    int len = snprintf(text, sizeof text, "# c\n" VISION_HEADER LLAVA_ROW("x", "336", "-") LLAVA_ROW("y", "336", "-"));
    text[strlen("# c\n" VISION_HEADER) + 2] = '\0';
    write_bytes(path, text, (size_t)len);
    cr_assert_eq(vision_table_load(path, &t, err, sizeof err), -1);
    char want[4200];
    snprintf(want, sizeof want, "%s:3: a NUL byte", path);
    cr_expect(strstr(err, want) != NULL, "want '%s' in '%s'", want, err);
    cr_expect_eq(t.n, 0);
    /* the same file without the NUL loads both rows */
    text[strlen("# c\n" VISION_HEADER) + 2] = 'X';
    write_bytes(path, text, (size_t)len);
    cr_assert_eq(vision_table_load(path, &t, err, sizeof err), 0, "%s", err);
    cr_expect_eq(t.n, 2);
    vision_table_free(&t);
    cr_assert_eq(vision_table_load("/dev/zero", &t, err, sizeof err), -1);
    cr_expect(strstr(err, "larger than") != NULL, "%s", err);
    scratch_dir_remove(dir);
}

/* ---------------------------------------------------------------- tokens */

Test(vision, llava_15_is_576_whatever_the_size)
{
    /* (336 / 14)^2 = 24^2 = 576 (HF config image_seq_length 576); the encoder
     * sees 576 patches + 1 class token = 577 */
    int sizes[][2] = {{336, 336}, {1920, 1080}, {20, 10}, {8000, 8000}};
    for (int i = 0; i < 4; i++) {
        vision_image im = tokens("llava-1.5-7b", sizes[i][0], sizes[i][1]);
        cr_assert_eq(im.tokens, 576);
        cr_assert_eq(im.encoder_tokens, 577);
    }
}

Test(vision, llava_next_anyres_by_hand)
{
    /* 672 x 672: pinpoint 672x672 keeps all 451584 px (scale 1); grid 2x2 of
     * 24-patch tiles = 48 x 48 features; aspects equal, no padding removed;
     * 48*48 + 48 newlines + 576 base = 2928, not 5 * 576 = 2880 */
    vision_image im = tokens("llava-next-7b", 672, 672);
    cr_assert_eq(im.tokens, 2928);
    cr_assert(im.grid_w == 2 && im.grid_h == 2 && im.tiles == 5);
    /* 1920 x 1080: effective pixels per pinpoint: 336x672 -> 597*336, 672x336
     * -> 336*189, 672x672 -> 672*378 = 254016 (the most), 1008x336 -> 336*189,
     * 336x1008 -> 597*336.  Grid 2x2 -> 48x48; the image is wider (1.78 > 1):
     * new height = 1080 * 48/1920 = 27, padding (48-27)/2 = 10 rows each side,
     * 28 rows left: 28*48 + 28 + 576 = 1948 */
    im = tokens("llava-next-7b", 1920, 1080);
    cr_assert_eq(im.unpadded_h, 28);
    cr_assert_eq(im.unpadded_w, 48);
    cr_assert_eq(im.tokens, 1948);
    /* 336 x 336: 336x672 and 672x336 both keep all 112896 px with equal
     * waste; the first wins: grid 1 down x 2 across = 24 x 48; width
     * 336 * 24/336 = 24, padding 12 columns each side: 24*24 + 24 + 576 = 1176 */
    im = tokens("llava-next-7b", 336, 336);
    cr_assert(im.grid_h == 1 && im.grid_w == 2);
    cr_assert_eq(im.tokens, 1176);
    /* wide 1000 x 200: only 336x1008 keeps all 200000 px (scale 1.008): grid
     * 1x3 = 24 x 72; height 200 * 72/1000 = 14.4 -> 14, padding 5: 14 rows:
     * 14*72 + 14 + 576 = 1598 */
    cr_assert_eq(tokens("llava-next-7b", 1000, 200).tokens, 1598);
    /* tiny 100 x 50: every pinpoint keeps all 5000 px; least waste is
     * 336x672 (225792 - 5000): 24 x 48, aspect 2 = 2, nothing removed:
     * 1152 + 24 + 576 = 1752 tokens for a 100 x 50 image */
    cr_assert_eq(tokens("llava-next-7b", 100, 50).tokens, 1752);
    /* huge 8000 x 8000: 672x672 keeps the most (672^2): 2928 as 672 x 672 */
    cr_assert_eq(tokens("llava-next-7b", 8000, 8000).tokens, 2928);
}

Test(vision, qwen2_vl_smart_resize_by_hand)
{
    /* 1920 x 1080: round(1080/28 = 38.57) = 39, round(1920/28 = 68.57) = 69;
     * 1092 * 1932 = 2,109,744 px is inside [3136, 12845056]: 39 * 69 = 2691
     * (vLLM issue #41267 reports 2718 prompt tokens for one 1080p image:
     * 2691 + 27 text and special tokens) */
    vision_image im = tokens("qwen2-vl-7b", 1920, 1080);
    cr_assert(im.resized_w == 1932 && im.resized_h == 1092);
    cr_assert_eq(im.tokens, 2691);
    cr_assert_eq(im.encoder_tokens, 78 * 138); /* 14 px patches before the 2x2 merge */
    cr_assert_eq(im.clamped, 0);
    /* square 448: 16 x 16 = 256 */
    cr_assert_eq(tokens("qwen2-vl-7b", 448, 448).tokens, 256);
    /* wide 1000 x 200: round(7.14) = 7, round(35.7) = 36: 252 */
    cr_assert_eq(tokens("qwen2-vl-7b", 1000, 200).tokens, 252);
    /* tiny 40 x 20: rounds to 28 x 28 = 784 < 3136: beta = sqrt(3136/800) =
     * 1.9799; ceil(20 * 1.9799 / 28 = 1.414) = 2, ceil(40 * 1.9799 / 28 =
     * 2.83) = 3: 56 x 84 px, 2 * 3 = 6 tokens */
    im = tokens("qwen2-vl-7b", 40, 20);
    cr_assert(im.resized_h == 56 && im.resized_w == 84);
    cr_assert_eq(im.tokens, 6);
    cr_assert_eq(im.clamped, -1);
    /* huge 10000 x 5000: beta = sqrt(5e7 / 12845056) = 1.97295; floor(5000 /
     * 1.97295 / 28 = 90.5) = 90, floor(10000 / 1.97295 / 28 = 181.0) = 181:
     * 90 * 181 = 16290, under the 16384 = 12845056 / 784 ceiling */
    im = tokens("qwen2-vl-7b", 10000, 5000);
    cr_assert_eq(im.tokens, 16290);
    cr_assert_eq(im.clamped, 1);
    /* the published range, 4 to 16384 tokens per image (Qwen2-VL model card) */
    cr_assert_eq(tokens("qwen2-vl-7b", 56, 56).tokens, 4);
    cr_assert(tokens("qwen2-vl-7b", 99999, 99999).tokens <= 16384);
    vision_spec q = row("qwen2-vl-7b");
    vision_image bad;
    char err[256];
    cr_assert_eq(vision_image_tokens(&q, 10000, 20, &bad, err, sizeof err), -1); /* aspect 500 > 200 */
    cr_assert(strstr(err, "aspect") != NULL, "%s", err);
    cr_assert_eq(vision_image_tokens(&q, 0, 20, &bad, err, sizeof err), -1);
}

Test(vision, internvl_tiles_by_hand)
{
    /* 448 x 448: aspect 1 matches 1x1 (diff 0); 2x2 ties but 448^2 = 200704
     * is not above half of 4 * 448^2: one tile, no thumbnail: 256 */
    vision_image im = tokens("internvl2.5-8b", 448, 448);
    cr_assert(im.tiles == 1 && im.tokens == 256);
    /* 1000 x 1000: 1e6 > 0.5 * 9 * 200704 = 903168, so 3x3 wins the tie
     * (4x4 = 16 > 12 is not allowed): 9 tiles + thumbnail = 10 * 256 = 2560 */
    im = tokens("internvl2.5-8b", 1000, 1000);
    cr_assert(im.grid_w == 3 && im.grid_h == 3);
    cr_assert_eq(im.tokens, 2560);
    /* 1920 x 1080 (aspect 1.78): 2x1 and 4x2 (aspect 2) are closest (1.5 is
     * 0.28 away, 2 is 0.22); 2073600 > 0.5 * 8 * 200704, so 4x2: 8 tiles +
     * thumbnail = 9 * 256 = 2304 */
    im = tokens("internvl2.5-8b", 1920, 1080);
    cr_assert(im.grid_w == 4 && im.grid_h == 2);
    cr_assert_eq(im.tokens, 2304);
    /* tiny 100 x 50 (aspect 2): 2x1, and 5000 px is too few for 4x2: 2 tiles
     * + thumbnail = 768 tokens */
    cr_assert_eq(tokens("internvl2.5-8b", 100, 50).tokens, 768);
    /* wide 4000 x 500 (aspect 8): 8x1 exactly: 9 * 256 = 2304; huge square: 2560 */
    cr_assert_eq(tokens("internvl2.5-8b", 4000, 500).tokens, 2304);
    cr_assert_eq(tokens("internvl2.5-8b", 8000, 8000).tokens, 2560);
}

Test(vision, llama32_tiles_are_cross_attention_tokens)
{
    /* 1920 x 1080: no canvas of <= 4 tiles of 560 upscales (1120x1120 needs
     * 1920 -> 1120); the mildest downscale is 2x2: min(1120/1080, 1120/1920)
     * = 0.583 (1x2..1x4 give 0.519): 4 tiles * (40*40 + 1) = 6404 */
    vision_image im = tokens("llama3.2-11b-vision", 1920, 1080);
    cr_assert_eq(im.tiles, 4);
    cr_assert_eq(im.cross_tokens, 6404);
    cr_assert_eq(im.context_tokens, 1); /* one <|image|> token in the text */
    /* 560 x 560: 1x1 at scale 1 is the smallest canvas: 1601 */
    cr_assert_eq(tokens("llama3.2-11b-vision", 560, 560).cross_tokens, 1601);
    /* tiny 100 x 50: the smallest upscale is 5.6 (1x1 and the tall canvases);
     * the smallest area is 1x1: 1601 */
    cr_assert_eq(tokens("llama3.2-11b-vision", 100, 50).cross_tokens, 1601);
    /* wide 4000 x 500: 1 down x 4 across scales by min(560/500, 2240/4000) =
     * 0.56, the mildest downscale: 4 tiles; huge square: 2x2 */
    im = tokens("llama3.2-11b-vision", 4000, 500);
    cr_assert(im.grid_h == 1 && im.grid_w == 4 && im.cross_tokens == 6404);
    cr_assert_eq(tokens("llama3.2-11b-vision", 8000, 8000).tiles, 4);
}

/* ---------------------------------------------------------------- encoder */

Test(vision, encoder_flops_by_hand_llava)
{
    /* CLIP ViT-L/14-336, 23 layers run, d 1024, MLP 4096: a layer holds
     * 4 d^2 + 2 d * 4096 = 4,194,304 + 8,388,608 = 12,582,912 parameters.
     * 577 tokens: linear 2 * 23 * 12,582,912 * 577; patch embedding 3*14*14*1024
     * = 602,112 weights over 576 patches; attention 4 * 23 * 577^2 * 1024;
     * projector (1024*4096 + 4096*4096) = 20,971,520 over 576 tokens. */
    vision_spec v = row("llava-1.5-7b");
    vision_image im = tokens("llava-1.5-7b", 336, 336);
    vision_encoder_cost c;
    vision_encoder_flops(&v, &im, DT_BF16, &c);
    double linear = 2.0 * 23 * 12582912 * 577 + 2.0 * 602112 * 576;
    double attn = 4.0 * 23 * 577 * 577 * 1024;
    double proj = 2.0 * 20971520 * 576;
    assert_rel(c.flop_linear, linear, 1e-12);
    assert_rel(c.flop_attention, attn, 1e-12);
    assert_rel(c.flop_projector, proj, 1e-12);
    assert_rel(c.flop, linear + attn + proj, 1e-12);
    /* parameters: 23 * 12,582,912 + 602,112 + 20,971,520 = 310,980,608 */
    assert_rel(vision_encoder_params(&v), 310980608.0, 1e-12);
}

Test(vision, encoder_flops_by_hand_windowed_and_global)
{
    /* Qwen2.5-VL, 1080p: 78 x 138 = 10764 patches, d 1280, SwiGLU 3420:
     * a layer 4 * 1280^2 + 3 * 1280 * 3420 = 6,553,600 + 13,132,800 = 19,686,400.
     * Patch embedding 3 * 2 * 14 * 14 * 1280 = 1,505,280 (two frames).
     * 4 full layers over all 10764, 28 windowed over 8x8 = 64 patches. */
    vision_spec v = row("qwen2.5-vl-7b");
    vision_image im = tokens("qwen2.5-vl-7b", 1920, 1080);
    vision_encoder_cost c;
    vision_encoder_flops(&v, &im, DT_BF16, &c);
    double n = 10764;
    assert_rel(c.flop_linear, 2 * 32 * 19686400.0 * n + 2 * 1505280.0 * n, 1e-12);
    assert_rel(c.flop_attention, 4 * n * 1280 * (4 * n + 28 * 64), 1e-12);
    assert_rel(c.flop_projector, 2 * (5120.0 * 5120 + 5120.0 * 3584) * 2691, 1e-12);
    /* Qwen2-VL's 32 full layers cost far more attention on the same image */
    vision_spec v2 = row("qwen2-vl-7b");
    vision_encoder_cost c2;
    vision_encoder_flops(&v2, &im, DT_BF16, &c2);
    assert_rel(c2.flop_attention, 4 * n * n * 1280 * 32, 1e-12);

    /* Llama 3.2 Vision, 4 tiles of 1601: 32 local layers within a tile, 8
     * global layers over all 6404; a layer 4 * 1280^2 + 2 * 1280 * 5120 =
     * 19,660,800; projector 7680 x 4096 over all 6404 tokens */
    vision_spec m = row("llama3.2-11b-vision");
    im = tokens("llama3.2-11b-vision", 1920, 1080);
    vision_encoder_flops(&m, &im, DT_BF16, &c);
    double N = 6404;
    assert_rel(c.flop_linear, 2 * 40 * 19660800.0 * N + 2 * (3.0 * 14 * 14 * 1280) * (N - 4), 1e-12);
    assert_rel(c.flop_attention, 4 * N * 1280 * (8 * N + 32 * 1601), 1e-12);
    assert_rel(c.flop_projector, 2 * 7680.0 * 4096 * N, 1e-12);
}

Test(vision, encoder_time_is_compute_bound_and_tp_costs_all_reduces)
{
    gpu_spec g = gpu_builtin("h100");
    vision_spec v = row("qwen2.5-vl-7b");
    vision_image im = tokens("qwen2.5-vl-7b", 1920, 1080);
    vision_encoder_cost c;
    char err[256];
    cr_assert_eq(vision_encoder_time(&v, &im, &g, precision_uniform(DT_BF16), 1.0, 2, &c, err, sizeof err), 0, "%s",
                 err);
    /* FLOP / bytes is in the thousands, far past the H100's 295: time = FLOP / peak */
    assert_rel(c.time, c.flop / 989.4e12, 1e-12);
    /* split over 2: half the roofline plus 2 * 32 ring all-reduces of
     * 10764 * 1280 * 2 B = 27.56 MB: each 4.8 us + 2 * 1/2 * 27.56e6 / 450e9 */
    double ar = 4.8e-6 + 27.55584e6 / 450e9;
    assert_rel(c.time_comm, 64 * ar, 1e-9);
    assert_rel(c.time_sharded, c.time / 2 + 64 * ar, 1e-9);
    /* at half the efficiency the time doubles */
    vision_encoder_cost h;
    vision_encoder_time(&v, &im, &g, precision_uniform(DT_BF16), 0.5, 1, &h, err, sizeof err);
    assert_rel(h.time, 2 * c.time, 1e-12);
}

/* ---------------------------------------------------------------- requests */

Test(vision, kv_per_request_and_memory_from_the_gpu_row)
{
    gpu_spec g = gpu_builtin("h100");
    vision_spec v = row("llava-1.5-7b");
    model_spec m;
    vision_lm_lookup(&v, &m);
    vision_request q = vision_request_default(&v, &m, &g);
    vision_estimate e;
    char err[512];
    cr_assert_eq(vision_estimate_compute(&q, &e, err, sizeof err), 0, "%s", err);
    /* 200 text + 576 image + 256 output = 1032 tokens; Vicuna-7B KV per token
     * 2 * 32 layers * 32 heads * 128 * 2 B = 524,288: 541,065,216 B */
    cr_assert_eq(e.prompt_tokens, 776);
    assert_rel(e.kv_bytes, 1032 * 524288.0, 1e-12);
    /* largest batch: 0.9 of the driver's capacity, less the LM weights, the
     * activation reserve for an 8192-token step, and the encoder's
     * 310,980,608 parameters in bf16 on the GPU, over 1032 * 524,288 B */
    double budget = 0.9 * g.mem_bytes - weight_bytes(&m, DT_BF16) - activation_bytes(&m, 8192, 256, DT_BF16, 1) -
                    2 * 310980608.0;
    cr_assert_eq(e.max_batch, (int)floor(budget / (1032 * 524288.0)));
    /* text only: the same 200 + 256 tokens without the image, no encoder */
    q.images = 0;
    vision_estimate t;
    vision_estimate_compute(&q, &t, err, sizeof err);
    cr_assert_eq(t.prompt_tokens, 200);
    /* the encoder stays resident on a server that also takes images */
    cr_assert_eq(t.max_batch, (int)floor(budget / (456 * 524288.0)));
}

Test(vision, cross_attention_kv_is_not_context)
{
    gpu_spec g = gpu_builtin("h100");
    vision_spec v = row("llama3.2-11b-vision");
    model_spec m;
    vision_lm_lookup(&v, &m);
    vision_request q = vision_request_default(&v, &m, &g);
    q.images = 2;
    vision_estimate e;
    char err[512];
    cr_assert_eq(vision_estimate_compute(&q, &e, err, sizeof err), 0, "%s", err);
    /* two 1080p images: 2 <|image|> tokens in the text, 2 * 6404 in cross KV */
    cr_assert_eq(e.prompt_tokens, 202);
    cr_assert_eq(e.cross_tokens, 12808);
    /* self: (202 + 256) * 2 * 32 * 8 * 128 * 2 B = 458 * 131072;
     * cross: 12808 * 2 * 8 layers * 8 * 128 * 2 B = 12808 * 32768 */
    assert_rel(e.kv_bytes, 458 * 131072.0 + 12808 * 32768.0, 1e-12);
}

Test(vision, prefill_samples_only_the_last_token)
{
    /* Qwen2-VL-7B on one H100, 2891 tokens: the step model's cost less the
     * logits of 2890 positions.  The logits of 2891 tokens are compute-bound:
     * 2 * 2891 * 3584 * 152064 FLOP; of one token, memory-bound: the
     * 3584 x 152064 bf16 head read at 3.35 TB/s (+ 1 token's act and fp32 out). */
    gpu_spec g = gpu_builtin("h100");
    vision_spec v = row("qwen2-vl-7b");
    model_spec m;
    vision_lm_lookup(&v, &m);
    vision_request q = vision_request_default(&v, &m, &g);
    step_shape s = {1, 0, 2891, 1, precision_uniform(DT_BF16), 0, 0, 0, 0}; /* logits at every position */
    step_cost c;
    char err[256];
    cr_assert_eq(decoder_step_cost(&m, &g, &s, &c, err, sizeof err), 0);
    double head = 3584.0 * 152064;
    double t_all = 2 * 2891 * head / 989.4e12;
    double t_one = (head * 2 + 3584 * 2 + 152064 * 4) / 3.35e12;
    double t;
    cr_assert_eq(vision_prefill_time(&q, 1, 2891, 0, NULL, &t, err, sizeof err), 0);
    assert_rel(t, c.time - t_all + t_one, 1e-9);
}

Test(vision, ttft_and_requests_within_the_budget)
{
    gpu_spec g = gpu_builtin("h100");
    vision_spec v = row("qwen2-vl-7b");
    model_spec m;
    vision_lm_lookup(&v, &m);
    vision_request q = vision_request_default(&v, &m, &g);
    q.preprocess = 0.010;
    q.ttft_target = 10;
    vision_estimate e;
    char err[512];
    cr_assert_eq(vision_estimate_compute(&q, &e, err, sizeof err), 0, "%s", err);
    /* TTFT: preprocessing + the encoder (compute-bound) + the prefill */
    assert_rel(e.ttft, 0.010 + e.encoder.flop / 989.4e12 + e.prefill_time, 1e-9);
    /* 200 text + 2691 image tokens + their 2 delimiters = 2893; 8192 / 2893 = 2 requests
     * per step, memory permitting */
    cr_assert_eq(e.prompt_tokens, 2893);
    cr_assert_eq(e.budget_requests, 2);
    cr_assert_eq(e.step_requests, 2);
    double t2;
    vision_prefill_time(&q, 2, 2893, 0, NULL, &t2, err, sizeof err);
    assert_rel(e.requests_per_s, 2 / (2 * e.encoder.time + t2), 1e-9);
    /* a target below one request's TTFT admits nothing */
    q.ttft_target = e.ttft * 0.99;
    cr_assert_eq(vision_estimate_compute(&q, &e, err, sizeof err), 0);
    cr_assert_eq(e.step_requests, 0);
    cr_assert_float_eq(e.requests_per_s, 0, 0);
    /* text only: 8192 / 200 = 40 per step */
    q.images = 0;
    q.ttft_target = 10;
    vision_estimate_compute(&q, &e, err, sizeof err);
    cr_assert_eq(e.step_requests, 40);
    /* bad input says so */
    q.lm_efficiency = 0;
    cr_assert_eq(vision_estimate_compute(&q, &e, err, sizeof err), -1);
}

Test(vision, images_spread_over_the_tp_group)
{
    /* 4 images on tp 2: two per GPU in data-parallel mode, plus one
     * all-gather of 4 * 2691 * 3584 * 2 B of embeddings */
    gpu_spec g = gpu_builtin("h100");
    vision_spec v = row("qwen2-vl-7b");
    model_spec m;
    vision_lm_lookup(&v, &m);
    vision_request q = vision_request_default(&v, &m, &g);
    q.images = 4;
    q.tp = 2;
    vision_estimate e;
    char err[512];
    cr_assert_eq(vision_estimate_compute(&q, &e, err, sizeof err), 0, "%s", err);
    double gather = 4.8e-6 + 0.5 * (4 * 2691 * 3584 * 2.0) / 450e9;
    assert_rel(e.encoder_time, 2 * e.encoder.time + gather, 1e-9);
}

Test(vision, a_request_that_does_not_fit_says_so)
{
    /* 1000 images of 16384 tokens: 16.4 M tokens of KV cannot fit an H100 */
    gpu_spec g = gpu_builtin("h100");
    vision_spec v = row("qwen2-vl-7b");
    model_spec m;
    vision_lm_lookup(&v, &m);
    vision_request q = vision_request_default(&v, &m, &g);
    q.images = 1000;
    q.width = q.height = 4000;
    vision_estimate e;
    char err[512];
    cr_assert_eq(vision_estimate_compute(&q, &e, err, sizeof err), 0, "%s", err);
    cr_assert_eq(e.fit.fits, 0);
    cr_assert_eq(e.max_batch, 0);
    cr_assert_eq(e.step_requests, 0);
}
