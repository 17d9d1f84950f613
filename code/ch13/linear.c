/* Chapter 13: linear attention.  Qwen3.5-397B-A17B keeps, in 45 of its 60
 * layers, a Gated DeltaNet state per sequence (model/linear_attention.h)
 * instead of a cache that grows with the context; the other 15 keep a GQA
 * cache.  On eight H200s at tp 8 with fp8 weights and a bf16 cache, how
 * many sequences the replica holds at 8k, 32k and 128k tokens, against the
 * same budget were every layer GQA attention (the model's own 2 KV heads of
 * 256).  Memory only: no rate enters, so the roofline and the calibrated
 * answer hold the same sequences.  The gain is the ratio of one GPU's bytes
 * of a sequence (before the counts round down). */
#include "memory.h"
#include "notebook.h"

#include <stdio.h>
#include <stdlib.h>

#define TP 8

static void die(const char *what, const char *err)
{
    fprintf(stderr, "ch13/linear: %s: %s\n", what, err);
    exit(1);
}

int main(void)
{
    char err[256];
    model_spec m = model_builtin("qwen3.5-397b-a17b");
    gpu_spec g = gpu_builtin("h200");
    precision p = precision_uniform(DT_FP8);
    p.kv = DT_BF16; /* the engines' default cache beside fp8 weights */
    replica_memory r;
    if (replica_memory_plan(&m, &g, p, TP, memory_policy_default(), &r, err, sizeof err) != 0)
        die("plan", err);

    /* the same layers with every one a GQA layer: no state, a cache in all 60 */
    model_spec gqa = m;
    gqa.linear_layers = 0;
    replica_memory rg = r;
    rg.kv_per_token = kv_bytes_per_token_per_gpu(&gqa, DT_BF16, TP);
    rg.state_per_sequence = 0;

    const double state = state_bytes_per_sequence_per_gpu(&m, 1); /* whole model (tp 1) */
    const double kv_token = kv_bytes_per_token(&m, DT_BF16);           /* the 15 GQA layers, whole model */
    nb_value("ch13_la_layers", "%d", m.linear_layers);
    nb_value("ch13_la_all_layers", "%d", m.layers);
    nb_value("ch13_la_gqa_layers", "%d", m.layers - m.linear_layers);
    nb_value("ch13_la_state_layer_mb", "%.2f", state / m.linear_layers / 1e6);
    nb_value("ch13_la_state_mb", "%.0f", state / 1e6);
    nb_value("ch13_la_kv_kb", "%.1f", kv_token / 1e3);
    nb_value("ch13_la_gqa_kb", "%.1f", kv_bytes_per_token(&gqa, DT_BF16) / 1e3);
    /* the context whose cache in the 15 GQA layers weighs what the state does */
    nb_value("ch13_la_even_tokens", "%.0f", state / kv_token);
    nb_value("ch13_la_budget_gb", "%.1f", r.kv_budget / 1e9);
    nb_value("ch13_la_state_gpu_mb", "%.1f", r.state_per_sequence / 1e6);

    static const struct {
        int context;
        const char *tag;
    } CTX[] = {{8192, "8k"}, {32768, "32k"}, {131072, "128k"}};
    for (int i = 0; i < 3; i++) {
        char name[64];
        int held = max_batch_for_memory(&r, CTX[i].context), held_gqa = max_batch_for_memory(&rg, CTX[i].context);
        snprintf(name, sizeof name, "ch13_la_hold_%s", CTX[i].tag);
        nb_value(name, "%d", held);
        snprintf(name, sizeof name, "ch13_la_gqa_hold_%s", CTX[i].tag);
        nb_value(name, "%d", held_gqa);
        /* a share, not a time: one GPU's bytes of a GQA sequence over a linear one's */
        const double one = CTX[i].context * r.kv_per_token + r.state_per_sequence;
        snprintf(name, sizeof name, "ch13_la_gain_%s", CTX[i].tag);
        nb_value(name, "%.1f", CTX[i].context * rg.kv_per_token / one);
    }
    return 0;
}
