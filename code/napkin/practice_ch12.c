/* Chapter 12's exercise variants: 12.1 (the sparse trap), 12.5 (failures
 * grow with the cluster) and 12.7 (check a published run).  The printed
 * numbers are seed 0; other seeds draw from the lists below, which stay in
 * the printed regime: dense training on H100s in servers of eight, between
 * 16 and 16,384 GPUs, the optimizer state sharded over the cluster inside
 * each GPU's memory. */
#include "practice.h"
#include "practice_draw.h"

#include "rng.h"
#include "specs.h"
#include "train.h"

#include <math.h>

static double list_min(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] < m ? v[i] : m;
    return m;
}
static double list_max(const double *v, int n)
{
    double m = v[0];
    for (int i = 1; i < n; i++)
        m = v[i] > m ? v[i] : m;
    return m;
}

static int gpus_for(double flop, double days, double peak, double mfu)
{
    train_run r = {flop, peak, mfu, goodput_model_fixed(1.0)};
    cluster_plan c;
    return train_cluster_for_deadline(&r, days * 86400.0, 8, &c) == 0 ? c.gpus : -1;
}

static double days_on(double flop, double gpus, double peak, double mfu, double goodput)
{
    train_run r = {flop, peak, mfu, goodput_model_fixed(goodput)};
    return train_seconds_on(&r, (int)gpus) / 86400.0;
}

/* The cluster size at which Llama 3's goodput falls to target: goodput_at
 * falls with size, so bisect it rather than restate its formula. */
static double size_at_goodput(const goodput_model *g, double target)
{
    double lo = 1, hi = 1e7;
    for (int i = 0; i < 200; i++) {
        double mid = 0.5 * (lo + hi);
        if (goodput_at(g, mid) > target)
            lo = mid;
        else
            hi = mid;
    }
    return 0.5 * (lo + hi);
}

static const double params_b[] = {7, 8, 13, 34, 70};
static const double tokens_t[] = {1, 2, 4, 8, 15};
static const double deadline_days[] = {14, 21, 30, 45, 60};
static const double mfu_pct[] = {35, 38, 40, 42, 45, 50};

static void exercise_1(practice_set *s, rng_state *r, double peak, double mem)
{
    double n = 13, t = 2, d = 30, m = 40;
    /* redraw until the question stays meaningful; the printed one is */
    for (int attempt = 0; attempt < 64; attempt++) {
        n = practice_pick(r, s->seed, params_b, PRACTICE_COUNT(params_b), 2);
        t = practice_pick(r, s->seed, tokens_t, PRACTICE_COUNT(tokens_t), 1);
        d = practice_pick(r, s->seed, deadline_days, PRACTICE_COUNT(deadline_days), 2);
        m = practice_pick(r, s->seed, mfu_pct, PRACTICE_COUNT(mfu_pct), 2);
        double flop = 6 * n * 1e9 * t * 1e12;
        int need = gpus_for(flop, d, peak, m / 100), rent = gpus_for(flop, d, 2 * peak, m / 100);
        /* 16 B of mixed-precision Adam state per parameter, sharded over the
         * rented cluster (ZeRO 3), must leave room in one GPU */
        if (need >= 16 && need <= 16384 && rent >= 8 && 16 * n * 1e9 / rent <= 0.5 * mem)
            break;
        n = 13, t = 2, d = 30, m = 40;
    }
    practice_add_input(s, "ch12_ex1_params_b", n, "%.0f", list_min(params_b, PRACTICE_COUNT(params_b)),
                       list_max(params_b, PRACTICE_COUNT(params_b)));
    practice_add_input(s, "ch12_ex1_tokens_t", t, "%.0f", list_min(tokens_t, PRACTICE_COUNT(tokens_t)),
                       list_max(tokens_t, PRACTICE_COUNT(tokens_t)));
    practice_add_input(s, "ch12_ex1_days", d, "%.0f", list_min(deadline_days, PRACTICE_COUNT(deadline_days)),
                       list_max(deadline_days, PRACTICE_COUNT(deadline_days)));
    practice_add_input(s, "ch12_ex1_mfu_pct", m, "%.0f", list_min(mfu_pct, PRACTICE_COUNT(mfu_pct)),
                       list_max(mfu_pct, PRACTICE_COUNT(mfu_pct)));
    double flop = 6 * n * 1e9 * t * 1e12;
    int rent = gpus_for(flop, d, 2 * peak, m / 100), need = gpus_for(flop, d, peak, m / 100);
    practice_part *p = practice_add_part(s, "12.1(a)", 1, "GPUs the spreadsheet rents", "GPUs", JUDGE_EXACT, rent, 0);
    practice_add_slip(p, gpus_for(flop, d, peak, m / 100), "that is the dense peak; the spreadsheet used the 1,979 figure");
    if (p)
        p->judge.close_hint = "within 10%: round the GPU count up to whole servers of eight";
    p = practice_add_part(s, "12.1(b)", 1, "GPUs the run needs", "GPUs", JUDGE_EXACT, need, 0);
    practice_add_slip(p, rent, "that is the spreadsheet's count: 1,979 TFLOP/s assumes 2:4 sparsity");
    practice_add_slip(p, gpus_for(4 * n * 1e9 * t * 1e12, d, peak, m / 100), "training is 6 FLOP per parameter per token, not 4");
    if (p)
        p->judge.close_hint = "within 10%: round the GPU count up to whole servers of eight";
    p = practice_add_part(s, "12.1(c)", 1, "days on the spreadsheet's cluster", "days", JUDGE_RELATIVE,
                          days_on(flop, rent, peak, m / 100, 1.0), JUDGE_HAND_TOL);
    practice_add_slip(p, d, "that is the deadline the spreadsheet promised; price its cluster at the dense peak");
    practice_add_slip(p, days_on(flop, rent, peak, m / 100, 1.0) * 24, "that is hours; the question asks for days");
}

