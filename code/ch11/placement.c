/* Chapter 11: where the draft runs, for LLaMA-3-70B on 4 x H100 SXM (bf16),
 * batch 64, 1024-token contexts, alpha 0.8, gamma 4:
 *   time-sliced  the draft sharded over the target's 4 GPUs (draft tp 4);
 *   own GPU      the draft whole on a fifth GPU (draft tp 1), the round still
 *                sequential (draft, then verify);
 *   heads        four Medusa-style heads on the target, run inside the
 *                verification pass (no draft steps), with their own vocabulary
 *                projections or sharing the target's.
 * For each: draft memory per GPU that holds it, round time, speedup, GPUs,
 * and speedup per GPU relative to plain decoding on 4 GPUs.  The heads are
 * credited with the same alpha as the drafts, which flatters them: heads
 * usually accept less.  Every placement is checked against memory (the
 * batch must fit, and its limit is recorded).  Values only; the chapter
 * prints the table. */
#include "memory.h"
#include "notebook.h"
#include "specdec.h"

#include <stdio.h>
#include <stdlib.h>

enum { TP = 4, BATCH = 64, CONTEXT = 1024, GAMMA = 4, HEADS = 4 };
#define ALPHA 0.8

static void die(const char *err)
{
    fprintf(stderr, "placement: %s\n", err);
    exit(1);
}

/* The largest batch the placement holds; the program stops if BATCH is not inside it. */
static int checked_limit(const spec_setup *s)
{
    spec_fit f;
    char err[512];
    if (spec_memory_fit(s, memory_policy_default(), GAMMA, &f, err, sizeof err) != 0)
        die(err);
    if (!f.fits) {
        fit_check_describe(f.draft_separate && f.draft_gpu.max_batch < f.target_gpu.max_batch ? &f.draft_gpu
                                                                                              : &f.target_gpu,
                           s->batch, s->context + GAMMA + 1, err, sizeof err);
        die(err);
    }
    return f.max_batch;
}

static spec_estimate estimate(const spec_setup *s)
{
    spec_estimate e;
    char err[512];
    checked_limit(s);
    if (spec_estimate_compute(s, ALPHA, GAMMA, &e, err, sizeof err) != 0)
        die(err);
    return e;
}

int main(void)
{
    model_spec target = model_builtin("llama3-70b");
    model_spec drafts[2] = {model_builtin("llama3.2-1b"), model_builtin("llama3-8b")};
    const char *tag[2] = {"1b", "8b"};
    gpu_spec h100 = gpu_builtin("h100");
    precision bf16 = precision_uniform(DT_BF16);
    /* every sequence holds the KV of its context and of the round's gamma + 1 tokens */
    double tokens_kv = (double)BATCH * (CONTEXT + GAMMA + 1);
    char err[512];

    for (int d = 0; d < 2; d++) {
        char n[64];
        /* time-sliced: everything split over the target's GPUs */
        spec_setup ts = spec_setup_default(&target, &drafts[d], &h100, TP, BATCH, CONTEXT);
        spec_estimate e = estimate(&ts);
        double mem = weight_bytes_per_gpu(&drafts[d], DT_BF16, TP) +
                     kv_bytes_per_token_per_gpu(&drafts[d], DT_BF16, TP) * tokens_kv;
        snprintf(n, sizeof n, "ch11_ts_%s_mem_gb", tag[d]);
        nb_value(n, "%.2f", mem / GB);
        snprintf(n, sizeof n, "ch11_ts_%s_round_ms", tag[d]);
        nb_value(n, "%.1f", (GAMMA * e.t_draft + e.t_verify) * 1e3);
        snprintf(n, sizeof n, "ch11_ts_%s_speedup", tag[d]);
        nb_value(n, "%.2f", e.speedup_roofline);
        snprintf(n, sizeof n, "ch11_ts_%s_fit", tag[d]);
        nb_value(n, "%d", checked_limit(&ts));
        if (d == 0) {
            nb_value("ch11_plain_step_ms", "%.1f", e.t_target * 1e3);
            nb_value("ch11_verify_ms", "%.1f", e.t_verify * 1e3);
        }

        /* own GPU: the whole draft on one extra GPU */
        spec_setup own = ts;
        own.draft_tp = 1;
        own.draft_own_gpus = 1;
        e = estimate(&own);
        snprintf(n, sizeof n, "ch11_own_%s_fit", tag[d]);
        nb_value(n, "%d", checked_limit(&own));
        mem = weight_bytes(&drafts[d], DT_BF16) + kv_bytes_per_token(&drafts[d], DT_BF16) * tokens_kv;
        snprintf(n, sizeof n, "ch11_own_%s_mem_gb", tag[d]);
        nb_value(n, "%.1f", mem / GB);
        snprintf(n, sizeof n, "ch11_own_%s_round_ms", tag[d]);
        nb_value(n, "%.1f", (GAMMA * e.t_draft + e.t_verify) * 1e3);
        snprintf(n, sizeof n, "ch11_own_%s_speedup", tag[d]);
        nb_value(n, "%.2f", e.speedup_roofline);
        snprintf(n, sizeof n, "ch11_own_%s_per_gpu", tag[d]);
        nb_value(n, "%.2f", e.speedup_roofline * TP / (TP + 1));
    }

    /* heads: no draft steps; verification also runs the heads on each sequence's last position */
    spec_setup none = spec_setup_default(&target, NULL, &h100, TP, BATCH, CONTEXT);
    spec_estimate e = estimate(&none); /* draft_c 0: t_draft = 0 */
    for (int own_vocab = 0; own_vocab <= 1; own_vocab++) {
        double t_heads = spec_heads_time(&target, &h100, HEADS, own_vocab, TP, BATCH, bf16);
        double params = spec_heads_params(&target, HEADS, own_vocab);
        double round = e.t_verify + t_heads;
        const char *k = own_vocab ? "ownvocab" : "shared";
        char n[64];
        /* the heads' weights are a fixed allocation on every GPU of the target */
        resident_model rm = {&target, bf16, TP};
        fit_check f;
        if (memory_fit(&h100, memory_policy_default(), &rm, 1, params * dtype_bytes(DT_BF16) / TP, BATCH,
                       CONTEXT + GAMMA + 1, &f, err, sizeof err) != 0)
            die(err);
        if (!f.fits) {
            fit_check_describe(&f, BATCH, CONTEXT + GAMMA + 1, err, sizeof err);
            die(err);
        }
        snprintf(n, sizeof n, "ch11_heads_%s_fit", k);
        nb_value(n, "%d", f.max_batch);
        snprintf(n, sizeof n, "ch11_heads_%s_params_b", k);
        nb_value(n, "%.2f", params / 1e9);
        snprintf(n, sizeof n, "ch11_heads_%s_mem_gb", k);
        nb_value(n, "%.2f", params * dtype_bytes(DT_BF16) / TP / GB);
        snprintf(n, sizeof n, "ch11_heads_%s_round_ms", k);
        nb_value(n, "%.1f", round * 1e3);
        snprintf(n, sizeof n, "ch11_heads_%s_speedup", k);
        nb_value(n, "%.2f", e.tokens * e.t_target / round);
    }
    return 0;
}
