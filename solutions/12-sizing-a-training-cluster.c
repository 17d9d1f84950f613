/* Chapter 12 worked answers, computed through the napkin library.  The
 * exercise tests check these functions against hand derivations; main()
 * records the numbers the written solutions quote. */
#include "12-sizing-a-training-cluster.h"

#include "memory.h"
#include "notebook.h"
#include "specs.h"
#include "train.h"

#include <math.h>
#include <string.h>

double ex12_hardware_over_model(double params, int layers, int width, int seq, const char *recompute)
{
    recompute_kind r;
    if (!(params > 0) || layers < 0 || width < 0 || seq < 1 || recompute_parse(recompute, &r) != 0)
        return NAN;
    /* a shape with the given layers and attention width (heads x head_dim) */
    model_spec shape;
    memset(&shape, 0, sizeof shape);
    shape.layers = layers;
    shape.heads = 1;
    shape.head_dim = width;
    train_flop f = train_flop_per_token(params, layers > 0 ? &shape : NULL, seq, r);
    return f.hardware / f.model;
}

int ex12_gpus_for_deadline(double flop, double days, double peak, double mfu, int node_size)
{
    if (!(flop > 0) || !(days > 0) || !(peak > 0) || !(mfu > 0 && mfu <= 1) || node_size < 1)
        return -1;
    train_run r = {flop, peak, mfu, goodput_model_fixed(1.0)};
    cluster_plan c;
    return train_cluster_for_deadline(&r, days * 86400.0, node_size, &c) == 0 ? c.gpus : -1;
}

double ex12_days_on(double flop, int gpus, double peak, double mfu)
{
    if (!(flop > 0) || gpus < 1 || !(peak > 0) || !(mfu > 0 && mfu <= 1))
        return NAN;
    train_run r = {flop, peak, mfu, goodput_model_fixed(1.0)};
    return train_seconds_on(&r, gpus) / 86400.0;
}

double ex12_goodput_llama3(int gpus)
{
    if (gpus < 1)
        return NAN;
    goodput_model g = goodput_model_llama3();
    return goodput_at(&g, gpus);
}

