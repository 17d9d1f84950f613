/* The arithmetic of one video diffusion request: latent, FLOPs, memory,
 * time and cost (see video.h). */
#include "video.h"

#include "memory.h"
#include "pricing.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

//> latent_frames
int video_latent_frames(const video_model *m, int frames)
{
    /* The causal 3D VAE keeps the first frame on its own and folds every
     * following group of stride_t frames into one latent frame. */
    if (frames < 1 || (frames - 1) % m->stride_t != 0)
        return -1;
    return 1 + (frames - 1) / m->stride_t;
}
//< latent_frames

void video_nearest_frames(const video_model *m, int frames, int *below, int *above)
{
    int k = frames > 1 ? (frames - 1) / m->stride_t : 0;
    int lo = 1 + k * m->stride_t;
    *below = lo <= frames ? lo : 0;
    *above = lo >= frames ? lo : lo + m->stride_t;
}

int video_latent_shape(const video_model *m, int frames, int width, int height, video_latent *out, char *err,
                       size_t errlen)
{
    memset(out, 0, sizeof *out);
    if (frames > VIDEO_MAX_FRAMES || width > VIDEO_MAX_SIDE || height > VIDEO_MAX_SIDE) {
        snprintf(err, errlen, "%d frames of %dx%d: the model handles at most %d frames and %d pixels a side", frames,
                 width, height, VIDEO_MAX_FRAMES, VIDEO_MAX_SIDE);
        return -1;
    }
    int lt = video_latent_frames(m, frames);
    if (lt < 0) {
        int lo, hi;
        video_nearest_frames(m, frames, &lo, &hi);
        if (lo > 0)
            snprintf(err, errlen, "%d frames do not fit the VAE's temporal stride %d (1 + a multiple of %d): "
                     "nearest valid counts %d and %d", frames, m->stride_t, m->stride_t, lo, hi);
        else
            snprintf(err, errlen, "%d frames: the smallest valid count is %d", frames, hi);
        return -1;
    }
    int unit = m->stride_s * m->patch_s;
    if (width < unit || height < unit || width % unit || height % unit) {
        snprintf(err, errlen, "%dx%d: width and height must be positive multiples of %d (VAE stride %d x patch %d)",
                 width, height, unit, m->stride_s, m->patch_s);
        return -1;
    }
    out->frames = frames;
    out->width = width;
    out->height = height;
    out->lat_t = lt;
    out->lat_h = height / m->stride_s;
    out->lat_w = width / m->stride_s;
    //> tokens
    out->tokens = (long)(lt / m->patch_t) * (out->lat_h / m->patch_s) * (out->lat_w / m->patch_s);
    out->sequence = out->tokens + (m->text_mode == TEXT_JOINT ? m->text_tokens : 0);
    //< tokens
    return 0;
}

double video_linear_params_per_token(const video_model *m)
{
    double d = m->hidden;
    return m->layers * (m->proj * d * d + 2.0 * d * m->ffn);
}

//> forward_flop
video_forward_flops video_forward_flop(const video_model *m, const video_latent *l)
{
    video_forward_flops f;
    double S = (double)l->sequence, N = (double)l->tokens, d = m->hidden, L = m->layers;
    double T = m->text_tokens;
    f.linear = 2.0 * S * video_linear_params_per_token(m);
    f.attention = 4.0 * L * S * S * d; /* QK^T and AV: 2 S^2 d each */
    f.cross = m->text_mode == TEXT_CROSS ? 4.0 * L * N * T * d + 2.0 * T * 2.0 * d * d * L : 0.0;
    f.total = f.linear + f.attention + f.cross;
    f.attention_share = (f.attention + f.cross) / f.total;
    return f;
}
//< forward_flop

double video_text_encoder_flop(const video_model *m, int forwards)
{
    return 2.0 * m->text_encoder_params * m->text_tokens * forwards;
}

double video_vae_decode_flop(const video_model *m, const video_latent *l)
{
    return m->vae_flop_per_pixel * (double)l->frames * l->width * l->height;
}

/* Live activations of one block per token: the residual, its norm, q, k, v
 * and the attention output (6 d), the FFN's hidden and its activation (2 ffn). */
static double block_act_elems_per_token(const video_model *m)
{
    return 6.0 * m->hidden + 2.0 * m->ffn;
}

double video_forward_bytes(const video_model *m, const video_latent *l, double bytes_per_elem)
{
    double act = m->layers * (double)l->sequence * block_act_elems_per_token(m) * 2.0; /* in and out */
    return (m->params + act) * bytes_per_elem;
}

//> sp_efficiency
double video_sp_efficiency(int gpus)
{
    /* HunyuanVideo README, xDiT (Ulysses) on 1/2/4/8 GPUs, 1280x720, 129
     * frames, 50 steps: latency in seconds. */
    static const double latency[] = {1904.08, 934.09, 514.08, 337.58};
    if (gpus < 1 || gpus > VIDEO_SP_TABLE_MAX_GPUS)
        return -1;
    double eff[4];
    for (int i = 0; i < 4; i++) {
        double e = latency[0] / latency[i] / (double)(1 << i);
        eff[i] = e > 1.0 ? 1.0 : e; /* 2 GPUs measured slightly superlinear */
    }
    double x = log2((double)gpus);
    int i = (int)floor(x);
    if (i >= 3)
        return eff[3];
    return eff[i] + (eff[i + 1] - eff[i]) * (x - i);
}
//< sp_efficiency

