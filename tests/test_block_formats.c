/* The 4-bit block formats in bytes (core/block_formats.h), against hand
 * arithmetic for stated tensors, and gpt-oss-120b as released (MXFP4
 * experts, the rest bf16) against its model card and one H100. */
#include <criterion/criterion.h>
#include <math.h>

#include "block_formats.h"
#include "memory.h"
#include "specs.h"
#include "transformer.h"

Test(block_formats, bits_per_weight)
{
    /* MXFP4: 4 bits + 8/32 = 4.25 bits = 0.53125 B; NVFP4: 4 + 8/16 = 4.5 bits = 0.5625 B */
    cr_expect_eq(block_format_bytes_per_weight(BF_MXFP4), 0.53125);
    cr_expect_eq(block_format_bytes_per_weight(BF_NVFP4), 0.5625);
    cr_expect_eq(block_format_get(BF_MXFP4)->block, 32);
    cr_expect_eq(block_format_get(BF_NVFP4)->block, 16);
    cr_expect(isnan(block_format_bytes_per_weight(BF_COUNT)));
}

/* gpt-oss-120b's gate_up_proj of one expert: 5760 outputs x 2880 inputs.
 * A row holds 2880 values = 1440 B, and 2880/32 = 90 MXFP4 scales (90 B)
 * or 2880/16 = 180 NVFP4 scales (180 B):
 *   MXFP4 5760 x 1530 = 8,812,800 B
 *   NVFP4 5760 x 1620 = 9,331,200 B + 4 B of per-tensor fp32 scale
 * (bf16: 5760 x 2880 x 2 = 33,177,600 B). */
Test(block_formats, a_stated_tensor)
{
    cr_expect_eq(block_format_tensor_bytes(BF_MXFP4, 5760, 2880), 8812800.0);
    cr_expect_eq(block_format_tensor_bytes(BF_NVFP4, 5760, 2880), 9331204.0);
    /* its down_proj, 2880 x 2880: 2880 x (1440 + 90) and 2880 x (1440 + 180) + 4 */
    cr_expect_eq(block_format_tensor_bytes(BF_MXFP4, 2880, 2880), 4406400.0);
    cr_expect_eq(block_format_tensor_bytes(BF_NVFP4, 2880, 2880), 8294400.0 * 0.5625 + 4);
}

/* A row that does not fill its last block still stores that block's scale:
 * 100 values are 50 B, with ceil(100/32) = 4 MXFP4 scales or ceil(100/16) = 7
 * NVFP4 scales (+ 4 B per tensor): 54 B and 61 B. */
Test(block_formats, a_partial_block)
{
    cr_expect_eq(block_format_tensor_bytes(BF_MXFP4, 1, 100), 54.0);
    cr_expect_eq(block_format_tensor_bytes(BF_NVFP4, 1, 100), 61.0);
    cr_expect(isnan(block_format_tensor_bytes(BF_MXFP4, -1, 100)));
}

Test(block_formats, parse)
{
    block_format_id f;
    cr_expect_eq(block_format_parse("MXFP4", &f), 0);
    cr_expect_eq(f, BF_MXFP4);
    cr_expect_eq(block_format_parse("nvfp4", &f), 0);
    cr_expect_eq(f, BF_NVFP4);
    cr_expect_eq(block_format_parse("fp4", &f), -1);
    cr_expect_eq(block_format_parse(NULL, &f), -1);
}

/* gpt-oss-120b as released: 36 layers x 128 experts, each 13,219,200 B in
 * MXFP4 (gate_up 8,812,800 + down 4,406,400, above) = 60,914,073,600 B of
 * experts, everything else in bf16.  The model card (arXiv 2508.10925,
 * table 1) gives a 60.8 GiB checkpoint and says the model fits a single
 * 80 GB GPU: weights 65.2 GB under H100's 0.9 x 85.5 GB usable = 77.0 GB,
 * leaving room for KV. */
Test(block_formats, gpt_oss_120b_as_released)
{
    model_spec m = model_builtin("gpt-oss-120b");
    param_count p = model_params(&m);
    const double experts = 36.0 * 128 * (8812800.0 + 4406400.0);
    cr_expect_eq(experts, 60914073600.0);
    cr_expect_eq(p.routed * block_format_bytes_per_weight(BF_MXFP4), experts, "experts %.0f", p.routed);
    const double released = experts + (p.total - p.routed) * 2;
    cr_expect_eq(weight_bytes(&m, DT_BF16), released);
    cr_expect(fabs(released / (1024.0 * 1024 * 1024) / 60.8 - 1) < 0.005, "%.2f GiB", released / 1073741824.0);

    gpu_spec h100 = gpu_builtin("h100");
    replica_memory r;
    char err[256];
    cr_assert_eq(replica_memory_plan(&m, &h100, precision_uniform(DT_BF16), 1, memory_policy_default(), &r, err,
                                     sizeof err), 0, "%s", err);
    cr_expect_eq(r.weights, released);
    cr_expect_lt(r.weights, 80e9, "the released weights fit one 80 GB H100");
    cr_expect_gt(r.kv_budget, 0, "with room left for the cache");
    cr_expect_gt(max_batch_for_memory(&r, 8192), 0);
    /* the same experts in bf16 would not: 116.8 G parameters x 2 B = 234 GB */
    cr_expect_gt(p.total * 2, 80e9 * 2);
}
