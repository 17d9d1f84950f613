/* Chapter 12's exercise variants: 12.1 (the sparse trap), 12.2 (6ND or
 * 8ND), 12.3 (34 is not universal), 12.4 (microbatches in flight), 12.5
 * (failures grow with the cluster), 12.6 (does it fit?) and 12.7 (check a
 * published run).  The printed numbers are seed 0; other seeds draw from
 * the lists below, which stay in the printed regime: dense training on
 * H100s in servers of eight, between 16 and 16,384 GPUs, the optimizer
 * state sharded over the cluster inside each GPU's memory, models of the
 * book's table, pipelines that divide the layers, and in 12.6 a layout in
 * which ZeRO 1 fits a larger microbatch than ZeRO 0. */
#include "practice_chapters.h"
#include "practice_set.h"
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

/* up to 32,768 GPUs, where Llama 3's rate leaves 80 % goodput */
static const double sizes[] = {256,   512,   768,   1024,  1536,  2048,  3072,  4096,  6144,
                               8192,  10240, 12288, 14336, 16384, 20480, 24576, 28672, 32768};
static const double target_pct[] = {98, 97, 96, 95, 94, 93, 92, 91, 90, 89, 88, 87, 86};

static void exercise_5(practice_set *s, rng_state *r)
{
    /* three distinct sizes, smallest first; printed: 1,024, 8,192, 16,384 */
    int idx[3] = {3, 9, 13};
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
    double target = practice_pick(r, s->seed, target_pct, PRACTICE_COUNT(target_pct), 3);
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

static const double run_gpus[] = {4096, 6144, 8192, 12288, 16384, 20480, 24576, 32768};
/* above the 34.6 % the GPU-hours imply, so that (c)'s goodput stays below 100 % */
static const double run_mfu_pct[] = {35, 36, 37, 38, 39, 40, 41, 42, 43, 44, 45, 46, 47, 48, 50};
static const double run_goodput_pct[] = {80, 82, 84, 85, 86, 88, 90, 92, 94, 95};

static void exercise_7(practice_set *s, rng_state *r, double peak)
{
    /* Llama 3 405B's published FLOPs and GPU-hours stay; the cluster, MFU
     * and goodput of (b) and (c) vary */
    const double flop = 3.8e25, hours = 30.84e6;
    double gpus = practice_pick(r, s->seed, run_gpus, PRACTICE_COUNT(run_gpus), 4);
    double m = practice_pick(r, s->seed, run_mfu_pct, PRACTICE_COUNT(run_mfu_pct), 6);
    double gp = practice_pick(r, s->seed, run_goodput_pct, PRACTICE_COUNT(run_goodput_pct), 6);
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

/* A model of the table as an input (a choice: the prose shows its name,
 * the kit finds it by key; test_practice checks the names against the table). */
typedef struct {
    const char *key, *name;
} model_row;

static const model_row dense_models[] = {{"llama3-8b", "LLaMA-3-8B"},   {"llama2-13b", "LLaMA-2-13B"},
                                         {"qwen3-32b", "Qwen3-32B"},    {"llama3-70b", "LLaMA-3-70B"},
                                         {"llama3-405b", "LLaMA-3.1-405B"}, {"llama3.2-1b", "LLaMA-3.2-1B"}};
#define N_DENSE PRACTICE_COUNT(dense_models)

static int pick_row(rng_state *r, uint64_t seed, int n, int printed)
{
    return seed == 0 ? printed : (int)rng_below(r, (uint64_t)n);
}

static void add_row_input(practice_set *s, const char *name, const model_row *rows, int n, int i)
{
    practice_add_choice(s, name, i, n, rows[i].name, rows[i].key);
}

/* ---- 12.2: hardware over model FLOPs */

static const double ex2_reported_pct[] = {44, 45, 46, 47, 48, 49, 50, 51, 52, 53, 54, 55, 56, 57, 58, 59, 60, 62};
static const double ex2_seq_short[] = {2048, 4096, 6144, 8192};
static const double ex2_seq_long[] = {16384, 32768, 65536, 131072};

static double hw_over_model(const model_spec *m, int seq, recompute_kind rc)
{
    train_flop f = train_flop_per_token(train_matmul_params(m), m, seq, rc);
    return f.hardware / f.model;
}

static void exercise_2(practice_set *s, rng_state *r)
{
    int mi = pick_row(r, s->seed, N_DENSE, 3);
    double u = practice_pick(r, s->seed, ex2_reported_pct, PRACTICE_COUNT(ex2_reported_pct), 9);
    double s1 = practice_pick(r, s->seed, ex2_seq_short, PRACTICE_COUNT(ex2_seq_short), 3);
    double s2 = practice_pick(r, s->seed, ex2_seq_long, PRACTICE_COUNT(ex2_seq_long), 3);
    add_row_input(s, "ch12_ex2_model", dense_models, N_DENSE, mi);
    practice_add_input(s, "ch12_ex2_reported_pct", u, "%.0f", PRACTICE_RANGE_OF(ex2_reported_pct));
    practice_add_input(s, "ch12_ex2_seq", s1, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex2_seq_short));
    practice_add_input(s, "ch12_ex2_seq_long", s2, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex2_seq_long));
    model_spec m = model_builtin(dense_models[mi].key);
    double full = hw_over_model(&m, (int)s1, RECOMPUTE_FULL);
    practice_part *p = practice_add_part(s, "12.2(a)", 2, "hardware over model FLOPs, full recomputation", "x",
                                         JUDGE_RELATIVE, full, JUDGE_HAND_TOL);
    practice_add_slip(p, 1 / full, "upside down: the hardware runs more FLOPs than the model counts");
    p = practice_add_part(s, "12.2(b)", 2, "their MFU", "%", JUDGE_RELATIVE, u / full, JUDGE_HAND_TOL);
    practice_add_slip(p, u, "that is their hardware utilisation; MFU counts the model's FLOPs only");
    practice_add_slip(p, u * full, "divide by the factor: the recomputed FLOPs are not the model's");
    const char *ids[2] = {"12.2(c1)", "12.2(c2)"};
    const char *what[2] = {"factor with selective recomputation, shorter sequence",
                           "factor with selective recomputation, longer sequence"};
    const double seqs[2] = {s1, s2};
    for (int i = 0; i < 2; i++) {
        double sel = hw_over_model(&m, (int)seqs[i], RECOMPUTE_SELECTIVE);
        train_flop f = train_flop_per_token(train_matmul_params(&m), &m, (int)seqs[i], RECOMPUTE_SELECTIVE);
        p = practice_add_part(s, ids[i], 2, what[i], "x", JUDGE_RELATIVE, sel, JUDGE_HAND_TOL);
        practice_add_slip(p, 1 + f.recompute / f.dense,
                          "the model FLOPs include the attention products, 12 n_L n_seq d_q a token");
        practice_add_slip(p, full, "selective recomputation re-runs only the attention core's forward");
    }
}

