/* Chapter 6, the memory limit: adapter slots sized for the largest rank come
 * out of the KV cache.  LLaMA-3-70B on 4 x H100 SXM and LLaMA-3-8B on one
 * H100, bf16, 4096-token contexts, the default memory policy.
 *
 * Writes 06-slots.tsv (largest batch against slots, for three slot sizes on
 * the 70B and one on the 8B) and the values the chapter quotes. */
#include "lora.h"
#include "notebook.h"

#include <stdio.h>
#include <stdlib.h>

enum { CONTEXT = 4096 };

static fit_check fit(const gpu_spec *g, const model_spec *m, int tp, int rank, lora_targets t, int slots, int batch)
{
    lora_config c = {m, rank, t, DT_BF16, tp};
    fit_check f;
    char err[256];
    if (lora_memory_fit(g, memory_policy_default(), precision_uniform(DT_BF16), &c, slots, batch, CONTEXT, &f, err,
                        sizeof err) != 0) {
        fprintf(stderr, "slots: %s\n", err);
        exit(1);
    }
    return f;
}

static lora_size size_of(const model_spec *m, int tp, int rank, lora_targets t)
{
    lora_config c = {m, rank, t, DT_BF16, tp};
    lora_size s;
    char err[256];
    if (lora_adapter_size(&c, &s, err, sizeof err) != 0) {
        fprintf(stderr, "slots: %s\n", err);
        exit(1);
    }
    return s;
}

int main(void)
{
    model_spec m70 = model_builtin("llama3-70b"), m8 = model_builtin("llama3-8b");
    gpu_spec h100 = gpu_builtin("h100");
    FILE *f = nb_data_open("06-slots.tsv");
    fprintf(f, "slots\tb70_qkvo_r16\tb70_qkvo_r64\tb70_all_r64\tb8_all_r64\n");
    for (int s = 0; s <= 128; s += 4) {
        fprintf(f, "%d", s);
        const struct {
            const model_spec *m;
            int tp, rank;
            lora_targets t;
        } cases[] = {{&m70, 4, 16, LORA_TARGETS_ATTENTION},
                     {&m70, 4, 64, LORA_TARGETS_ATTENTION},
                     {&m70, 4, 64, LORA_TARGETS_ALL},
                     {&m8, 1, 64, LORA_TARGETS_ALL}};
        for (int k = 0; k < 4; k++) {
            fit_check c = fit(&h100, cases[k].m, cases[k].tp, cases[k].rank, cases[k].t, s, 1);
            /* where no sequence fits the line ends */
            if (c.max_batch > 0)
                fprintf(f, "\t%d", c.max_batch);
            else
                fprintf(f, "\tNaN");
        }
        fprintf(f, "\n");
    }
    fclose(f);

    /* The 70B at TP 4: what one slot costs in sequences. */
    lora_size q16 = size_of(&m70, 4, 16, LORA_TARGETS_ATTENTION), a64 = size_of(&m70, 4, 64, LORA_TARGETS_ALL);
    fit_check none = fit(&h100, &m70, 4, 16, LORA_TARGETS_ATTENTION, 0, 1);
    double seq = none.kv_per_token * CONTEXT;
    nb_value("ch06_kv_seq_mb", "%.0f", seq / MB);
    nb_value("ch06_slot_qkvo_r16_mb", "%.1f", q16.bytes_per_gpu / MB);
    nb_value("ch06_slot_all_r64_mb", "%.0f", a64.bytes_per_gpu / MB);
    nb_value("ch06_slot_all_r64_seqs", "%.1f", a64.bytes_per_gpu / seq);
    nb_value("ch06_slot_qkvo_r16_seqs", "%.2f", q16.bytes_per_gpu / seq);
    nb_value("ch06_max_batch_0", "%d", none.max_batch);
    nb_value("ch06_kv_budget_gb", "%.1f", none.kv_budget / GB);
    const int shown[] = {8, 32, 64, 128};
    for (int i = 0; i < 4; i++) {
        char n[64];
        fit_check a = fit(&h100, &m70, 4, 16, LORA_TARGETS_ATTENTION, shown[i], 1);
        fit_check b = fit(&h100, &m70, 4, 64, LORA_TARGETS_ALL, shown[i], 1);
        snprintf(n, sizeof n, "ch06_max_batch_qkvo_r16_s%d", shown[i]);
        nb_value(n, "%d", a.max_batch);
        snprintf(n, sizeof n, "ch06_max_batch_all_r64_s%d", shown[i]);
        nb_value(n, "%d", b.max_batch);
    }
    /* The rank a slot is sized for: 64 where most adapters are 16 (q,k,v,o). */
    lora_size q64 = size_of(&m70, 4, 64, LORA_TARGETS_ATTENTION);
    nb_value("ch06_pad_64_over_16", "%.0f", q64.bytes_per_gpu / q16.bytes_per_gpu);
    fit_check p16 = fit(&h100, &m70, 4, 16, LORA_TARGETS_ATTENTION, 64, 1);
    fit_check p64 = fit(&h100, &m70, 4, 64, LORA_TARGETS_ATTENTION, 64, 1);
    nb_value("ch06_max_batch_qkvo_r64_s64", "%d", p64.max_batch);
    nb_value("ch06_pad_batch_lost", "%d", p16.max_batch - p64.max_batch);

    /* The 8B on one H100: an all-seven rank-64 slot against one sequence. */
    lora_size e64 = size_of(&m8, 1, 64, LORA_TARGETS_ALL);
    fit_check e0 = fit(&h100, &m8, 1, 64, LORA_TARGETS_ALL, 0, 1);
    nb_value("ch06_8b_slot_all_r64_mb", "%.0f", e64.bytes_per_gpu / MB);
    nb_value("ch06_8b_kv_seq_mb", "%.0f", e0.kv_per_token * CONTEXT / MB);
    nb_value("ch06_8b_max_batch_0", "%d", e0.max_batch);
    fit_check e64s = fit(&h100, &m8, 1, 64, LORA_TARGETS_ALL, 64, 1);
    nb_value("ch06_8b_max_batch_all_r64_s64", "%d", e64s.max_batch);

    /* Host cache and the cost of a miss (each GPU loads its shard over PCIe). */
    nb_value("ch06_pcie_gb_s", "%.0f", h100.host_bw / GB);
    nb_value("ch06_load_qkvo_r16_ms", "%.2f", 1e3 * lora_load_time(&h100, &q16));
    nb_value("ch06_load_all_r64_ms", "%.1f", 1e3 * lora_load_time(&h100, &a64));
    nb_value("ch06_host_300_qkvo_r16_gb", "%.0f", 300 * q16.bytes / GB);
    nb_value("ch06_host_300_all_r64_gb", "%.0f", 300 * a64.bytes / GB);
    return 0;
}
