/* Chapter 5's exercise variants: 5.1 (Little's law in an interview), 5.2
 * (fixed against random service), 5.3 (where is the knee?) and 5.4
 * (variable output lengths).  The
 * printed numbers are seed 0; other seeds draw from the lists below, which
 * keep one server between half and nine tenths busy (the regime where the
 * service time's variance matters and the queue is stable) and the 5.1
 * cache inside one server of eight H100s. */
#include "practice.h"
#include "practice_draw.h"

#include "memory.h"
#include "queue.h"
#include "rng.h"
#include "specs.h"

#include <math.h>

static double mg1(double lambda, double service, double cs2, int time)
{
    queue_formula f;
    if (mg1_formula(lambda, service, cs2, &f) != 0)
        return NAN;
    return time ? f.time : f.wait;
}

static const double ex1_rate[] = {10, 20, 25, 40, 50, 80, 100};
static const double ex1_latency[] = {2, 3, 4, 5, 6, 8, 10};
static const double ex1_tokens[] = {500, 1000, 1500, 2000, 3000, 4000};

static int exercise_1(practice_set *s, rng_state *r)
{
    model_spec m;
    if (model_lookup("llama3-8b", &m) != 0)
        return -1;
    gpu_spec h100 = gpu_builtin("h100");
    double kv = kv_bytes_per_token(&m, DT_BF16);
    double lambda = 40, w = 6, tokens = 1500;
    for (int attempt = 0; attempt < 64; attempt++) {
        lambda = practice_pick(r, s->seed, ex1_rate, PRACTICE_COUNT(ex1_rate), 3);
        w = practice_pick(r, s->seed, ex1_latency, PRACTICE_COUNT(ex1_latency), 4);
        tokens = practice_pick(r, s->seed, ex1_tokens, PRACTICE_COUNT(ex1_tokens), 2);
        /* the doubled load's cache still fits one server of eight GPUs */
        if (2 * lambda * w * tokens * kv <= 8 * h100.mem_bytes)
            break;
        lambda = 40, w = 6, tokens = 1500;
    }
    practice_add_input(s, "ch05_ex1_rate", lambda, "%g", PRACTICE_RANGE_OF(ex1_rate));
    practice_add_input(s, "ch05_ex1_latency", w, "%g", PRACTICE_RANGE_OF(ex1_latency));
    practice_add_input(s, "ch05_ex1_tokens", tokens, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex1_tokens));
    double l = lambda * w;
    practice_part *p = practice_add_part(s, "5.1(a)", 1, "requests in flight", "requests", JUDGE_RELATIVE, l,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, lambda / w, "Little's law multiplies: in flight = rate x time in system");
    double gb = l * tokens * kv / 1e9;
    p = practice_add_part(s, "5.1(b)", 1, "GB of KV cache they hold", "GB", JUDGE_RELATIVE, gb, JUDGE_HAND_TOL);
    practice_add_slip(p, gb * m.heads / m.kv_heads, "that counts the 32 attention heads; the cache has 8 KV heads");
    practice_add_slip(p, gb * 2, "bf16 is 2 bytes, and K and V are counted once each");
    p = practice_add_part(s, "5.1(c)", 1, "requests in flight after the deploy", "requests", JUDGE_RELATIVE, 2 * l,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, l, "latency doubled at the same traffic: Little's law doubles what is in flight");
    return 0;
}

static const double ex2_service[] = {0.1, 0.125, 0.2, 0.25, 0.4, 0.5};
static const double ex2_rate[] = {1, 2, 3, 4, 5, 6, 8};