/* ---- 12.3: the activation coefficient of sbh */

static const double ex3_seq_short[] = {512, 768, 1024, 1536, 2048, 3072, 4096};
static const double ex3_seq_long[] = {6144, 8192, 10240, 12288, 16384, 24576, 32768};
/* 12.3(b)'s middle model; LLaMA-3-8B and Mixtral stay, as (c) asks about them */
static const model_row ex3_middle[] = {{"llama2-13b", "LLaMA-2-13B"},
                                       {"qwen3-32b", "Qwen3-32B"},
                                       {"llama3-70b", "LLaMA-3-70B"},
                                       {"llama3-405b", "LLaMA-3.1-405B"},
                                       {"llama3.2-1b", "LLaMA-3.2-1B"}};

static double coefficient(const char *key, int seq, activation_model act)
{
    model_spec m = model_builtin(key);
    train_layout l = train_layout_default();
    l.seq = seq;
    l.act = act;
    return train_layer_activation_bytes(&m, &l) / ((double)seq * m.hidden);
}

static void exercise_3(practice_set *s, rng_state *r)
{
    int mi = pick_row(r, s->seed, N_DENSE, 3);
    double s1 = practice_pick(r, s->seed, ex3_seq_short, PRACTICE_COUNT(ex3_seq_short), 4);
    double s2 = practice_pick(r, s->seed, ex3_seq_long, PRACTICE_COUNT(ex3_seq_long), 1);
    int mid = pick_row(r, s->seed, PRACTICE_COUNT(ex3_middle), 0);
    add_row_input(s, "ch12_ex3_model", dense_models, N_DENSE, mi);
    practice_add_input(s, "ch12_ex3_seq", s1, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex3_seq_short));
    practice_add_input(s, "ch12_ex3_seq_long", s2, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex3_seq_long));
    add_row_input(s, "ch12_ex3_middle", ex3_middle, PRACTICE_COUNT(ex3_middle), mid);
    const char *ids[2] = {"12.3(a1)", "12.3(a2)"};
    const char *what[2] = {"Korthikanti's coefficient, shorter sequence", "Korthikanti's coefficient, longer sequence"};
    const double seqs[2] = {s1, s2};
    for (int i = 0; i < 2; i++) {
        double k = coefficient(dense_models[mi].key, (int)seqs[i], ACT_KORTHIKANTI);
        practice_part *p = practice_add_part(s, ids[i], 3, what[i], "x sbh", JUDGE_RELATIVE, k, JUDGE_HAND_TOL);
        practice_add_slip(p, 34, "34 leaves out the stored attention scores, 5 a s / h");
        practice_add_slip(p, 34 + (k - 34) / 5, "the scores and softmax term is 5 a s / h, not a s / h");
    }
    const char *keys[3] = {"llama3-8b", ex3_middle[mid].key, "mixtral-8x7b"};
    const char *bids[3] = {"12.3(b1)", "12.3(b2)", "12.3(b3)"};
    const char *bwhat[3] = {"modern coefficient, LLaMA-3-8B", "modern coefficient, the second model",
                            "modern coefficient, Mixtral 8x7B"};
    for (int i = 0; i < 3; i++) {
        double k = coefficient(keys[i], 8192, ACT_MODERN);
        practice_part *p = practice_add_part(s, bids[i], 3, bwhat[i], "x sbh", JUDGE_RELATIVE, k, JUDGE_HAND_TOL);
        practice_add_slip(p, coefficient(keys[i], 8192, ACT_KORTHIKANTI),
                          "that is Korthikanti's count; flash attention stores no scores, and the MLP is gated");
        if (i == 2) /* the routed MLP: two experts a token */
            practice_add_slip(p, coefficient("llama3-8b", 8192, ACT_MODERN),
                              "each token goes through two experts, and each stores its own MLP tensors");
    }
}

