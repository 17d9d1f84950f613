#include "packing.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

//> pack_offsets
long pack_offsets(const int *lengths, int n, long *cu)
{
    if (n < 0)
        return -1;
    for (int i = 0; i < n; i++)
        if (lengths[i] < 0)
            return -1;
    cu[0] = 0;
    for (int i = 0; i < n; i++)
        cu[i + 1] = cu[i] + lengths[i];
    return cu[n];
}
//< pack_offsets

int max_length(const int *lengths, int n)
{
    int m = 0;
    for (int i = 0; i < n; i++)
        if (lengths[i] > m)
            m = lengths[i];
    return m;
}

static int lengths_fit(const int *lengths, int n, int max_len)
{
    if (n < 0 || max_len < 0)
        return 0;
    for (int i = 0; i < n; i++)
        if (lengths[i] < 0 || lengths[i] > max_len)
            return 0;
    return 1;
}

//> pack_tokens
int pack_tokens(const void *padded, size_t row_bytes, int n, int max_len,
                const int *lengths, void *packed)
{
    if (!lengths_fit(lengths, n, max_len))
        return -1;
    const char *src = padded;
    char *dst = packed;
    for (int i = 0; i < n; i++) {
        /* Row i starts at i * max_len slots; only its first len[i] are real. */
        size_t bytes = (size_t)lengths[i] * row_bytes;
        memcpy(dst, src + (size_t)i * max_len * row_bytes, bytes);
        dst += bytes;
    }
    return 0;
}
//< pack_tokens

int unpack_tokens(const void *packed, size_t row_bytes, int n, int max_len, const int *lengths, void *padded,
                  const void *pad_row)
{
    if (!lengths_fit(lengths, n, max_len))
        return -1;
    const char *src = packed;
    char *dst = padded;
    for (int i = 0; i < n; i++) {
        char *row = dst + (size_t)i * max_len * row_bytes;
        memcpy(row, src, (size_t)lengths[i] * row_bytes);
        src += (size_t)lengths[i] * row_bytes;
        for (int t = lengths[i]; t < max_len; t++) {
            if (pad_row)
                memcpy(row + (size_t)t * row_bytes, pad_row, row_bytes);
            else
                memset(row + (size_t)t * row_bytes, 0, row_bytes);
        }
    }
    return 0;
}

static double causal_pairs(double len) { return len * (len + 1) / 2; }

static void finish(padding_cost *c)
{
    c->waste = c->slots > 0 ? (double)(c->slots - c->tokens) / (double)c->slots : 0;
}

static void add_real(padding_cost *c, const int *lengths, int n)
{
    for (int i = 0; i < n; i++) {
        c->tokens += lengths[i];
        c->attn_pairs_real += causal_pairs(lengths[i]);
    }
    c->sequences += n;
}

padding_cost padding_cost_padded(const int *lengths, int n)
{
    padding_cost c = {0};
    if (n <= 0)
        return c;
    add_real(&c, lengths, n);
    int longest = max_length(lengths, n);
    c.slots = (long)n * longest;
    c.attn_pairs = n * causal_pairs(longest);
    c.batches = 1;
    finish(&c);
    return c;
}

padding_cost padding_cost_packed(const int *lengths, int n)
{
    padding_cost c = {0};
    if (n <= 0)
        return c;
    add_real(&c, lengths, n);
    c.slots = c.tokens;
    c.attn_pairs = c.attn_pairs_real;
    c.batches = 1;
    finish(&c);
    return c;
}

//> bucketed
int padding_cost_bucketed(const int *lengths, int n, const int *edges, int nbuckets,
                          padding_cost *out)
{
    padding_cost c = {0};
    *out = c;
    if (nbuckets < 1)
        return -1;
    for (int b = 1; b < nbuckets; b++)
        if (edges[b] <= edges[b - 1])
            return -1;
    int *count = calloc((size_t)nbuckets, sizeof *count);
    int *longest = calloc((size_t)nbuckets, sizeof *longest);
    if (!count || !longest) {
        free(count);
        free(longest);
        return -1;
    }
    for (int i = 0; i < n; i++) {
        int b = 0;
        while (b < nbuckets - 1 && lengths[i] > edges[b])
            b++;
        count[b]++;
        if (lengths[i] > longest[b])
            longest[b] = lengths[i];
    }
    if (n > 0)
        add_real(&c, lengths, n);
    for (int b = 0; b < nbuckets; b++) {
        if (!count[b])
            continue;
        /* Each bucket is its own batch, padded to its own longest member. */
        c.slots += (long)count[b] * longest[b];
        c.attn_pairs += count[b] * causal_pairs(longest[b]);
        c.batches++;
    }
    free(count);
    free(longest);
    finish(&c);
    *out = c;
    return 0;
}
//< bucketed

length_dist length_dist_lognormal(double median, double sigma, int min_len, int max_len)
{
    length_dist d = {median, sigma, 0, median, sigma, min_len, max_len};
    return d;
}

int length_draw(const length_dist *d, rng_state *r)
{
    int tail = d->tail_share > 0 && rng_uniform(r) < d->tail_share;
    double median = tail ? d->tail_median : d->median;
    double sigma = tail ? d->tail_sigma : d->sigma;
    double x = rng_lognormal(r, log(median), sigma);
    /* Clamp in doubles first: a far tail draw must not overflow the cast. */
    if (!(x >= d->min_len))
        return d->min_len;
    if (x >= d->max_len)
        return d->max_len;
    return (int)lround(x);
}

void length_draw_n(const length_dist *d, rng_state *r, int *lengths, int n)
{
    for (int i = 0; i < n; i++)
        lengths[i] = length_draw(d, r);
}
