#include "cli_precision.h"

#include <string.h>

precision_flags precision_flags_default(void)
{
    return (precision_flags){"bf16", NULL, NULL, NULL};
}

void precision_flag_opts(precision_flags *f, cli_opt *o)
{
    const cli_opt opts[PRECISION_NOPTS] = {
        {"--dtype", OPT_STRING, &f->dtype, "D", "weights, KV, activations and compute (default bf16)", 0, 0},
        {"--weights", OPT_STRING, &f->weights, "Q", WEIGHTS_FLAG_HELP, 0, 0},
        {"--moe-weights", OPT_STRING, &f->moe_weights, "Q", MOE_WEIGHTS_FLAG_HELP, 0, 0},
        {"--kv", OPT_STRING, &f->kv, "D", "KV cache dtype, overriding --dtype", 0, 0},
    };
    memcpy(o, opts, sizeof opts);
}

void precision_report_formats(report *r, const model_spec *m, const precision *p)
{
    if (p->weights_format != WF_AS_DTYPE) {
        report_text(r, "weights_format", "weight format (all but the routed experts)",
                    weight_format_name(p->weights_format));
        report_num(r, "weight_bytes_per_weight", "bytes a weight, scales included", U_REAL, dense_weight_bytes(*p));
    }
    if (m->experts > 1 && p->moe_format != WF_AS_DTYPE) {
        report_text(r, "moe_weights_format", "the routed experts' weight format", weight_format_name(p->moe_format));
        report_num(r, "moe_weight_bytes_per_weight", "bytes an expert weight, scales included", U_REAL,
                   routed_weight_bytes(m, *p));
    }
}
