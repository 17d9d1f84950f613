/* Chapter 8's exercise variants, on vLLM's default capture list up to 512
 * and LLaMA-3-8B on one H100 where the exercise says so: 8.1 (graphs make
 * kernels faster?, part b's launch cost), 8.2 (kernels per step, part b's
 * degree, which leaves the count alone above 1), 8.3 (llama.cpp's
 * published gain, the project's only figure of it, so only part c's launch
 * cost varies), 8.4 (padding waste: the sizes of part a, and part b's
 * batch and context; its shares are left to the worked solution, as
 * fractions like 4/300 are too common a number to keep out of the student
 * kit), 8.5 (speculative tokens, parts a and c; part b is a property of
 * the list and has a box but no variant), 8.6 (graph memory against KV:
 * the context and the batch) and 8.7 (where graphs stop paying: the launch
 * cost).  The printed numbers are seed 0; other seeds draw from the lists
 * below: batches off the list's grid (so that every batch pads), one below
 * 256 where the list steps by 8 and one above where it steps by 16, two
 * batches and three draft lengths that differ (redrawn until they do),
 * so that no two parts ask the same question, and launch costs that keep
 * the eager host the slower side at batch 1 and 8.7's batches inside
 * memory. */
#include "practice_chapters.h"
#include "practice_set.h"

#include "graphs.h"
#include "memory.h"
#include "practice_draw.h"
#include "specs.h"
#include "transformer.h"

#include <math.h>

#define LIST_MAX 512 /* vLLM's default ceiling */

static int replayed(int tokens)
{
    capture_list c;
    capture_list_vllm(LIST_MAX, &c);
    return capture_padded_tokens(&c, tokens);
}

/* The largest batch whose step of 1 + gamma tokens a sequence replays a graph. */
static int largest_batch(int gamma)
{
    int b = 0;
    while (replayed((b + 1) * (1 + gamma)) > 0)
        b++;
    return b;
}

/* One decode step of LLaMA-3-8B-class models, bf16, eager and as a graph
 * (capture NULL: a graph of exactly this batch). */
static int step_of(const char *model, int tp, int batch, int context, double launch_us, const capture_list *c,
                   graph_step *out)
{
    model_spec m = model_builtin(model);
    gpu_spec g = gpu_builtin("h100");
    step_shape sh = decode_shape(batch, context, tp, precision_uniform(DT_BF16));
    launch_costs lc = launch_costs_default();
    lc.launch = launch_us * 1e-6;
    char err[256];
    return graph_step_cost(&m, &g, &sh, FUSE_NONE, &lc, c, out, err, sizeof err);
}

/* ---- 8.1: LLaMA-3-8B at batch 1 on an H100, 1024-token contexts; part b's
 * launch cost makes the eager host the slower side */

static const double ex1_launch[] = {16, 18, 20, 22, 24, 25, 28, 30, 32, 35, 40, 45};

static int exercise_1(practice_set *s, rng_state *r)
{
    double launch = PRACTICE_DRAW(s, r, "ch08_ex1_launch_us", ex1_launch, 2, "%.0f");
    graph_step lo, hi;
    if (step_of("llama3-8b", 1, 1, 1024, 4, NULL, &lo) != 0 || step_of("llama3-8b", 1, 1, 1024, launch, NULL, &hi))
        return -1;
    const char *hidden = "the step takes max(GPU, host): a host faster than the GPU is hidden, and graphs save nothing";
    practice_part *p = practice_add_part(s, "8.1(a)", 1, "share of the step saved, 4 us launches", "%", JUDGE_EXACT,
                                         100 * lo.saved, 0);
    practice_add_slip(p, 100 * (1 - lo.host_graph / lo.host_eager), hidden);
    p = practice_add_part(s, "8.1(b)", 1, "share of the step saved, the slower launches", "%", JUDGE_RELATIVE,
                          100 * hi.saved, JUDGE_HAND_TOL);
    practice_add_slip(p, 100 * (1 - hi.host_graph / hi.host_eager),
                      "with a graph the step takes the GPU's time, not the graph's host time: max(GPU, host)");
    practice_add_slip(p, 100 * (hi.host_eager / hi.gpu - 1), "a share of the eager step divides by the eager step");
    practice_add_slip(p, hi.saved, "the part asks for a share in percent");
    return 0;
}

