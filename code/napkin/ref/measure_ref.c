/* Host-side references for the measurements; see measure_ref.h. */
#include "measure_ref.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

void fill_uniform_f32(rng_state *r, float *x, size_t n, float lo, float hi)
{
    for (size_t i = 0; i < n; i++)
        x[i] = (float)(lo + (hi - lo) * rng_uniform(r));
}

uint16_t bf16_from_f32(float x)
{
    uint32_t u;
    memcpy(&u, &x, sizeof u);
    if ((u & 0x7F800000u) == 0x7F800000u && (u & 0x007FFFFFu)) /* NaN: keep it quiet NaN */
        return (uint16_t)((u >> 16) | 0x0040u);
    /* Round to nearest, ties to even: add 0x7FFF plus the lowest kept bit. */
    uint32_t lsb = (u >> 16) & 1u;
    u += 0x7FFFu + lsb;
    return (uint16_t)(u >> 16);
}

float bf16_to_f32(uint16_t b)
{
    uint32_t u = (uint32_t)b << 16;
    float x;
    memcpy(&x, &u, sizeof x);
    return x;
}

void bf16_round_array(const float *x, size_t n, uint16_t *out_bf16, float *out_rounded)
{
    for (size_t i = 0; i < n; i++) {
        uint16_t b = bf16_from_f32(x[i]);
        if (out_bf16)
            out_bf16[i] = b;
        if (out_rounded)
            out_rounded[i] = bf16_to_f32(b);
    }
}

void gemm_ref_f32(int m, int n, int k, const float *x, const float *w, float *y, int n_begin, int n_end)
{
    if (n_begin < 0)
        n_begin = 0;
    if (n_end > n)
        n_end = n;
    for (int i = 0; i < m; i++)
        for (int j = n_begin; j < n_end; j++) {
            double acc = 0.0;
            const float *xr = x + (size_t)i * k, *wr = w + (size_t)j * k;
            for (int p = 0; p < k; p++)
                acc += (double)xr[p] * (double)wr[p];
            y[(size_t)i * n + j] = (float)acc;
        }
}

int decode_attention_ref(const kv_layout *l, int seq, int heads, const float *q, const float *k_cache,
                         const float *v_cache, float *out)
{
    return decode_attention_ref_heads(l, seq, heads, 0, heads, q, k_cache, v_cache, out);
}

int decode_attention_ref_heads(const kv_layout *l, int seq, int heads, int h0, int h1, const float *q,
                               const float *k_cache, const float *v_cache, float *out)
{
    if (!l || l->kv_heads <= 0 || l->head_dim <= 0 || l->context <= 0 || heads <= 0 || heads % l->kv_heads)
        return -1;
    if (h0 < 0 || h1 > heads || h0 >= h1)
        return -1;
    if (l->block < 0 || (l->block > 0 && (!l->block_table || l->blocks_per_seq * l->block < l->context)))
        return -1;
    int group = heads / l->kv_heads, d = l->head_dim, ctx = l->context;
    double scale = 1.0 / sqrt((double)d);
    double *score = malloc((size_t)ctx * sizeof *score), *acc = malloc((size_t)d * sizeof *acc);
    if (!score || !acc) {
        free(score);
        free(acc);
        return -1;
    }
    for (int h = h0; h < h1; h++) {
        int kvh = h / group;
        const float *qh = q + (size_t)h * d;
        double mx = -INFINITY;
        // A position's head_dim values are adjacent in both layouts: one
        // index per position, then a unit-stride walk (the cache's order).
        for (int t = 0; t < ctx; t++) {
            const float *kt = k_cache + kv_index(l, seq, kvh, t, 0);
            double s = 0.0;
            for (int i = 0; i < d; i++)
                s += (double)qh[i] * (double)kt[i];
            score[t] = s * scale;
            if (score[t] > mx)
                mx = score[t];
        }
        double sum = 0.0;
        for (int t = 0; t < ctx; t++) {
            score[t] = exp(score[t] - mx);
            sum += score[t];
        }
        // Each acc[i] still adds its terms in position order: the same sums
        // as a loop over positions inside a loop over dims.
        for (int i = 0; i < d; i++)
            acc[i] = 0.0;
        for (int t = 0; t < ctx; t++) {
            const float *vt = v_cache + kv_index(l, seq, kvh, t, 0);
            for (int i = 0; i < d; i++)
                acc[i] += score[t] * (double)vt[i];
        }
        for (int i = 0; i < d; i++)
            out[(size_t)h * d + i] = (float)(acc[i] / sum);
    }
    free(score);
    free(acc);
    return 0;
}

