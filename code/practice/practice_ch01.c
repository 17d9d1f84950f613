/* Chapter 1's exercise variants: 1.1 (ridges, two GPUs' datasheet numbers), 1.2
 * (what grouped-query attention buys), 1.3 (one H200, long context), 1.4
 * (the ridge batch on H200s), 1.5 (int8 weights and cache, on a GPU of the
 * table), 1.6 (per-user pace against throughput), 1.7 (a mixture of experts
 * at decode) and 1.8 (the interview follow-up).  The printed numbers are
 * seed 0; other seeds draw from the lists below, which keep each question
 * in its printed regime: a cache budget that holds a few sequences of the
 * larger model, a batch that fits its GPUs, the ridge batch that fits in
 * 1.4, a batch of one against a batch that fits in 1.6, a ridge batch that
 * fits on eight GPUs and not on four in 1.8. */
#include "practice_chapters.h"
#include "practice_set.h"
#include "practice_draw.h"

#include "memory.h"
#include "rng.h"
#include "roofline.h"
#include "specs.h"
#include "transformer.h"

#include <math.h>

static double ridge_of(const char *gpu, dtype d)
{
    gpu_spec g = gpu_builtin(gpu);
    return ridge_intensity(gpu_peak_flops(&g, d), g.mem_bw);
}

/* The bf16 ridge batch of a GPU, rounded as the exercises use it. */
static int ridge_batch_of(const char *gpu, dtype w, dtype c)
{
    gpu_spec g = gpu_builtin(gpu);
    precision p = {w, w, c, c, WF_AS_DTYPE, WF_AS_DTYPE};
    return (int)lround(ridge_batch(&g, p));
}

/* Sequences of `context` tokens that fit one GPU of a tp replica when
 * `usable` of its memory is used and `reserve` bytes are kept (the exercise
 * policy: no other activation reserve); -1 for a shape the library refuses. */
static int max_batch(const model_spec *m, const char *gpu, int tp, int context, dtype w, dtype kv, double usable,
                     double reserve)
{
    gpu_spec g = gpu_builtin(gpu);
    precision p = {w, kv, DT_BF16, DT_BF16, WF_AS_DTYPE, WF_AS_DTYPE};
    memory_policy pol = {usable, 0, 0, 0};
    resident_model rm = {m, p, tp};
    fit_check f;
    char err[256];
    if (memory_fit(&g, pol, &rm, 1, reserve, 1, context, &f, err, sizeof err) != 0)
        return -1;
    return f.max_batch;
}

/* The chapter's activation reserve on one GPU of a tp replica (the
 * library's default policy: an 8192-token step, 256 positions sampled), in
 * GB rounded to the MB as the exercise prints it; the answers use the
 * printed figure, so a pencil on it lands on the same count. */
static double chapter_reserve_gb(const model_spec *m, int tp)
{
    memory_policy pol = memory_policy_default();
    return round(activation_bytes(m, pol.activation_tokens, pol.sampled_tokens, DT_BF16, tp) / 1e6) / 1e3;
}

/* The reserve as an input of the variant, its range over the tp list. */
static double add_reserve_input(practice_set *s, const char *name, const model_spec *m, int tp, const double *tps,
                                int ntp)
{
    double lo = INFINITY, hi = 0;
    for (int i = 0; i < ntp; i++) {
        double r = chapter_reserve_gb(m, (int)tps[i]);
        lo = fmin(lo, r), hi = fmax(hi, r);
    }
    double gb = chapter_reserve_gb(m, tp);
    practice_add_input(s, name, gb, "%.3f", lo, hi);
    return gb * 1e9;
}

/* One decode step, everything in bf16; -1 when the library refuses it. */
static int step(const model_spec *m, const char *gpu, int tp, int batch, int context, step_cost *out)
{
    gpu_spec g = gpu_builtin(gpu);
    step_shape s = decode_shape(batch, context, tp, precision_uniform(DT_BF16));
    char err[256];
    return decoder_step_cost(m, &g, &s, out, err, sizeof err);
}

/* Whether batch sequences of context fit under the library's default policy. */
static int fits_default(const model_spec *m, const char *gpu, int tp, int batch, int context)
{
    gpu_spec g = gpu_builtin(gpu);
    resident_model rm = {m, precision_uniform(DT_BF16), tp};
    fit_check f;
    char err[256];
    return memory_fit(&g, memory_policy_default(), &rm, 1, 0, batch, context, &f, err, sizeof err) == 0 && f.fits;
}