static const double sizes[] = {512, 1024, 2048, 4096, 8192, 12288, 16384, 24576, 32768};
static const double target_pct[] = {97, 96, 95, 94, 93, 92};

static void exercise_5(practice_set *s, rng_state *r)
{
    /* three distinct sizes, smallest first; printed: 1,024, 8,192, 16,384 */
    int idx[3] = {1, 4, 6};
    if (s->seed != 0) {
        int chosen[PRACTICE_COUNT(sizes)] = {0};
        for (int k = 0; k < 3; k++) {
            int i;
            do
                i = (int)rng_below(r, PRACTICE_COUNT(sizes));
            while (chosen[i]);
            chosen[i] = 1;
        }
        for (int i = 0, k = 0; i < PRACTICE_COUNT(sizes); i++)
            if (chosen[i])
                idx[k++] = i;
    }
    double target = practice_pick(r, s->seed, target_pct, PRACTICE_COUNT(target_pct), 2);
    static const char *const names[3] = {"ch12_ex5_size1", "ch12_ex5_size2", "ch12_ex5_size3"};
    static const char *const ids[3] = {"12.5(a1)", "12.5(a2)", "12.5(a3)"};
    static const char *const whats[3] = {"goodput of the first cluster", "goodput of the second cluster",
                                         "goodput of the third cluster"};
    goodput_model g = goodput_model_llama3();
    for (int k = 0; k < 3; k++) {
        practice_add_input(s, names[k], sizes[idx[k]], PRACTICE_GROUPED, sizes[0], sizes[PRACTICE_COUNT(sizes) - 1]);
        double pct = 100 * goodput_at(&g, sizes[idx[k]]);
        /* a goodput is judged in percentage points: half a point either way */
        practice_part *p = practice_add_part(s, ids[k], 5, whats[k], "%", JUDGE_RANGE, pct, 0.5);
        practice_add_slip(p, 100 - pct, "that is the share lost to interruptions, not the goodput");
        if (p)
            p->judge.rule_note = "to half a percentage point";
    }
    practice_add_input(s, "ch12_ex5_target_pct", target, "%.0f", list_min(target_pct, PRACTICE_COUNT(target_pct)),
                       list_max(target_pct, PRACTICE_COUNT(target_pct)));
    double at = size_at_goodput(&g, target / 100);
    practice_part *p = practice_add_part(s, "12.5(b)", 5, "GPUs at which goodput falls to the target", "GPUs",
                                         JUDGE_RELATIVE, at, JUDGE_HAND_TOL);
    practice_add_slip(p, size_at_goodput(&g, 1 - target / 100), "you solved for the lost share, not the goodput");
    double per_day = g.interruptions_per_gpu_day * sizes[idx[1]];
    p = practice_add_part(s, "12.5(c)", 5, "interruptions a day on the second cluster", "per day", JUDGE_RELATIVE,
                          per_day, JUDGE_HAND_TOL);
    practice_add_slip(p, 466.0 / 54, "that is the 16,384-GPU cluster's rate; scale it by the GPU count");
    practice_add_slip(p, per_day / 24, "that is per hour; the question asks per day");
}