/* ---- 8.2: kernels per step; part b's degree varies, and the count with it
 * does not once it is above 1 */

static const double ex2_tp[] = {2, 4, 8};

static int kernels_of(const char *model, int tp, int fusion, step_kernels *k)
{
    model_spec m = model_builtin(model);
    step_shape sh = decode_shape(1, 1, tp, precision_uniform(DT_BF16));
    char err[256];
    return step_kernel_count(&m, &sh, fusion, k, err, sizeof err);
}

static int exercise_2(practice_set *s, rng_state *r)
{
    double tp = PRACTICE_DRAW(s, r, "ch08_ex2_tp", ex2_tp, 2, "%.0f");
    step_kernels k8, k70, k70_all, k70_nr, k70_ga, k70_1;
    if (kernels_of("llama3-8b", 1, FUSE_NONE, &k8) != 0 || kernels_of("llama3-70b", (int)tp, FUSE_NONE, &k70) != 0 ||
        kernels_of("llama3-70b", (int)tp, FUSE_ALL, &k70_all) != 0 ||
        kernels_of("llama3-70b", (int)tp, FUSE_NORM_RESIDUAL, &k70_nr) != 0 ||
        kernels_of("llama3-70b", (int)tp, FUSE_GATE_ACT, &k70_ga) != 0 ||
        kernels_of("llama3-70b", 1, FUSE_NONE, &k70_1) != 0)
        return -1;
    practice_part *p = practice_add_part(s, "8.2(a)", 2, "kernels of a LLaMA-3-8B step, tp 1", "kernels", JUDGE_EXACT,
                                         k8.total, 0);
    practice_add_slip(p, (k8.per_layer + 1) * k8.layers + k8.once,
                      "the two attention ops are one flash-attention kernel");
    practice_add_slip(p, k8.per_layer * k8.layers, "the embedding, the final norm and the logits are kernels too");
    p = practice_add_part(s, "8.2(b1)", 2, "kernels of a LLaMA-3-70B step, unfused", "kernels", JUDGE_EXACT,
                          k70.total, 0);
    practice_add_slip(p, k70_1.total, "at tp > 1 each layer adds two all-reduces");
    practice_add_slip(p, k70.per_layer * k70.layers + k70_1.once,
                      "the step adds the embedding's all-reduce and the logits' all-gather");
    p = practice_add_part(s, "8.2(b2)", 2, "kernels of a LLaMA-3-70B step, every fusion", "kernels", JUDGE_EXACT,
                          k70_all.total, 0);
    practice_add_slip(p, k70_nr.total, "every fusion folds the activation into the gate_up GEMM too");
    practice_add_slip(p, k70_ga.total, "every fusion folds the two residual adds into the norms too");
    p = practice_add_part(s, "8.2(c)", 2, "kernels of a LLaMA-3-70B step, tp 1", "kernels", JUDGE_EXACT, k70_1.total,
                          0);
    practice_add_slip(p, k70.total, "at tp 1 there are no collectives");
    return 0;
}

/* ---- 8.3: llama.cpp's published gain (the project's one figure of it);
 * part c's launch cost varies */

static const double ex3_launch[] = {2, 2.5, 3, 3.5, 4, 4.5, 5, 5.5, 6, 7, 8, 10};

static int exercise_3(practice_set *s, rng_state *r)
{
    double launch = PRACTICE_DRAW(s, r, "ch08_ex3_launch_us", ex3_launch, 6, "%g");
    step_kernels k;
    if (kernels_of("llama3-8b", 1, FUSE_NONE, &k) != 0) /* LLaMA-2-7B has its layer structure */
        return -1;
    double eager = 1 / LLAMA_CPP_6763_EAGER_TOK_S, graph = 1 / LLAMA_CPP_6763_GRAPH_TOK_S;
    const char *per_token = "convert each rate to a time per token first: 1 / (tokens/s)";
    practice_part *p = practice_add_part(s, "8.3(a)", 3, "milliseconds per token saved", "ms", JUDGE_RELATIVE,
                                         (eager - graph) * 1e3, JUDGE_HAND_TOL);
    practice_add_slip(p, LLAMA_CPP_6763_GRAPH_TOK_S - LLAMA_CPP_6763_EAGER_TOK_S, per_token);
    practice_add_slip(p, (eager - graph) * 1e6, "that is microseconds; the part asks for milliseconds");
    p = practice_add_part(s, "8.3(b)", 3, "host microseconds per kernel", "us", JUDGE_RELATIVE,
                          eager / k.total * 1e6, JUDGE_HAND_TOL);
    practice_add_slip(p, (eager - graph) / k.total * 1e6, "the whole eager token is host time, not only the saving");
    practice_add_slip(p, graph / k.total * 1e6, "the eager token is the slower one, 1 / 143.35 s");
    p = practice_add_part(s, "8.3(c)", 3, "kernels that make the eager token host-bound", "kernels", JUDGE_RELATIVE,
                          eager / (launch * 1e-6), JUDGE_HAND_TOL);
    practice_add_slip(p, (eager - graph) / (launch * 1e-6), "the whole eager token is host time, not only the saving");
    practice_add_slip(p, graph / (launch * 1e-6), "the eager token is the slower one, 1 / 143.35 s");
    return 0;
}