/* A part a hand estimate answers: the step model's number with the
 * activations' bytes and the same without them (what a pencil leaves out)
 * bound the accepted range, 2 % wider on each side. */
static const char *const estimate_note = "with or without the activations' bytes, to 2%";
static practice_part *add_estimate(practice_set *s, const char *id, int exercise, const char *what, const char *unit,
                                   double with_act, double without_act)
{
    double lo = fmin(with_act, without_act) * 0.98, hi = fmax(with_act, without_act) * 1.02;
    practice_part *p = practice_add_part(s, id, exercise, what, unit, JUDGE_RANGE, 0.5 * (lo + hi), 0.5 * (hi - lo));
    if (p)
        p->judge.rule_note = estimate_note;
    return p;
}

/* A step's time as a pencil prices it: weights and cache over the bandwidth,
 * plus the collectives, without the activations. */
static double hand_time(const step_cost *c, const char *gpu)
{
    return (c->weight_bytes + c->kv_bytes) / gpu_builtin(gpu).mem_bw + c->time_comm;
}

/* 1.1's GPUs: the table's rows with a dense fp8 rate, less the H100 the
 * exercise compares them with; the printed pair is the B200 and the MI300X.
 * §1.3 prints each one's ridge, so the exercise swaps their memories: the
 * ridges asked for are of two parts §1.3 does not list. */
static const struct {
    const char *key, *name;
} ex1_gpus[] = {{"b200", "NVIDIA B200 (HGX)"},
                {"mi300x", "AMD MI300X"},
                {"h200", "NVIDIA H200 (SXM)"},
                {"l40s", "NVIDIA L40S"}};

static void exercise_1(practice_set *s, rng_state *r)
{
    int n = PRACTICE_COUNT(ex1_gpus), a = 0, b = 1;
    if (s->seed != 0) {
        /* two different GPUs: the second from the list less the first */
        a = (int)rng_below(r, (uint64_t)n);
        b = (a + 1 + (int)rng_below(r, (uint64_t)(n - 1))) % n;
    }
    static const char *const names[2] = {"ch01_ex1_gpu_a", "ch01_ex1_gpu_b"};
    static const char *const rates[2][3] = {{"ch01_ex1_a_bf16", "ch01_ex1_a_fp8", "ch01_ex1_a_tbs"},
                                            {"ch01_ex1_b_bf16", "ch01_ex1_b_fp8", "ch01_ex1_b_tbs"}};
    static const char *const ids[2][2] = {{"1.1(a1)", "1.1(a2)"}, {"1.1(a3)", "1.1(a4)"}};
    static const char *const what[2][2] = {
        {"bf16 ridge, the first GPU's tensor cores on the second's memory",
         "fp8 ridge, the first GPU's tensor cores on the second's memory"},
        {"bf16 ridge, the second GPU's tensor cores on the first's memory",
         "fp8 ridge, the second GPU's tensor cores on the first's memory"}};
    const int pick[2] = {a, b};
    gpu_spec g[2];
    for (int k = 0; k < 2; k++) {
        int i = pick[k];
        g[k] = gpu_builtin(ex1_gpus[i].key);
        practice_add_choice(s, names[k], i, n, ex1_gpus[i].name, ex1_gpus[i].key);
        /* the datasheet's numbers, as the exercise prints them, each in the list's range */
        double lo[3], hi[3];
        for (int j = 0; j < n; j++) {
            gpu_spec o = gpu_builtin(ex1_gpus[j].key);
            double v[3] = {gpu_peak_flops(&o, DT_BF16) / 1e12, gpu_peak_flops(&o, DT_FP8) / 1e12, o.mem_bw / 1e12};
            for (int q = 0; q < 3; q++) {
                lo[q] = j == 0 || v[q] < lo[q] ? v[q] : lo[q];
                hi[q] = j == 0 || v[q] > hi[q] ? v[q] : hi[q];
            }
        }
        practice_add_input(s, rates[k][0], gpu_peak_flops(&g[k], DT_BF16) / 1e12, "%g", lo[0], hi[0]);
        practice_add_input(s, rates[k][1], gpu_peak_flops(&g[k], DT_FP8) / 1e12, "%g", lo[1], hi[1]);
        practice_add_input(s, rates[k][2], g[k].mem_bw / 1e12, "%.3g", lo[2], hi[2]);
    }
    for (int k = 0; k < 2; k++) {
        const gpu_spec *cores = &g[k], *mem = &g[1 - k];
        double bf16 = gpu_peak_flops(cores, DT_BF16), fp8 = gpu_peak_flops(cores, DT_FP8);
        double rb = ridge_intensity(bf16, mem->mem_bw), rf = ridge_intensity(fp8, mem->mem_bw);
        /* the real GPU's ridge, which §1.3 prints */
        double own_b = ridge_intensity(bf16, cores->mem_bw), own_f = ridge_intensity(fp8, cores->mem_bw);
        practice_part *p = practice_add_part(s, ids[k][0], 1, what[k][0], "FLOP/B", JUDGE_RELATIVE, rb, JUDGE_HAND_TOL);
        practice_add_slip(p, 1 / rb, "that is bytes per FLOP; the ridge is the peak over the bandwidth");
        practice_add_slip(p, 2 * rb, "that is twice the dense bf16 peak: the sparse figure, or fp8's");
        practice_add_slip(p, own_b, "that is the real GPU's ridge, which section 1.3 prints; this part has the other's memory");
        p = practice_add_part(s, ids[k][1], 1, what[k][1], "FLOP/B", JUDGE_RELATIVE, rf, JUDGE_HAND_TOL);
        practice_add_slip(p, 1 / rf, "that is bytes per FLOP; the ridge is the peak over the bandwidth");
        practice_add_slip(p, 2 * rf, "that is the sparse peak; dense rates only");
        practice_add_slip(p, rb, "that is the bf16 peak; this part asks for fp8");
        practice_add_slip(p, own_f, "that is the real GPU's ridge, which section 1.3 prints; this part has the other's memory");
    }
}

