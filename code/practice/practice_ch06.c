/* Chapter 6's exercise variants: 6.1 (the GQA trap), 6.2 (an adapter under
 * tensor parallelism), 6.3 (slots against the KV cache), 6.4 (one percent
 * of memory, zero percent of time?), 6.5 (the gathered shrink's
 * intensity, and the padded rank), 6.6 (popularity) and 6.7 (copies against
 * adapters, and a miss).  The printed numbers are seed 0; other seeds draw from the lists
 * below, which keep each question in its printed regime: LLaMA-3-70B at
 * TP 4 on H100s, slots that leave room for a batch, a batch that fits beside
 * its adapters' slots, fewer distinct adapters than requests, more adapters
 * than a batch holds. */
#include "practice_chapters.h"
#include "practice_set.h"
#include "practice_draw.h"

#include "lora.h"
#include "memory.h"
#include "rng.h"
#include "specs.h"

#include <math.h>

/* A bf16 adapter of rank on the targets ("q,k,v,o", "all"); -1 if refused. */
static int adapter(const model_spec *m, int rank, const char *targets, int tp, lora_config *c, lora_size *size)
{
    lora_targets t;
    char err[256];
    if (lora_targets_parse(targets, &t, err, sizeof err) != 0)
        return -1;
    *c = (lora_config){m, rank, t, DT_BF16, tp};
    if (lora_config_check(c, err, sizeof err) != 0)
        return -1;
    return size ? lora_adapter_size(c, size, err, sizeof err) : 0;
}

/* The largest batch beside `slots` slots of c's rank (default policy). */
static int batch_beside(const lora_config *c, int slots, int context)
{
    gpu_spec g = gpu_builtin("h100");
    fit_check f;
    char err[256];
    if (lora_memory_fit(&g, memory_policy_default(), precision_uniform(DT_BF16), c, slots, 1, context, &f, err,
                        sizeof err) != 0)
        return -1;
    return f.max_batch;
}

/* A decode step with `distinct` adapters over the base step; NAN when the
 * batch does not fit beside their slots. */
static double step_ratio(const lora_config *c, int batch, int context, int distinct, double launch_us)
{
    gpu_spec g = gpu_builtin("h100");
    fit_check f;
    lora_step_cost r;
    char err[256];
    if (lora_memory_fit(&g, memory_policy_default(), precision_uniform(DT_BF16), c, distinct, batch, context, &f,
                        err, sizeof err) != 0 ||
        !f.fits)
        return NAN;
    lora_step_shape s = {batch, context, distinct, launch_us * 1e-6, 0};
    if (lora_step_cost_compute(&g, precision_uniform(DT_BF16), c, &s, &r, err, sizeof err) != 0)
        return NAN;
    return r.ratio;
}

static const double ex1_rank[] = {4, 8, 12, 16, 20, 24, 32, 40, 48, 64, 96, 128};
/* 6.2's first degree (printed 4), against TP 8 */
static const double ex2_tp[] = {2, 4};

