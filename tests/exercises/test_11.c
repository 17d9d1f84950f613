/* Chapter 11 exercises: each expected number is derived by hand below from
 * the model configs, the datasheets and the CUSUM's definitions, never from
 * the library's output. */
#include "11-speculative-fleet.h"

#include <criterion/criterion.h>
#include <math.h>

/* |got - want| <= tol; false for NAN, so an untouched kit fails. */
#define assert_near(got, want, tol)                                                                        \
    do {                                                                                                   \
        double g_ = (got), w_ = (want);                                                                    \
        cr_assert(fabs(g_ - w_) <= (tol), "got %.8g, want %.8g (tol %g)", g_, w_, (double)(tol));          \
    } while (0)

Test(ex11, speedup_at_batch_one)
{
    /* Batch 1 is memory-bound: verification costs one step, and a draft step
     * costs the ratio of bytes read.  LLaMA-3.2-1B: 1,235,814,400 params
     * (2.4716 GB) + KV 32768 B/token * 2048 = 0.0671 GB; LLaMA-3-70B:
     * 70,553,706,496 params (141.107 GB) + 327680 * 2048 = 0.6711 GB.
     * c = 2.5387 / 141.778 = 0.017906.  Speedup = E[N]/(1 + 4c) with
     * E[N] = 1 + .7 + .49 + .343 + .2401 = 2.7731: 2.7731/1.071624 = 2.5878.
     * Allow 1% for the small extra cost of verifying five tokens. */
    double s = ex11_speedup_at_batch("llama3-70b", "llama3.2-1b", "h100", 4, 1, 2048, 0.7, 4);
    cr_assert(fabs(s / 2.5878 - 1.0) < 0.01, "speedup %g", s);
    cr_assert(isnan(ex11_speedup_at_batch("llama3-70b", "nope", "h100", 4, 1, 2048, 0.7, 4)));
}

Test(ex11, break_even_batch)
{
    /* Below 5B = 295 tokens (B < 59) verification is nearly free and the
     * speedup is near 2.7731/(1 + 4c) > 2 with c < 0.05, so no crossing; at
     * a large enough batch the projections are compute-bound and five
     * tokens cost several steps, a loss.  The crossing lies in between, and
     * the speedup is below 1 there and not below 1 one batch earlier. */
    int b = ex11_break_even_batch("llama3-70b", "llama3.2-1b", "h100", 4, 2048, 0.7, 4, 2048);
    cr_assert(b >= 59 && b <= 2048, "batch %d", b);
    cr_assert(ex11_speedup_at_batch("llama3-70b", "llama3.2-1b", "h100", 4, b, 2048, 0.7, 4) < 1.0);
    cr_assert(ex11_speedup_at_batch("llama3-70b", "llama3.2-1b", "h100", 4, b - 1, 2048, 0.7, 4) >= 1.0);
}

Test(ex11, draft_memory)
{
    /* LLaMA-3.2-1B over 4 GPUs: weights 1,235,814,400 * 2 / 4 = 617,907,200 B;
     * KV per token 2*16*8*64*2 = 32768 B, a quarter per GPU (8 KV heads over
     * 4) = 8192 B; * 128 * 2048 = 2,147,483,648 B.  Total 2,765,390,848 B. */
    assert_near(ex11_draft_memory_per_gpu("llama3.2-1b", 4, 128, 2048), 2765390848.0, 1.0);
    /* LLaMA-3-8B: 8,030,261,248 * 2 / 4 = 4,015,130,624 B; KV 2*32*8*128*2 =
     * 131072 B/token, 32768 per GPU, * 262144 tokens = 8,589,934,592 B.
     * Total 12,605,065,216 B. */
    assert_near(ex11_draft_memory_per_gpu("llama3-8b", 4, 128, 2048), 12605065216.0, 1.0);
}

Test(ex11, cusum_design)
{
    /* h = ln 1e6 = 6 ln 10 = 13.815511 */
    assert_near(ex11_cusum_threshold(1e6), 13.815511, 1e-6);
    /* llr(1) = ln(0.75) + ln(2) = -0.287682 + 0.693147 = 0.405465 */
    assert_near(ex11_cusum_llr(0.8, 0.6, 4, 1), 0.405465, 1e-6);
    /* llr(4) = 4 ln 0.75 = -1.150728 */
    assert_near(ex11_cusum_llr(0.8, 0.6, 4, 4), -1.150728, 1e-6);
    /* I1 = 1.3056 ln .75 + .8704 ln 2 = 0.227717 (see test_specmon);
     * bound (13.815511 + 0.693147)/0.227717 = 63.713 */
    assert_near(ex11_cusum_delay_bound(0.8, 0.6, 4, 1e6), 63.713, 0.01);
    cr_assert(isnan(ex11_cusum_llr(0.8, 0.6, 4, 5)));
}

Test(ex11, alpha_estimate)
{
    /* 2500 / (2500 + 600) = 0.8064516 */
    assert_near(ex11_alpha_estimate(2500, 600), 0.8064516, 1e-7);
    cr_assert(isnan(ex11_alpha_estimate(0, 0)));
}

Test(ex11, rollout)
{
    cr_assert_eq(ex11_rollout_next(0, 1.08, 5000), 0);
    cr_assert_eq(ex11_rollout_next(1, 1.08, 5000), 1);
    cr_assert_eq(ex11_rollout_next(0, 1.50, 200), 0);
    cr_assert_eq(ex11_rollout_next(0, 1.10, 1000), 1);
    cr_assert_eq(ex11_rollout_next(1, 0.97, 200), 0);
}