static const double ex2_budget_gb[] = {20, 24, 32, 40, 48, 64, 80};
static const double ex2_context[] = {1024, 2048, 4096, 8192};

static int exercise_2(practice_set *s, rng_state *r)
{
    model_spec mha, gqa;
    if (model_lookup("llama2-13b", &mha) != 0 || model_lookup("llama3-8b", &gqa) != 0)
        return -1;
    double budget = PRACTICE_DRAW(s, r, "ch01_ex2_budget_gb", ex2_budget_gb, 3, "%g");
    double context = PRACTICE_DRAW(s, r, "ch01_ex2_context", ex2_context, 2, PRACTICE_GROUPED);
    double kv13 = kv_bytes_per_token(&mha, DT_BF16), kv8 = kv_bytes_per_token(&gqa, DT_BF16);
    practice_part *p = practice_add_part(s, "1.2(a1)", 2, "KV bytes per token, LLaMA-2-13B", "B", JUDGE_RELATIVE,
                                         kv13, JUDGE_HAND_TOL);
    practice_add_slip(p, kv13 / 2, "that counts K or V alone; the cache holds both");
    p = practice_add_part(s, "1.2(a2)", 2, "KV bytes per token, LLaMA-3-8B", "B", JUDGE_RELATIVE, kv8, JUDGE_HAND_TOL);
    practice_add_slip(p, kv8 * gqa.heads / gqa.kv_heads, "that counts the 32 attention heads; the cache has 8 KV heads");
    practice_add_slip(p, kv8 / 2, "that counts K or V alone; the cache holds both");
    double n13 = floor(budget * 1e9 / (kv13 * context)), n8 = floor(budget * 1e9 / (kv8 * context));
    double gib = 1073741824.0;
    /* rounding up first: where the GiB budget also gives the next whole
     * sequence, 11.9 written as 12 is a rounding, not a unit */
    p = practice_add_part(s, "1.2(b1)", 2, "sequences of LLaMA-2-13B that fit", "sequences", JUDGE_EXACT, n13, 0);
    practice_add_slip(p, ceil(budget * 1e9 / (kv13 * context)), "a sequence that does not fit whole does not fit: round down");
    practice_add_slip(p, floor(budget * gib / (kv13 * context)), "that budget is in GiB; a GB is 10^9 bytes");
    p = practice_add_part(s, "1.2(b2)", 2, "sequences of LLaMA-3-8B that fit", "sequences", JUDGE_EXACT, n8, 0);
    practice_add_slip(p, ceil(budget * 1e9 / (kv8 * context)), "a sequence that does not fit whole does not fit: round down");
    practice_add_slip(p, floor(budget * gib / (kv8 * context)), "that budget is in GiB; a GB is 10^9 bytes");
    practice_add_slip(p, floor(budget * 1e9 / (kv8 * gqa.heads / gqa.kv_heads * context)),
                      "that sizes the cache with the 32 attention heads; it has 8 KV heads");
    p = practice_add_part(s, "1.2(c)", 2, "factor of the attention-head sizing's error", "x", JUDGE_EXACT,
                          (double)gqa.heads / gqa.kv_heads, 0);
    return 0;
}

