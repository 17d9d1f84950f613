/* Chapter 12's numbers, checked from the chapter's own program down: the
 * unit its activation table counts in, the coefficients times that unit,
 * and the optimizer state with the gradients in bf16 or in fp32.  Hand
 * arithmetic on LLaMA-3-70B's config.json (80 layers, hidden 8192, 64
 * heads, 8 KV heads, FFN 28672, vocabulary 128256) beside each. */
#include <criterion/criterion.h>
#include <math.h>

#include "chapter_values.h"
#include "specs.h"
#include "train.h"

#define NEAR(a, b, tol)                                                                                    \
    cr_assert(fabs((a) - (b)) <= (tol), "%s = %.9g, expected %.9g (abs. tol. %g)", #a, (double)(a), (double)(b), \
              (double)(tol))

/* The coefficients of Korthikanti's count are bytes per n_seq * b_mb * d, so
 * the unit at 8,192 tokens and width 8,192 is 8192 * 8192 = 67,108,864 B =
 * 67.1 MB (not 134 MB, which is that many bf16 values). */
Test(ch12, activation_unit_is_67_mb)
{
    NEAR(chapter_value("ch12/activations", "ch12_70b_sbh_mb"), 67.1, 1e-9);
}

/* No parallelism: 34 + 5 * 64 * 8192 / 8192 = 354; 354 * 67,108,864 B =
 * 23,756,537,856 B = 23.76 GB a layer.  The chapter's unit times its
 * coefficient must give its per-layer figure (to the rounding printed). */
Test(ch12, coefficient_times_unit_is_the_layer)
{
    double unit_mb = chapter_value("ch12/activations", "ch12_70b_sbh_mb");
    double coef = chapter_value("ch12/activations", "ch12_70b_k_none_coef");
    double layer_gb = chapter_value("ch12/activations", "ch12_70b_k_none_layer_gb");
    NEAR(coef, 354.0, 1e-9);
    NEAR(layer_gb, 23.76, 1e-9);
    NEAR(coef * unit_mb / 1e3, layer_gb, 0.01);
}

/* bf16 weights (2) and fp32 momentum and variance (8), plus the gradients
 * (2 in bf16, 4 in fp32) and an fp32 master copy (4) unless bf16. */
Test(ch12, adam_state_by_dtype)
{
    train_state_bytes b;
    char err[256];
    cr_assert_eq(train_state_adam("bf16", "fp32", &b, err, sizeof err), 0);
    NEAR(b.weights + b.grads + b.optimizer, 16.0, 0);
    train_state_bytes z = train_state_adam_mixed();
    NEAR(z.grads, b.grads, 0);
    NEAR(z.optimizer, b.optimizer, 0);
    cr_assert_eq(train_state_adam("fp32", "fp32", &b, err, sizeof err), 0);
    NEAR(b.grads, 4.0, 0);
    NEAR(b.weights + b.grads + b.optimizer, 18.0, 0);
    cr_assert_eq(train_state_adam("bf16", "bf16", &b, err, sizeof err), 0);
    NEAR(b.weights + b.grads + b.optimizer, 12.0, 0);
    cr_assert_eq(train_state_adam("fp16", "fp32", &b, err, sizeof err), -1);
    cr_assert(strstr(err, "--grad-dtype") != NULL, "%s", err);
    cr_assert_eq(train_state_adam("bf16", "fp8", &b, err, sizeof err), -1);
    cr_assert(strstr(err, "--master-dtype") != NULL, "%s", err);
}

/* The first stage of TP 8 x PP 4: 20 layers of 855,654,400 parameters (q and
 * o 2 * 8192^2, k and v 2 * 8192 * 1024, MLP 3 * 8192 * 28672, two norms)
 * plus the embedding, 128256 * 8192: 18,163,761,152, / 8 = 2,270,470,144 a
 * GPU.  Gradients in fp32 (not sharded at ZeRO-1): * 4 B = 9.08 GB. */
Test(ch12, fp32_gradients_of_the_first_stage)
{
    NEAR(chapter_value("ch12/activations", "ch12_70b_grads_fp32_gb"), 2270470144.0 * 4 / 1e9, 0.005);
    NEAR(chapter_value("ch12/activations", "ch12_70b_grads_gb"), 2270470144.0 * 2 / 1e9, 0.005);
}

/* One memory policy: a GPU offers 90% of what its driver reports, 0.9 x
 * 85.5e9 = 76.95 GB for an H100.  The first stage (TP 8 x PP 4, SP, ZeRO-1)
 * holds 2,270,470,144 x (2 + 2 + 12/16) B of state and 22.5 GB of
 * activations per microbatch (tests/test_train.c): the 76.95 GB less that
 * state over 22.50 GB is 2, not the 3 that all 85.5 GB would hold. */
Test(ch12, one_usable_memory_policy)
{
    gpu_spec g = gpu_builtin("h100");
    NEAR(chapter_value("ch12/activations", "ch12_70b_cap_gb"), floor(0.9 * g.mem_bytes / 1e9 + 0.5), 0);
    double state = 2270470144.0 * (2 + 2 + 12.0 / 16), act = 22502440960.0;
    NEAR(chapter_value("ch12/activations", "ch12_70b_m_tp_sp_max_mb"), floor((0.9 * g.mem_bytes - state) / act), 0);
    NEAR(chapter_value("ch12/activations", "ch12_70b_m_tp_sp_max_mb"), 2, 0);
}

/* Figure 12.2's two coinciding curves: Korthikanti's TP + SP + selective keeps
 * 34 / 8 = 4.25 sbh per layer; the modern TP + SP keeps (8d + 4 d_q + 4 d_kv +
 * 4 n_h + 6 d_ff) / 8 = (65,536 + 32,768 + 4,096 + 256 + 172,032) / 8 =
 * 34,336 B per token, 34,336 / 8192 = 4.1914 sbh: 1.40% apart at every length. */
Test(ch12, coinciding_curves_are_said_to)
{
    NEAR(chapter_value("ch12/activations", "ch12_ksel_msp_gap_pct"), 100 * (4.25 / (34336.0 / 8192) - 1), 0.05);
}
