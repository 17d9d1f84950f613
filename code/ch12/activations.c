/* Chapter 12, the second question: activation memory of LLaMA-3-70B at an
 * 8k sequence, per layer and per GPU, for every recompute and parallelism
 * setting, with Korthikanti et al.'s GPT count and the modern (flash
 * attention, GQA, gated MLP) count.  Layout: TP 8, PP 4 (1F1B), DP 16,
 * microbatch 1, ZeRO-1, on H100 SXM.  Writes 12-activations.tsv
 * (activations per GPU against sequence length by setting) and the values
 * the chapter quotes. */
#include "notebook.h"
#include "train.h"
#include "transformer.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

typedef struct {
    const char *name; /* value and column name */
    activation_model act;
    int tp, sp;
    recompute_kind r;
} setting;

static const setting SETTINGS[] = {
    {"k_none", ACT_KORTHIKANTI, 1, 0, RECOMPUTE_NONE},
    {"k_tp", ACT_KORTHIKANTI, 8, 0, RECOMPUTE_NONE},
    {"k_tp_sp", ACT_KORTHIKANTI, 8, 1, RECOMPUTE_NONE},
    {"k_tp_sel", ACT_KORTHIKANTI, 8, 0, RECOMPUTE_SELECTIVE},
    {"k_tp_sp_sel", ACT_KORTHIKANTI, 8, 1, RECOMPUTE_SELECTIVE},
    {"k_full", ACT_KORTHIKANTI, 8, 0, RECOMPUTE_FULL},
    {"m_none", ACT_MODERN, 1, 0, RECOMPUTE_NONE},
    {"m_tp", ACT_MODERN, 8, 0, RECOMPUTE_NONE},
    {"m_tp_sp", ACT_MODERN, 8, 1, RECOMPUTE_NONE},
    {"m_full", ACT_MODERN, 8, 0, RECOMPUTE_FULL},
    {"m_full_sp", ACT_MODERN, 8, 1, RECOMPUTE_FULL},
};
#define NSET ((int)(sizeof SETTINGS / sizeof SETTINGS[0]))

static train_layout layout_for(const setting *s, int seq)
{
    train_layout l = train_layout_default();
    l.seq = seq;
    l.act = s->act;
    l.tp = s->tp;
    l.sp = s->sp;
    l.recompute = s->r;
    l.pp = 4;
    l.dp = 16;
    l.zero = 1;
    return l;
}

static train_memory plan(const model_spec *m, const gpu_spec *g, const train_layout *l)
{
    train_memory mem;
    char err[256];
    train_state_bytes b = train_state_adam_mixed();
    if (train_memory_plan(m, g, l, &b, &mem, err, sizeof err) != 0) {
        fprintf(stderr, "activations: %s\n", err);
        exit(1);
    }
    return mem;
}

