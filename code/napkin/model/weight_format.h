/* How weights are stored: the values' dtype, the scales beside them, and
 * the math the kernels run them in.  A precision (transformer.h) names one
 * format for the dense GEMMs (--weights) and one for the routed experts
 * (--moe-weights); memory counts each part at its format's bytes and the
 * pricing door picks the class and the peak from it.
 *
 *   bf16       2 bytes a weight, bf16 math;
 *   fp8        1 byte a weight and one fp32 scale per tensor (not counted:
 *              4 bytes against millions of weights), fp8 math;
 *   fp8_block  1 byte a weight and one fp32 scale per 128 x 128 block
 *              (DeepSeek-V3's fp8 release, deepseekv3 and the
 *              weight_block_size of hf-deepseek-v3's quantization_config):
 *              1 + 4 / (128 x 128) = 1.000244 bytes a weight, fp8 math;
 *   int4_wo    weight-only int4 in groups of WEIGHT_INT4_GROUP = 128 along
 *              the input, each group with one 16-bit scale and one 4-bit
 *              zero point (asymmetric, AWQ's and GPTQ's group-128 format,
 *              lin2024awq, frantar2023gptq): 0.5 + (2 + 0.5) / 128 =
 *              0.519531 bytes a weight, dequantized into bf16 math;
 *   nvfp4      4-bit E2M1 values in 16-value blocks with an fp8 E4M3 scale
 *              (NVIDIA's fp4 checkpoints), fp4 math: weights and activations
 *              in fp4 on the GPU's fp4 tensor cores (W4A4), so only on a row
 *              with an fp4 rate;
 *   mxfp4      4-bit E2M1 values in 32-value blocks with an E8M0 scale (OCP
 *              MX, gpt-oss's released experts), weight-only into bf16 math
 *              (W4A16): how Hopper serves them, and allowed on any GPU.
 * The two block formats' bytes are counted in core/block_formats.h alone
 * (nvfp4 0.5625, mxfp4 0.53125 bytes a weight).  fp4 is the math of the
 * GEMMs only: no attention kernel runs in fp4, so nvfp4 leaves the step's
 * compute dtype (--dtype's) to the rest and states its GEMMs' math itself
 * (weight_format_op_math).
 * WF_AS_DTYPE is the convention of --dtype alone: the precision's weights
 * dtype at its own bytes, no scales counted, and the experts as the model
 * releases them (gpt-oss's MXFP4) in the class of the release (rates.h:
 * the fp8 mixtures we price carry block scales). */
#ifndef NAPKIN_WEIGHT_FORMAT_H
#define NAPKIN_WEIGHT_FORMAT_H

#include "op.h"
#include "rates.h"
#include "units.h"

typedef enum {
    WF_AS_DTYPE = 0, /* the weights dtype at its own bytes (--dtype's convention) */
    WF_BF16,
    WF_FP8,
    WF_FP8_BLOCK,
    WF_INT4_WO,
    WF_NVFP4,
    WF_MXFP4,
    WF_COUNT
} weight_format;

/* The block an fp8_block scale covers (a side) and an int4_wo group. */
#define WEIGHT_FP8_BLOCK 128
#define WEIGHT_INT4_GROUP 128

/* "bf16", "fp8", "fp8_block", "int4_wo", "nvfp4", "mxfp4" ("dtype" for WF_AS_DTYPE). */
const char *weight_format_name(weight_format f);
/* A format's name to the format (not WF_AS_DTYPE): 0, or -1 when unknown. */
int weight_format_parse(const char *s, weight_format *out);
/* "bf16, fp8, fp8_block, int4_wo, nvfp4, mxfp4": for error messages. */
const char *weight_format_choices(void);
/* Bytes one weight occupies, its share of the scales and zero points included. */
double weight_format_bytes(weight_format f);
/* Bytes of a rows x cols weight tensor in format f, scales along cols (the
 * input dimension): the block formats' by block_format_tensor_bytes (a
 * started block carries its scale, NVFP4's per-tensor scale counted), the
 * others rows x cols x weight_format_bytes.  NAN for a negative size. */
double weight_format_tensor_bytes(weight_format f, double rows, double cols);
/* The dtype of the stored values (bf16, fp8, fp8, int4, fp4, fp4). */
dtype weight_format_values(weight_format f);
/* The dtype of the math the kernels run it in (bf16, fp8, fp8, bf16, fp4, bf16). */
dtype weight_format_math(weight_format f);
/* The step's compute dtype once --weights names format f over `given`
 * (--dtype's): the format's math, except where that is fp4, the GEMMs'
 * alone (the attention keeps `given`), and for WF_AS_DTYPE. */
dtype weight_format_step_compute(weight_format f, dtype given);
/* The op's math (op.h) of a kernel over weights of format f. */
op_math weight_format_op_math(weight_format f);
/* The class the routed experts in format f are priced in (rates.h). */
rate_class weight_format_moe_class(weight_format f);

#endif