static const double run_gpus[] = {8192, 16384, 24576, 32768};
static const double run_mfu_pct[] = {38, 40, 41, 43, 45};
static const double run_goodput_pct[] = {85, 88, 90, 92, 95};

static void exercise_7(practice_set *s, rng_state *r, double peak)
{
    /* Llama 3 405B's published FLOPs and GPU-hours stay; the cluster, MFU
     * and goodput of (b) and (c) vary */
    const double flop = 3.8e25, hours = 30.84e6;
    double gpus = practice_pick(r, s->seed, run_gpus, PRACTICE_COUNT(run_gpus), 1);
    double m = practice_pick(r, s->seed, run_mfu_pct, PRACTICE_COUNT(run_mfu_pct), 2);
    double gp = practice_pick(r, s->seed, run_goodput_pct, PRACTICE_COUNT(run_goodput_pct), 2);
    practice_add_input(s, "ch12_ex7_gpus", gpus, PRACTICE_GROUPED, run_gpus[0], run_gpus[PRACTICE_COUNT(run_gpus) - 1]);
    practice_add_input(s, "ch12_ex7_mfu_pct", m, "%.0f", list_min(run_mfu_pct, PRACTICE_COUNT(run_mfu_pct)),
                       list_max(run_mfu_pct, PRACTICE_COUNT(run_mfu_pct)));
    practice_add_input(s, "ch12_ex7_goodput_pct", gp, "%.0f", list_min(run_goodput_pct, PRACTICE_COUNT(run_goodput_pct)),
                       list_max(run_goodput_pct, PRACTICE_COUNT(run_goodput_pct)));
    double u = 100 * train_implied_utilisation(flop, peak, hours);
    practice_part *p = practice_add_part(s, "12.7(a)", 7, "average utilisation of the GPU-hours", "%", JUDGE_RELATIVE,
                                         u, JUDGE_HAND_TOL);
    practice_add_slip(p, 100 * train_implied_utilisation(flop, 2 * peak, hours),
                      "that divides by the sparse 1,979 TFLOP/s; use the dense peak");
    double days = days_on(flop, gpus, peak, m / 100, gp / 100);
    p = practice_add_part(s, "12.7(b)", 7, "days of the run", "days", JUDGE_RELATIVE, days, JUDGE_HAND_TOL);
    practice_add_slip(p, days_on(flop, gpus, peak, m / 100, 1.0), "the goodput is missing: interruptions cost time");
    practice_add_slip(p, days * 24, "that is hours; the question asks for days");
    p = practice_add_part(s, "12.7(c)", 7, "goodput the GPU-hours imply", "%", JUDGE_RELATIVE, 100 * u / m,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, u * m / 100, "you multiplied by the MFU; utilisation = MFU x goodput, so divide by it");
}

int practice_build_ch12(uint64_t seed, practice_set *out)
{
    gpu_spec h100 = gpu_builtin("h100");
    double peak = gpu_peak_flops(&h100, DT_BF16);
    if (!(peak > 0))
        return -1;
    /* one stream per exercise, so adding a part to one leaves the others' draws */
    rng_state r1 = rng_make(seed), r5 = r1, r7 = r1;
    rng_jump(&r5);
    r7 = r5;
    rng_jump(&r7);
    exercise_1(out, &r1, peak, h100.mem_bytes);
    exercise_5(out, &r5);
    exercise_7(out, &r7, peak);
    return 0;
}