/* ---- 12.4: the first stage's activations (LLaMA-3-70B, TP 8 + SP) */

static const double ex4_seq[] = {2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192, 10240, 12288, 14336, 16384};
static const double ex4_microbatches[] = {8, 12, 16, 20, 24, 32, 40, 48, 64};
/* pipelines that divide LLaMA-3-70B's 80 layers */
static const double ex4_pp_short[] = {2, 4, 5};
static const double ex4_pp_long[] = {8, 10, 16, 20};
static const double ex4_few[] = {1, 2, 3};

static double stage_gb(const model_spec *m, int seq, int pp, pipe_schedule sched, int mb)
{
    gpu_spec g = gpu_builtin("h100");
    train_layout l = train_layout_default();
    l.seq = seq;
    l.tp = 8;
    l.sp = 1;
    l.pp = pp;
    l.schedule = sched;
    l.microbatches = mb;
    train_state_bytes b = train_state_adam_mixed();
    train_memory mem;
    char err[256];
    return train_memory_plan(m, &g, &l, &b, &mem, err, sizeof err) == 0 ? mem.activations / 1e9 : NAN;
}

static void exercise_4(practice_set *s, rng_state *r)
{
    model_spec m = model_builtin("llama3-70b");
    double seq = 8192, mb = 16, pa = 4, pb = 8, few = 2;
    /* the printed regime: every stage of the longer pipeline has a microbatch
     * in flight, and the few microbatches are fewer than the stages */
    for (int attempt = 0; attempt < 64; attempt++) {
        seq = practice_pick(r, s->seed, ex4_seq, PRACTICE_COUNT(ex4_seq), 8);
        mb = practice_pick(r, s->seed, ex4_microbatches, PRACTICE_COUNT(ex4_microbatches), 2);
        pa = practice_pick(r, s->seed, ex4_pp_short, PRACTICE_COUNT(ex4_pp_short), 1);
        pb = practice_pick(r, s->seed, ex4_pp_long, PRACTICE_COUNT(ex4_pp_long), 0);
        few = practice_pick(r, s->seed, ex4_few, PRACTICE_COUNT(ex4_few), 1);
        if (mb >= pb && few < pa)
            break;
        seq = 8192, mb = 16, pa = 4, pb = 8, few = 2;
    }
    practice_add_input(s, "ch12_ex4_seq", seq, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex4_seq));
    practice_add_input(s, "ch12_ex4_microbatches", mb, "%.0f", PRACTICE_RANGE_OF(ex4_microbatches));
    practice_add_input(s, "ch12_ex4_pp", pa, "%.0f", PRACTICE_RANGE_OF(ex4_pp_short));
    practice_add_input(s, "ch12_ex4_pp_long", pb, "%.0f", PRACTICE_RANGE_OF(ex4_pp_long));
    practice_add_input(s, "ch12_ex4_few", few, "%.0f", PRACTICE_RANGE_OF(ex4_few));
    struct {
        const char *id, *what;
        double pp, mb;
        pipe_schedule sched;
    } q[4] = {{"12.4(a)", "first-stage activations, 1F1B", pa, mb, PIPE_1F1B},
              {"12.4(b)", "first-stage activations, the longer pipeline", pb, mb, PIPE_1F1B},
              {"12.4(c)", "first-stage activations, GPipe", pa, mb, PIPE_GPIPE},
              {"12.4(d)", "first-stage activations, few microbatches", pa, few, PIPE_1F1B}};
    for (int i = 0; i < 4; i++) {
        double gb = stage_gb(&m, (int)seq, (int)q[i].pp, q[i].sched, (int)q[i].mb);
        practice_part *p = practice_add_part(s, q[i].id, 4, q[i].what, "GB", JUDGE_RELATIVE, gb, JUDGE_HAND_TOL);
        pipe_schedule other = q[i].sched == PIPE_1F1B ? PIPE_GPIPE : PIPE_1F1B;
        double wrong = stage_gb(&m, (int)seq, (int)q[i].pp, other, (int)q[i].mb);
        practice_add_slip(p, wrong, other == PIPE_GPIPE ? "1F1B holds only the microbatches in flight, at most one per stage"
                                                        : "GPipe runs every forward before any backward: it holds them all");
        practice_add_slip(p, gb * q[i].pp, "the first stage holds its own layers only: the model's over the stages");
    }
}