size_t validate_close(const float *got, const float *ref, size_t n, double atol, double rtol, long *first_bad,
                      double *max_excess)
{
    size_t bad = 0;
    long first = -1;
    double worst = -INFINITY;
    for (size_t i = 0; i < n; i++) {
        double diff = fabs((double)got[i] - (double)ref[i]);
        double excess = diff - (atol + rtol * fabs((double)ref[i]));
        if (isnan(diff))
            excess = INFINITY;
        if (excess > worst)
            worst = excess;
        if (excess > 0) {
            if (first < 0)
                first = (long)i;
            bad++;
        }
    }
    if (first_bad)
        *first_bad = first;
    if (max_excess)
        *max_excess = worst;
    return bad;
}

norm_check validate_scaled(const float *got, const float *ref, size_t n, double norm_tol, double elem_tol,
                           double rtol)
{
    norm_check c = {n, 0, -1, 0, 0, 0, 0};
    double ss_ref = 0, ss_err = 0;
    for (size_t i = 0; i < n; i++) {
        ss_ref += (double)ref[i] * ref[i];
        double e = (double)got[i] - ref[i];
        ss_err += e * e;
    }
    c.ref_rms = n ? sqrt(ss_ref / n) : 0;
    c.rel_l2 = ss_ref > 0 ? sqrt(ss_err / ss_ref) : (ss_err > 0 ? INFINITY : 0);
    for (size_t i = 0; i < n; i++) {
        double e = fabs((double)got[i] - ref[i]);
        int bad = !isfinite(got[i]) || !(e <= elem_tol * c.ref_rms + rtol * fabs((double)ref[i]));
        double rel = c.ref_rms > 0 ? e / c.ref_rms : e;
        if (!isfinite(got[i]))
            rel = INFINITY;
        if (rel > c.worst_err)
            c.worst_err = rel;
        if (bad) {
            if (c.first_bad < 0)
                c.first_bad = (long)i;
            c.bad++;
        }
    }
    if (isnan(c.rel_l2))
        c.rel_l2 = INFINITY;
    c.pass = c.bad == 0 && c.rel_l2 <= norm_tol;
    return c;
}

norm_check validate_bf16_output(const float *got, const float *ref, size_t n)
{
    return validate_scaled(got, ref, n, BF16_NORM_TOL, BF16_ELEM_TOL, BF16_RTOL);
}

float dot_bf16_split(const float *x, const float *w, int k, int splits)
{
    if (splits < 1 || k % splits)
        return NAN;
    int part = k / splits;
    float total = 0;
    for (int s = 0; s < splits; s++) {
        float acc = 0;
        for (int p = s * part; p < (s + 1) * part; p++)
            acc += x[p] * w[p];
        total += splits > 1 ? bf16_to_f32(bf16_from_f32(acc)) : acc;
    }
    return bf16_to_f32(bf16_from_f32(total));
}

/* Split s's online softmax over its positions: m[s], sum[s] and the
 * unnormalised output acc[s][0..d), in fp32 as the kernels compute it. */
static void split_softmax_f32(const kv_layout *l, int seq, int kvh, const float *qh, const float *k_cache,
                              const float *v_cache, int s, int chunk, float *acc, float *m, float *sum)
{
    int d = l->head_dim, ctx = l->context;
    float scale = 1.0f / sqrtf((float)d);
    float mx = -INFINITY, l_s = 0, *a = acc + (size_t)s * d;
    for (int i = 0; i < d; i++)
        a[i] = 0;
    for (int t = s * chunk; t < ctx && t < (s + 1) * chunk; t++) {
        float sc = 0;
        for (int i = 0; i < d; i++)
            sc += qh[i] * k_cache[kv_index(l, seq, kvh, t, i)];
        sc *= scale;
        float mn = fmaxf(mx, sc), corr = expf(mx - mn), p = expf(sc - mn);
        l_s = l_s * corr + p;
        for (int i = 0; i < d; i++)
            a[i] = a[i] * corr + p * v_cache[kv_index(l, seq, kvh, t, i)];
        mx = mn;
    }
    m[s] = mx;
    sum[s] = l_s;
}

