#include "block_formats.h"

#include <math.h>
#include <stddef.h>
#include <strings.h>

/* OCP Microscaling Formats (MX) v1.0, section 5 (MXFP4: k = 32, E8M0 scale);
 * NVIDIA's NVFP4 (16-value micro-blocks, E4M3 scale, an fp32 scale per tensor). */
static const block_format FORMATS[BF_COUNT] = {
    [BF_MXFP4] = {"mxfp4", 32, 4, 8, "e8m0", 0},
    [BF_NVFP4] = {"nvfp4", 16, 4, 8, "fp8 e4m3", 4},
};

const block_format *block_format_get(block_format_id f)
{
    return f >= 0 && f < BF_COUNT ? &FORMATS[f] : NULL;
}

double block_format_bytes_per_weight(block_format_id f)
{
    const block_format *b = block_format_get(f);
    return b ? (b->value_bits + b->scale_bits / b->block) / 8 : NAN;
}

double block_format_tensor_bytes(block_format_id f, double rows, double cols)
{
    const block_format *b = block_format_get(f);
    if (!b || !(rows >= 0) || !(cols >= 0))
        return NAN;
    const double blocks_per_row = ceil(cols / b->block);
    return rows * (cols * b->value_bits + blocks_per_row * b->scale_bits) / 8 + b->tensor_scale_bytes;
}

int block_format_parse(const char *s, block_format_id *out)
{
    for (int i = 0; s && i < BF_COUNT; i++)
        if (strcasecmp(s, FORMATS[i].name) == 0) {
            *out = (block_format_id)i;
            return 0;
        }
    return -1;
}
