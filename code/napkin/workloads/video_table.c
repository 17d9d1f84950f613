/* The video-model table (code/specs/video_models.tsv), read with the same
 * parser and messages as the GPU and model tables. */
#include "specs_tsv.h"
#include "video.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

extern const char napkin_video_models_tsv[];

static const char *const VIDEO_COLUMNS[] = {
    "key",     "name",  "layers",     "hidden",    "heads",   "ffn",    "proj",
    "params_b", "vae_stride", "latent_ch", "patch", "text_tokens", "text_mode", "text_enc_b",
    "vae_ch",  "vae_mflop", "steps", "forwards", "video", "source"};
#define VIDEO_NCOLUMNS ((int)(sizeof VIDEO_COLUMNS / sizeof VIDEO_COLUMNS[0]))

/* "AxBxC" into three whole numbers >= 1. */
static int parse_triple(spec_tsv_ctx *c, const char *field, const char *s, int *a, int *b, int *d)
{
    char tail;
    if (sscanf(s, "%dx%dx%d%c", a, b, d, &tail) != 3 || *a < 1 || *b < 1 || *d < 1)
        return spec_tsv_fail(c, field, "'%s' is not three whole numbers >= 1 written AxBxC", s);
    return 0;
}

static int video_row(spec_tsv_ctx *c, char **f, int n, void *table)
{
    (void)n;
    video_model_table *t = table;
    video_model m;
    memset(&m, 0, sizeof m);
    double v;
    int one;
    if (spec_tsv_text(c, "key", f[0], m.key, sizeof m.key) || spec_tsv_text(c, "name", f[1], m.name, sizeof m.name))
        return -1;
    if (spec_tsv_int(c, "layers", f[2], 1, &m.layers) || spec_tsv_int(c, "hidden", f[3], 1, &m.hidden) ||
        spec_tsv_int(c, "heads", f[4], 1, &m.heads) || spec_tsv_int(c, "ffn", f[5], 1, &m.ffn) ||
        spec_tsv_int(c, "proj", f[6], 1, &m.proj))
        return -1;
    if (m.hidden % m.heads != 0)
        return spec_tsv_fail(c, "heads", "'%s' must divide the hidden size", f[4]);
    if (spec_tsv_number(c, "params_b", f[7], &v))
        return -1;
    m.params = v * 1e9;
    if (parse_triple(c, "vae_stride", f[8], &m.stride_t, &m.stride_s, &one))
        return -1;
    if (one != m.stride_s)
        return spec_tsv_fail(c, "vae_stride", "'%s': height and width strides must be equal", f[8]);
    if (spec_tsv_int(c, "latent_ch", f[9], 1, &m.latent_channels))
        return -1;
    if (parse_triple(c, "patch", f[10], &m.patch_t, &m.patch_s, &one))
        return -1;
    if (one != m.patch_s)
        return spec_tsv_fail(c, "patch", "'%s': height and width patches must be equal", f[10]);
    if (m.patch_t != 1)
        return spec_tsv_fail(c, "patch", "'%s': only a temporal patch of 1 is modelled", f[10]);
    if (spec_tsv_int(c, "text_tokens", f[11], 0, &m.text_tokens))
        return -1;
    if (strcmp(f[12], "cross") == 0)
        m.text_mode = TEXT_CROSS;
    else if (strcmp(f[12], "joint") == 0)
        m.text_mode = TEXT_JOINT;
    else
        return spec_tsv_fail(c, "text_mode", "'%s' is not one of cross, joint", f[12]);
    if (spec_tsv_number(c, "text_enc_b", f[13], &v))
        return -1;
    m.text_encoder_params = v * 1e9;
    if (spec_tsv_int(c, "vae_ch", f[14], 1, &m.vae_channels) || spec_tsv_number(c, "vae_mflop", f[15], &v))
        return -1;
    m.vae_flop_per_pixel = v * 1e6;
    if (spec_tsv_int(c, "steps", f[16], 1, &m.steps) || spec_tsv_int(c, "forwards", f[17], 1, &m.forwards))
        return -1;
    if (m.forwards > 2)
        return spec_tsv_fail(c, "forwards", "'%s' must be 1 (guidance distilled) or 2 (classifier-free guidance)",
                             f[17]);
    if (parse_triple(c, "video", f[18], &m.frames, &m.width, &m.height))
        return -1;
    if (video_latent_frames(&m, m.frames) < 0)
        return spec_tsv_fail(c, "video", "'%s': the frame count must be 1 + a multiple of the temporal stride", f[18]);
    if (m.width % (m.stride_s * m.patch_s) || m.height % (m.stride_s * m.patch_s))
        return spec_tsv_fail(c, "video", "'%s': width and height must be multiples of stride x patch", f[18]);
    if (spec_tsv_text(c, "source", f[19], m.source, sizeof m.source))
        return -1;
    video_model *rows = realloc(t->rows, (size_t)(t->n + 1) * sizeof *rows);
    if (!rows)
        return spec_tsv_fail(c, NULL, "out of memory%s", "");
    t->rows = rows;
    t->rows[t->n++] = m;
    return spec_tsv_key(c, m.key);
}

int video_model_table_parse(const char *text, const char *filename, video_model_table *out, char *err,
                            size_t errlen)
{
    out->rows = NULL;
    out->n = 0;
    if (spec_tsv_parse(text, filename, VIDEO_COLUMNS, VIDEO_NCOLUMNS, video_row, out, err, errlen) != 0) {
        video_model_table_free(out);
        return -1;
    }
    return 0;
}

int video_model_table_load(const char *path, video_model_table *out, char *err, size_t errlen)
{
    char *text = spec_read_text_file(path, err, errlen);
    if (!text) {
        out->rows = NULL;
        out->n = 0;
        return -1;
    }
    int rc = video_model_table_parse(text, path, out, err, errlen);
    free(text);
    return rc;
}

int video_model_table_builtin(video_model_table *out, char *err, size_t errlen)
{
    return video_model_table_parse(napkin_video_models_tsv, "code/specs/video_models.tsv", out, err, errlen);
}

void video_model_table_free(video_model_table *t)
{
    free(t->rows);
    t->rows = NULL;
    t->n = 0;
}

const video_model *video_model_find(const video_model_table *t, const char *key)
{
    int i = spec_key_index(SPEC_ROWS(t), key);
    return i < 0 ? NULL : &t->rows[i];
}

char *video_model_keys(const video_model_table *t, char *buf, size_t n)
{
    return spec_keys_join(SPEC_ROWS(t), buf, n);
}

video_model video_model_builtin(const char *key)
{
    video_model_table t;
    char err[512], keys[512];
    if (video_model_table_builtin(&t, err, sizeof err) != 0) {
        fprintf(stderr, "%s\n", err);
        exit(1);
    }
    const video_model *m = video_model_find(&t, key);
    if (!m) {
        fprintf(stderr, "unknown video model '%s' (choices: %s)\n", key, video_model_keys(&t, keys, sizeof keys));
        exit(1);
    }
    video_model copy = *m;
    video_model_table_free(&t);
    return copy;
}

int video_model_lookup(const char *key, video_model *out)
{
    video_model_table t;
    char err[512];
    if (!key || video_model_table_builtin(&t, err, sizeof err) != 0)
        return -1;
    const video_model *m = video_model_find(&t, key);
    if (m)
        *out = *m;
    video_model_table_free(&t);
    return m ? 0 : -1;
}