/* ---- 8.4(a) */

static const double ex4_small[] = {50, 60, 75, 90, 100, 115, 130, 150, 170, 180, 201, 210, 230, 245};
static const double ex4_large[] = {260, 281, 300, 310, 330, 350, 370, 390, 410, 420, 450, 470, 490, 500};

static void padding_part(practice_set *s, const char *id, const char *what, int batch)
{
    int padded = replayed(batch);
    const char *grid = "the list steps by 8 up to 256 and by 16 from 256: the smallest size at or above the batch";
    practice_part *p = practice_add_part(s, id, 4, what, "tokens", JUDGE_EXACT, padded, 0);
    practice_add_slip(p, batch, grid);
    practice_add_slip(p, batch < 256 ? 16 * ceil(batch / 16.0) : 8 * ceil(batch / 8.0), grid);
}

static void exercise_4(practice_set *s, rng_state *r)
{
    double small = PRACTICE_DRAW(s, r, "ch08_ex4_small", ex4_small, 4, "%.0f");
    double large = PRACTICE_DRAW(s, r, "ch08_ex4_large", ex4_large, 2, "%.0f");
    padding_part(s, "8.4(a1)", "the size the first batch replays", (int)small);
    padding_part(s, "8.4(a2)", "the size the second batch replays", (int)large);
}

/* ---- 8.4(b): the dummy rows of a small batch padded to the list; they
 * attend to nothing, so the context changes only the slips */

/* batches that pad by 1 to 7 rows, to at most 40 */
static const double ex4_b_batch[] = {9, 10, 11, 12, 13, 14, 15, 17, 19, 20, 21, 26, 30, 33, 35, 38};
static const double ex4_b_context[] = {512, 768, 1024, 1536, 2048, 3072, 4096};

/* The extra microseconds are the dummy rows' activations, which a hand
 * computation sums over the op list; the chapter accepts an estimate of
 * them within a fifth. */
#define EX4_B_WIDTH 0.2

static int exercise_4b(practice_set *s, rng_state *r)
{
    double batch = PRACTICE_DRAW(s, r, "ch08_ex4_b_batch", ex4_b_batch, 0, "%.0f");
    double context = practice_pick(r, s->seed, ex4_b_context, PRACTICE_COUNT(ex4_b_context), 2);
    int padded = replayed((int)batch);
    practice_add_input(s, "ch08_ex4_b_padded", padded, "%.0f", 16, 40);
    practice_add_input(s, "ch08_ex4_b_context", context, "%.0f", PRACTICE_RANGE_OF(ex4_b_context));
    capture_list c;
    capture_list_vllm(LIST_MAX, &c);
    graph_step st;
    if (step_of("llama3-8b", 1, (int)batch, (int)context, 4, &c, &st) != 0 || st.padded_tokens != padded)
        return -1;
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    double extra = (st.gpu_padded - st.gpu) * 1e6, dummies = padded - batch;
    practice_part *p = practice_add_part(s, "8.4(b)", 4, "extra microseconds of the padded step", "us", JUDGE_RANGE,
                                         extra, EX4_B_WIDTH * extra);
    practice_add_slip(p, extra + dummies * kv_bytes_per_sequence(&m, DT_BF16, (int)context) / g.mem_bw * 1e6,
                      "the dummy rows attend to nothing: no KV is read for them");
    practice_add_slip(p, extra + weight_bytes_per_gpu(&m, DT_BF16, 1) / g.mem_bw * 1e6,
                      "the weights are read once however many rows use them");
    practice_add_slip(p, extra * padded / dummies, "only the dummy rows are extra, not the whole padded batch");
    return 0;
}

