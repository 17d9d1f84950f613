/* A replica's parallel layout (code/napkin/model/layout.c): the flags as the
 * measured runs state them, resolved, and each refusal naming its flag.
 * DeepSeek-V3 has 128 attention heads and 256 routed experts; Llama-3.1-70B
 * is dense with 64 heads (code/specs/models.tsv). */
#include <criterion/criterion.h>

#include <string.h>

#include "layout.h"
#include "specs.h"

static parallel_layout resolved(const char *model, int tp, int dp, int mt, int me)
{
    model_spec m = model_builtin(model);
    parallel_layout l = {0};
    char err[256] = "";
    cr_assert_eq(layout_resolve(&m, "", tp, dp, mt, me, &l, err, sizeof err), 0, "%s", err);
    return l;
}

static void refused(const char *model, const char *prefix, int tp, int dp, int mt, int me, const char *flag)
{
    model_spec m = model_builtin(model);
    parallel_layout l = {0};
    char err[256] = "";
    cr_assert_eq(layout_resolve(&m, prefix, tp, dp, mt, me, &l, err, sizeof err), -1);
    cr_expect(strstr(err, flag) == err, "'%s' should start with %s", err, flag);
}

/* The measured runs' DEP 8 (tp 1, attention-dp 8, moe-tp 1, moe-ep 8): 8 GPUs. */
Test(layout, dep8_as_the_runs_state_it)
{
    parallel_layout l = resolved("deepseek-v3", 1, 8, 1, 8);
    cr_expect_eq(layout_gpus(&l), 8);
    cr_expect(layout_has_ep(&l));
}

/* --tp 1 --ep 8 keeps its old meaning: 8 attention replicas of one GPU, the
 * experts whole on each GPU (moe-tp 1). */
Test(layout, ep_alone_means_ep_over_tp_attention_ranks)
{
    parallel_layout l = resolved("deepseek-v3", 1, 0, 0, 8);
    cr_expect_eq(l.attention_dp, 8);
    cr_expect_eq(l.moe_tp, 1);
    l = resolved("deepseek-v3", 2, 0, 0, 8);
    cr_expect_eq(l.attention_dp, 4);
    cr_expect_eq(layout_gpus(&l), 8);
}

/* Mixed: tp 64 with moe-tp 8 x moe-ep 8 (runs of DeepSeek-R1 under TensorRT-LLM). */
Test(layout, mixed_expert_split)
{
    parallel_layout l = resolved("deepseek-v3", 64, 0, 8, 8);
    cr_expect_eq(l.attention_dp, 1);
    cr_expect_eq(layout_gpus(&l), 64);
    l = resolved("deepseek-v3", 4, 2, 2, 0); /* 8 GPUs, moe-tp 2: moe-ep 8 / 2 = 4 */
    cr_expect_eq(l.moe_ep, 4);
}

/* No flags: one GPU; tp alone: the experts split like the rest. */
Test(layout, defaults)
{
    parallel_layout l = resolved("deepseek-v3", 1, 0, 0, 0);
    cr_expect(l.tp == 1 && l.attention_dp == 1 && l.moe_tp == 1 && l.moe_ep == 1);
    l = resolved("deepseek-v3", 8, 0, 0, 0);
    cr_expect(l.moe_tp == 8 && l.moe_ep == 1);
    l = resolved("llama3-70b", 4, 2, 0, 0); /* dense: moe-tp is the replica's 8, moe-ep 1 */
    cr_expect(l.moe_tp == 8 && l.moe_ep == 1 && layout_gpus(&l) == 8);
}

Test(layout, refusals_name_the_flag)
{
    refused("deepseek-v3", "", 0, 0, 0, 0, "--tp");
    refused("deepseek-v3", "", 3, 0, 0, 0, "--tp");             /* 3 does not divide 128 heads */
    refused("deepseek-v3", "", 1, 8, 2, 8, "--moe-ep");         /* 16 expert GPUs for 8 */
    refused("deepseek-v3", "", 1, 8, 3, 0, "--moe-tp");         /* 3 does not divide 8 GPUs */
    refused("deepseek-v3", "", 4, 0, 0, 6, "--moe-ep");         /* 6 not a multiple of tp 4 */
    refused("deepseek-v3", "", 1, 3, 1, 3, "--moe-ep");         /* 3 does not divide 256 experts */
    refused("llama3-70b", "", 8, 0, 0, 8, "--moe-ep");          /* dense */
    refused("deepseek-v3", "decode-", 1, 8, 2, 8, "--decode-moe-ep");
    refused("deepseek-v3", "", 1, -1, 0, 0, "--attention-dp");
}
