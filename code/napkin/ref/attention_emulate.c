/* Decode attention v5 emulated in the kernel's order; see attention_emulate.h. */
#include "attention_emulate.h"

#include "measure_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#define WARPS 4
#define NHEAD 8 /* the n of the m16n8k16 multiply: heads past the group are zero */

static float bf16_round(float x) { return bf16_to_f32(bf16_from_f32(x)); }

/* One warp's pass over its positions of one chunk: its max m, sum l (per
 * head) and unnormalised output acc (NHEAD x d). */
static void warp_pass(const kv_layout *l, int seq, int kvh, int group, const float *qg, const float *k_cache,
                      const float *v_cache, int start, int end, int warp, float scale_log2, int with_lo, float *m,
                      float *lsum, float *acc)
{
    const int d = l->head_dim, R = ATTN_V5_WARP_ROWS;
    float l_part[NHEAD][R / 2]; /* lane (g, t4): positions g and g + 8 of heads 2 t4, 2 t4 + 1 */
    for (int n = 0; n < NHEAD; n++) {
        m[n] = -INFINITY;
        for (int g = 0; g < R / 2; g++)
            l_part[n][g] = 0;
    }
    memset(acc, 0, (size_t)NHEAD * d * sizeof *acc);
    const int ntiles = (end - start + ATTN_V5_TILE - 1) / ATTN_V5_TILE;
    for (int t = 0; t < ntiles; t++) {
        const int pos0 = start + t * ATTN_V5_TILE + warp * R;
        float s[NHEAD][ATTN_V5_WARP_ROWS], hi[NHEAD][ATTN_V5_WARP_ROWS], lo[NHEAD][ATTN_V5_WARP_ROWS],
            corr[NHEAD];
        for (int r = 0; r < R; r++) {
            const int pos = pos0 + r;
            for (int n = 0; n < NHEAD; n++) {
                if (pos >= end || n >= group) { /* a zero row (or a zero q column) */
                    s[n][r] = pos >= end ? -INFINITY : 0.f;
                    continue;
                }
                float c = 0;
                for (int st = 0; st < d; st += 16) { /* one mma per 16 dims */
                    float step = 0;
                    for (int i = st; i < st + 16; i++)
                        step += k_cache[kv_index(l, seq, kvh, pos, i)] * qg[(size_t)n * d + i];
                    c += step;
                }
                s[n][r] = c * scale_log2;
            }
        }
        for (int n = 0; n < group; n++) { /* the heads past the group are discarded */
            float mx = -INFINITY;
            for (int r = 0; r < R; r++)
                mx = fmaxf(mx, s[n][r]);
            const float mn = fmaxf(m[n], mx), mu = mn == -INFINITY ? 0.f : mn;
            corr[n] = exp2f(m[n] - mu);
            for (int r = 0; r < R; r++) {
                const float p = exp2f(s[n][r] - mu);
                hi[n][r] = bf16_round(p);
                lo[n][r] = with_lo ? bf16_round(p - hi[n][r]) : 0.f;
                s[n][r] = p;
            }
            for (int g = 0; g < R / 2; g++)
                l_part[n][g] = l_part[n][g] * corr[n] + (s[n][g] + s[n][g + R / 2]);
            m[n] = mn;
        }
        for (int n = 0; n < group; n++)
            for (int i = 0; i < d; i++) {
                float a = acc[(size_t)n * d + i] * corr[n], sh = 0, sl = 0;
                for (int r = 0; r < R; r++) {
                    const float v = pos0 + r < end ? v_cache[kv_index(l, seq, kvh, pos0 + r, i)] : 0.f;
                    sh += v * hi[n][r];
                    sl += v * lo[n][r];
                }
                acc[(size_t)n * d + i] = (a + sh) + sl; /* the hi multiply, then the lo one */
            }
    }
    /* The 8 lanes of a head by shuffles xor 4, 8, 16: lane g adds g ^ 1, g ^ 2, g ^ 4. */
    for (int n = 0; n < NHEAD; n++) {
        float *p = l_part[n];
        lsum[n] = ((p[0] + p[1]) + (p[2] + p[3])) + ((p[4] + p[5]) + (p[6] + p[7]));
    }
}

