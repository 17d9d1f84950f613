#include "linear_attention.h"

#include <math.h>

double linear_params_per_layer(const model_spec *m)
{
    const double h = m->hidden, Kd = (double)m->linear_k_heads * m->linear_k_dim;
    const double Vd = (double)m->linear_v_heads * m->linear_v_dim, Hv = m->linear_v_heads;
    return h * (2 * Kd + 2 * Vd)          /* in_proj_qkvz */
           + h * 2 * Hv                   /* in_proj_ba */
           + (2 * Kd + Vd) * m->linear_conv /* depthwise conv1d over q, k, v, no bias */
           + 2 * Hv                       /* dt_bias, A_log */
           + m->linear_v_dim              /* the gated RMSNorm's gain, shared by the heads */
           + Vd * h;                      /* out_proj */
}

double linear_v_heads_local(const model_spec *m, int tp)
{
    return m->linear_v_heads >= tp ? (double)m->linear_v_heads / tp : 1.0;
}

double linear_k_heads_local(const model_spec *m, int tp)
{
    return m->linear_k_heads >= tp ? (double)m->linear_k_heads / tp : 1.0;
}

//> linear_state
double linear_state_bytes_per_layer(const model_spec *m, double conv_bytes, int tp)
{
    const double vh = linear_v_heads_local(m, tp), kh = linear_k_heads_local(m, tp);
    const double recurrent = vh * m->linear_k_dim * m->linear_v_dim * m->linear_state_bytes;
    const double conv = (m->linear_conv - 1.0) * (2 * kh * m->linear_k_dim + vh * m->linear_v_dim) * conv_bytes;
    return recurrent + (m->linear_conv > 1 ? conv : 0);
}
//< linear_state

double linear_state_bytes_per_sequence(const model_spec *m, double conv_bytes, int tp)
{
    return m->linear_layers > 0 ? m->linear_layers * linear_state_bytes_per_layer(m, conv_bytes, tp) : 0;
}

//> linear_gdn_op
op_cost linear_gdn_op(double B, double n, double kh, double vh, double kd, double vd, double sb, double ab)
{
    op_cost op = {.name = "gdn", .kind = OP_ATTENTION, .per_layer = OP_LINEAR_LAYERS, .fixed_share = 1};
    const double T = B * n;
    /* q and k (key heads), v and the output (value heads), the decay and beta gates in fp32 */
    op.act_bytes = T * (2 * kh * kd + 2 * vh * vd) * ab + T * vh * 2 * 4;
    if (n == 1) {
        /* The recurrent step of each value head: S <- a S (I - b k k^T) + b v k^T, o = S q:
         * decay kd vd, S k 2 kd vd, the rank-one update 2 kd vd, S q 2 kd vd.  The state is
         * read and written once (the whole of the kernel's HBM traffic at any batch). */
        op.flop = 7 * B * vh * kd * vd;
        op.kv_bytes = 2 * B * vh * kd * vd * sb;
        op.rate = RC_GDN_DECODE;
        /* no work items: every state matrix is the same kd x vd, so a per-item cost would be
         * one more price of its bytes, which the fit cannot tell from the byte share */
        return op;
    }
    /* The chunked scan, per chunk of C tokens and value head: K K^T (2 C^2 kd), the triangular
     * inverse of the WY form (2 C^3 / 3), W = T K and U = T V (2 C^2 kd + 2 C^2 vd), U - W S
     * (2 C kd vd), the output Q S + (Q K^T masked) (U - W S) (2 C kd vd + 2 C^2 kd + 2 C^2 vd), the
     * state carried on K^T (U - W S) (2 C kd vd).  Each chunk's state is written and read once. */
    const double C = LINEAR_CHUNK, chunks = ceil(n / C);
    op.flop = B * vh * chunks * (6 * C * kd * vd + 6 * C * C * kd + 4 * C * C * vd + 2 * C * C * C / 3);
    op.kv_bytes = 2 * B * chunks * vh * kd * vd * sb;
    op.rate = RC_GDN_PREFILL;
    return op;
}
//< linear_gdn_op

static op_cost lin_projection(const char *name, double T, double in, double out, double wb, double ab)
{
    op_cost op = {.name = name, .kind = OP_PROJECTION, .per_layer = OP_LINEAR_LAYERS, .rate = RC_GEMM_BF16,
                  .fixed_share = 1};
    op.flop = 2 * T * in * out;
    op.weight_bytes = in * out * wb;
    op.act_bytes = T * (in + out) * ab;
    return op;
}

int linear_attention_ops(const model_spec *m, double B, double n, int tp, double wb, double ab, op_cost *out)
{
    const double T = B * n, h = m->hidden, kd = m->linear_k_dim, vd = m->linear_v_dim;
    const double kh = linear_k_heads_local(m, tp), vh = linear_v_heads_local(m, tp);
    const double Kd = kh * kd, Vd = vh * vd, conv_dim = 2 * Kd + Vd, taps = m->linear_conv;
    int c = 0;
    out[c++] = lin_projection("lin_in_proj_qkvz", T, h, 2 * Kd + 2 * Vd, wb, ab);
    out[c++] = lin_projection("lin_in_proj_ba", T, h, 2 * vh, wb, ab);
    /* the causal convolution over q, k, v: taps multiply-adds per channel and token; decode reads
     * and writes its conv - 1 kept inputs, prefill writes them once */
    op_cost conv = {.name = "lin_conv", .kind = OP_ELEMENTWISE, .per_layer = OP_LINEAR_LAYERS,
                    .rate = RC_ELEMENTWISE, .fixed_share = 1};
    conv.flop = 2 * T * conv_dim * taps;
    conv.weight_bytes = conv_dim * taps * ab;
    conv.act_bytes = 2 * T * conv_dim * ab;
    conv.kv_bytes = (n == 1 ? 2 : 1) * B * conv_dim * (taps > 1 ? taps - 1 : 0) * ab;
    out[c++] = conv;
    out[c++] = linear_gdn_op(B, n, kh, vh, kd, vd, m->linear_state_bytes, ab);
    /* RMSNorm of each head's output, times SiLU(z): about 6 FLOP an element, x and z in, out */
    op_cost gnorm = {.name = "lin_gated_norm", .kind = OP_NORM, .per_layer = OP_LINEAR_LAYERS,
                     .rate = RC_ELEMENTWISE, .fixed_share = 1};
    gnorm.flop = 6 * T * Vd;
    gnorm.weight_bytes = vd * ab;
    gnorm.act_bytes = 3 * T * Vd * ab;
    out[c++] = gnorm;
    out[c++] = lin_projection("lin_out_proj", T, Vd, h, wb, ab);
    return c;
}