static void exercise_2(practice_set *s, rng_state *r)
{
    double sv = 0.2, lambda = 4;
    for (int attempt = 0; attempt < 64; attempt++) {
        sv = practice_pick(r, s->seed, ex2_service, PRACTICE_COUNT(ex2_service), 2);
        lambda = practice_pick(r, s->seed, ex2_rate, PRACTICE_COUNT(ex2_rate), 3);
        if (lambda * sv >= 0.5 - 1e-12 && lambda * sv <= 0.9 + 1e-12)
            break;
        sv = 0.2, lambda = 4;
    }
    practice_add_input(s, "ch05_ex2_service", sv, "%g", PRACTICE_RANGE_OF(ex2_service));
    practice_add_input(s, "ch05_ex2_rate", lambda, "%g", PRACTICE_RANGE_OF(ex2_rate));
    queue_formula f;
    mm1_formula(lambda, 1 / sv, &f);
    practice_part *p = practice_add_part(s, "5.2(a)", 2, "utilisation", "a fraction", JUDGE_RELATIVE, f.rho,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, 1 / (lambda * sv), "that is capacity over load; utilisation is load over capacity");
    double mm1_w = mg1(lambda, sv, 1, 0), md1_w = mg1(lambda, sv, 0, 0);
    double mm1_t = mg1(lambda, sv, 1, 1), md1_t = mg1(lambda, sv, 0, 1);
    p = practice_add_part(s, "5.2(b1)", 2, "M/M/1 time in system", "s", JUDGE_RELATIVE, mm1_t, JUDGE_HAND_TOL);
    practice_add_slip(p, mm1_w, "that is the wait; the time in system adds the service");
    practice_add_slip(p, md1_t, "that is fixed service (M/D/1); exponential service waits twice as long");
    p = practice_add_part(s, "5.2(b2)", 2, "M/D/1 time in system", "s", JUDGE_RELATIVE, md1_t, JUDGE_HAND_TOL);
    practice_add_slip(p, md1_w, "that is the wait; the time in system adds the service");
    practice_add_slip(p, mm1_t, "that is exponential service (M/M/1); fixed service waits half as long");
    p = practice_add_part(s, "5.2(c1)", 2, "M/M/1 wait", "s", JUDGE_RELATIVE, mm1_w, JUDGE_HAND_TOL);
    practice_add_slip(p, mm1_t, "that is the time in system; the wait leaves out the service");
    p = practice_add_part(s, "5.2(c2)", 2, "M/D/1 wait", "s", JUDGE_RELATIVE, md1_w, JUDGE_HAND_TOL);
    practice_add_slip(p, md1_t, "that is the time in system; the wait leaves out the service");
}

static const double ex3_service[] = {0.5, 1, 2};
static const double ex3_near[] = {1.5, 2, 3};
static const double ex3_far[] = {4, 5, 10};

/* 5.3: one server of fixed service S, mean time targets of k S; the same
 * with exponential service of mean S. */
static void exercise_3(practice_set *s, rng_state *r)
{
    double sv = practice_pick(r, s->seed, ex3_service, PRACTICE_COUNT(ex3_service), 1);
    double near = practice_pick(r, s->seed, ex3_near, PRACTICE_COUNT(ex3_near), 1) * sv;
    double far = practice_pick(r, s->seed, ex3_far, PRACTICE_COUNT(ex3_far), 1) * sv;
    practice_add_input(s, "ch05_ex3_service", sv, "%g", PRACTICE_RANGE_OF(ex3_service));
    practice_add_input(s, "ch05_ex3_near", near, "%g", practice_least(ex3_service, PRACTICE_COUNT(ex3_service)) * practice_least(ex3_near, PRACTICE_COUNT(ex3_near)),
                       practice_greatest(ex3_service, PRACTICE_COUNT(ex3_service)) * practice_greatest(ex3_near, PRACTICE_COUNT(ex3_near)));
    practice_add_input(s, "ch05_ex3_far", far, "%g", practice_least(ex3_service, PRACTICE_COUNT(ex3_service)) * practice_least(ex3_far, PRACTICE_COUNT(ex3_far)),
                       practice_greatest(ex3_service, PRACTICE_COUNT(ex3_service)) * practice_greatest(ex3_far, PRACTICE_COUNT(ex3_far)));
    const double rate[4] = {mg1_max_rate(sv, 0, near), mg1_max_rate(sv, 0, far), mg1_max_rate(sv, 1, near),
                            mg1_max_rate(sv, 1, far)};
    static const char *const ids[4] = {"5.3(a1)", "5.3(a2)", "5.3(b1)", "5.3(b2)"};
    static const char *const whats[4] = {"fixed service: rate for the first target", "fixed service: rate for the second target",
                                         "exponential service: rate for the first target",
                                         "exponential service: rate for the second target"};
    for (int i = 0; i < 4; i++) {
        practice_part *p = practice_add_part(s, ids[i], 3, whats[i], "requests/s", JUDGE_RELATIVE, rate[i], JUDGE_HAND_TOL);
        practice_add_slip(p, rate[i ^ 2], i < 2 ? "that is exponential service (M/M/1); this server takes exactly its time"
                                               : "that is fixed service (M/D/1); exponential service waits twice as long");
    }
    for (int i = 0; i < 2; i++) {
        double rho = rate[2 * i] * sv;
        practice_part *p = practice_add_part(s, i == 0 ? "5.3(c1)" : "5.3(c2)", 3,
                                             i == 0 ? "over-provision for the first target, fixed service"
                                                    : "over-provision for the first target, exponential service",
                                             "%", JUDGE_RELATIVE, 100 * (1 - rho), JUDGE_HAND_TOL);
        practice_add_slip(p, 100 * rho, "that is the utilisation; the over-provision is the capacity left unused");
    }
}