static int exercise_1_2(practice_set *s, rng_state *r, rng_state *r2, const model_spec *m70, double *rank)
{
    model_spec m8;
    if (model_lookup("llama3-8b", &m8) != 0)
        return -1;
    *rank = practice_pick(r, s->seed, ex1_rank, PRACTICE_COUNT(ex1_rank), 3);
    practice_add_input(s, "ch06_ex1_rank", *rank, "%g", PRACTICE_RANGE_OF(ex1_rank));
    double tp = practice_pick(r2, s->seed, ex2_tp, PRACTICE_COUNT(ex2_tp), 1);
    practice_add_input(s, "ch06_ex2_tp", tp, "%g", PRACTICE_RANGE_OF(ex2_tp));
    lora_config c, c8, c4, c8tp;
    lora_size z, z8, z4, z8tp;
    if (adapter(m70, (int)*rank, "q,k,v,o", 1, &c, &z) != 0 || adapter(&m8, (int)*rank, "all", 1, &c8, &z8) != 0 ||
        adapter(m70, (int)*rank, "q,k,v,o", (int)tp, &c4, &z4) != 0 || adapter(m70, (int)*rank, "q,k,v,o", 8, &c8tp, &z8tp) != 0)
        return -1;
    /* the blog's count: k and v as if they were hidden x hidden */
    double square = m70->layers * 4.0 * *rank * (2.0 * m70->hidden);
    practice_part *p = practice_add_part(s, "6.1(a)", 1, "parameters of the 70B adapter", "million", JUDGE_RELATIVE,
                                         z.params / 1e6, JUDGE_HAND_TOL);
    practice_add_slip(p, square / 1e6, "that is the blog's count: k and v project to the 8 KV heads, 1,024 wide");
    p = practice_add_part(s, "6.1(b)", 1, "the blog's overcount", "%", JUDGE_RELATIVE, 100 * (square / z.params - 1),
                          JUDGE_HAND_TOL);
    practice_add_slip(p, 100 * (1 - z.params / square), "that is the share of the blog's count; the overcount is of the true one");
    p = practice_add_part(s, "6.1(c)", 1, "MB of the adapter in bf16", "MB", JUDGE_RELATIVE, z.bytes / 1e6, JUDGE_HAND_TOL);
    practice_add_slip(p, z.bytes / 1048576.0, "that is MiB; a MB is 10^6 bytes");
    p = practice_add_part(s, "6.1(d)", 1, "parameters of the 8B all-seven adapter", "million", JUDGE_RELATIVE,
                          z8.params / 1e6, JUDGE_HAND_TOL);
    p = practice_add_part(s, "6.2(a1)", 2, "MB one GPU holds at the first degree", "MB", JUDGE_RELATIVE,
                          z4.bytes_per_gpu / 1e6, JUDGE_HAND_TOL);
    practice_add_slip(p, z.bytes / tp / 1e6, "a 1/TP share of the whole splits both A and B; each module splits only one");
    p = practice_add_part(s, "6.2(a2)", 2, "MB one GPU holds at TP 8", "MB", JUDGE_RELATIVE, z8tp.bytes_per_gpu / 1e6,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, z.bytes / 8e6, "an eighth of the whole splits both A and B; each module splits only one");
    return 0;
}

static const double ex3_context[] = {1024, 1536, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 8192};
static const double ex3_slot_rank[] = {16, 24, 32, 40, 48, 64, 80, 96, 112, 128};

static int exercise_3(practice_set *s, rng_state *r, const model_spec *m70)
{
    double context = 4096, rank = 64;
    lora_config all, qkvo;
    for (int attempt = 0; attempt < 64; attempt++) {
        context = practice_pick(r, s->seed, ex3_context, PRACTICE_COUNT(ex3_context), 6);
        rank = practice_pick(r, s->seed, ex3_slot_rank, PRACTICE_COUNT(ex3_slot_rank), 5);
        /* 16 slots still leave room for a batch (64 may leave none: the printed 0) */
        if (adapter(m70, (int)rank, "all", 4, &all, NULL) == 0 && batch_beside(&all, 16, (int)context) >= 1)
            break;
        context = 4096, rank = 64;
    }
    practice_add_input(s, "ch06_ex3_context", context, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex3_context));
    practice_add_input(s, "ch06_ex3_slot_rank", rank, "%g", PRACTICE_RANGE_OF(ex3_slot_rank));
    if (adapter(m70, (int)rank, "all", 4, &all, NULL) != 0 || adapter(m70, 16, "q,k,v,o", 4, &qkvo, NULL) != 0)
        return -1;
    static const struct {
        const char *id, *what;
        int slots, all;
    } parts[5] = {{"6.3(a1)", "largest batch with no slots", 0, 1},
                  {"6.3(a2)", "largest batch with 16 all-seven slots", 16, 1},
                  {"6.3(a3)", "largest batch with 64 all-seven slots", 64, 1},
                  {"6.3(b1)", "largest batch with 16 rank-16 q,k,v,o slots", 16, 0},
                  {"6.3(b2)", "largest batch with 64 rank-16 q,k,v,o slots", 64, 0}};
    int none = batch_beside(&all, 0, (int)context);
    for (int i = 0; i < 5; i++) {
        int b = batch_beside(parts[i].all ? &all : &qkvo, parts[i].slots, (int)context);
        if (b < 0)
            return -1;
        practice_part *p = practice_add_part(s, parts[i].id, 3, parts[i].what, "sequences", JUDGE_EXACT, b, 0);
        if (parts[i].slots > 0)
            practice_add_slip(p, none, "that leaves out the slots; each one takes its bytes out of the KV cache");
    }
    double slot = lora_slot_bytes_per_gpu(&all);
    practice_part *p = practice_add_part(s, "6.3(c)", 3, "MB per GPU of one all-seven slot", "MB", JUDGE_RELATIVE,
                                         slot / 1e6, JUDGE_HAND_TOL);
    lora_size whole;
    char err[256];
    if (lora_adapter_size(&all, &whole, err, sizeof err) == 0)
        practice_add_slip(p, whole.bytes / 1e6, "that is the whole adapter; one GPU of the four holds its share");
    return 0;
}