video_request video_request_default(const video_model *m, const gpu_spec *g)
{
    video_request r;
    memset(&r, 0, sizeof r);
    r.model = m;
    r.gpu = g;
    r.frames = m->frames;
    r.width = m->width;
    r.height = m->height;
    r.steps = m->steps;
    r.forwards = m->forwards;
    r.gpus = 1;
    r.efficiency = 0.45;
    r.sp_efficiency = 0;
    r.vae_tiles = 8;
    r.bytes_per_elem = 2.0;
    return r;
}

static int check_request(const video_request *r, char *err, size_t errlen)
{
    if (!r->model || !r->gpu) {
        snprintf(err, errlen, "a request needs a model and a GPU");
        return -1;
    }
    if (r->steps < 1 || r->gpus < 1 || r->vae_tiles < 1 || r->forwards < 0 || r->forwards > 2) {
        snprintf(err, errlen, "steps, GPUs and VAE tiles must be at least 1, forwards 1 or 2");
        return -1;
    }
    if (!(r->efficiency > 0 && r->efficiency <= 1)) {
        snprintf(err, errlen, "efficiency must be in (0, 1], got %g", r->efficiency);
        return -1;
    }
    if (r->sp_efficiency > 1 || !(r->bytes_per_elem > 0) || r->price < 0) {
        snprintf(err, errlen, "sequence-parallel efficiency must be at most 1, bytes and price not negative");
        return -1;
    }
    if (r->sp_efficiency <= 0 && video_sp_efficiency(r->gpus) < 0) {
        snprintf(err, errlen, "no published sequence-parallel scaling beyond %d GPUs; give an efficiency",
                 VIDEO_SP_TABLE_MAX_GPUS);
        return -1;
    }
    if (r->model->heads % r->gpus != 0) {
        /* Ulysses gives each GPU all the tokens of heads / gpus heads: the count must divide */
        char fit[128] = "";
        size_t n = 0;
        for (int g = 1; g <= 2 * VIDEO_SP_TABLE_MAX_GPUS && n + 8 < sizeof fit; g++)
            if (r->model->heads % g == 0)
                n += (size_t)snprintf(fit + n, sizeof fit - n, "%s%d", n ? ", " : "", g);
        snprintf(err, errlen,
                 "--gpus %d: head-splitting sequence parallelism cannot split %s's %d heads %d ways (counts up to %d "
                 "that divide them: %s); ring attention could, and is not modelled",
                 r->gpus, r->model->key, r->model->heads, r->gpus, 2 * VIDEO_SP_TABLE_MAX_GPUS, fit);
        return -1;
    }
    return 0;
}