/* A warp's butterfly sum (lane l adds lane l ^ o for o = 16 ... 1). */
static float butterfly32(float p[32])
{
    float q[32];
    for (int o = 16; o > 0; o >>= 1) {
        for (int i = 0; i < 32; i++)
            q[i] = p[i] + p[i ^ o];
        memcpy(p, q, sizeof q);
    }
    return p[0];
}

void decode_attention_pmerge_f32(const float *acc, const float *m, const float *sum, int splits, int d, int log2_domain,
                                 float *w, float *out)
{
    /* 128 threads, thread t the splits t, t + 128, ...; the weights once
     * each; the sum by a butterfly per warp, then the 4 warps in order; the
     * output by four sums over the splits, s mod 4. */
    float mall = -INFINITY;
    for (int s = 0; s < splits; s++)
        mall = fmaxf(mall, m[s]);
    float part[4][32];
    for (int t = 0; t < 128; t++) {
        float acc_t = 0;
        for (int s = t; s < splits; s += 128) {
            w[s] = log2_domain ? exp2f(m[s] - mall) : expf(m[s] - mall);
            acc_t += sum[s] * w[s];
        }
        part[t / 32][t % 32] = acc_t;
    }
    float den = ((butterfly32(part[0]) + butterfly32(part[1])) + butterfly32(part[2])) + butterfly32(part[3]);
    for (int i = 0; i < d; i++) {
        float o[4] = {0, 0, 0, 0};
        int s = 0;
        for (; s + 3 < splits; s += 4)
            for (int j = 0; j < 4; j++)
                o[j] += acc[(size_t)(s + j) * d + i] * w[s + j];
        for (; s < splits; s++)
            o[0] += acc[(size_t)s * d + i] * w[s];
        out[i] = ((o[0] + o[1]) + (o[2] + o[3])) / den;
    }
}

static int split_f32(const kv_layout *l, int seq, int heads, const float *q, const float *k_cache,
                     const float *v_cache, int splits, int parallel_merge, float *out)
{
    if (!l || l->kv_heads <= 0 || l->head_dim <= 0 || l->context <= 0 || heads <= 0 || heads % l->kv_heads ||
        splits < 1)
        return -1;
    if (l->block < 0 || (l->block > 0 && (!l->block_table || l->blocks_per_seq * l->block < l->context)))
        return -1;
    int group = heads / l->kv_heads, d = l->head_dim, ctx = l->context;
    int chunk = (ctx + splits - 1) / splits;
    float *acc = malloc((size_t)splits * d * sizeof *acc), *m = malloc((size_t)splits * sizeof *m),
          *sum = malloc((size_t)splits * sizeof *sum), *w = malloc((size_t)splits * sizeof *w);
    if (!acc || !m || !sum || !w) {
        free(acc), free(m), free(sum), free(w);
        return -1;
    }
    for (int h = 0; h < heads; h++) {
        int kvh = h / group;
        const float *qh = q + (size_t)h * d;
        for (int s = 0; s < splits; s++)
            split_softmax_f32(l, seq, kvh, qh, k_cache, v_cache, s, chunk, acc, m, sum);
        float mall = -INFINITY;
        for (int s = 0; s < splits; s++)
            mall = fmaxf(mall, m[s]);
        if (!parallel_merge) { /* v1-v3: a chain over the splits per dim */
            float den = 0;
            for (int s = 0; s < splits; s++)
                den += m[s] == -INFINITY ? 0.f : sum[s] * expf(m[s] - mall);
            for (int i = 0; i < d; i++) {
                float o = 0;
                for (int s = 0; s < splits; s++)
                    o += m[s] == -INFINITY ? 0.f : acc[(size_t)s * d + i] * expf(m[s] - mall);
                out[(size_t)h * d + i] = o / den;
            }
            continue;
        }
        decode_attention_pmerge_f32(acc, m, sum, splits, d, 0, w, out + (size_t)h * d);
    }
    free(acc), free(m), free(sum), free(w);
    return 0;
}

int decode_attention_split_f32(const kv_layout *l, int seq, int heads, const float *q, const float *k_cache,
                               const float *v_cache, int splits, float *out)
{
    return split_f32(l, seq, heads, q, k_cache, v_cache, splits, 0, out);
}

int decode_attention_split_pmerge_f32(const kv_layout *l, int seq, int heads, const float *q, const float *k_cache,
                                      const float *v_cache, int splits, float *out)
{
    return split_f32(l, seq, heads, q, k_cache, v_cache, splits, 1, out);
}
