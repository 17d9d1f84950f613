/* Hand derivations of speculative-decoding step times, for the chapter 10 and
 * 11 suites and test_specdec.c.  Nothing here calls the code under test: the
 * model shapes are typed from the published config.json files, the GPU from
 * the H100 SXM datasheet (3.35 TB/s, 989.4 dense bf16 TFLOP/s) and NVLink 4
 * (450 GB/s a direction, 4.8 us a small all-reduce), and each step is written
 * as a straight line in the batch B,
 *     t(B) = fixed + B x per_sequence,
 * valid where every op stays in one roofline regime:
 *  - a plain decode step at B <= 295 (each projection's FLOP per weight byte
 *    is below the B of a 2-byte weight, under the ridge 989.4/3.35 = 295.3):
 *    every op is memory-bound;
 *  - a verification step of T = n x B tokens: the projections (weights and
 *    their activations) are compute-bound once T / (1 + T (in + out) / (in out))
 *    passes 295.3 for the narrowest, o_proj (2048 x 8192 at TP 4: T > 360;
 *    1024 x 8192 at TP 8: T > 437), and every other op (attention reads ~40
 *    FLOP per KV byte) is memory-bound.
 * That turns a break-even batch into the root of a linear equation, solved in
 * closed form instead of searched.
 *
 * Byte counts per GPU of a tp group, bf16 (2 B) throughout:
 *  projections per layer  qkv h x (q + 2k), o q x h, gate_up h x 2f, down f x h,
 *                         with q = heads/tp x hd, k = kv_heads/tp x hd, f = ffn/tp;
 *                         and the logits h x vocab/tp once;
 *  norm gains             (2 layers + 1) x h, read whole on every GPU;
 *  activations per token  each layer: two norms (read+write h), the four
 *                         projections (in + out), attention's Q and output (q
 *                         each), two residual adds (2 reads + 1 write of h),
 *                         the gated activation (3 x f); once: the embedding row
 *                         and its write (2h), the final norm (2h), the logits
 *                         (h in, vocab/tp fp32 out);
 *  KV per sequence        each layer, K then V: the S + n cached and new
 *                         positions read and the n new written, k x 2 B each;
 *  collectives            2 all-reduces a layer and one after the embedding (a
 *                         message of h x 2 B per token, ring factor 2(tp-1)/tp),
 *                         the logits gather (vocab x 4 B per token, (tp-1)/tp);
 *                         each 4.8 us plus its bytes over 450 GB/s. */
#ifndef TESTS_SPEC_HAND_H
#define TESTS_SPEC_HAND_H

#include <math.h>

#define HAND_BW 3.35e12      /* B/s, H100 SXM datasheet */
#define HAND_PEAK 989.4e12   /* dense bf16 FLOP/s */
#define HAND_LINK 450e9      /* B/s a direction, NVLink 4 */
#define HAND_LATENCY 4.8e-6  /* s, one small all-reduce at TP 4 */

typedef struct {
    double layers, hidden, heads, kv_heads, head_dim, ffn, vocab;
} hand_model;

/* config.json of each (huggingface.co/meta-llama/...) */
#define HAND_70B ((hand_model){80, 8192, 64, 8, 128, 28672, 128256})
#define HAND_8B ((hand_model){32, 4096, 32, 8, 128, 14336, 128256})
#define HAND_1B ((hand_model){16, 2048, 32, 8, 64, 8192, 128256})

typedef struct {
    double fixed;        /* s: weight reads and collective latencies */
    double per_sequence; /* s per sequence in the batch */
} hand_line;

static inline double hand_q(const hand_model *m, int tp) { return m->heads / tp * m->head_dim; }
static inline double hand_k(const hand_model *m, int tp) { return (m->kv_heads >= tp ? m->kv_heads / tp : 1) * m->head_dim; }
static inline double hand_f(const hand_model *m, int tp) { return m->ffn / tp; }

/* Projection weights per GPU (parameters), the logits included. */
static inline double hand_projection_params(const hand_model *m, int tp)
{
    double h = m->hidden, q = hand_q(m, tp), k = hand_k(m, tp), f = hand_f(m, tp);
    return m->layers * (h * (q + 2 * k) + q * h + h * 2 * f + f * h) + h * m->vocab / tp;
}