/* ---- 8.5(a) and (c) */

/* draft lengths of 1 to 16, those whose 1 + gamma is a multiple of 8
 * (part b's answer) only at part c's second, as printed; odd batches */
static const double ex5_gamma_a[] = {1, 2, 3, 4, 5, 6, 8, 9, 10, 11, 12};
static const double ex5_batch_a[] = {5, 7, 9, 11, 13};
static const double ex5_gamma_b[] = {4, 2, 3, 5, 6, 8, 9, 10};
static const double ex5_batch_b[] = {13, 15, 17, 19, 21, 23, 25, 27, 29, 31};
static const double ex5_gamma_c[] = {7, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15, 16};

static void replay_part(practice_set *s, const char *id, const char *what, int batch, int gamma)
{
    int padded = replayed(batch * (1 + gamma));
    practice_part *p = practice_add_part(s, id, 5, what, "tokens", JUDGE_EXACT, padded, 0);
    practice_add_slip(p, replayed(batch * gamma), "a verification step carries 1 + gamma tokens a sequence");
    practice_add_slip(p, batch * (1 + gamma), "the step replays the smallest captured size at or above its tokens");
    practice_add_slip(p, replayed(batch), "the list is in tokens, not sequences: 1 + gamma a sequence");
}

static void largest_part(practice_set *s, const char *id, const char *what, int gamma)
{
    int b = largest_batch(gamma);
    practice_part *p = practice_add_part(s, id, 5, what, "sequences", JUDGE_EXACT, b, 0);
    practice_add_slip(p, floor(LIST_MAX / (double)gamma), "a sequence carries 1 + gamma tokens, not gamma");
    practice_add_slip(p, b + 1, "round down: that batch's tokens pass 512 and it runs eagerly");
}

static void exercise_5(practice_set *s, rng_state *r)
{
    double ga = 3, ba = 9, gb = 4, bb = 13, gc = 7;
    for (int attempt = 0; attempt < 64; attempt++) {
        ga = practice_pick(r, s->seed, ex5_gamma_a, PRACTICE_COUNT(ex5_gamma_a), 2);
        ba = practice_pick(r, s->seed, ex5_batch_a, PRACTICE_COUNT(ex5_batch_a), 2);
        gb = practice_pick(r, s->seed, ex5_gamma_b, PRACTICE_COUNT(ex5_gamma_b), 0);
        bb = practice_pick(r, s->seed, ex5_batch_b, PRACTICE_COUNT(ex5_batch_b), 0);
        gc = practice_pick(r, s->seed, ex5_gamma_c, PRACTICE_COUNT(ex5_gamma_c), 0);
        if (ga != gb && gb != gc && ga != gc && ba != bb)
            break;
        ga = 3, ba = 9, gb = 4, bb = 13, gc = 7; /* the printed question, should 64 draws all repeat */
    }
    practice_add_input(s, "ch08_ex5_gamma_a", ga, "%.0f", PRACTICE_RANGE_OF(ex5_gamma_a));
    practice_add_input(s, "ch08_ex5_batch_a", ba, "%.0f", PRACTICE_RANGE_OF(ex5_batch_a));
    practice_add_input(s, "ch08_ex5_gamma_b", gb, "%.0f", PRACTICE_RANGE_OF(ex5_gamma_b));
    practice_add_input(s, "ch08_ex5_batch_b", bb, "%.0f", PRACTICE_RANGE_OF(ex5_batch_b));
    practice_add_input(s, "ch08_ex5_gamma_c", gc, "%.0f", PRACTICE_RANGE_OF(ex5_gamma_c));
    replay_part(s, "8.5(a1)", "tokens the first batch replays at the first gamma", (int)ba, (int)ga);
    replay_part(s, "8.5(a2)", "tokens the first batch replays at the second gamma", (int)ba, (int)gb);
    replay_part(s, "8.5(a3)", "tokens the second batch replays at the second gamma", (int)bb, (int)gb);
    largest_part(s, "8.5(c1)", "the largest batch that replays a graph at the first gamma", (int)ga);
    largest_part(s, "8.5(c2)", "the largest batch that replays a graph at the last gamma", (int)gc);
}

