#include "rates.h"

#include <math.h>
#include <string.h>

static const char *const CLASS_NAMES[RC_COUNT] = {
    "gemm_bf16", "gemm_fp8", "attn_decode_bf16", "attn_decode_fp8", "attn_prefill", "elementwise",
    "moe_bf16",  "moe_fp8",  "moe_fp8_block",    "moe_w4a16",   "moe_int4",
    "mla_decode_bf16", "mla_decode_fp8", "mla_prefill", "gemm_fp8_block",
    "gdn_decode", "gdn_prefill",
};

const char *rate_class_name(rate_class c)
{
    return c >= 0 && c < RC_COUNT ? CLASS_NAMES[c] : "?";
}

int rate_class_parse(const char *s)
{
    for (int c = 0; c < RC_COUNT; c++)
        if (strcmp(s, CLASS_NAMES[c]) == 0)
            return c;
    return -1;
}

int rate_tp_slot(int tp)
{
    return tp == 2 ? 0 : tp == 4 ? 1 : tp == 8 ? 2 : -1;
}

int rate_slot_tp(int slot)
{
    return 2 << slot;
}

//> achieved_rate
/* (a^q + b^q + c^q)^(1/q), scaled by the largest term so a large q cannot overflow */
static double blend3(double a, double b, double c, double q)
{
    double hi = a > b ? a : b;
    hi = hi > c ? hi : c;
    if (hi <= 0)
        return 0;
    return hi * pow(pow(a / hi, q) + pow(b / hi, q) + pow(c / hi, q), 1 / q);
}

double op_rate_time(const op_rate *r, double flop, double bytes, double items, double span, double peak,
                    double bandwidth)
{
    double tc = flop / (r->flop_frac * peak);
    double tm = bytes / (r->byte_frac * bandwidth);
    double ti = r->t_item * items;
    if (span <= 0)
        return r->t0 + ti + blend3(tc, tm, 0, r->blend);
    double serial = r->item_frac > 0 && items > 0 ? bytes / items / (r->item_frac * bandwidth) : 0;
    if (span <= RATE_SHORT_SPAN) /* the cache rides in the first tile, under the items' setup */
        return r->t0 + serial + blend3(ti, tc, tm, r->blend);
    return r->t0 + serial + r->t_long + ti + blend3(tc, tm, 0, r->blend);
}

double link_rate_time(const link_rate *l, double bytes)
{
    double one = l->latency1 + bytes / l->bandwidth1;
    double two = l->latency2 + bytes / l->bandwidth2;
    return one < two ? one : two; /* the implementation picks the faster algorithm */
}
//< achieved_rate

static const char *const A2A_NAMES[A2A_KERNELS] = {"alltoall_decode_dispatch", "alltoall_decode_combine",
                                                   "alltoall_prefill_dispatch", "alltoall_prefill_combine"};

const char *a2a_kernel_name(a2a_kernel k)
{
    return k >= 0 && k < A2A_KERNELS ? A2A_NAMES[k] : "?";
}

int a2a_kernel_parse(const char *s)
{
    for (int k = 0; k < A2A_KERNELS; k++)
        if (strcmp(s, A2A_NAMES[k]) == 0)
            return k;
    return -1;
}

a2a_kernel a2a_kernel_of(int prefill, int combine)
{
    return (a2a_kernel)((prefill ? A2A_PREFILL_DISPATCH : A2A_DECODE_DISPATCH) + (combine ? 1 : 0));
}

//> a2a_rate_time
double a2a_rate_time(const a2a_rate *r, double tokens, double bytes)
{
    return r->latency + r->per_token * tokens + (r->bandwidth > 0 ? bytes / r->bandwidth : 0);
}
//< a2a_rate_time

rate_class rate_class_gemm(dtype weights, dtype compute)
{
    if (weights == DT_FP4 && compute == DT_FP4) /* nvfp4: see rates.h */
        return RC_GEMM_FP8;
    return (weights == DT_FP8 && compute == DT_FP8) ? RC_GEMM_FP8 : RC_GEMM_BF16;
}

rate_class rate_class_moe(dtype weights, dtype compute, int four_bit, int fp8_per_tensor)
{
    if (weights == DT_FP4 && compute == DT_FP4) /* nvfp4: see rates.h */
        return RC_MOE_FP8_BLOCK;
    if (weights == DT_INT4)
        return RC_MOE_INT4;
    if (four_bit)
        return RC_MOE_W4A16;
    if (weights == DT_FP8 && compute == DT_FP8)
        return fp8_per_tensor ? RC_MOE_FP8 : RC_MOE_FP8_BLOCK;
    return RC_MOE_BF16;
}

rate_class rate_class_fallback(rate_class c)
{
    switch (c) {
    case RC_MOE_FP8:
    case RC_MOE_FP8_BLOCK:
    case RC_GEMM_FP8_BLOCK:
        return RC_GEMM_FP8;
    case RC_MOE_BF16:
    case RC_MOE_W4A16:
    case RC_MOE_INT4:
        return RC_GEMM_BF16;
    case RC_GDN_DECODE:
    case RC_GDN_PREFILL:
        return RC_ELEMENTWISE; /* a set without the tables: a streaming pass over the state */
    default:
        return c;
    }
}

rate_class rate_class_decode_attention(dtype kv)
{
    return kv == DT_FP8 ? RC_ATTN_DECODE_FP8 : RC_ATTN_DECODE_BF16;
}

int rate_class_is_mla(rate_class c)
{
    return c == RC_MLA_DECODE_BF16 || c == RC_MLA_DECODE_FP8 || c == RC_MLA_PREFILL;
}

int rate_class_is_gdn(rate_class c)
{
    return c == RC_GDN_DECODE || c == RC_GDN_PREFILL;
}

rate_class rate_class_mla_decode(dtype kv)
{
    return kv == DT_FP8 ? RC_MLA_DECODE_FP8 : RC_MLA_DECODE_BF16;
}