static const double ex3_context[] = {2048, 4096, 8192, 16384, 32768};
static const double ex3_usable_pct[] = {80, 82, 84, 85, 86, 88, 90, 92, 94, 95};
static const double ex3_tp[] = {1};

static int exercise_3(practice_set *s, rng_state *r, double *usable, double *reserve)
{
    model_spec m;
    if (model_lookup("llama3-8b", &m) != 0)
        return -1;
    double context = PRACTICE_DRAW(s, r, "ch01_ex3_context", ex3_context, 2, PRACTICE_GROUPED);
    double pct = PRACTICE_DRAW(s, r, "ch01_ex3_usable_pct", ex3_usable_pct, 6, "%g");
    *usable = pct / 100;
    /* the chapter's policy: the activations of an 8192-token step held back */
    *reserve = add_reserve_input(s, "ch01_ex3_reserve_gb", &m, 1, ex3_tp, PRACTICE_COUNT(ex3_tp));
    int b = max_batch(&m, "h200", 1, (int)context, DT_BF16, DT_BF16, *usable, *reserve);
    if (b < 1)
        return -1;
    gpu_spec h200 = gpu_builtin("h200");
    double seq = kv_bytes_per_sequence(&m, DT_BF16, (int)context);
    double on_datasheet = floor((*usable * h200.mem_bytes_datasheet - weight_bytes(&m, DT_BF16) - *reserve) / seq);
    practice_part *p = practice_add_part(s, "1.3(a)", 3, "largest batch that fits", "sequences", JUDGE_EXACT, b, 0);
    practice_add_slip(p, on_datasheet, "that plans with the datasheet's GB; a server has what the driver reports");
    practice_add_slip(p, floor((h200.mem_bytes - weight_bytes(&m, DT_BF16) - *reserve) / seq),
                      "that uses all of the memory; the server may use only its share of it");
    p = practice_add_part(s, "1.3(b)", 3, "the H200's bf16 ridge batch", "sequences", JUDGE_RELATIVE,
                          ridge_of("h200", DT_BF16), JUDGE_HAND_TOL);
    practice_add_slip(p, ridge_of("h100", DT_BF16), "that is the H100's ridge; the H200 has more bandwidth");
    step_cost c;
    if (step(&m, "h200", 1, b, (int)context, &c) != 0)
        return -1;
    p = practice_add_part(s, "1.3(c)", 3, "KV bytes read per byte of weights at (a)'s batch", "B/B", JUDGE_RELATIVE,
                          c.kv_bytes / c.weight_bytes, JUDGE_HAND_TOL);
    practice_add_slip(p, c.kv_bytes / weight_bytes(&m, DT_BF16),
                      "that counts the embedding table as read; a step gathers only its batch's rows of it");
    return 0;
}

static const double ex4_tp[] = {4, 8};
static const double ex4_context[] = {1024, 1536, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192, 10240, 12288};

