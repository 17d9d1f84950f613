/* Chapter 3: what padding a ragged batch costs.  Draws batches of prompt
 * lengths (lognormal, and a long-tailed mix with 10% documents), and
 * compares padding to the longest, length bucketing and packing in slots,
 * FLOP (from the step model) and KV memory.  Writes 03-padding.tsv. */
#include "memory.h"
#include "notebook.h"
#include "packing.h"
#include "transformer.h"

#include <stdio.h>
#include <stdlib.h>

#define BATCHES 400 /* batches averaged per point */
#define MAX_N 256

static const int edges[] = {256, 512, 1024, 2048, 4096, 8192};
#define NEDGES ((int)(sizeof edges / sizeof edges[0]))

static double step_flop(const model_spec *m, int batch, int tokens, precision prec)
{
    step_shape s = prefill_shape(batch, 0, tokens, 1, prec);
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(m, &s, ops, DECODER_MAX_OPS);
    if (n < 0) {
        fprintf(stderr, "padding: bad step shape (batch %d, tokens %d)\n", batch, tokens);
        exit(1);
    }
    double f = 0;
    for (int i = 0; i < n; i++)
        f += ops[i].flop * op_repeats(m, &ops[i]);
    return f;
}

typedef struct {
    double padded, bucketed;
} waste_pair;

static waste_pair mean_waste(const length_dist *d, int n, rng_state *r)
{
    int len[MAX_N];
    waste_pair w = {0, 0};
    for (int b = 0; b < BATCHES; b++) {
        length_draw_n(d, r, len, n);
        padding_cost pc = padding_cost_padded(len, n), bc;
        if (padding_cost_bucketed(len, n, edges, NEDGES, &bc)) {
            fprintf(stderr, "padding: bad bucket edges\n");
            exit(1);
        }
        w.padded += pc.waste / BATCHES;
        w.bucketed += bc.waste / BATCHES;
    }
    return w;
}

int main(void)
{
    model_spec m = model_builtin("llama3-8b");
    precision prec = precision_uniform(DT_BF16);
    length_dist chat = length_dist_lognormal(300, 0.8, 16, 8192);
    length_dist mixed = chat;
    mixed.tail_share = 0.10;
    mixed.tail_median = 4000;
    mixed.tail_sigma = 0.6;
    rng_state r = rng_make(2024);

    /* One batch of 32 from each distribution, costed three ways. */
    const length_dist *dists[] = {&chat, &mixed};
    const char *names[] = {"chat", "mixed"};
    for (int k = 0; k < 2; k++) {
        int len[32];
        length_draw_n(dists[k], &r, len, 32);
        padding_cost pc = padding_cost_padded(len, 32), pk = padding_cost_packed(len, 32), bc;
        padding_cost_bucketed(len, 32, edges, NEDGES, &bc);
        double flop_padded = step_flop(&m, 32, max_length(len, 32), prec);
        double flop_packed = 0;
        for (int i = 0; i < 32; i++)
            flop_packed += step_flop(&m, 1, len[i], prec); /* FLOP add up sequence by sequence */
        double kv = kv_bytes_per_token(&m, prec.kv);
        char v[64];
#define VAL(suffix, fmt, x)                                                                                  \
    do {                                                                                                       \
        snprintf(v, sizeof v, "ch03_%s_%s", names[k], suffix);                                                \
        nb_value(v, fmt, x);                                                                                   \
    } while (0)
        VAL("longest", "%d", max_length(len, 32));
        VAL("tokens", "%ld", pk.tokens);
        VAL("slots", "%ld", pc.slots);
        VAL("waste", "%.0f%%", 100 * pc.waste);
        VAL("bucket_waste", "%.0f%%", 100 * bc.waste);
        VAL("bucket_batches", "%d", bc.batches);
        VAL("flop_padded_t", "%.0f", flop_padded / TERA);
        VAL("flop_packed_t", "%.0f", flop_packed / TERA);
        VAL("flop_ratio", "%.1f", flop_padded / flop_packed);
        VAL("attn_ratio", "%.1f", pc.attn_pairs / pk.attn_pairs);
        VAL("kv_padded_gb", "%.2f", pc.slots * kv / GB);
        VAL("kv_packed_gb", "%.2f", pk.tokens * kv / GB);
#undef VAL
        printf("%s: lengths", names[k]);
        for (int i = 0; i < 32; i++)
            printf(" %d", len[i]);
        printf("\n");
    }

    /* Mean waste against batch size. */
    FILE *f = nb_data_open("03-padding.tsv");
    fprintf(f, "# prompt lengths: chat = lognormal(median 300, sigma 0.8); mixed = chat + 10%% "
               "lognormal(median 4000, sigma 0.6); clamped to [16, 8192]; %d batches per point\n",
            BATCHES);
    fprintf(f, "n\tchat_padded\tchat_bucketed\tmixed_padded\tmixed_bucketed\n");
    for (int n = 1; n <= MAX_N; n *= 2) {
        waste_pair c = mean_waste(&chat, n, &r), x = mean_waste(&mixed, n, &r);
        fprintf(f, "%d\t%.4f\t%.4f\t%.4f\t%.4f\n", n, c.padded, c.bucketed, x.padded, x.bucketed);
        if (n == 32 || n == 256) {
            char v[64];
            snprintf(v, sizeof v, "ch03_chat_mean_waste_%d", n);
            nb_value(v, "%.0f%%", 100 * c.padded);
            snprintf(v, sizeof v, "ch03_mixed_mean_waste_%d", n);
            nb_value(v, "%.0f%%", 100 * x.padded);
            snprintf(v, sizeof v, "ch03_mixed_mean_bucket_waste_%d", n);
            nb_value(v, "%.0f%%", 100 * x.bucketed);
            snprintf(v, sizeof v, "ch03_chat_mean_bucket_waste_%d", n);
            nb_value(v, "%.0f%%", 100 * c.bucketed);
        }
    }
    fclose(f);
    return 0;
}