int video_estimate_compute(const video_request *r, video_estimate *e, char *err, size_t errlen)
{
    memset(e, 0, sizeof *e);
    if (check_request(r, err, errlen) != 0)
        return -1;
    const video_model *m = r->model;
    if (video_latent_shape(m, r->frames, r->width, r->height, &e->latent, err, errlen) != 0)
        return -1;
    int G = r->gpus;
    double bpe = r->bytes_per_elem;
    e->forwards = r->forwards > 0 ? r->forwards : m->forwards;
    e->steps = r->steps;

    /* FLOPs */
    e->forward = video_forward_flop(m, &e->latent);
    e->flop_step = e->forwards * e->forward.total;
    e->flop_denoise = e->steps * e->flop_step;
    e->flop_text = video_text_encoder_flop(m, e->forwards);
    e->flop_vae = video_vae_decode_flop(m, &e->latent);
    e->flop_request = e->flop_denoise + e->flop_text + e->flop_vae;

    /* the roofline of one forward on one GPU at its dense bf16 peak */
    double peak = gpu_peak_flops(r->gpu, DT_BF16), bw = r->gpu->mem_bw;
    e->bytes_forward = video_forward_bytes(m, &e->latent, bpe);
    e->intensity = arithmetic_intensity(e->forward.total, e->bytes_forward);
    e->ridge = ridge_intensity(peak, bw);
    roofline_time(e->forward.total, e->bytes_forward, peak, bw, &e->bound);

    //> video_memory
    /* memory per GPU: sequence parallelism splits the tokens, not the weights */
    e->mem_dit_weights = m->params * bpe;
    e->mem_text_weights = m->text_encoder_params * bpe;
    double local_tokens = ceil((double)e->latent.sequence / G);
    e->mem_dit_act = local_tokens * block_act_elems_per_token(m) * bpe;
    /* the VAE decoder's widest full-resolution tensor, in and out, per tile */
    e->mem_vae_act = (double)e->latent.frames * e->latent.width * e->latent.height * m->vae_channels * 2.0 * bpe /
                     r->vae_tiles;
    if (r->offload) /* only the running phase is resident */
        e->mem_peak = fmax(e->mem_text_weights, fmax(e->mem_dit_weights + e->mem_dit_act, e->mem_vae_act));
    else
        e->mem_peak = e->mem_text_weights + e->mem_dit_weights + fmax(e->mem_dit_act, e->mem_vae_act);
    /* what the driver reports, less the share a serving process keeps back
     * (CUDA context, allocator slack): the book's usable fraction */
    memory_policy pol = memory_policy_default();
    e->mem_capacity = policy_capacity(&pol, r->gpu) * pol.usable_fraction;
    e->fits = e->mem_peak <= e->mem_capacity;
    //< video_memory

    //> video_time
    double attained = peak * r->efficiency;
    e->sp_eff = r->sp_efficiency > 0 ? r->sp_efficiency : video_sp_efficiency(G);
    /* a forward and the text encoder as lumps of bf16 GEMM work (their
     * kernels' fixed costs are not counted); a GPU reads all the weights
     * and its share of the activations */
    op_cost forward = op_lump("dit_forward", RC_GEMM_BF16, e->forward.total / G, e->mem_dit_weights, 0,
                              (e->bytes_forward - e->mem_dit_weights) / G);
    e->t_forward = price_op(&forward, r->gpu, attained, 1, NULL) / e->sp_eff;
    e->t_step = e->forwards * e->t_forward;
    e->t_denoise = e->steps * e->t_step;
    op_cost text = op_lump("text_encoder", RC_GEMM_BF16, e->flop_text, e->mem_text_weights, 0, 0);
    e->t_text = price_op(&text, r->gpu, attained, 1, NULL);
    /* on one GPU, FLOPs alone (its bytes are not counted): a lump of bf16 GEMM work */
    op_cost vae = op_lump("vae_decode", RC_GEMM_BF16, e->flop_vae, 0, 0, 0);
    e->t_vae = price_op(&vae, r->gpu, attained, 1, NULL);
    e->t_request = e->t_text + e->t_denoise + e->t_vae;
    e->gpu_seconds = G * e->t_request; /* every GPU is held for the whole request */
    e->cost = e->gpu_seconds / 3600.0 * r->price;
    //< video_time

    /* where the time goes: the conditional pass split into attention and
     * linear work, the guidance pass, the VAE and the text encoder */
    double one_pass = e->t_denoise / e->forwards;
    e->share_attention = one_pass * e->forward.attention_share / e->t_request;
    e->share_linear = one_pass * (1 - e->forward.attention_share) / e->t_request;
    e->share_guidance = one_pass * (e->forwards - 1) / e->t_request;
    e->share_vae = e->t_vae / e->t_request;
    e->share_text = e->t_text / e->t_request;
    return 0;
}

//> batch_step
double video_batch_step_time(const video_request *r, int batch)
{
    video_latent l;
    char err[256];
    if (batch < 1 || video_latent_shape(r->model, r->frames, r->width, r->height, &l, err, sizeof err) != 0)
        return -1;
    video_forward_flops f = video_forward_flop(r->model, &l);
    double weights = r->model->params * r->bytes_per_elem;
    double act = video_forward_bytes(r->model, &l, r->bytes_per_elem) - weights;
    /* the weights are read once for the whole batch; FLOPs and activations grow with it.  A
     * step is every guidance forward, as in video_estimate_compute; the forward is one lump of
     * bf16 GEMM work (its kernels' fixed costs not counted) */
    int forwards = r->forwards > 0 ? r->forwards : r->model->forwards;
    op_cost forward = op_lump("dit_forward", RC_GEMM_BF16, batch * f.total, weights, 0, batch * act);
    return forwards * price_op(&forward, r->gpu, gpu_peak_flops(r->gpu, DT_BF16) * r->efficiency, 1, NULL);
}
//< batch_step

double video_batch_gain(const video_request *r, int batch)
{
    double t1 = video_batch_step_time(r, 1), tb = video_batch_step_time(r, batch);
    return t1 > 0 && tb > 0 ? batch * t1 / tb : -1;
}

int video_max_frames_that_fit(const video_request *r)
{
    /* Memory grows with the frames, so bisect over k in frames = 1 + k stride_t. */
    video_request t = *r;
    int st = r->model->stride_t;
    int hi = r->frames >= 1 ? (r->frames - 1) / st : -1, lo = -1; /* k = lo fits (or -1), hi + 1 does not */
    char err[256];
    video_estimate e;
    t.frames = 1 + hi * st;
    if (hi >= 0 && video_estimate_compute(&t, &e, err, sizeof err) == 0 && e.fits)
        return t.frames;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        t.frames = 1 + mid * st;
        if (video_estimate_compute(&t, &e, err, sizeof err) == 0 && e.fits)
            lo = mid;
        else
            hi = mid;
    }
    return lo >= 0 ? 1 + lo * st : 0;
}