/* ---- 12.6: LLaMA-3-70B's state and microbatch on one H100 (TP 8, SP, 1F1B) */

/* pipelines that divide the 80 layers */
static const double ex6_pp[] = {2, 4, 5, 8, 10, 16};
static const double ex6_dp[] = {4, 8, 12, 16, 24, 32, 48, 64, 96, 128};
static const double ex6_seq[] = {1024, 2048, 3072, 4096, 6144, 8192};

static void layout_of(train_layout *l, int seq, int pp, int dp, int sp, int zero)
{
    *l = train_layout_default();
    l->seq = seq;
    l->tp = 8;
    l->pp = pp;
    l->dp = dp;
    l->sp = sp;
    l->zero = zero;
}

static double state_gb(const model_spec *m, const gpu_spec *g, int seq, int pp, int dp, int zero)
{
    train_layout l;
    layout_of(&l, seq, pp, dp, 1, zero);
    train_state_bytes b = train_state_adam_mixed();
    train_memory mem;
    char err[256];
    if (train_memory_plan(m, g, &l, &b, &mem, err, sizeof err) != 0)
        return NAN;
    return (mem.weights + mem.grads + mem.optimizer) / 1e9;
}

static int micro_batch(const model_spec *m, const gpu_spec *g, int seq, int pp, int dp, int sp, int zero)
{
    train_layout l;
    layout_of(&l, seq, pp, dp, sp, zero);
    train_state_bytes b = train_state_adam_mixed();
    return train_max_micro_batch(m, g, &l, &b, 4096);
}

