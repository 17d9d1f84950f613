/* Chapter 13: DeepSeek-V3's MTP module used to speculate.  Eight H200s at
 * tp 8 in fp8 decode 64 sequences of 8192 tokens; the module drafts one or
 * two tokens a step at an acceptance of 0.8 (the drafts' acceptance is an
 * assumption here, not a measurement).  The round of model/mtp.h, at the
 * roofline and at the published TensorRT-LLM rates. */
#include "memory.h"
#include "mtp.h"
#include "notebook.h"
#include "rate_table.h"

#include <stdio.h>
#include <stdlib.h>

#define CONTEXT 8192
#define BATCH 64
#define TP 8
#define ACCEPT 0.8 /* assumed */

static void die(const char *what, const char *err)
{
    fprintf(stderr, "ch13/mtp: %s: %s\n", what, err);
    exit(1);
}

static void answer(const model_spec *m, const gpu_spec *g, const char *tag)
{
    char err[256], name[64];
    step_shape s = decode_shape(BATCH, CONTEXT, TP, precision_uniform(DT_FP8));
    step_cost plain;
    if (decoder_step_cost(m, g, &s, &plain, err, sizeof err) != 0)
        die("step", err);
    snprintf(name, sizeof name, "ch13_mtp_plain_ms%s", tag);
    nb_value(name, "%.2f", plain.time * 1e3);
    for (int steps = 1; steps <= 2; steps++) {
        mtp_round r;
        if (mtp_round_cost(m, g, &s, steps, ACCEPT, &r, err, sizeof err) != 0)
            die("round", err);
        snprintf(name, sizeof name, "ch13_mtp%d_verify_ms%s", steps, tag);
        nb_value(name, "%.2f", r.verify * 1e3);
        snprintf(name, sizeof name, "ch13_mtp%d_module_ms%s", steps, tag);
        nb_value(name, "%.2f", r.module * 1e3);
        snprintf(name, sizeof name, "ch13_mtp%d_tpot_ms%s", steps, tag);
        nb_value(name, "%.2f", r.per_token * 1e3);
        snprintf(name, sizeof name, "ch13_mtp%d_speedup%s", steps, tag);
        nb_value(name, "%.2f", plain.time / r.per_token);
        if (!*tag) {
            snprintf(name, sizeof name, "ch13_mtp%d_tokens", steps);
            nb_value(name, "%.2f", r.tokens);
        }
    }
}

int main(void)
{
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    nb_value("ch13_mtp_accept", "%.1f", ACCEPT);
    nb_value("ch13_mtp_batch", "%d", BATCH);
    nb_value("ch13_mtp_module_gb", "%.2f", mtp_weight_bytes_per_gpu(&m, DT_FP8, TP) / 1e9);
    answer(&m, &g, "");
    rate_model r;
    gpu_spec cal = gpu_builtin_calibrated(g.key, "published:h200_sxm/trtllm", &r);
    answer(&m, &cal, "_cal");
    return 0;
}
