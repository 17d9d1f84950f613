/* Chapter 6: what one adapter weighs.  LLaMA-3-8B and -70B, the attention
 * projections (q, k, v, o) and all seven modules, at ranks 8, 16 and 64; the
 * GQA trap (k and v sized as square); three hundred tenants as full copies
 * against one base.  Prints the size table and records the values the
 * chapter quotes. */
#include "lora.h"
#include "notebook.h"

#include <stdio.h>
#include <stdlib.h>

static lora_size size_of(const model_spec *m, int rank, lora_targets t, int tp)
{
    lora_config c = {m, rank, t, DT_BF16, tp};
    lora_size s;
    char err[256];
    if (lora_adapter_size(&c, &s, err, sizeof err) != 0) {
        fprintf(stderr, "sizes: %s\n", err);
        exit(1);
    }
    return s;
}

int main(void)
{
    model_spec m8 = model_builtin("llama3-8b"), m70 = model_builtin("llama3-70b");
    const model_spec *models[] = {&m8, &m70};
    const char *mname[] = {"8b", "70b"};
    const int ranks[] = {8, 16, 64};
    const struct {
        lora_targets t;
        const char *name, *label;
    } sets[] = {{LORA_TARGETS_ATTENTION, "qkvo", "q,k,v,o"}, {LORA_TARGETS_ALL, "all", "all seven"}};

    printf("%-12s %-10s %5s %14s %12s %12s\n", "model", "targets", "rank", "parameters", "bf16 bytes", "of the base");
    for (int mi = 0; mi < 2; mi++)
        for (int si = 0; si < 2; si++)
            for (int ri = 0; ri < 3; ri++) {
                lora_size s = size_of(models[mi], ranks[ri], sets[si].t, 1);
                printf("%-12s %-10s %5d %14.0f %9.1f MB %11.3f%%\n", models[mi]->name, sets[si].label, ranks[ri],
                       s.params, s.bytes / MB, 100 * s.base_fraction);
                char n[64];
                snprintf(n, sizeof n, "ch06_%s_%s_r%d_mb", mname[mi], sets[si].name, ranks[ri]);
                nb_value(n, "%.1f", s.bytes / MB);
                snprintf(n, sizeof n, "ch06_%s_%s_r%d_mparams", mname[mi], sets[si].name, ranks[ri]);
                nb_value(n, "%.2f", s.params / 1e6);
                snprintf(n, sizeof n, "ch06_%s_%s_r%d_pct", mname[mi], sets[si].name, ranks[ri]);
                nb_value(n, "%.2f", 100 * s.base_fraction);
            }

    /* Per layer, for the derivation in the text: the 8B at rank 16. */
    nb_value("ch06_8b_q_layer", "%.0f", lora_module_params(&m8, LORA_Q, 16));
    nb_value("ch06_8b_k_layer", "%.0f", lora_module_params(&m8, LORA_K, 16));
    nb_value("ch06_8b_up_layer", "%.0f", lora_module_params(&m8, LORA_UP, 16));
    nb_value("ch06_8b_kv_width", "%d", m8.kv_heads * m8.head_dim);
    nb_value("ch06_8b_layers", "%d", m8.layers);
    nb_value("ch06_70b_layers", "%d", m70.layers);
    nb_value("ch06_8b_hidden", "%d", m8.hidden);
    nb_value("ch06_70b_hidden", "%d", m70.hidden);
    nb_value("ch06_70b_kv_width", "%d", m70.kv_heads * m70.head_dim);
    nb_value("ch06_8b_ffn", "%d", m8.ffn);

    /* The GQA trap: k and v sized hidden x hidden. */
    lora_size right = size_of(&m70, 16, LORA_TARGETS_ATTENTION, 1);
    double square = (double)m70.layers * 4 * 16 * (2.0 * m70.hidden);
    nb_value("ch06_70b_qkvo_r16_square_mparams", "%.2f", square / 1e6);
    nb_value("ch06_gqa_overcount_pct", "%.0f", 100 * (square / right.params - 1));

    /* Tensor parallelism: the 70B's q,k,v,o adapter at rank 16 over 4 GPUs. */
    lora_size tp4 = size_of(&m70, 16, LORA_TARGETS_ATTENTION, 4);
    nb_value("ch06_70b_qkvo_r16_tp4_mb", "%.1f", tp4.bytes_per_gpu / MB);
    nb_value("ch06_70b_qkvo_r16_tp4_share_pct", "%.0f", 100 * tp4.bytes_per_gpu / tp4.bytes);

    /* Three hundred tenants. */
    lora_config c = {&m70, 16, LORA_TARGETS_ATTENTION, DT_BF16, 4};
    lora_tenancy t;
    char err[256];
    if (lora_tenancy_compare(&c, precision_uniform(DT_BF16), 300, &t, err, sizeof err) != 0) {
        fprintf(stderr, "sizes: %s\n", err);
        return 1;
    }
    nb_value("ch06_tenants", "%d", t.tenants);
    nb_value("ch06_copies_gpus", "%d", t.copies_gpus);
    nb_value("ch06_adapters_gpus", "%d", t.adapters_gpus);
    nb_value("ch06_copies_tb", "%.1f", t.copies_weight_bytes / TB);
    nb_value("ch06_adapters_gb", "%.0f", t.adapters_weight_bytes / GB);
    nb_value("ch06_all_adapters_gb", "%.1f", (t.adapters_weight_bytes - weight_bytes(&m70, DT_BF16)) / GB);
    nb_value("ch06_70b_base_gb", "%.0f", weight_bytes(&m70, DT_BF16) / GB);
    nb_value("ch06_copies_fifty_gpus", "%d", 50 * c.tp);
    return 0;
}
