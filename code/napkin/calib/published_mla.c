/* The latent attention tables (mla_decode.tsv, mla_prefill.tsv, written by
 * tools/measured_mla.py) as rate points: each measured kernel counted by
 * the cost model's own MLA records (mla_kernel_op_costs), for DeepSeek-V3's
 * latent widths, the shape the tables were measured at. */
#include "published_internal.h"

#include "transformer.h"

#include <string.h>

int published_mla_point(const measured_table *t, const int *c, int row, rate_class rc, const gpu_spec *g,
                        const model_spec *m, rate_point *p, int *keep)
{
    *keep = 0;
    const char *kvs = measured_cell(t, row, c[3]);
    dtype kv;
    if (strcmp(kvs, "bf16") == 0)
        kv = DT_BF16;
    else if (strcmp(kvs, "fp8") == 0)
        kv = DT_FP8;
    else
        return 0;
    double b = measured_num(t, row, c[0]), len = measured_num(t, row, c[1]), heads = measured_num(t, row, c[2]);
    double time = measured_num(t, row, c[4]);
    if (!(b > 0 && len > 0 && heads > 0 && time > 0))
        return -1;
    const int decode = rc != RC_MLA_PREFILL;
    if (decode && rc != rate_class_mla_decode(kv))
        return 0; /* the other cache dtype's class */
    /* a one-token prompt is decode to the cost model (the absorbed kernel): no prefill op to compare */
    if (!decode && len < 2)
        return 0;
    /* decode: the new token is one of the `len` positions attended, len - 1 were cached */
    mla_shape k = {b, decode ? len - 1 : 0, decode ? 1 : len, heads, m->kv_lora_rank, m->qk_rope_dim,
                   m->qk_nope_dim, m->v_head_dim, kv, DT_BF16, decode};
    op_cost a[2];
    mla_kernel_op_costs(&k, a);
    *p = (rate_point){a[0].flop + a[1].flop, op_bytes(&a[0]) + op_bytes(&a[1]), gpu_peak_flops(g, DT_BF16),
                      g->mem_bw, time, a[0].items + a[1].items, a[0].span, 0};
    *keep = 1;
    return 0;
}