static void exercise_6(practice_set *s, rng_state *r)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    double pp = 4, dp = 16, seq = 8192;
    /* ZeRO 1 must be the step that shows: a larger microbatch than ZeRO 0;
     * and without sequence parallelism a microbatch still fits */
    for (int attempt = 0; attempt < 64; attempt++) {
        pp = practice_pick(r, s->seed, ex6_pp, PRACTICE_COUNT(ex6_pp), 1);
        dp = practice_pick(r, s->seed, ex6_dp, PRACTICE_COUNT(ex6_dp), 3);
        seq = practice_pick(r, s->seed, ex6_seq, PRACTICE_COUNT(ex6_seq), 5);
        int z0 = micro_batch(&m, &g, (int)seq, (int)pp, (int)dp, 1, 0);
        int z1 = micro_batch(&m, &g, (int)seq, (int)pp, (int)dp, 1, 1);
        if (z0 >= 1 && z1 > z0 && z1 <= 24 && micro_batch(&m, &g, (int)seq, (int)pp, (int)dp, 0, 1) >= 1)
            break;
        pp = 4, dp = 16, seq = 8192;
    }
    practice_add_input(s, "ch12_ex6_pp", pp, "%.0f", PRACTICE_RANGE_OF(ex6_pp));
    practice_add_input(s, "ch12_ex6_dp", dp, "%.0f", PRACTICE_RANGE_OF(ex6_dp));
    practice_add_input(s, "ch12_ex6_seq", seq, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex6_seq));
    const int zeros[3] = {0, 1, 3};
    const char *aids[3] = {"12.6(a1)", "12.6(a2)", "12.6(a3)"}, *bids[3] = {"12.6(b1)", "12.6(b2)", "12.6(b3)"};
    const char *awhat[3] = {"state bytes per GPU, ZeRO 0", "state bytes per GPU, ZeRO 1", "state bytes per GPU, ZeRO 3"};
    const char *bwhat[3] = {"largest microbatch, ZeRO 0", "largest microbatch, ZeRO 1", "largest microbatch, ZeRO 3"};
    for (int i = 0; i < 3; i++) {
        double gb = state_gb(&m, &g, (int)seq, (int)pp, (int)dp, zeros[i]);
        practice_part *p = practice_add_part(s, aids[i], 6, awhat[i], "GB", JUDGE_RELATIVE, gb, JUDGE_HAND_TOL);
        practice_add_slip(p, gb * pp, "the GPU holds its stage's layers only: divide by the pipeline too");
        if (zeros[i] == 1) /* ZeRO 1 shards the optimizer state alone */
            practice_add_slip(p, state_gb(&m, &g, (int)seq, (int)pp, (int)dp, 3),
                              "ZeRO 1 shards only the optimizer state; the weights and gradients stay whole");
    }
    for (int i = 0; i < 3; i++) {
        int b = micro_batch(&m, &g, (int)seq, (int)pp, (int)dp, 1, zeros[i]);
        practice_part *p = practice_add_part(s, bids[i], 6, bwhat[i], "sequences", JUDGE_EXACT, b, 0);
        if (p)
            p->judge.close_hint = "near: count the activations of every microbatch in flight, pp of them on the first stage";
    }
    practice_part *p = practice_add_part(s, "12.6(c)", 6, "largest microbatch without sequence parallelism, ZeRO 1",
                                         "sequences", JUDGE_EXACT, micro_batch(&m, &g, (int)seq, (int)pp, (int)dp, 0, 1), 0);
    if (p)
        p->judge.close_hint = "near: without SP the norm and projection inputs stay whole on every GPU of the group";
}

int practice_build_ch12(uint64_t seed, practice_set *out)
{
    gpu_spec h100 = gpu_builtin("h100");
    double peak = gpu_peak_flops(&h100, DT_BF16);
    if (!(peak > 0))
        return -1;
    /* one stream per exercise, so adding a part to one leaves the others' draws */
    rng_state st[7];
    practice_streams(seed, st, 7);
    rng_state r1 = st[0], r5 = st[1], r7 = st[2], r2 = st[3], r3 = st[4], r4 = st[5], r6 = st[6];
    exercise_1(out, &r1, peak, h100.mem_bytes);
    exercise_2(out, &r2);
    exercise_3(out, &r3);
    exercise_4(out, &r4);
    exercise_5(out, &r5);
    exercise_6(out, &r6);
    exercise_7(out, &r7, peak);
    return 0;
}