static int exercise_4(practice_set *s, rng_state *r, double usable)
{
    model_spec m;
    if (model_lookup("llama3-70b", &m) != 0)
        return -1;
    int ridge = ridge_batch_of("h200", DT_BF16, DT_BF16);
    double tp = 8, context = 4096;
    int b = -1;
    for (int attempt = 0; attempt < 64; attempt++) {
        tp = practice_pick(r, s->seed, ex4_tp, PRACTICE_COUNT(ex4_tp), 1);
        context = practice_pick(r, s->seed, ex4_context, PRACTICE_COUNT(ex4_context), 6);
        /* the printed regime: the ridge batch fits, with a sequence to spare
         * (so it fits whether the ridge is rounded or not) */
        b = max_batch(&m, "h200", (int)tp, (int)context, DT_BF16, DT_BF16, usable, chapter_reserve_gb(&m, (int)tp) * 1e9);
        if (b > ridge)
            break;
        tp = 8, context = 4096;
        b = max_batch(&m, "h200", 8, 4096, DT_BF16, DT_BF16, usable, chapter_reserve_gb(&m, 8) * 1e9);
    }
    if (b <= ridge)
        return -1;
    practice_add_input(s, "ch01_ex4_tp", tp, "%g", PRACTICE_RANGE_OF(ex4_tp));
    practice_add_input(s, "ch01_ex4_context", context, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex4_context));
    double reserve = add_reserve_input(s, "ch01_ex4_reserve_gb", &m, (int)tp, ex4_tp, PRACTICE_COUNT(ex4_tp));
    double w = weight_bytes_per_gpu(&m, DT_BF16, (int)tp), kv = kv_bytes_per_token_per_gpu(&m, DT_BF16, (int)tp);
    practice_part *p = practice_add_part(s, "1.4(a1)", 4, "GB of weights on each GPU", "GB", JUDGE_RELATIVE, w / 1e9,
                                         JUDGE_HAND_TOL);
    practice_add_slip(p, w * tp / 1e9, "that is the whole model; tensor parallelism splits it over the GPUs");
    p = practice_add_part(s, "1.4(a2)", 4, "KV bytes per token on each GPU", "B", JUDGE_RELATIVE, kv, JUDGE_HAND_TOL);
    practice_add_slip(p, kv * tp, "that is the whole model's cache; each GPU holds its share of the KV heads");
    p = practice_add_part(s, "1.4(b)", 4, "largest batch that fits", "sequences", JUDGE_EXACT, b, 0);
    gpu_spec h200 = gpu_builtin("h200");
    practice_add_slip(p, floor((usable * h200.mem_bytes_datasheet - w - reserve) / (kv * context)),
                      "that plans with the datasheet's GB; a server has what the driver reports");
    step_cost c;
    if (step(&m, "h200", (int)tp, ridge, (int)context, &c) != 0)
        return -1;
    p = practice_add_part(s, "1.4(c1)", 4, "KV bytes over weight bytes at the ridge batch", "B/B", JUDGE_RELATIVE,
                          c.kv_bytes / c.weight_bytes, JUDGE_HAND_TOL);
    practice_add_slip(p, c.kv_bytes / w, "that counts the embedding table as read; a step gathers only its batch's rows of it");
    p = add_estimate(s, "1.4(c2)", 4, "the whole step's intensity at the ridge batch", "FLOP/B", c.intensity,
                     c.flop / (c.weight_bytes + c.kv_bytes));
    practice_add_slip(p, (double)ridge, "that is the projections' intensity alone; the KV cache's bytes bring it down");
    return 0;
}

static const double ex5_tp[] = {4, 8};
static const double ex5_context[] = {2048, 4096, 8192};
/* 5's GPUs: the table's rows with int8 tensor cores and room for the 70B on
 * four of them; the printed one is the H100 */
static const struct {
    const char *key, *name;
} ex5_gpus[] = {{"h100", "H100"}, {"h200", "H200"}, {"a100", "A100"}, {"b200", "B200"}, {"mi300x", "MI300X"}};