static const double ex4_batch[] = {24, 32, 40, 48, 56, 64};
static const double ex4_distinct[] = {2, 4, 6, 8, 12, 16};
static const double ex4_launch_us[] = {1, 1.5, 2, 2.5, 3, 4, 5, 6, 8, 10};

static int exercise_4(practice_set *s, rng_state *r, const model_spec *m70, double setting[3])
{
    double batch = PRACTICE_DRAW(s, r, "ch06_ex4_batch", ex4_batch, 5, "%g");
    double distinct = PRACTICE_DRAW(s, r, "ch06_ex4_distinct", ex4_distinct, 3, "%g");
    double launch = PRACTICE_DRAW(s, r, "ch06_ex4_launch_us", ex4_launch_us, 3, "%g");
    setting[0] = batch, setting[1] = distinct, setting[2] = launch;
    lora_config c;
    if (adapter(m70, 16, "q,k,v,o", 4, &c, NULL) != 0)
        return -1;
    double with = step_ratio(&c, (int)batch, 4096, (int)distinct, launch);
    double ops = step_ratio(&c, (int)batch, 4096, (int)distinct, 0);
    double one = step_ratio(&c, 1, 4096, 1, launch);
    double every = step_ratio(&c, (int)batch, 4096, (int)batch, launch);
    if (!isfinite(with) || !isfinite(ops) || !isfinite(one) || !isfinite(every))
        return -1;
    /* asked as the step's lengthening in percent: the ratios sit near 1 */
    const double tol = 0.05;
    const char *note = "to 5%";
    practice_part *p = practice_add_part(s, "6.4(a)", 4, "percent the adapters add to the step", "%", JUDGE_RELATIVE,
                                         100 * (with - 1), tol);
    practice_add_slip(p, 100 * (ops - 1), "that leaves out the kernels' fixed costs; at this size they are most of the overhead");
    practice_add_slip(p, 100 * with, "that is the whole step over the base; the question asks what the adapters add");
    if (p)
        p->judge.rule_note = note;
    p = practice_add_part(s, "6.4(b)", 4, "the same without the kernels' fixed costs", "%", JUDGE_RELATIVE,
                          100 * (ops - 1), tol);
    practice_add_slip(p, 100 * (with - 1), "that keeps the fixed costs; (b) leaves them out");
    if (p)
        p->judge.rule_note = note;
    p = practice_add_part(s, "6.4(c)", 4, "the same at batch 1 with one adapter", "%", JUDGE_RELATIVE, 100 * (one - 1),
                          tol);
    if (p)
        p->judge.rule_note = note;
    p = practice_add_part(s, "6.4(d)", 4, "the same with an adapter per request", "%", JUDGE_RELATIVE,
                          100 * (every - 1), tol);
    practice_add_slip(p, 100 * (with - 1), "that is the few-adapter step; every distinct adapter's weights are read");
    if (p)
        p->judge.rule_note = note;
    return 0;
}

static const double ex5_tokens[] = {16, 24, 32, 48, 64, 80, 96, 128, 160, 192, 256};
static const double ex5_distinct[] = {2, 4, 6, 8, 12, 16};

static void exercise_5(practice_set *s, rng_state *r)
{
    double tokens = PRACTICE_DRAW(s, r, "ch06_ex5_tokens", ex5_tokens, 4, "%g");
    double distinct = PRACTICE_DRAW(s, r, "ch06_ex5_distinct", ex5_distinct, 3, "%g");
    const double sets[3] = {1, distinct, tokens};
    static const char *const ids[3] = {"6.5(a1)", "6.5(a2)", "6.5(a3)"};
    static const char *const whats[3] = {"intensity with one adapter", "intensity with the few adapters",
                                         "intensity with an adapter per token"};
    for (int i = 0; i < 3; i++) {
        lora_op sh, ex;
        lora_bgmv_ops(tokens, 4096, 4096, 16, sets[i], 2, 2, &sh, &ex);
        practice_part *p = practice_add_part(s, ids[i], 5, whats[i], "FLOP/B", JUDGE_RELATIVE, sh.flop / sh.weight_bytes,
                                             JUDGE_HAND_TOL);
        practice_add_slip(p, 2 * sh.flop / sh.weight_bytes, "a bf16 weight is 2 bytes: the FLOP per byte is half the FLOP per weight");
    }
}