double ex12_gpus_at_goodput(double goodput)
{
    if (!(goodput > 0 && goodput < 1))
        return NAN;
    /* goodput_at falls with the size: bisect it rather than restate it */
    goodput_model g = goodput_model_llama3();
    double lo = 1, hi = 1e8;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (goodput_at(&g, mid) > goodput)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

double ex12_interruptions_per_day(int gpus)
{
    if (gpus < 1)
        return NAN;
    return goodput_model_llama3().interruptions_per_gpu_day * gpus;
}

double ex12_implied_utilisation(double flop, double peak, double gpu_hours)
{
    return flop > 0 ? train_implied_utilisation(flop, peak, gpu_hours) : NAN;
}

double ex12_activation_coefficient(const char *model_key, int seq, int tp, int sp, const char *recompute,
                                   const char *count)
{
    model_spec m;
    train_layout l = train_layout_default();
    char err[256];
    if (model_lookup(model_key, &m) != 0 || recompute_parse(recompute, &l.recompute) != 0 ||
        activation_model_parse(count, &l.act) != 0)
        return NAN;
    l.seq = seq;
    l.tp = tp;
    l.sp = sp != 0;
    if (train_layout_check(&m, &l, err, sizeof err) != 0)
        return NAN;
    return train_layer_activation_bytes(&m, &l) / ((double)seq * m.hidden);
}

double ex12_stage_activation_bytes(const char *model_key, int seq, int tp, int pp, int sp, const char *schedule,
                                   int microbatches)
{
    model_spec m;
    gpu_spec g;
    train_layout l = train_layout_default();
    if (model_lookup(model_key, &m) != 0 || gpu_lookup("h100", &g) != 0 ||
        pipe_schedule_parse(schedule, &l.schedule) != 0 || microbatches < 1)
        return NAN;
    l.seq = seq;
    l.tp = tp;
    l.pp = pp;
    l.sp = sp != 0;
    l.microbatches = microbatches;
    train_state_bytes b = train_state_adam_mixed();
    train_memory mem;
    char err[256];
    if (train_memory_plan(&m, &g, &l, &b, &mem, err, sizeof err) != 0)
        return NAN;
    return mem.activations;
}

double ex12_state_bytes(const char *model_key, int tp, int pp, int dp, int zero)
{
    model_spec m;
    gpu_spec g;
    train_layout l = train_layout_default();
    if (model_lookup(model_key, &m) != 0 || gpu_lookup("h100", &g) != 0)
        return NAN;
    l.tp = tp;
    l.pp = pp;
    l.dp = dp;
    l.zero = zero;
    train_state_bytes b = train_state_adam_mixed();
    train_memory mem;
    char err[256];
    if (train_memory_plan(&m, &g, &l, &b, &mem, err, sizeof err) != 0)
        return NAN;
    return mem.weights + mem.grads + mem.optimizer;
}

int ex12_max_micro_batch(const char *model_key, const char *gpu_key, int seq, int tp, int pp, int dp, int sp,
                         int zero)
{
    model_spec m;
    gpu_spec g;
    train_layout l = train_layout_default();
    if (model_lookup(model_key, &m) != 0 || gpu_lookup(gpu_key, &g) != 0)
        return -1;
    l.seq = seq;
    l.tp = tp;
    l.pp = pp;
    l.dp = dp;
    l.sp = sp != 0;
    l.zero = zero;
    train_state_bytes b = train_state_adam_mixed();
    return train_max_micro_batch(&m, &g, &l, &b, 4096);
}

#ifndef NB_EXERCISE_TEST
int main(void)
{
    gpu_spec h100 = gpu_builtin("h100");
    double peak = gpu_peak_flops(&h100, DT_BF16);
    /* 1: 13B on 2T tokens in 30 days at 40% MFU */
    double flop1 = 6 * 13e9 * 2e12;
    nb_value("ch12_ex1_gpu_days", "%.0f", flop1 / (peak * 0.4) / 86400);
    int right = ex12_gpus_for_deadline(flop1, 30, peak, 0.4, 8);
    int wrong = ex12_gpus_for_deadline(flop1, 30, 2 * peak, 0.4, 8);
    nb_value("ch12_ex1_gpus", "%d", right);
    nb_value("ch12_ex1_gpus_sparse", "%d", wrong);
    nb_value("ch12_ex1_days_wrong", "%.1f", ex12_days_on(flop1, wrong, peak, 0.4));
    /* 2: LLaMA-3-70B at 8k: 80 layers, attention width 64 x 128 */
    model_spec m70 = model_builtin("llama3-70b");
    double n70 = train_matmul_params(&m70);
    double full = ex12_hardware_over_model(n70, 80, 8192, 8192, "full");
    nb_value("ch12_ex2_full_ratio", "%.4f", full);
    nb_value("ch12_ex2_mfu", "%.1f", 53.0 / full);
    nb_value("ch12_ex2_sel_ratio", "%.4f", ex12_hardware_over_model(n70, 80, 8192, 8192, "selective"));
    nb_value("ch12_ex2_sel_ratio_128k", "%.3f", ex12_hardware_over_model(n70, 80, 8192, 131072, "selective"));
    /* 3: the coefficient of sbh */
    nb_value("ch12_ex3_k70_2k", "%.2f", ex12_activation_coefficient("llama3-70b", 2048, 1, 0, "none", "korthikanti"));
    nb_value("ch12_ex3_k70_8k", "%.2f", ex12_activation_coefficient("llama3-70b", 8192, 1, 0, "none", "korthikanti"));
    nb_value("ch12_ex3_m8", "%.2f", ex12_activation_coefficient("llama3-8b", 8192, 1, 0, "none", "modern"));
    nb_value("ch12_ex3_m13", "%.2f", ex12_activation_coefficient("llama2-13b", 8192, 1, 0, "none", "modern"));
    nb_value("ch12_ex3_mix", "%.2f", ex12_activation_coefficient("mixtral-8x7b", 8192, 1, 0, "none", "modern"));
    nb_value("ch12_ex3_m70_tp8sp", "%.3f", ex12_activation_coefficient("llama3-70b", 8192, 8, 1, "none", "modern"));
    /* 4: microbatches in flight */
    nb_value("ch12_ex4_pp4", "%.2f", ex12_stage_activation_bytes("llama3-70b", 8192, 8, 4, 1, "1f1b", 16) / 1e9);
    nb_value("ch12_ex4_pp8", "%.2f", ex12_stage_activation_bytes("llama3-70b", 8192, 8, 8, 1, "1f1b", 16) / 1e9);
    nb_value("ch12_ex4_gpipe", "%.2f", ex12_stage_activation_bytes("llama3-70b", 8192, 8, 4, 1, "gpipe", 16) / 1e9);
    nb_value("ch12_ex4_m2", "%.2f", ex12_stage_activation_bytes("llama3-70b", 8192, 8, 4, 1, "1f1b", 2) / 1e9);
    /* 5: goodput */
    nb_value("ch12_ex5_g1k", "%.4f", ex12_goodput_llama3(1024));
    nb_value("ch12_ex5_g8k", "%.4f", ex12_goodput_llama3(8192));
    nb_value("ch12_ex5_g16k", "%.4f", ex12_goodput_llama3(16384));
    int g95 = 0;
    for (int g = 8; g <= 131072 && !g95; g += 8)
        if (ex12_goodput_llama3(g) <= 0.95 + 1e-12)
            g95 = g;
    nb_value("ch12_ex5_g95", "%d", g95);
    goodput_model gm = goodput_model_llama3();
    nb_value("ch12_ex5_per_day_8k", "%.2f", gm.interruptions_per_gpu_day * 8192);
    /* 6: does 70B fit */
    const int zeros[] = {0, 1, 3};
    for (int i = 0; i < 3; i++) {
        char n[64];
        snprintf(n, sizeof n, "ch12_ex6_state_z%d", zeros[i]);
        nb_value(n, "%.2f", ex12_state_bytes("llama3-70b", 8, 4, 16, zeros[i]) / 1e9);
        snprintf(n, sizeof n, "ch12_ex6_mb_z%d", zeros[i]);
        nb_value(n, "%d", ex12_max_micro_batch("llama3-70b", "h100", 8192, 8, 4, 16, 1, zeros[i]));
    }
    nb_value("ch12_ex6_mb_z1_nosp", "%d", ex12_max_micro_batch("llama3-70b", "h100", 8192, 8, 4, 16, 0, 1));
    nb_value("ch12_ex6_cap", "%.0f", memory_policy_default().usable_fraction * h100.mem_bytes / 1e9);
    /* 7: Llama 3 405B */
    double u = ex12_implied_utilisation(3.8e25, peak, 30.84e6);
    nb_value("ch12_ex7_util", "%.1f", 100 * u);
    nb_value("ch12_ex7_days", "%.1f", ex12_days_on(3.8e25, 16384, peak, 0.41 * 0.9));
    nb_value("ch12_ex7_goodput", "%.0f", 100 * u / 0.41);
    return 0;
}
#endif