static int exercise_5(practice_set *s, rng_state *r)
{
    model_spec m;
    if (model_lookup("llama3-70b", &m) != 0)
        return -1;
    double tp = PRACTICE_DRAW(s, r, "ch01_ex5_tp", ex5_tp, 0, "%g");
    double context = PRACTICE_DRAW(s, r, "ch01_ex5_context", ex5_context, 1, PRACTICE_GROUPED);
    /* drawn after tp and context, so their draws are the earlier variants' */
    int n = PRACTICE_COUNT(ex5_gpus), i = s->seed == 0 ? 0 : (int)rng_below(r, (uint64_t)n);
    const char *key = ex5_gpus[i].key;
    gpu_spec g = gpu_builtin(key);
    practice_add_choice(s, "ch01_ex5_gpu", i, n, ex5_gpus[i].name, key);
    double lo = INFINITY, hi = 0;
    for (int j = 0; j < n; j++) {
        double gb = gpu_builtin(ex5_gpus[j].key).mem_bytes / 1e9;
        lo = fmin(lo, gb), hi = fmax(hi, gb);
    }
    practice_add_input(s, "ch01_ex5_driver_gb", g.mem_bytes / 1e9, "%.1f", lo, hi);
    /* the chapter's policy: 90 % of the driver's figure, an 8192-token step's activations kept */
    double reserve = add_reserve_input(s, "ch01_ex5_reserve_gb", &m, (int)tp, ex5_tp, PRACTICE_COUNT(ex5_tp));
    int bf = max_batch(&m, key, (int)tp, (int)context, DT_BF16, DT_BF16, 0.9, reserve);
    int i8 = max_batch(&m, key, (int)tp, (int)context, DT_INT8, DT_INT8, 0.9, reserve);
    int w8 = max_batch(&m, key, (int)tp, (int)context, DT_INT8, DT_BF16, 0.9, reserve);
    if (bf < 1 || i8 < 1)
        return -1;
    practice_part *p = practice_add_part(s, "1.5(a1)", 5, "largest batch in bf16", "sequences", JUDGE_EXACT, bf, 0);
    practice_add_slip(p, max_batch(&m, key, (int)tp, (int)context, DT_BF16, DT_BF16, 0.9, 0),
                      "that keeps no activation reserve; the chapter holds back an 8192-token step's activations");
    p = practice_add_part(s, "1.5(a2)", 5, "largest batch with int8 weights and cache", "sequences", JUDGE_EXACT, i8, 0);
    practice_add_slip(p, w8, "that keeps the cache in bf16; the question makes both int8");
    practice_add_slip(p, 2.0 * bf, "halving the bytes does not double the batch: the weights' share is fixed");
    double bf16ridge = ridge_of(key, DT_BF16), i8ridge = ridge_of(key, DT_INT8);
    p = practice_add_part(s, "1.5(b)", 5, "batch at the bf16 ridge with int8 weights (W8A16)", "sequences",
                          JUDGE_RELATIVE, bf16ridge / 2, JUDGE_HAND_TOL);
    practice_add_slip(p, bf16ridge, "that is bf16 weights' batch; a 1-byte weight doubles the intensity per row");
    practice_add_slip(p, ridge_of("h100", DT_BF16) / 2, "that is the H100's ridge; this GPU has its own");
    p = practice_add_part(s, "1.5(c1)", 5, "the GPU's int8 ridge", "OP/B", JUDGE_RELATIVE, i8ridge, JUDGE_HAND_TOL);
    practice_add_slip(p, bf16ridge, "that is the bf16 ridge; int8 tensor cores run twice as fast");
    practice_add_slip(p, 2 * i8ridge, "that is the sparse int8 figure; dense rates only");
    p = practice_add_part(s, "1.5(c2)", 5, "batch at the int8 ridge with int8 math (W8A8)", "sequences",
                          JUDGE_RELATIVE, i8ridge / 2, JUDGE_HAND_TOL);
    practice_add_slip(p, i8ridge, "an int8 weight is one byte and two operations: the batch is half the ridge");
    return 0;
}

static const double ex6_tp[] = {4, 8};
static const double ex6_batch[] = {16, 32, 48, 64, 96, 128};
static const double ex6_context[] = {1024, 1536, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 8192};

static int exercise_6(practice_set *s, rng_state *r)
{
    model_spec m;
    if (model_lookup("llama3-70b", &m) != 0)
        return -1;
    double tp = 4, batch = 64, context = 4096;
    for (int attempt = 0; attempt < 64; attempt++) {
        tp = practice_pick(r, s->seed, ex6_tp, PRACTICE_COUNT(ex6_tp), 0);
        batch = practice_pick(r, s->seed, ex6_batch, PRACTICE_COUNT(ex6_batch), 3);
        context = practice_pick(r, s->seed, ex6_context, PRACTICE_COUNT(ex6_context), 6);
        if (fits_default(&m, "h100", (int)tp, (int)batch, (int)context))
            break;
        tp = 4, batch = 64, context = 4096;
    }
    practice_add_input(s, "ch01_ex6_tp", tp, "%g", PRACTICE_RANGE_OF(ex6_tp));
    practice_add_input(s, "ch01_ex6_batch", batch, "%g", PRACTICE_RANGE_OF(ex6_batch));
    practice_add_input(s, "ch01_ex6_context", context, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex6_context));
    step_cost c1, cb;
    if (step(&m, "h100", (int)tp, 1, (int)context, &c1) != 0 || step(&m, "h100", (int)tp, (int)batch, (int)context, &cb) != 0)
        return -1;
    double t1 = c1.time, tb = cb.time, h1 = hand_time(&c1, "h100"), hb = hand_time(&cb, "h100");
    practice_part *p = add_estimate(s, "1.6(a1)", 6, "tokens/s one user sees at batch 1", "tokens/s", 1 / t1, 1 / h1);
    practice_add_slip(p, 1 / (h1 - c1.time_comm), "that leaves out the all-reduces; at batch 1 their latency counts");
    p = add_estimate(s, "1.6(a2)", 6, "tokens/s one user sees at the larger batch", "tokens/s", 1 / tb, 1 / hb);
    practice_add_slip(p, batch / tb, "that is the replica's throughput; a user gets one token a step");
    practice_add_slip(p, batch / hb, "that is the replica's throughput; a user gets one token a step");
    p = add_estimate(s, "1.6(b)", 6, "tokens/s the replica produces at the larger batch", "tokens/s", batch / tb,
                     batch / hb);
    practice_add_slip(p, 1 / tb, "that is one user's pace; the replica makes a token per sequence each step");
    practice_add_slip(p, 1 / hb, "that is one user's pace; the replica makes a token per sequence each step");
    p = add_estimate(s, "1.6(c1)", 6, "factor by which throughput grew", "x", batch * t1 / tb, batch * h1 / hb);
    practice_add_slip(p, batch, "throughput grows by the batch only if the step time stays the same");
    p = add_estimate(s, "1.6(c2)", 6, "factor by which each user's pace fell", "x", tb / t1, hb / h1);
    practice_add_slip(p, t1 / tb, "that is the pace's ratio upside down; the larger batch is the slower");
    practice_add_slip(p, h1 / hb, "that is the pace's ratio upside down; the larger batch is the slower");
    return 0;
}