/* 6.5(b): the tenants' rank (printed 8) and the slots' (printed 64), in
 * exercise 4's setting (its batch, distinct adapters and kernel cost) */
static const double ex5_tenant_rank[] = {2, 4, 6, 8, 12, 16};
static const double ex5_slot_rank[] = {32, 48, 64, 96, 128};

static int exercise_5b(practice_set *s, rng_state *r, const model_spec *m70, const double setting[3])
{
    double tenant = 8, slot = 64;
    for (int attempt = 0; attempt < 64; attempt++) {
        tenant = practice_pick(r, s->seed, ex5_tenant_rank, PRACTICE_COUNT(ex5_tenant_rank), 3);
        slot = practice_pick(r, s->seed, ex5_slot_rank, PRACTICE_COUNT(ex5_slot_rank), 2);
        /* the printed regime: slots at least four times the tenants' rank */
        if (slot >= 4 * tenant)
            break;
        tenant = 8, slot = 64;
    }
    practice_add_input(s, "ch06_ex5_tenant_rank", tenant, "%g", PRACTICE_RANGE_OF(ex5_tenant_rank));
    practice_add_input(s, "ch06_ex5_slot_rank", slot, "%g", PRACTICE_RANGE_OF(ex5_slot_rank));
    lora_config padded, own;
    if (adapter(m70, (int)slot, "q,k,v,o", 4, &padded, NULL) != 0 || adapter(m70, (int)tenant, "q,k,v,o", 4, &own, NULL) != 0)
        return -1;
    double pad = step_ratio(&padded, (int)setting[0], 4096, (int)setting[1], setting[2]);
    double fit = step_ratio(&own, (int)setting[0], 4096, (int)setting[1], setting[2]);
    if (!isfinite(pad) || !isfinite(fit))
        return -1;
    /* in percent, as 6.4 asks, to 5 % */
    practice_part *p = practice_add_part(s, "6.5(b1)", 5, "percent the adapters add, padded to the slots' rank", "%",
                                         JUDGE_RELATIVE, 100 * (pad - 1), 0.05);
    practice_add_slip(p, 100 * (fit - 1), "that runs at the tenants' rank; the kernel runs every adapter at the slot's");
    practice_add_slip(p, 100 * pad, "that is the whole step over the base; the question asks what the adapters add");
    if (p)
        p->judge.rule_note = "to 5%";
    p = practice_add_part(s, "6.5(b2)", 5, "percent the adapters add at the tenants' rank", "%", JUDGE_RELATIVE,
                          100 * (fit - 1), 0.05);
    practice_add_slip(p, 100 * (pad - 1), "that is padded to the slots' rank; this part runs at the tenants'");
    if (p)
        p->judge.rule_note = "to 5%";
    return 0;
}

static const double ex6_adapters[] = {150, 200, 250, 300, 350, 400, 500, 600, 750, 1000, 1250, 1500};
static const double ex6_batch[] = {16, 24, 32, 48, 64, 96, 128};

/* 6.7(c): the step a miss is weighed against (printed "about 20 ms") */
static const double ex7_step_ms[] = {15, 16, 18, 20, 22, 24, 25, 28, 30, 35};

