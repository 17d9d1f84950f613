/* Chapter 9 exercises: each expected number is derived by hand below from
 * the models' configs, the roofline and the queue formulas, never from the
 * library's output. */
#include "09-video-diffusion.h"

#include <criterion/criterion.h>
#include <math.h>

/* |got - want| <= tol; false for NAN, so an untouched kit fails. */
#define assert_near(got, want, tol)                                                                        \
    do {                                                                                                   \
        double g_ = (got), w_ = (want);                                                                    \
        cr_assert(fabs(g_ - w_) <= (tol), "got %.10g, want %.10g (tol %g)", g_, w_, (double)(tol));        \
    } while (0)

Test(ex09, latent_frames_and_tokens)
{
    /* 1 + (81 - 1) / 4 = 21; 80 frames do not fit; one frame is one latent frame */
    cr_assert_eq(ex09_latent_frames(81, 4), 21);
    cr_assert_eq(ex09_latent_frames(80, 4), -1);
    cr_assert_eq(ex09_latent_frames(1, 4), 1);
    cr_assert_eq(ex09_latent_frames(129, 4), 33);
    /* Wan2.1-1.3B at 81 x 832 x 480: 21 x (480/16) x (832/16) = 21 x 30 x 52 = 32,760 */
    cr_assert_eq(ex09_tokens("wan2.1-1.3b", 81, 832, 480), 32760);
    /* HunyuanVideo at 129 x 1280 x 720: 33 x 45 x 80 = 118,800 */
    cr_assert_eq(ex09_tokens("hunyuanvideo", 129, 1280, 720), 118800);
    cr_assert_eq(ex09_tokens("wan2.1-14b", 80, 1280, 720), -1);
    cr_assert_eq(ex09_tokens("sora", 81, 1280, 720), -1);
}

Test(ex09, guidance_doubles_the_step)
{
    /* Wan 14B, 720p: linear 2 x 75,600 x 11,953,766,400 = 1.807409e15; attention
     * 4 x 40 x 75,600^2 x 5120 = 4.682023e15; cross 3.38564e13: forward 6.523288e15 */
    assert_near(ex09_step_flop("wan2.1-14b", 81, 1280, 720, 2) / 1e15, 2 * 6.523288, 1e-4);
    assert_near(ex09_step_flop("wan2.1-14b", 81, 1280, 720, 1) / 1e15, 6.523288, 1e-4);
}

Test(ex09, attention_crossover)
{
    /* S = P_tok / (2 L d): Wan 14B 11,953,766,400 / (2 x 40 x 5120) = 29,184;
     * HunyuanVideo 60 x 12 x 3072^2 / (2 x 60 x 3072) = 6 x 3072 = 18,432 */
    assert_near(ex09_attention_crossover_tokens("wan2.1-14b"), 29184.0, 1e-6);
    assert_near(ex09_attention_crossover_tokens("hunyuanvideo"), 18432.0, 1e-6);
}

Test(ex09, batching_two_videos)
{
    /* At 45% of 989.4 TFLOP/s and 3.35 TB/s the ridge is 133 FLOP/B; one Wan
     * forward is at 8,887 FLOP/B, so t(b) = b F / peak and the gain is exactly 1 */
    assert_near(ex09_batch_gain("wan2.1-14b", "h100", 2), 1.0, 1e-9);
    assert_near(ex09_batch_gain("wan2.1-14b", "h100", 4), 1.0, 1e-9);
    cr_assert(isnan(ex09_batch_gain("wan2.1-14b", "tpu", 2)));
}

Test(ex09, memory)
{
    /* Wan 14B 720p: 28e9 + 11.36e9 + 75,600 x 58,368 x 2 = 48,185,241,600 B */
    assert_near(ex09_peak_memory("wan2.1-14b", "h100", 81, 1280, 720, 1, 0), 48185241600.0, 1.0);
    /* offloaded: only the DiT phase, 28e9 + 8,825,241,600 */
    assert_near(ex09_peak_memory("wan2.1-14b", "h100", 81, 1280, 720, 1, 1), 36825241600.0, 1.0);
    /* two GPUs: 37,800 tokens each, 4,412,620,800 B, still above the 3,583,180,800 B VAE tile */
    assert_near(ex09_peak_memory("wan2.1-14b", "h100", 81, 1280, 720, 2, 0), 43772620800.0, 1.0);
}

Test(ex09, mdc_queue)
{
    /* M/D/1 at 6 jobs an hour, 261 s: rho = 0.435; Wq = 0.435 x 261 / (2 x 0.565) = 100.4735 s */
    assert_near(ex09_mdc_time(6, 261, 1), 261 + 0.435 * 261 / 1.13, 1e-6);
    /* M/D/2 at 6 an hour, 600 s: a = 1, Erlang C = 1/3, M/M/2 Wq = 200 s, half: 100 s */
    assert_near(ex09_mdc_time(6, 600, 2), 700.0, 1e-6);
    cr_assert(isnan(ex09_mdc_time(20, 261, 1))); /* 20 x 261 > 3600: unstable */
}

Test(ex09, journal)
{
    /* 50 steps: 1 + 50 + 1 records of 32 bytes, and the 200-byte payload: 1,864 bytes */
    assert_near(ex09_journal_bytes(50, 200), 1864.0, 1e-12);
    assert_near(ex09_journal_bytes(1, 0), 96.0, 1e-12);
}