static int emulate(const kv_layout *l, int seq, int heads, const float *q, const float *k_cache, const float *v_cache,
                   int chunk, int with_lo, float *out)
{
    if (!l || l->kv_heads <= 0 || l->head_dim <= 0 || l->head_dim % 16 || l->context <= 0 || heads <= 0 ||
        heads % l->kv_heads || heads / l->kv_heads > NHEAD || chunk <= 0 || chunk % ATTN_V5_TILE)
        return -1;
    if (l->block < 0 || (l->block > 0 && (l->block % ATTN_V5_WARP_ROWS || !l->block_table ||
                                          l->blocks_per_seq * l->block < l->context)))
        return -1;
    const int group = heads / l->kv_heads, d = l->head_dim, ctx = l->context;
    const int splits = (ctx + chunk - 1) / chunk;
    const float scale_log2 = 1.0f / sqrtf((float)d) * 1.4426950408889634f;
    float *wacc = malloc((size_t)WARPS * NHEAD * d * sizeof *wacc);
    float *part = malloc((size_t)NHEAD * splits * d * sizeof *part), *pm = malloc((size_t)NHEAD * splits * sizeof *pm),
          *pl = malloc((size_t)NHEAD * splits * sizeof *pl), *w = malloc((size_t)splits * sizeof *w);
    if (!wacc || !part || !pm || !pl || !w) {
        free(wacc), free(part), free(pm), free(pl), free(w);
        return -1;
    }
    for (int kvh = 0; kvh < l->kv_heads; kvh++) {
        const float *qg = q + (size_t)kvh * group * d;
        for (int sp = 0; sp < splits; sp++) {
            const int start = sp * chunk, end = start + chunk < ctx ? start + chunk : ctx;
            float wm[WARPS][NHEAD], wl[WARPS][NHEAD];
            for (int w_ = 0; w_ < WARPS; w_++)
                warp_pass(l, seq, kvh, group, qg, k_cache, v_cache, start, end, w_, scale_log2, with_lo, wm[w_], wl[w_],
                          wacc + (size_t)w_ * NHEAD * d);
            for (int n = 0; n < group; n++) { /* the warps in order, a thread per dim */
                float mx = -INFINITY, sum = 0;
                for (int w_ = 0; w_ < WARPS; w_++)
                    mx = fmaxf(mx, wm[w_][n]);
                float f[WARPS];
                for (int w_ = 0; w_ < WARPS; w_++) {
                    f[w_] = wm[w_][n] == -INFINITY ? 0.f : exp2f(wm[w_][n] - mx);
                    sum += wl[w_][n] * f[w_];
                }
                for (int i = 0; i < d; i++) {
                    float o = 0;
                    for (int w_ = 0; w_ < WARPS; w_++)
                        o += wacc[((size_t)w_ * NHEAD + n) * d + i] * f[w_];
                    part[((size_t)n * splits + sp) * d + i] = o;
                }
                pm[n * splits + sp] = mx;
                pl[n * splits + sp] = sum;
            }
        }
        for (int n = 0; n < group; n++) {
            float *o = out + ((size_t)kvh * group + n) * d;
            if (splits == 1) {
                for (int i = 0; i < d; i++)
                    o[i] = part[(size_t)n * d + i] / pl[n];
            } else
                decode_attention_pmerge_f32(part + (size_t)n * splits * d, pm + n * splits, pl + n * splits, splits,
                                            d, 1, w, o);
        }
    }
    free(wacc), free(part), free(pm), free(pl), free(w);
    return 0;
}

int decode_attention_v5_emulate(const kv_layout *l, int seq, int heads, const float *q, const float *k_cache,
                                const float *v_cache, int chunk, float *out)
{
    return emulate(l, seq, heads, q, k_cache, v_cache, chunk, 1, out);
}

int decode_attention_v5_emulate_bf16_p(const kv_layout *l, int seq, int heads, const float *q, const float *k_cache,
                                       const float *v_cache, int chunk, float *out)
{
    return emulate(l, seq, heads, q, k_cache, v_cache, chunk, 0, out);
}
