/* The Gated DeltaNet tables (gdn_decode.tsv, gdn_prefill.tsv, written by
 * tools/measured_gdn.py) as rate points: each measured kernel counted by
 * the cost model's own record (linear_gdn_op), its heads per GPU as the
 * table states them, the state in fp32 (the configs' mamba_ssm_dtype, the
 * engines' default state dtype) and q, k, v in bf16. */
#include "published_internal.h"

#include "linear_attention.h"

int published_gdn_point(const measured_table *t, const int *c, int row, rate_class rc, const gpu_spec *g,
                        rate_point *p, int *keep)
{
    *keep = 0;
    const int decode = rc == RC_GDN_DECODE;
    /* columns: batch [prompt] k_heads v_heads k_dim v_dim time_s */
    double b = measured_num(t, row, c[0]), n = decode ? 1 : measured_num(t, row, c[1]);
    const int o = decode ? 1 : 2;
    double kh = measured_num(t, row, c[o]), vh = measured_num(t, row, c[o + 1]);
    double kd = measured_num(t, row, c[o + 2]), vd = measured_num(t, row, c[o + 3]);
    double time = measured_num(t, row, c[o + 4]);
    if (!(b > 0 && n > 0 && kh > 0 && vh > 0 && kd > 0 && vd > 0 && time > 0))
        return -1;
    if (!decode && n < 2)
        return 0; /* a one-token prompt is the recurrent step to the cost model */
    op_cost op = linear_gdn_op(b, n, kh, vh, kd, vd, 4, 2);
    *p = (rate_point){op.flop, op_bytes(&op), gpu_peak_flops(g, DT_BF16), g->mem_bw, time, op.items, 0, 0};
    *keep = 1;
    return 0;
}
