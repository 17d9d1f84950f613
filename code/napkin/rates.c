#include "rates.h"

#include <math.h>
#include <string.h>

static const char *const CLASS_NAMES[RC_COUNT] = {
    "gemm_bf16", "gemm_fp8", "attn_decode_bf16", "attn_decode_fp8", "attn_prefill", "elementwise",
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
double op_rate_time(const op_rate *r, double flop, double bytes, double items, double peak, double bandwidth)
{
    double tc = flop / (r->flop_frac * peak);
    double tm = bytes / (r->byte_frac * bandwidth);
    double hi = tc > tm ? tc : tm;
    double fixed = r->t0 + r->t_item * items;
    if (hi <= 0)
        return fixed;
    /* (tc^q + tm^q)^(1/q), scaled by the larger term so a large q cannot overflow */
    double q = r->blend;
    double blended = hi * pow(pow(tc / hi, q) + pow(tm / hi, q), 1 / q);
    return fixed + blended;
}

double link_rate_time(const link_rate *l, double bytes)
{
    double one = l->latency1 + bytes / l->bandwidth1;
    double two = l->latency2 + bytes / l->bandwidth2;
    return one < two ? one : two; /* the implementation picks the faster algorithm */
}
//< achieved_rate

rate_class rate_class_gemm(dtype weights, dtype compute)
{
    return (weights == DT_FP8 && compute == DT_FP8) ? RC_GEMM_FP8 : RC_GEMM_BF16;
}

rate_class rate_class_decode_attention(dtype kv)
{
    return kv == DT_FP8 ? RC_ATTN_DECODE_FP8 : RC_ATTN_DECODE_BF16;
}
