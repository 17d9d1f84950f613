#include "weight_format.h"

#include "block_formats.h"

#include <math.h>
#include <string.h>

typedef struct {
    const char *name;
    dtype values, math;
    double bytes; /* a weight, scales and zero points included (0 for the block formats) */
    int blocked;  /* 1: a 4-bit block format, its bytes block_formats.h's */
    block_format_id block;
} format_row;

/* One row a format (weight_format.h states each one's layout); designated, so
 * the browser build's clang (-Wmissing-field-initializers) leaves the block
 * fields of a plain format at zero without a warning. */
static const format_row FORMATS[WF_COUNT] = {
    [WF_AS_DTYPE] = {.name = "dtype", .values = DT_BF16, .math = DT_BF16, .bytes = 2.0},
    [WF_BF16] = {.name = "bf16", .values = DT_BF16, .math = DT_BF16, .bytes = 2.0},
    [WF_FP8] = {.name = "fp8", .values = DT_FP8, .math = DT_FP8, .bytes = 1.0},
    [WF_FP8_BLOCK] = {.name = "fp8_block", .values = DT_FP8, .math = DT_FP8, .bytes = 1.0 + 4.0 / (WEIGHT_FP8_BLOCK * WEIGHT_FP8_BLOCK)},
    [WF_INT4_WO] = {.name = "int4_wo", .values = DT_INT4, .math = DT_BF16, .bytes = 0.5 + (2.0 + 0.5) / WEIGHT_INT4_GROUP},
    [WF_NVFP4] = {.name = "nvfp4", .values = DT_FP4, .math = DT_FP4, .blocked = 1, .block = BF_NVFP4},
    [WF_MXFP4] = {.name = "mxfp4", .values = DT_FP4, .math = DT_BF16, .blocked = 1, .block = BF_MXFP4},
};

const char *weight_format_name(weight_format f)
{
    return f >= 0 && f < WF_COUNT ? FORMATS[f].name : "?";
}

int weight_format_parse(const char *s, weight_format *out)
{
    for (int f = WF_AS_DTYPE + 1; f < WF_COUNT; f++)
        if (strcmp(s, FORMATS[f].name) == 0) {
            *out = (weight_format)f;
            return 0;
        }
    return -1;
}

const char *weight_format_choices(void)
{
    return "bf16, fp8, fp8_block, int4_wo, nvfp4, mxfp4";
}

double weight_format_bytes(weight_format f)
{
    return FORMATS[f].blocked ? block_format_bytes_per_weight(FORMATS[f].block) : FORMATS[f].bytes;
}

double weight_format_tensor_bytes(weight_format f, double rows, double cols)
{
    if (FORMATS[f].blocked)
        return block_format_tensor_bytes(FORMATS[f].block, rows, cols);
    return rows >= 0 && cols >= 0 ? rows * cols * FORMATS[f].bytes : NAN;
}

dtype weight_format_values(weight_format f)
{
    return FORMATS[f].values;
}

dtype weight_format_math(weight_format f)
{
    return FORMATS[f].math;
}

dtype weight_format_step_compute(weight_format f, dtype given)
{
    return f == WF_AS_DTYPE || FORMATS[f].math == DT_FP4 ? given : FORMATS[f].math;
}

op_math weight_format_op_math(weight_format f)
{
    if (f == WF_AS_DTYPE)
        return OP_MATH_STEP;
    return FORMATS[f].math == DT_FP4 ? OP_MATH_FP4 : FORMATS[f].math == DT_FP8 ? OP_MATH_FP8 : OP_MATH_BF16;
}

rate_class weight_format_moe_class(weight_format f)
{
    /* the weight-only 4-bit formats (int4_wo, mxfp4) are the W4A16 kernels */
    const int four_bit_wo = dtype_bytes(FORMATS[f].values) < 1 && FORMATS[f].math == DT_BF16;
    return rate_class_moe(FORMATS[f].values, FORMATS[f].math, four_bit_wo, f == WF_FP8);
}