static const double ex7_small[] = {2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12};
static const double ex7_large[] = {16, 32, 64, 128};

static int exercise_7(practice_set *s, rng_state *r)
{
    model_spec m;
    if (model_lookup("mixtral-8x7b", &m) != 0)
        return -1;
    double small = PRACTICE_DRAW(s, r, "ch01_ex7_small_batch", ex7_small, 2, "%g");
    double large = PRACTICE_DRAW(s, r, "ch01_ex7_large_batch", ex7_large, 2, "%g");
    param_count pc = model_params(&m);
    practice_part *p = practice_add_part(s, "1.7(a1)", 7, "total parameters", "billion", JUDGE_RELATIVE,
                                         pc.total / 1e9, JUDGE_HAND_TOL);
    practice_add_slip(p, 56.0, "8 x 7B is the name, not the count: the experts share attention and embeddings");
    p = practice_add_part(s, "1.7(a2)", 7, "active parameters per token", "billion", JUDGE_RELATIVE, pc.active / 1e9,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, 14.0, "2 x 7B double-counts what the experts share: attention and embeddings");
    const double batches[3] = {1, small, large};
    static const char *const ids[3] = {"1.7(b1)", "1.7(b2)", "1.7(b3)"};
    static const char *const whats[3] = {"GB of weights a step reads at batch 1",
                                         "GB of weights a step reads at the small batch",
                                         "GB of weights a step reads at the large batch"};
    double at_one = NAN;
    for (int i = 0; i < 3; i++) {
        step_cost c;
        if (step(&m, "h100", 1, (int)batches[i], 1, &c) != 0)
            return -1;
        p = practice_add_part(s, ids[i], 7, whats[i], "GB", JUDGE_RELATIVE, c.weight_bytes / 1e9, JUDGE_HAND_TOL);
        if (i == 0) {
            at_one = c.weight_bytes / 1e9;
            practice_add_slip(p, 2 * pc.total / 1e9, "one token reads only its 2 experts of each layer's 8");
        } else {
            practice_add_slip(p, at_one, "that is batch 1's bytes: a batch of tokens chooses more experts than one token");
            practice_add_slip(p, at_one * batches[i], "tokens share experts: the bytes grow far slower than the batch");
        }
    }
    return 0;
}

/* 8's GPUs and contexts: those where the ridge batch does not fit on four
 * GPUs and does on eight, the printed regime (the H100 at 4k). */
static const struct {
    const char *key, *name;
} ex8_gpus[] = {{"h100", "H100"}, {"a100", "A100"}};
static const double ex8_context[] = {2048, 2304, 2560, 2816, 3072, 3328, 3584, 3840, 4096, 4352,
                                     4608, 4864, 6144, 6400, 6656, 6912, 8192, 8448, 8704, 8960};

/* The largest batch of context under the library's default policy: the
 * chapter's fit chain, as exercises 3 to 5 use it. */