static int exercise_6_7(practice_set *s, rng_state *r, rng_state *r7, const model_spec *m70, double rank)
{
    double n = PRACTICE_DRAW(s, r, "ch06_ex6_adapters", ex6_adapters, 3, "%g");
    double batch = PRACTICE_DRAW(s, r, "ch06_ex6_batch", ex6_batch, 4, "%g");
    static const struct {
        const char *id, *what;
        double z;
        int small;
    } parts[4] = {{"6.6(a)", "distinct adapters, uniform popularity", 0, 0},
                  {"6.6(b)", "distinct adapters, Zipf popularity", 1, 0},
                  {"6.6(c1)", "distinct adapters at batch 8, uniform", 0, 1},
                  {"6.6(c2)", "distinct adapters at batch 8, Zipf", 1, 1}};
    for (int i = 0; i < 4; i++) {
        int b = parts[i].small ? 8 : (int)batch;
        double e = lora_expected_distinct_zipf((int)n, parts[i].z, b);
        practice_part *p = practice_add_part(s, parts[i].id, 6, parts[i].what, "adapters", JUDGE_RELATIVE, e,
                                             JUDGE_HAND_TOL);
        practice_add_slip(p, b, "requests share adapters: the batch holds fewer distinct ones than requests");
        if (parts[i].z > 0)
            practice_add_slip(p, lora_expected_distinct_zipf((int)n, 0, b), "that is uniform popularity; Zipf concentrates the requests");
    }
    /* 6.7: the same tenants; a full copy of the 70B takes a TP 4 replica each */
    lora_config c, big;
    lora_size z, zbig;
    lora_tenancy t;
    char err[256];
    if (adapter(m70, (int)rank, "q,k,v,o", 4, &c, &z) != 0 || adapter(m70, 64, "all", 4, &big, &zbig) != 0 ||
        lora_tenancy_compare(&c, precision_uniform(DT_BF16), (int)n, &t, err, sizeof err) != 0)
        return -1;
    gpu_spec h100 = gpu_builtin("h100");
    practice_part *p = practice_add_part(s, "6.7(a1)", 7, "GPUs for full fine-tuned copies", "GPUs", JUDGE_EXACT,
                                         t.copies_gpus, 0);
    practice_add_slip(p, n, "each copy of the 70B needs the four GPUs of its TP 4 replica");
    p = practice_add_part(s, "6.7(a2)", 7, "GPUs for one base with adapters", "GPUs", JUDGE_EXACT, t.adapters_gpus, 0);
    p = practice_add_part(s, "6.7(b1)", 7, "ms to load the q,k,v,o adapter", "ms", JUDGE_RELATIVE,
                          1e3 * lora_load_time(&h100, &z), JUDGE_HAND_TOL);
    practice_add_slip(p, 1e3 * z.bytes / h100.host_bw, "that loads the whole adapter over one link; each GPU loads its share");
    p = practice_add_part(s, "6.7(b2)", 7, "ms to load the rank-64 all-seven adapter", "ms", JUDGE_RELATIVE,
                          1e3 * lora_load_time(&h100, &zbig), JUDGE_HAND_TOL);
    practice_add_slip(p, 1e3 * zbig.bytes / h100.host_bw, "that loads the whole adapter over one link; each GPU loads its share");
    double step = practice_pick(r7, s->seed, ex7_step_ms, PRACTICE_COUNT(ex7_step_ms), 3);
    practice_add_input(s, "ch06_ex7_step_ms", step, "%g", PRACTICE_RANGE_OF(ex7_step_ms));
    const lora_size *sizes[2] = {&z, &zbig};
    static const char *const ids[2] = {"6.7(c1)", "6.7(c2)"};
    static const char *const whats[2] = {"share of a step the q,k,v,o miss costs", "share of a step the all-seven miss costs"};
    for (int i = 0; i < 2; i++) {
        double ms = 1e3 * lora_load_time(&h100, sizes[i]);
        p = practice_add_part(s, ids[i], 7, whats[i], "%", JUDGE_RELATIVE, 100 * ms / step, JUDGE_HAND_TOL);
        practice_add_slip(p, 100 * 1e3 * sizes[i]->bytes / h100.host_bw / step,
                          "that loads the whole adapter over one link; each GPU loads its share");
        practice_add_slip(p, 100 * step / ms, "that is steps per load; the share is the load over the step");
    }
    return 0;
}

int practice_build_ch06(uint64_t seed, practice_set *out)
{
    model_spec m70;
    if (model_lookup("llama3-70b", &m70) != 0)
        return -1;
    /* one stream per exercise, so a change to one leaves the others' draws */
    rng_state r[8];
    practice_streams(seed, r, 8);
    /* 6.2's degree, 6.5(b)'s ranks and 6.7(c)'s step came later: their streams follow the others' */
    double rank, setting[3];
    if (exercise_1_2(out, &r[0], &r[5], &m70, &rank) != 0 || exercise_3(out, &r[1], &m70) != 0 ||
        exercise_4(out, &r[2], &m70, setting) != 0)
        return -1;
    exercise_5(out, &r[3]);
    if (exercise_5b(out, &r[6], &m70, setting) != 0)
        return -1;
    return exercise_6_7(out, &r[4], &r[7], &m70, rank);
}
