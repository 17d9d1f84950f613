/* A replica's layout reaching the step and memory (layout_decoder_step_ops
 * in code/napkin/serving/expert_parallel.c, layout_weight_bytes_per_gpu in
 * code/napkin/model/memory.c): DeepSeek-V3 in fp8 on 8 H200s, by hand.
 * DeepSeek-V3: hidden 7168, 256 routed experts of width 2048, top 8, one
 * shared expert, 58 MoE layers of 61 (code/specs/models.tsv). */
#include <criterion/criterion.h>

#include <math.h>
#include <string.h>

#include "expert_parallel.h"
#include "memory.h"
#include "specs.h"

#define near(got, want)                                                                                      \
    cr_expect(fabs((double)(got) - (double)(want)) <= 1e-9 * fabs((double)(want)) + 1e-15,                       \
              #got " = %.9g, expected %.9g", (double)(got), (double)(want))

static const ep_layout LINKS = {8, 8, 50e9, 1.0, 1.0, 2.0, 0, 0, MOE_EXCHANGE_ALLTOALL}; /* fp8 dispatch, bf16 combine */

static int ops_of(const char *key, int tp, int dp, int mt, int me, int batch, op_cost *ops)
{
    model_spec m = model_builtin(key);
    gpu_spec g = gpu_builtin("h200");
    parallel_layout l = {tp, dp, mt, me};
    step_shape s = decode_shape(batch, 4096, tp, precision_uniform(DT_FP8));
    char err[256] = "";
    int n = layout_decoder_step_ops(&m, &g, &s, &l, &LINKS, ops, DECODER_MAX_OPS, err, sizeof err);
    cr_assert(n > 0, "%s", err);
    return n;
}

static const op_cost *find(const op_cost *ops, int n, const char *name)
{
    for (int i = 0; i < n; i++)
        if (strcmp(ops[i].name, name) == 0)
            return &ops[i];
    return NULL;
}

static int count_named(const op_cost *ops, int n, const char *part)
{
    int c = 0;
    for (int i = 0; i < n; i++)
        c += strstr(ops[i].name, part) != NULL;
    return c;
}

#define within(got, want, rel) cr_expect(fabs((double)(got) / (double)(want) - 1) <= (rel), "%g vs %g", (double)(got), (double)(want))

/* DEP 8 (tp 1, attention-dp 8, moe-tp 1, moe-ep 8), 64 sequences a rank:
 * the step is tp 1's op list (no tensor-parallel collective) with a dispatch
 * and a combine around the routed experts: two ops more.  Each GPU
 * dispatches its 64 tokens, each once to every other GPU holding one of its
 * 8 experts: a GPU holds none of them with probability C(224,8)/C(256,8) =
 * 0.33816850, so a token reaches 8 (1 - 0.33816850) x 7/8 = 4.6328205 other
 * GPUs, 7168 fp8 bytes each, and the combine twice that in bf16.  Its routed experts
 * (one grouped GEMM) serve 64 x 8 = 512 pairs through 7168 x 2048 experts:
 * gate_up and down 2 x 512 x 7168 x (4096 + 2048) FLOP, the activation a
 * sliver more; they read the experts of its own 32 that the replica's 512
 * tokens touch, 256 (1 - (248/256)^512) / 8, at 3 x 7168 x 2048 B each.  The
 * shared expert runs whole on the GPU's 64 tokens: gate_up
 * 2 x 64 x 7168 x 4096 FLOP, 7168 x 4096 B. */
Test(layout_step, dep8_decode_by_hand)
{
    op_cost ops[DECODER_MAX_OPS], plain[DECODER_MAX_OPS];
    int n = ops_of("deepseek-v3", 1, 8, 1, 8, 64, ops);
    model_spec m = model_builtin("deepseek-v3");
    step_shape s = decode_shape(64, 4096, 1, precision_uniform(DT_FP8));
    int n1 = decoder_step_ops(&m, &s, plain, DECODER_MAX_OPS);
    cr_expect_eq(n, n1 + 2);
    cr_expect_eq(count_named(ops, n, "ep_dispatch"), 1);
    cr_expect_eq(count_named(ops, n, "ep_combine"), 1);
    cr_expect_eq(count_named(ops, n, "allreduce"), 0);
    const op_cost *d = find(ops, n, "ep_dispatch"), *c = find(ops, n, "ep_combine");
    const op_cost *re = find(ops, n, "routed_experts"), *sgu = find(ops, n, "shared_gate_up_proj");
    cr_assert(d && c && re && sgu);
    within(d->comm_bytes, 64.0 * 4.6328205 * 7168, 1e-7);
    within(c->comm_bytes, 2 * 64.0 * 4.6328205 * 7168, 1e-7);
    within(re->flop, 2.0 * 512 * 7168 * (4096 + 2048), 0.01);
    near(re->weight_bytes, 256 * (1 - pow(248.0 / 256, 512)) / 8 * 3 * 7168 * 2048);
    near(sgu->flop, 2.0 * 64 * 7168 * 4096);
    near(sgu->weight_bytes, 7168.0 * 4096);
}

/* tp 1, attention-dp 8, moe-tp 8, moe-ep 1: every GPU a 1/8 slice (256
 * wide) of every expert on all 512 tokens, the same FLOPs as DEP 8
 * (2 x 4096 pairs x 7168 x (512 + 256) = 2 x 512 x 7168 x (4096 + 2048)),
 * and instead of the all-to-all one all-reduce of the 512 tokens' 7168 fp8
 * values over the 8 GPUs. */
Test(layout_step, experts_sliced_over_dp_ranks)
{
    op_cost ops[DECODER_MAX_OPS];
    int n = ops_of("deepseek-v3", 1, 8, 8, 1, 64, ops);
    const op_cost *ar = find(ops, n, "moe_allreduce"), *re = find(ops, n, "routed_experts");
    const op_cost *sgu = find(ops, n, "shared_gate_up_proj");
    cr_assert(ar && re && sgu);
    cr_expect_eq(count_named(ops, n, "ep_"), 0);
    cr_expect_eq(ar->kind, OP_ALLREDUCE);
    cr_expect_eq(ar->group, 8);
    near(ar->comm_bytes, 512.0 * 7168);
    within(re->flop, 2.0 * 4096 * 7168 * (512 + 256), 0.01);
    near(sgu->flop, 2.0 * 512 * 7168 * 512);
}

/* TP 8 x EP 8 at attention-dp 1 (tp 8, moe-tp 1, moe-ep 8), 64 sequences:
 * every GPU of the TP group holds all 64 tokens, so nothing is sent by
 * all-to-all; each GPU runs its 32 experts whole on the pairs routed to
 * them, 64 x 8 / 8 = 64 pairs, and the all-reduce the group does after the
 * MLP sums the outputs (aiconfigurator-core prices this layout's dispatch
 * as that all-reduce for TensorRT-LLM, SGLang and vLLM alike).  By hand:
 * gate_up and down 2 x 64 x 7168 x (4096 + 2048) FLOP; its experts that the
 * 64 tokens touch, 256 (1 - (248/256)^64) / 8, read at 3 x 7168 x 2048 B
 * each; the shared expert split 8 ways like the attention, gate_up
 * 2 x 64 x 7168 x (2 x 2048 / 8) FLOP; both all-reduces of 64 x 7168 fp8
 * bytes on every layer, as in the plain TP 8 step, whose op list it is. */
Test(layout_step, tp8_ep8_at_attention_dp1_by_hand)
{
    op_cost ops[DECODER_MAX_OPS], plain[DECODER_MAX_OPS];
    int n = ops_of("deepseek-v3", 8, 1, 1, 8, 64, ops);
    model_spec m = model_builtin("deepseek-v3");
    step_shape s = decode_shape(64, 4096, 8, precision_uniform(DT_FP8));
    cr_assert_eq(n, decoder_step_ops(&m, &s, plain, DECODER_MAX_OPS));
    cr_expect_eq(count_named(ops, n, "ep_"), 0);
    cr_expect_eq(count_named(ops, n, "moe_allreduce"), 0);
    const op_cost *re = find(ops, n, "routed_experts"), *sgu = find(ops, n, "shared_gate_up_proj");
    const op_cost *mar = find(ops, n, "mlp_allreduce"), *aar = find(ops, n, "attn_allreduce");
    const op_cost *plain_mar = find(plain, n, "mlp_allreduce");
    cr_assert(re && sgu && mar && aar && plain_mar);
    within(re->flop, 2.0 * 64 * 7168 * (4096 + 2048), 0.01);
    near(re->weight_bytes, 256 * (1 - pow(248.0 / 256, 64)) / 8 * 3 * 7168 * 2048);
    near(sgu->flop, 2.0 * 64 * 7168 * 512);
    near(mar->comm_bytes, 64.0 * 7168);
    near(aar->comm_bytes, 64.0 * 7168);
    cr_expect_eq(mar->per_layer, plain_mar->per_layer);
}

/* The one place that decides how a layout's MoE tokens travel: at
 * attention-dp 1 they stay on every GPU whatever the expert split; with
 * attention-DP ranks and moe-ep > 1 the all-to-all by default or the
 * all-gather and reduce-scatter when asked; moe-ep 1 always gathers. */
Test(layout_step, token_path_policy)
{
    const parallel_layout tp8ep8 = {8, 1, 1, 8}, tp4mixed = {4, 1, 2, 2}, dep8 = {1, 8, 1, 8}, dtp8 = {1, 8, 8, 1};
    cr_expect_eq(layout_moe_token_path(&tp8ep8, MOE_EXCHANGE_ALLTOALL), MOE_TOKENS_REPLICATED);
    cr_expect_eq(layout_moe_token_path(&tp4mixed, MOE_EXCHANGE_ALLTOALL), MOE_TOKENS_REPLICATED);
    cr_expect_eq(layout_moe_token_path(&dep8, MOE_EXCHANGE_ALLTOALL), MOE_TOKENS_ALLTOALL);
    cr_expect_eq(layout_moe_token_path(&dep8, MOE_EXCHANGE_GATHER), MOE_TOKENS_GATHERED);
    cr_expect_eq(layout_moe_token_path(&dtp8, MOE_EXCHANGE_ALLTOALL), MOE_TOKENS_GATHERED);
}

/* DEP 8 with the gathered exchange: every GPU gathers the replica's 512
 * tokens, runs its 32 experts on their 512 x 8 / 8 = 512 pairs (the FLOPs of
 * the all-to-all's DEP 8 step, 2 x 512 x 7168 x (4096 + 2048)) and
 * reduce-scatters back: one all-reduce's ring bytes of 512 x 7168 fp8
 * values over the 8 GPUs, no ep_ op. */
Test(layout_step, dep8_gathered_by_hand)
{
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    parallel_layout l = {1, 8, 1, 8};
    step_shape s = decode_shape(64, 4096, 1, precision_uniform(DT_FP8));
    ep_layout links = LINKS;
    links.exchange = MOE_EXCHANGE_GATHER;
    op_cost ops[DECODER_MAX_OPS];
    char err[256] = "";
    int n = layout_decoder_step_ops(&m, &g, &s, &l, &links, ops, DECODER_MAX_OPS, err, sizeof err);
    cr_assert(n > 0, "%s", err);
    const op_cost *ar = find(ops, n, "moe_allreduce"), *re = find(ops, n, "routed_experts");
    cr_assert(ar && re);
    cr_expect_eq(count_named(ops, n, "ep_"), 0);
    cr_expect_eq(ar->group, 8);
    near(ar->comm_bytes, 512.0 * 7168);
    within(re->flop, 2.0 * 512 * 7168 * (4096 + 2048), 0.01);
}

/* tp 8 with moe-tp 8 is plain tensor parallelism: decoder_step_ops's list. */
Test(layout_step, tp8_is_the_plain_step)
{
    op_cost ops[DECODER_MAX_OPS], plain[DECODER_MAX_OPS];
    int n = ops_of("deepseek-v3", 8, 1, 8, 1, 64, ops);
    model_spec m = model_builtin("deepseek-v3");
    step_shape s = decode_shape(64, 4096, 8, precision_uniform(DT_FP8));
    cr_assert_eq(n, decoder_step_ops(&m, &s, plain, DECODER_MAX_OPS));
    for (int i = 0; i < n; i++) {
        cr_expect_str_eq(ops[i].name, plain[i].name);
        near(ops[i].flop, plain[i].flop);
    }
}

/* The old group (--tp 2 --ep 8: four attention ranks of two GPUs, the
 * experts whole) as a layout prices exactly as ep_decoder_step_cost did. */
Test(layout_step, old_ep_group_is_its_layout)
{
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    step_shape s = decode_shape(64, 4096, 2, precision_uniform(DT_FP8));
    parallel_layout l = {2, 4, 1, 8};
    step_cost a, b;
    char err[256];
    cr_assert_eq(ep_decoder_step_cost(&m, &g, &s, &LINKS, &a, err, sizeof err), 0, "%s", err);
    cr_assert_eq(layout_decoder_step_cost(&m, &g, &s, &l, &LINKS, &b, err, sizeof err), 0, "%s", err);
    near(b.time, a.time);
    near(b.comm_bytes, a.comm_bytes);
}

/* A layout whose expert split is not the replica's GPUs is refused. */
Test(layout_step, refuses_a_bad_layout)
{
    model_spec m = model_builtin("deepseek-v3");
    gpu_spec g = gpu_builtin("h200");
    step_shape s = decode_shape(8, 1024, 1, precision_uniform(DT_FP8));
    parallel_layout l = {1, 8, 2, 8};
    op_cost ops[DECODER_MAX_OPS];
    char err[256] = "";
    cr_expect_eq(layout_decoder_step_ops(&m, &g, &s, &l, &LINKS, ops, DECODER_MAX_OPS, err, sizeof err), -1);
    cr_expect(strstr(err, "moe-tp") != NULL, "%s", err);
}

/* Memory by hand.  The routed experts: 58 x 256 x 3 x 7168 x 2048 =
 * 653,908,770,816 parameters; the shared: 58 x 3 x 7168 x 2048 =
 * 2,554,331,136; the rest (attention, dense layers, embedding, head,
 * routers, norms) 671,026,404,352 - both = 14,563,302,400 (the total by
 * hand in tests/test_cli_today.c).  fp8: a byte each.
 *   DEP 8:  the rest and the shared whole, the routed / 8:
 *           14,563,302,400 + 2,554,331,136 + 81,738,596,352 = 98,856,229,888
 *   TP 8 (moe-tp 8): everything / 8 = 83,878,300,544
 *   tp 4 x attention-dp 2, moe-tp 2 x moe-ep 4: the rest / 4, the shared / 2,
 *           the routed / 8 = 3,640,825,600 + 1,277,165,568 + 81,738,596,352 */
Test(layout_step, memory_by_hand)
{
    model_spec m = model_builtin("deepseek-v3");
    parallel_layout dep8 = {1, 8, 1, 8}, tp8 = {8, 1, 8, 1}, mixed = {4, 2, 2, 4};
    near(layout_weight_bytes_per_gpu(&m, DT_FP8, &dep8), 98856229888.0);
    near(layout_weight_bytes_per_gpu(&m, DT_FP8, &tp8), 83878300544.0);
    near(layout_weight_bytes_per_gpu(&m, DT_FP8, &mixed), 3640825600.0 + 1277165568.0 + 81738596352.0);
    /* a dense model at any layout: weights / tp */
    model_spec d = model_builtin("llama3-70b");
    parallel_layout dense = {4, 2, 8, 1};
    near(layout_weight_bytes_per_gpu(&d, DT_BF16, &dense), weight_bytes(&d, DT_BF16) / 4);
}