static int default_max_batch(const model_spec *m, const char *gpu, int tp, int context)
{
    gpu_spec g = gpu_builtin(gpu);
    replica_memory rm;
    char err[256];
    if (replica_memory_plan(m, &g, precision_uniform(DT_BF16), tp, memory_policy_default(), &rm, err, sizeof err) != 0)
        return -1;
    return max_batch_for_memory(&rm, context);
}

static int exercise_8(practice_set *s, rng_state *r)
{
    model_spec m;
    if (model_lookup("llama3-70b", &m) != 0)
        return -1;
    int n = PRACTICE_COUNT(ex8_gpus), i = 0, ridge = 0, b4 = -1, b8 = -1;
    double context = 4096;
    for (int attempt = 0; attempt < 64; attempt++) {
        i = s->seed == 0 ? 0 : (int)rng_below(r, (uint64_t)n);
        context = practice_pick(r, s->seed, ex8_context, PRACTICE_COUNT(ex8_context), 8);
        ridge = ridge_batch_of(ex8_gpus[i].key, DT_BF16, DT_BF16);
        b4 = default_max_batch(&m, ex8_gpus[i].key, 4, (int)context);
        b8 = default_max_batch(&m, ex8_gpus[i].key, 8, (int)context);
        if (b4 >= 1 && b4 < ridge && b8 >= ridge)
            break;
        i = 0, context = 4096, ridge = ridge_batch_of("h100", DT_BF16, DT_BF16);
        b4 = default_max_batch(&m, "h100", 4, 4096), b8 = default_max_batch(&m, "h100", 8, 4096);
    }
    if (b4 < 1 || b8 < ridge)
        return -1;
    const char *key = ex8_gpus[i].key;
    practice_add_choice(s, "ch01_ex8_gpu", i, n, ex8_gpus[i].name, key);
    practice_add_input(s, "ch01_ex8_context", context, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex8_context));
    practice_add_input(s, "ch01_ex8_ridge_batch", ridge, "%g", ridge_batch_of("a100", DT_BF16, DT_BF16),
                       ridge_batch_of("h100", DT_BF16, DT_BF16));
    practice_part *p = practice_add_part(s, "1.8(a)", 8, "largest batch on four GPUs", "sequences", JUDGE_EXACT, b4, 0);
    practice_add_slip(p, max_batch(&m, key, 4, (int)context, DT_BF16, DT_BF16, 0.9, 0),
                      "that keeps no activation reserve; the chapter reserves an 8192-token step's activations");
    practice_add_slip(p, b8, "that is eight GPUs'; this part asks about four");
    p = practice_add_part(s, "1.8(b)", 8, "largest batch on eight GPUs", "sequences", JUDGE_EXACT, b8, 0);
    practice_add_slip(p, max_batch(&m, key, 8, (int)context, DT_BF16, DT_BF16, 0.9, 0),
                      "that keeps no activation reserve; the chapter reserves an 8192-token step's activations");
    practice_add_slip(p, 2.0 * b4, "twice four GPUs' batch: the weights' share halves too, so more than twice fits");
    step_cost c;
    if (step(&m, key, 8, ridge, (int)context, &c) != 0)
        return -1;
    p = add_estimate(s, "1.8(c)", 8, "the step's intensity at the ridge batch on eight", "FLOP/B", c.intensity,
                     c.flop / (c.weight_bytes + c.kv_bytes));
    practice_add_slip(p, (double)ridge, "that is the projections' intensity alone; the KV cache's bytes bring it down");
    return 0;
}

int practice_build_ch01(uint64_t seed, practice_set *out)
{
    /* one stream per exercise, so a change to one leaves the others' draws */
    rng_state st[8];
    practice_streams(seed, st, 8);
    /* exercise 1's GPUs came later: their stream follows 2 to 7's */
    rng_state r2 = st[0], r3 = st[1], r4 = st[2], r5 = st[3], r6 = st[4], r7 = st[5], r1 = st[6], r8 = st[7];
    double usable, reserve;
    exercise_1(out, &r1);
    if (exercise_2(out, &r2) != 0 || exercise_3(out, &r3, &usable, &reserve) != 0 ||
        exercise_4(out, &r4, usable) != 0 || exercise_5(out, &r5) != 0 || exercise_6(out, &r6) != 0 ||
        exercise_7(out, &r7) != 0 || exercise_8(out, &r8) != 0)
        return -1;
    return 0;
}