int main(void)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    train_state_bytes b = train_state_adam_mixed();
    const int seq = 8192;
    double sbh = (double)seq * m.hidden;

    nb_value("ch12_70b_5ash", "%.0f", 5.0 * m.heads * seq / m.hidden);
    /* the unit the coefficients count in: n_seq * b_mb * d bytes (they are already bytes) */
    nb_value("ch12_70b_sbh_mb", "%.1f", sbh / 1e6);
    for (int i = 0; i < NSET; i++) {
        const setting *s = &SETTINGS[i];
        train_layout l = layout_for(s, seq);
        train_memory mem = plan(&m, &g, &l);
        char n[96];
        snprintf(n, sizeof n, "ch12_70b_%s_layer_gb", s->name);
        nb_value(n, "%.2f", mem.act_per_layer / 1e9);
        snprintf(n, sizeof n, "ch12_70b_%s_coef", s->name);
        nb_value(n, "%.2f", mem.act_per_layer / sbh);
        snprintf(n, sizeof n, "ch12_70b_%s_model_gb", s->name); /* 80 layers, one microbatch */
        double whole = mem.act_per_layer * m.layers / 1e9;
        nb_value(n, whole >= 10 ? "%.0f" : "%.1f", whole);
        snprintf(n, sizeof n, "ch12_70b_%s_gpu_gb", s->name); /* the first stage, 4 in flight */
        nb_value(n, "%.1f", mem.activations / 1e9);
        snprintf(n, sizeof n, "ch12_70b_%s_max_mb", s->name);
        nb_value(n, "%d", train_max_micro_batch(&m, &g, &l, &b, 4096));
    }
    /* the longest sequence (in steps of 1024) at which a setting still fits at microbatch 1 */
    const int limits[] = {1, 4, 8, 10};
    for (int i = 0; i < 4; i++) {
        const setting *s = &SETTINGS[limits[i]];
        int last = 0;
        for (int sq = 1024; sq <= 4194304; sq += 1024) {
            train_layout l = layout_for(s, sq);
            if (!plan(&m, &g, &l).fits)
                break;
            last = sq;
        }
        char n[96];
        snprintf(n, sizeof n, "ch12_70b_%s_max_seq", s->name);
        nb_value(n, "%d", last);
    }
    {
        train_layout k = layout_for(&SETTINGS[0], seq), md = layout_for(&SETTINGS[6], seq);
        train_layout tp = layout_for(&SETTINGS[7], seq), tpsp = layout_for(&SETTINGS[8], seq);
        double kb = train_layer_activation_bytes(&m, &k);
        nb_value("ch12_70b_scores_pct", "%.0f", 100 * (5.0 * m.heads * seq / m.hidden) / (34 + 5.0 * m.heads * seq / m.hidden));
        nb_value("ch12_70b_overcount", "%.1f", kb / train_layer_activation_bytes(&m, &md));
        nb_value("ch12_70b_sp_gain", "%.1f", train_layer_activation_bytes(&m, &tp) / train_layer_activation_bytes(&m, &tpsp));
    }
    /* the state of the same GPU, and what is left for activations */
    train_layout base = layout_for(&SETTINGS[8], seq);
    train_memory mem = plan(&m, &g, &base);
    double state = mem.weights + mem.grads + mem.optimizer;
    nb_value("ch12_70b_params_gpu_b", "%.2f", mem.params / 1e9);
    nb_value("ch12_70b_weights_gb", "%.2f", mem.weights / 1e9);
    nb_value("ch12_70b_grads_gb", "%.2f", mem.grads / 1e9);
    nb_value("ch12_70b_opt_gb", "%.2f", mem.optimizer / 1e9);
    nb_value("ch12_70b_opt_zero0_gb", "%.1f", mem.optimizer * 16 / 1e9);
    nb_value("ch12_70b_state_gb", "%.1f", state / 1e9);
    nb_value("ch12_70b_total_gb", "%.1f", mem.total / 1e9);
    nb_value("ch12_70b_cap_gb", "%.0f", mem.capacity / 1e9);
    nb_value("ch12_70b_room_gb", "%.1f", (mem.capacity - state) / 1e9);
    /* Megatron-LM's default keeps the gradients in fp32: 2 + 4 + 12 bytes */
    {
        train_state_bytes b32;
        char e[256];
        if (train_state_adam("fp32", "fp32", &b32, e, sizeof e) != 0) {
            fprintf(stderr, "activations: %s\n", e);
            exit(1);
        }
        train_memory m32;
        if (train_memory_plan(&m, &g, &base, &b32, &m32, e, sizeof e) != 0) {
            fprintf(stderr, "activations: %s\n", e);
            exit(1);
        }
        nb_value("ch12_70b_grads_fp32_gb", "%.2f", m32.grads / 1e9);
        nb_value("ch12_70b_total_fp32_gb", "%.1f", m32.total / 1e9);
        nb_value("ch12_70b_max_mb_fp32", "%d", train_max_micro_batch(&m, &g, &base, &b32, 4096));
    }
    nb_value("ch12_70b_whole_state_tb", "%.2f", 16.0 * model_params(&m).total / 1e12);
    /* the pipeline: GPipe with 16 microbatches holds all of them */
    train_layout gp = base;
    gp.schedule = PIPE_GPIPE;
    gp.microbatches = 16;
    nb_value("ch12_70b_gpipe16_gpu_gb", "%.1f", plan(&m, &g, &gp).activations / 1e9);
    train_layout pp8 = base;
    pp8.pp = 8;
    pp8.dp = 8;
    nb_value("ch12_70b_pp8_gpu_gb", "%.1f", plan(&m, &g, &pp8).activations / 1e9);
    /* one microbatch past the largest that fits: activations grow in proportion */
    train_layout next = base;
    next.micro_batch = train_max_micro_batch(&m, &g, &base, &b, 4096) + 1;
    train_memory mn = plan(&m, &g, &next);
    nb_value("ch12_70b_mb_next", "%d", next.micro_batch);
    nb_value("ch12_70b_mb_next_gpu_gb", "%.1f", mn.activations / 1e9);
    nb_value("ch12_70b_mb_next_total_gb", "%.1f", mn.total / 1e9);

    /* --- figure: activations per GPU against sequence length --- */
    FILE *fd = nb_data_open("12-activations.tsv");
    fprintf(fd, "# LLaMA-3-70B, H100 SXM, first stage of TP %s x PP 4 (1F1B, 4 in flight), microbatch 1;\n"
                "# activations per GPU in bytes; room = capacity - weights, gradients and ZeRO-1 optimizer\n",
            "8 (1 for *_none)");
    fprintf(fd, "seq");
    for (int i = 0; i < NSET; i++)
        fprintf(fd, "\t%s", SETTINGS[i].name);
    fprintf(fd, "\troom\n");
    for (int s = 1024; s <= 131072; s *= 2) {
        for (int half = 0; half < 2 && (half == 0 || s < 131072); half++) {
            int sq = half ? s + s / 2 : s;
            fprintf(fd, "%d", sq);
            for (int i = 0; i < NSET; i++) {
                train_layout l = layout_for(&SETTINGS[i], sq);
                fprintf(fd, "\t%.6g", plan(&m, &g, &l).activations);
            }
            fprintf(fd, "\t%.6g\n", mem.capacity - state);
        }
    }
    fclose(fd);
    /* two curves of the figure that lie on one line: Korthikanti's TP + SP + selective
     * (34 / t per sbh) and the modern TP + SP; their largest gap over the plotted lengths */
    double gap = 0;
    for (int sq = 1024; sq <= 131072; sq *= 2) {
        train_layout a = layout_for(&SETTINGS[4], sq), c = layout_for(&SETTINGS[8], sq);
        double x = plan(&m, &g, &a).activations, y = plan(&m, &g, &c).activations;
        gap = fmax(gap, fabs(x - y) / y);
    }
    nb_value("ch12_ksel_msp_gap_pct", "%.1f", 100 * gap);
    return 0;
}