/* 8.5(b) is a property of the list, not of a number in the question: the
 * smallest gamma for which every batch of 2 or more below 256 tokens lands
 * on a size.  It has a box but no variant. */
static void exercise_5b(practice_set *s)
{
    int aligned = 0;
    for (int k = 1; k <= 32 && !aligned; k++) {
        int all = 1;
        for (int b = 2; b * (1 + k) < 256 && all; b++)
            all = replayed(b * (1 + k)) == b * (1 + k);
        aligned = all ? k : 0;
    }
    practice_part *p = practice_add_part(s, "8.5(b)", 5, "the gamma whose batches all land on a size", "gamma",
                                         JUDGE_EXACT, aligned, 0);
    practice_add_slip(p, aligned + 1, "a sequence carries 1 + gamma tokens: 1 + gamma is the multiple of 8");
    practice_add_slip(p, (aligned + 1) / 2 - 1, "with 1 + gamma = 4 only even batches land on the list's 8s");
}

/* ---- 8.6: graph memory against KV, LLaMA-3-8B on one H100 */

static const double ex6_context[] = {160, 192, 224, 256, 320, 384, 448, 512, 640, 768, 896, 1024, 1280, 1536, 2048, 3072, 4096};
/* batches past 128 off vLLM's grid, so that both lists pad */
static const double ex6_batch[] = {129, 131, 137, 142, 150, 157, 169, 175, 187, 194, 201, 213, 222, 238, 250};

/* Sequences lost, counted from the KV budget (a difference of whole
 * sequences); a hand count of the graphs' bytes over a sequence's KV can
 * round either way, so one either side is right. */
#define EX6_SEQ_WIDTH 1

static int seqs_of(int context, double graph_bytes)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    resident_model rm = {&m, precision_uniform(DT_BF16), 1};
    fit_check f;
    char err[256];
    if (memory_fit(&g, memory_policy_default(), &rm, 1, graph_bytes, 1, context + 1, &f, err, sizeof err) != 0)
        return -1;
    return f.max_batch;
}

static int exercise_6(practice_set *s, rng_state *r)
{
    double context = PRACTICE_DRAW(s, r, "ch08_ex6_context", ex6_context, 11, "%.0f");
    double batch = PRACTICE_DRAW(s, r, "ch08_ex6_batch", ex6_batch, 0, "%.0f");
    int none = seqs_of((int)context, 0), s51 = seqs_of((int)context, 51 * GRAPH_BYTES_DEFAULT);
    int s10 = seqs_of((int)context, 10 * GRAPH_BYTES_DEFAULT);
    if (none < 1 || s51 < 1 || s10 < 1)
        return -1;
    model_spec m = model_builtin("llama3-8b");
    double seq = kv_bytes_per_sequence(&m, DT_BF16, (int)context + 1);
    practice_part *p = practice_add_part(s, "8.6(a)", 6, "sequences lost to 51 graphs", "sequences", JUDGE_RANGE,
                                         none - s51, EX6_SEQ_WIDTH);
    practice_add_slip(p, 51 * GRAPH_BYTES_DEFAULT / (seq / 2), "a token's KV is K and V: 2 x layers x KV heads x head dim x 2 B");
    p = practice_add_part(s, "8.6(b1)", 6, "sequences lost to 10 graphs", "sequences", JUDGE_RANGE, none - s10,
                          EX6_SEQ_WIDTH);
    practice_add_slip(p, 10 * GRAPH_BYTES_DEFAULT / (seq / 2), "a token's KV is K and V: 2 x layers x KV heads x head dim x 2 B");
    p = practice_add_part(s, "8.6(b2)", 6, "sequences that come back", "sequences", JUDGE_RANGE, s10 - s51,
                          EX6_SEQ_WIDTH);
    practice_add_slip(p, none - s10, "that is what 10 graphs cost; the sequences back are 51 graphs' cost less that");
    capture_list pow2, vllm;
    char err[256];
    if (capture_list_parse("1,2,4,8,16,32,64,128,256,512", &pow2, err, sizeof err) != 0)
        return -1;
    capture_list_vllm(LIST_MAX, &vllm);
    int on_pow2 = capture_padded_tokens(&pow2, (int)batch), on_vllm = capture_padded_tokens(&vllm, (int)batch);
    p = practice_add_part(s, "8.6(b3)", 6, "the size the batch replays on the powers of two", "tokens", JUDGE_EXACT,
                          on_pow2, 0);
    practice_add_slip(p, on_vllm, "that is vLLM's list; the powers of two jump from 128 to 256");
    practice_add_slip(p, on_pow2 / 2, "the replayed size is the smallest at or above the batch");
    p = practice_add_part(s, "8.6(b4)", 6, "the size the batch replays on vLLM's list", "tokens", JUDGE_EXACT, on_vllm,
                          0);
    practice_add_slip(p, on_pow2, "vLLM's list steps by 8 below 256");
    practice_add_slip(p, 16 * ceil(batch / 16), "vLLM's list steps by 8 below 256 and by 16 from 256");
    return 0;
}

