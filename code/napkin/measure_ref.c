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
    if (!l || l->kv_heads <= 0 || l->head_dim <= 0 || l->context <= 0 || heads <= 0 || heads % l->kv_heads)
        return -1;
    if (l->block < 0 || (l->block > 0 && (!l->block_table || l->blocks_per_seq * l->block < l->context)))
        return -1;
    int group = heads / l->kv_heads, d = l->head_dim, ctx = l->context;
    double scale = 1.0 / sqrt((double)d);
    double *score = malloc((size_t)ctx * sizeof *score);
    if (!score)
        return -1;
    for (int h = 0; h < heads; h++) {
        int kvh = h / group;
        const float *qh = q + (size_t)h * d;
        double mx = -INFINITY;
        for (int t = 0; t < ctx; t++) {
            double s = 0.0;
            for (int i = 0; i < d; i++)
                s += (double)qh[i] * (double)k_cache[kv_index(l, seq, kvh, t, i)];
            score[t] = s * scale;
            if (score[t] > mx)
                mx = score[t];
        }
        double sum = 0.0;
        for (int t = 0; t < ctx; t++) {
            score[t] = exp(score[t] - mx);
            sum += score[t];
        }
        for (int i = 0; i < d; i++) {
            double acc = 0.0;
            for (int t = 0; t < ctx; t++)
                acc += score[t] * (double)v_cache[kv_index(l, seq, kvh, t, i)];
            out[(size_t)h * d + i] = (float)(acc / sum);
        }
    }
    free(score);
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

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

double median_of(const double *x, int n)
{
    if (n <= 0)
        return NAN;
    double *c = malloc((size_t)n * sizeof *c);
    if (!c)
        return NAN;
    memcpy(c, x, (size_t)n * sizeof *c);
    qsort(c, (size_t)n, sizeof *c, cmp_double);
    double m = n % 2 ? c[n / 2] : 0.5 * (c[n / 2 - 1] + c[n / 2]);
    free(c);
    return m;
}

int linear_fit(const double *x, const double *y, int n, double *a, double *b)
{
    if (n < 2)
        return -1;
    double sx = 0, sy = 0;
    for (int i = 0; i < n; i++) {
        sx += x[i];
        sy += y[i];
    }
    double mx = sx / n, my = sy / n, sxx = 0, sxy = 0;
    for (int i = 0; i < n; i++) {
        sxx += (x[i] - mx) * (x[i] - mx);
        sxy += (x[i] - mx) * (y[i] - my);
    }
    if (sxx <= 0)
        return -1;
    *b = sxy / sxx;
    *a = my - *b * mx;
    return 0;
}

const char *stream_kind_name(stream_kind k)
{
    static const char *const names[] = {"copy", "read", "write", "triad"};
    return (unsigned)k < STREAM_KIND_COUNT ? names[k] : "?";
}

//> stream_bytes
double stream_bytes(stream_kind k, double n, double elem_bytes)
{
    /* arrays touched per pass: copy reads a and writes b; read reads a;
     * write writes c; triad reads two arrays and writes a third */
    static const double arrays[] = {2, 1, 1, 3};
    return (unsigned)k < STREAM_KIND_COUNT ? arrays[k] * n * elem_bytes : NAN;
}
//< stream_bytes