static const double ex4_service[] = {1, 1.5, 2, 2.5, 3, 4};
static const double ex4_cs2[] = {0.25, 0.5, 0.75, 1.5, 2};
static const double ex4_rate[] = {0.1, 0.2, 0.25, 0.3, 0.4, 0.5};

static void exercise_4(practice_set *s, rng_state *r)
{
    double sv = 2, cs2 = 0.5, lambda = 0.4;
    for (int attempt = 0; attempt < 64; attempt++) {
        sv = practice_pick(r, s->seed, ex4_service, PRACTICE_COUNT(ex4_service), 2);
        cs2 = practice_pick(r, s->seed, ex4_cs2, PRACTICE_COUNT(ex4_cs2), 1);
        lambda = practice_pick(r, s->seed, ex4_rate, PRACTICE_COUNT(ex4_rate), 4);
        if (lambda * sv >= 0.5 - 1e-12 && lambda * sv <= 0.9 + 1e-12)
            break;
        sv = 2, cs2 = 0.5, lambda = 0.4;
    }
    practice_add_input(s, "ch05_ex4_service", sv, "%g", PRACTICE_RANGE_OF(ex4_service));
    practice_add_input(s, "ch05_ex4_cs2", cs2, "%g", PRACTICE_RANGE_OF(ex4_cs2));
    practice_add_input(s, "ch05_ex4_rate", lambda, "%g", PRACTICE_RANGE_OF(ex4_rate));
    double w = mg1(lambda, sv, cs2, 0), fixed = mg1(lambda, sv, 0, 0), expo = mg1(lambda, sv, 1, 0);
    practice_part *p = practice_add_part(s, "5.4(a)", 4, "mean wait before service", "s", JUDGE_RELATIVE, w,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, mg1(lambda, sv, cs2, 1), "that is the time in system; the wait leaves out the service");
    practice_add_slip(p, mg1(lambda, sv, sqrt(cs2), 0), "that uses the coefficient of variation; the formula takes its square");
    p = practice_add_part(s, "5.4(b1)", 4, "mean wait, fixed service times", "s", JUDGE_RELATIVE, fixed,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, w, "that keeps the variation; fixed service has none");
    p = practice_add_part(s, "5.4(b2)", 4, "mean wait, exponential service times", "s", JUDGE_RELATIVE, expo,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, w, "exponential service has a squared coefficient of variation of 1");
}

int practice_build_ch05(uint64_t seed, practice_set *out)
{
    /* one stream per exercise, so a change to one leaves the others' draws */
    rng_state r1 = rng_make(seed), r2 = r1, r4, r3;
    rng_jump(&r2);
    r4 = r2;
    rng_jump(&r4);
    r3 = r4; /* 5.3's stream comes after 5.4's, which keeps the earlier draws */
    rng_jump(&r3);
    if (exercise_1(out, &r1) != 0)
        return -1;
    exercise_2(out, &r2);
    exercise_3(out, &r3);
    exercise_4(out, &r4);
    return 0;
}
