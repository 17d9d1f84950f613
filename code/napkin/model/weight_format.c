#include "weight_format.h"

#include <string.h>

typedef struct {
    const char *name;
    dtype values, math;
    double bytes; /* a weight, scales and zero points included */
} format_row;

/* One row a format (weight_format.h states each one's layout). */
static const format_row FORMATS[WF_COUNT] = {
    [WF_AS_DTYPE] = {"dtype", DT_BF16, DT_BF16, 2.0},
    [WF_BF16] = {"bf16", DT_BF16, DT_BF16, 2.0},
    [WF_FP8] = {"fp8", DT_FP8, DT_FP8, 1.0},
    [WF_FP8_BLOCK] = {"fp8_block", DT_FP8, DT_FP8, 1.0 + 4.0 / (WEIGHT_FP8_BLOCK * WEIGHT_FP8_BLOCK)},
    [WF_INT4_WO] = {"int4_wo", DT_INT4, DT_BF16, 0.5 + (2.0 + 0.5) / WEIGHT_INT4_GROUP},
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
    return "bf16, fp8, fp8_block, int4_wo";
}

double weight_format_bytes(weight_format f)
{
    return FORMATS[f].bytes;
}

dtype weight_format_values(weight_format f)
{
    return FORMATS[f].values;
}

dtype weight_format_math(weight_format f)
{
    return FORMATS[f].math;
}

op_math weight_format_op_math(weight_format f)
{
    return f == WF_AS_DTYPE ? OP_MATH_STEP : FORMATS[f].math == DT_FP8 ? OP_MATH_FP8 : OP_MATH_BF16;
}

rate_class weight_format_moe_class(weight_format f)
{
    return rate_class_moe(FORMATS[f].values, FORMATS[f].math, f == WF_INT4_WO, f == WF_FP8);
}
