#include "lora_ref.h"

#include "measure_ref.h"

#include <math.h>
#include <stdlib.h>

//> bgmv_ref
int lora_bgmv_ref(int tokens, int d_in, int d_out, int rank, int adapters, const float *x, const float *a,
                  const float *b, const int *idx, float scale, float *y)
{
    if (tokens < 0 || d_in < 1 || d_out < 1 || rank < 1 || adapters < 1)
        return -1;
    double *v = malloc((size_t)rank * sizeof *v);
    if (!v)
        return -1;
    for (int t = 0; t < tokens; t++) {
        int ad = idx[t];
        if (ad >= adapters) {
            free(v);
            return -1;
        }
        if (ad < 0)
            continue;
        const float *xt = x + (size_t)t * d_in;
        const float *at = a + (size_t)ad * rank * d_in;
        const float *bt = b + (size_t)ad * d_out * rank;
        for (int j = 0; j < rank; j++) { /* shrink */
            double s = 0;
            for (int i = 0; i < d_in; i++)
                s += (double)xt[i] * at[(size_t)j * d_in + i];
            v[j] = s;
        }
        for (int o = 0; o < d_out; o++) { /* expand */
            double s = 0;
            for (int j = 0; j < rank; j++)
                s += v[j] * bt[(size_t)o * rank + j];
            y[(size_t)t * d_out + o] += (float)(scale * s);
        }
    }
    free(v);
    return 0;
}
//< bgmv_ref

int lora_count_distinct(const int *idx, int n)
{
    int d = 0;
    for (int i = 0; i < n; i++) {
        if (idx[i] < 0)
            continue;
        int dup = 0;
        for (int j = 0; j < i && !dup; j++)
            dup = idx[j] == idx[i];
        d += !dup;
    }
    return d;
}

/* A warp's butterfly sum as __shfl_xor_sync computes it: after each round
 * lane l holds p[l] + p[l ^ o]; every lane ends with the same value. */
static float butterfly_sum(float p[32])
{
    float q[32];
    for (int o = 16; o > 0; o >>= 1) {
        for (int l = 0; l < 32; l++)
            q[l] = p[l] + p[l ^ o];
        for (int l = 0; l < 32; l++)
            p[l] = q[l];
    }
    return p[0];
}

int lora_bgmv_fused_emulate(int tokens, int d_in, int d_out, int rank, int adapters, const float *x, const float *a,
                            const float *b, const int *idx, float scale, float *y)
{
    if (tokens < 0 || d_in < 8 || d_in % 8 || d_out < 1 || rank < 1 || adapters < 1)
        return -1;
    float *v = malloc((size_t)rank * sizeof *v);
    if (!v)
        return -1;
    const int chunks = d_in / 8;
    for (int t = 0; t < tokens; t++) {
        int ad = idx[t];
        if (ad >= adapters) {
            free(v);
            return -1;
        }
        if (ad < 0)
            continue;
        const float *xt = x + (size_t)t * d_in;
        const float *at = a + (size_t)ad * rank * d_in;
        const float *bt = b + (size_t)ad * d_out * rank;
        for (int j = 0; j < rank; j++) { /* shrink: 32 lanes, then the butterfly */
            float part[32];
            for (int l = 0; l < 32; l++) {
                float acc = 0.0f;
                for (int c = l; c < chunks; c += 32)
                    for (int i = 0; i < 8; i++)
                        acc = fmaf(at[(size_t)j * d_in + 8 * c + i], xt[8 * c + i], acc);
                part[l] = acc;
            }
            v[j] = butterfly_sum(part);
        }
        for (int o = 0; o < d_out; o++) { /* expand, then bf16 */
            float s = 0.0f;
            for (int j = 0; j < rank; j++)
                s = fmaf(v[j], bt[(size_t)o * rank + j], s);
            float *yo = y + (size_t)t * d_out + o;
            *yo = bf16_to_f32(bf16_from_f32(*yo + scale * s));
        }
    }
    free(v);
    return 0;
}

int lora_bgmv_column_splits(int items, int d_out, int sms, int min_cols, int *cols)
{
    if (sms < 1 || sms > (1 << 29))
        return -1;
    return lora_bgmv_column_splits_resident(items, d_out, 2 * sms, min_cols, cols);
}

size_t lora_bgmv_fused_smem_bytes(int group_max, int d_in)
{
    if (group_max < 1 || d_in < 1)
        return 0;
    return (size_t)group_max * (size_t)d_in * 2; /* bf16 */
}

int lora_bgmv_column_splits_resident(int items, int d_out, int resident, int min_cols, int *cols)
{
    if (items < 1 || d_out < 1 || resident < 1 || min_cols < 1 || !cols)
        return -1;
    int want = (resident + items - 1) / items, most = d_out / min_cols;
    int splits = want < most ? want : most;
    if (splits < 1)
        splits = 1;
    *cols = (d_out + splits - 1) / splits;
    return (d_out + *cols - 1) / *cols; /* rounding cols up may leave the last blocks empty: drop them */
}
