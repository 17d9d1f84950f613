/* Chapter 3: N requests one after another against one batch of N, from the
 * step model, on measured ceilings rather than datasheet peaks.  Writes the
 * values of the worked example and 03-seq-vs-batch.tsv (ratio against N at
 * three prompt lengths, with the KV cap marked). */
#include "ceilings.h"
#include "memory.h"
#include "notebook.h"
#include "batch_vs_sequential.h"

#include <stdio.h>
#include <stdlib.h>


static void must(int rc, const char *err)
{
    if (rc) {
        fprintf(stderr, "seq_vs_batch: %s\n", err);
        exit(1);
    }
}

int main(void)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec sheet = gpu_builtin("h100");
    published_ceilings pub;
    if (published_ceilings_for(sheet.key, &pub) != 0) {
        fprintf(stderr, "seq_vs_batch: no published ceilings for %s\n", sheet.key);
        return 1;
    }
    /* A weight read is a read: the read-only rate, not the copy rate. */
    gpu_spec g = gpu_at_published_ceilings(&sheet, &pub);
    precision prec = precision_uniform(DT_BF16);
    char err[256];

    /* The KV budget caps N: one GPU, bf16 weights, vLLM's 90% of what the
     * driver reports. */
    replica_memory rm;
    must(replica_memory_plan(&m, &sheet, prec, 1, memory_policy_default(), &rm, err, sizeof err), err);

    serve_workload w = {32, 512, 256, 1, prec};
    if (max_batch_for_memory(&rm, w.prompt + w.output) < w.requests) {
        fprintf(stderr, "seq_vs_batch: the worked batch does not fit\n");
        return 1;
    }
    serve_result seq, one, seq_sheet, one_sheet;
    must(serve_sequential(&m, &g, &w, &seq, err, sizeof err), err);
    must(serve_one_batch(&m, &g, &w, &one, err, sizeof err), err);
    must(serve_sequential(&m, &sheet, &w, &seq_sheet, err, sizeof err), err);
    must(serve_one_batch(&m, &sheet, &w, &one_sheet, err, sizeof err), err);

    nb_value("ch03_read_tbs", "%.2f", pub.read_bw / TB);
    nb_value("ch03_copy_tbs", "%.2f", pub.copy_bw / TB);
    nb_value("ch03_sheet_tbs", "%.2f", sheet.mem_bw / TB);
    nb_value("ch03_gemm_tflops", "%.0f", pub.gemm_bf16 / TERA);
    nb_value("ch03_bw_share", "%.0f%%", 100 * pub.read_bw / sheet.mem_bw);
    nb_value("ch03_flops_share", "%.0f%%", 100 * pub.gemm_bf16 / gpu_peak_flops(&sheet, DT_BF16));
    nb_value("ch03_seq_s", "%.0f", seq.total);
    nb_value("ch03_batch_s", "%.1f", one.total);
    nb_value("ch03_ratio", "%.0f", seq.total / one.total);
    nb_value("ch03_seq_sheet_s", "%.0f", seq_sheet.total);
    nb_value("ch03_batch_sheet_s", "%.1f", one_sheet.total);
    nb_value("ch03_seq_prefill_s", "%.2f", seq.prefill);
    nb_value("ch03_seq_decode_s", "%.1f", seq.decode);
    nb_value("ch03_batch_prefill_s", "%.2f", one.prefill);
    nb_value("ch03_batch_decode_s", "%.2f", one.decode);
    nb_value("ch03_one_step_ms", "%.2f", 1e3 * seq.decode / (w.requests * (w.output - 1.0)));
    nb_value("ch03_batch_step_ms", "%.2f", 1e3 * one.decode / (w.output - 1.0));
    nb_value("ch03_seq_mean_latency_s", "%.0f", seq.mean_latency);
    nb_value("ch03_seq_first_token_s", "%.0f", seq.first_token);
    nb_value("ch03_batch_first_token_s", "%.2f", one.first_token);
    nb_value("ch03_seq_tok_s", "%.0f", seq.tokens_per_s);
    nb_value("ch03_batch_tok_s", "%.0f", one.tokens_per_s);
    nb_value("ch03_steps_seq", "%ld", seq.steps);
    nb_value("ch03_steps_batch", "%ld", one.steps);
    nb_value("ch03_decode_steps", "%d", w.output - 1);
    /* What one decode step streams: every weight but the embedding table,
     * of which it gathers only the rows of its tokens. */
    step_shape one_step = decode_shape(1, w.prompt, 1, prec);
    step_cost c1;
    must(decoder_step_cost(&m, &g, &one_step, &c1, err, sizeof err), err);
    nb_value("ch03_weights_gb", "%.1f", c1.weight_bytes / GB);
    nb_value("ch03_weights_all_gb", "%.1f", weight_bytes(&m, prec.weights) / GB);
    nb_value("ch03_final_ctx", "%d", w.prompt + w.output);

    int final_ctx = w.prompt + w.output;
    nb_value("ch03_kv_budget_gb", "%.1f", rm.kv_budget / GB);
    nb_value("ch03_kv_per_token_kib", "%.0f", rm.kv_per_token / KiB);
    nb_value("ch03_cap_768", "%d", max_batch_for_memory(&rm, final_ctx));

    /* The ratio against N at three prompt lengths (output 256 throughout). */
    FILE *f = nb_data_open("03-seq-vs-batch.tsv");
    fprintf(f, "# LLaMA-3-8B bf16, one H100 at %.2f TB/s (read) and %.0f TFLOP/s, output 256 tokens\n",
            pub.read_bw / TB, pub.gemm_bf16 / TERA);
    fprintf(f, "prompt\tn\tsequential_s\tbatch_s\tratio\tfits\n");
    FILE *caps = nb_data_open("03-seq-caps.tsv"); /* the ratio at each prompt's memory ceiling */
    fprintf(caps, "prompt\tcap\tratio\n");
    const int prompts[] = {512, 2048, 6144}; /* 6144 + 256 stays inside the 8192-token window */
    for (int p = 0; p < 3; p++) {
        serve_workload v = {1, prompts[p], 256, 1, prec};
        int cap = max_batch_for_memory(&rm, prompts[p] + 256);
        char name[64];
        snprintf(name, sizeof name, "ch03_cap_prompt_%d", prompts[p]);
        nb_value(name, "%d", cap);
        /* powers of two up to 512 and, in order, the memory ceiling itself,
         * so the solid (fitting) line ends at the ceiling */
        int ns[12], count = 0;
        for (int n = 1; n <= 512; n *= 2) {
            if (cap > n / 2 && cap < n)
                ns[count++] = cap;
            ns[count++] = n;
        }
        for (int i = 0; i < count; i++) {
            int n = ns[i];
            v.requests = n;
            serve_result s, b;
            must(serve_sequential(&m, &g, &v, &s, err, sizeof err), err);
            must(serve_one_batch(&m, &g, &v, &b, err, sizeof err), err);
            fprintf(f, "%d\t%d\t%.4f\t%.4f\t%.3f\t%d\n", prompts[p], n, s.total, b.total, s.total / b.total,
                    n <= cap);
            if (n == 256) {
                snprintf(name, sizeof name, "ch03_fits_256_prompt_%d", prompts[p]);
                nb_value(name, "%s", n <= cap ? "yes" : "no");
                if (n <= cap) { /* a ratio only for a batch whose KV cache is held */
                    snprintf(name, sizeof name, "ch03_ratio_256_prompt_%d", prompts[p]);
                    nb_value(name, "%.1f", s.total / b.total);
                }
            }
            if (n == 32) {
                snprintf(name, sizeof name, "ch03_ratio_32_prompt_%d", prompts[p]);
                nb_value(name, "%.1f", s.total / b.total);
                snprintf(name, sizeof name, "ch03_seq_32_prompt_%d", prompts[p]);
                nb_value(name, "%.0f", s.total);
                snprintf(name, sizeof name, "ch03_batch_32_prompt_%d", prompts[p]);
                nb_value(name, "%.1f", b.total);
            }
        }
        /* At the memory ceiling itself: the most this batch can buy. */
        if (cap >= 1) {
            v.requests = cap;
            serve_result s, b;
            must(serve_sequential(&m, &g, &v, &s, err, sizeof err), err);
            must(serve_one_batch(&m, &g, &v, &b, err, sizeof err), err);
            snprintf(name, sizeof name, "ch03_ratio_cap_prompt_%d", prompts[p]);
            nb_value(name, "%.1f", s.total / b.total);
            fprintf(caps, "%d\t%d\t%.3f\n", prompts[p], cap, s.total / b.total);
        }
        fprintf(f, "\n\n"); /* one gnuplot data block per prompt length */
    }
    fclose(f);
    fclose(caps);
    printf("sequential %.1f s, one batch %.2f s, ratio %.1f\n", seq.total, one.total, seq.total / one.total);
    return 0;
}
