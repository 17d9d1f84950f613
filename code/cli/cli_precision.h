/* The precision flags prefill, serve and ep share (--dtype, --weights,
 * --moe-weights, --kv; decode and memory take them through cli_replica.h),
 * and the weight formats' lines in a report.  cli_precision (cli_lookup.h)
 * turns them into a precision. */
#ifndef NAPKIN_CLI_PRECISION_H
#define NAPKIN_CLI_PRECISION_H

#include "cli_args.h"
#include "cli_report.h"
#include "transformer.h"

#define WEIGHTS_FLAG_HELP                                                                                          \
    "weight format of every weight, overriding --dtype: bf16, fp8 (per tensor), fp8_block (128 x 128 scales), "   \
    "int4_wo (group 128), nvfp4 (16-value blocks, fp4 math), mxfp4 (32-value blocks, into bf16); or a dtype "   \
    "(int4, int8, ...)"
#define MOE_WEIGHTS_FLAG_HELP                                                                                      \
    "the routed experts' weight format, overriding --weights (bf16, fp8, fp8_block, int4_wo, nvfp4, mxfp4)"

typedef struct {
    const char *dtype;       /* --dtype; default "bf16" */
    const char *weights;     /* NULL = not given */
    const char *moe_weights; /* NULL = not given */
    const char *kv;          /* NULL = not given */
} precision_flags;

precision_flags precision_flags_default(void);

#define PRECISION_NOPTS 4
/* --dtype, --weights, --moe-weights, --kv into opts[0..PRECISION_NOPTS-1]. */
void precision_flag_opts(precision_flags *f, cli_opt *opts);

/* The weight formats a precision states for model m, one line each, when
 * given (nothing under --dtype alone): the dense weights' and the routed
 * experts' format and bytes a weight. */
void precision_report_formats(report *r, const model_spec *m, const precision *p);

#endif