/* ---- 8.7: where graphs stop paying (5%), at a launch cost that makes the
 * eager host the slower side at batch 1 */

static const double ex7_launch[] = {20, 16, 17, 18, 19, 21, 22, 23, 24, 25, 26};

/* The batch comes from the GPU time per sequence; a hand computation that
 * leaves out the activations can land one batch either side. */
#define EX7_BATCH_WIDTH 1

static int threshold_of(const char *model, int tp, int context, double launch_us, double threshold)
{
    model_spec m = model_builtin(model);
    gpu_spec g = gpu_builtin("h100");
    capture_list c;
    capture_list_vllm(LIST_MAX, &c);
    resident_model rm = {&m, precision_uniform(DT_BF16), tp};
    fit_check f;
    char err[256];
    if (memory_fit(&g, memory_policy_default(), &rm, 1, capture_memory_bytes(&c, GRAPH_BYTES_DEFAULT), 1,
                   context + 1, &f, err, sizeof err) != 0 ||
        f.max_batch < 1)
        return -1;
    launch_costs lc = launch_costs_default();
    lc.launch = launch_us * 1e-6;
    step_shape sh = decode_shape(1, context, tp, precision_uniform(DT_BF16));
    int b;
    /* inside memory: a threshold past the largest batch that fits is none (0) */
    if (graph_threshold_batch(&m, &g, &sh, FUSE_NONE, &lc, threshold, f.max_batch, &b, err, sizeof err) != 0)
        return -1;
    return b;
}

static int exercise_7(practice_set *s, rng_state *r)
{
    double launch = PRACTICE_DRAW(s, r, "ch08_ex7_launch_us", ex7_launch, 0, "%.0f");
    const struct {
        const char *id, *what, *model;
        int tp, context;
    } q[3] = {{"8.7(a)", "batch where the saving falls below 5%, 8B at 4096", "llama3-8b", 1, 4096},
              {"8.7(b)", "batch where the saving falls below 5%, 8B at 1024", "llama3-8b", 1, 1024},
              {"8.7(c)", "batch where the saving falls below 5%, 70B on 4 GPUs", "llama3-70b", 4, 4096}};
    for (int i = 0; i < 3; i++) {
        int b = threshold_of(q[i].model, q[i].tp, q[i].context, launch, 0.05);
        int gone = threshold_of(q[i].model, q[i].tp, q[i].context, launch, 1e-9);
        if (b < 2)
            return -1; /* none inside memory, or batch 1: not the question */
        practice_part *p = practice_add_part(s, q[i].id, 7, q[i].what, "sequences", JUDGE_RANGE, b, EX7_BATCH_WIDTH);
        if (gone > b + 2)
            practice_add_slip(p, gone, "below 5% comes before the GPU catches the host: 0.95 of the eager host time");
    }
    return 0;
}

int practice_build_ch08(uint64_t seed, practice_set *out)
{
    /* one stream per exercise, so a change to one leaves the others' draws */
    rng_state st[8];
    practice_streams(seed, st, 8);
    rng_state r4 = st[0], r5 = st[1], r1 = st[2], r2 = st[3], r3 = st[4], r4b = st[5], r6 = st[6], r7 = st[7];
    if (exercise_1(out, &r1) != 0 || exercise_2(out, &r2) != 0 || exercise_3(out, &r3) != 0)
        return -1;
    exercise_4(out, &r4);
    if (exercise_4b(out, &r4b) != 0)
        return -1;
    exercise_5(out, &r5);
    exercise_5b(out);
    if (exercise_6(out, &r6) != 0 || exercise_7(out, &r7) != 0)
        return -1;
    return 0;
}