/* Activation bytes per token: all ops, and the projections' share. */
static inline double hand_act_per_token(const hand_model *m, int tp)
{
    double h = m->hidden, q = hand_q(m, tp), k = hand_k(m, tp), f = hand_f(m, tp);
    double layer = 2 * (2 * h) + (h + q + 2 * k) + (q + h) + (h + 2 * f) + (f + h) + 2 * q + 2 * (3 * h) + 3 * f;
    return 2 * (m->layers * layer + 2 * h + 2 * h + h) + 4 * m->vocab / tp;
}
static inline double hand_projection_act_per_token(const hand_model *m, int tp)
{
    double h = m->hidden, q = hand_q(m, tp), k = hand_k(m, tp), f = hand_f(m, tp);
    return 2 * (m->layers * ((h + q + 2 * k) + (q + h) + (h + 2 * f) + (f + h)) + h) + 4 * m->vocab / tp;
}

/* KV bytes per sequence for n new tokens on S cached ones. */
static inline double hand_kv_per_sequence(const hand_model *m, int tp, double S, double n)
{
    return m->layers * 2 * ((S + n) + n) * hand_k(m, tp) * 2;
}

/* Collectives: latency per step, seconds per token. */
static inline double hand_comm_fixed(const hand_model *m, int tp)
{
    return tp > 1 ? (2 * m->layers + 2) * HAND_LATENCY : 0;
}
static inline double hand_comm_per_token(const hand_model *m, int tp)
{
    if (tp <= 1)
        return 0;
    double ring = 2.0 * (tp - 1) / tp, gather = (double)(tp - 1) / tp;
    return ((2 * m->layers + 1) * ring * m->hidden * 2 + gather * m->vocab * 4) / HAND_LINK;
}

/* A plain decode step (valid for B <= 295). */
static inline hand_line hand_plain(const hand_model *m, int tp, double S, int comm)
{
    double gains = (2 * m->layers + 1) * m->hidden * 2;
    hand_line l;
    l.fixed = (2 * hand_projection_params(m, tp) + gains) / HAND_BW + (comm ? hand_comm_fixed(m, tp) : 0);
    l.per_sequence = (hand_act_per_token(m, tp) + hand_kv_per_sequence(m, tp, S, 1)) / HAND_BW +
                     (comm ? hand_comm_per_token(m, tp) : 0);
    return l;
}

/* A verification step with n new tokens a sequence (valid for n x B > 360 at
 * TP 4, > 437 at TP 8):
 * projections compute-bound, the rest memory-bound. */
static inline hand_line hand_verify(const hand_model *m, int tp, double S, double n, int comm)
{
    double gains = (2 * m->layers + 1) * m->hidden * 2;
    double other_act = hand_act_per_token(m, tp) - hand_projection_act_per_token(m, tp);
    hand_line l;
    l.fixed = gains / HAND_BW + (comm ? hand_comm_fixed(m, tp) : 0);
    l.per_sequence = n * 2 * hand_projection_params(m, tp) / HAND_PEAK +
                     (n * other_act + hand_kv_per_sequence(m, tp, S, n)) / HAND_BW +
                     (comm ? n * hand_comm_per_token(m, tp) : 0);
    return l;
}

static inline double hand_at(hand_line l, double B) { return l.fixed + B * l.per_sequence; }

/* E[N] = (1 - alpha^(gamma+1)) / (1 - alpha), written out. */
static inline double hand_tokens(double alpha, int gamma)
{
    double sum = 0, p = 1;
    for (int k = 0; k <= gamma; k++, p *= alpha)
        sum += p;
    return sum;
}

/* The batch where E[N] t_plain = gamma t_draft + t_verify: the root of a
 * straight line.  The first integer batch that loses is ceil of it. */
static inline double hand_break_even(double tokens, int gamma, hand_line plain, hand_line draft, hand_line verify)
{
    double num = tokens * plain.fixed - gamma * draft.fixed - verify.fixed;
    double den = gamma * draft.per_sequence + verify.per_sequence - tokens * plain.per_sequence;
    return num / den;
}

/* The largest batch of S + gamma + 1 tokens a sequence whose KV fits what is
 * left of usable bytes after weights and the reserve; kv per token per GPU. */
static inline int hand_max_batch(double left, double kv_per_token, double tokens_per_sequence)
{
    return left > 0 ? (int)floor(left / (kv_per_token * tokens_per_sequence)) : 0;
}

#endif
