/* Chapter 9 exercises: each expected number is derived by hand below from
 * the models' configs, the roofline and the queue formulas, never from the
 * library's output. */
#include "09-video-diffusion.h"

#include <math.h>

#include "exercise_check.h"

/* Tests are named eN_... after exercise N (make exercise N=09 ONLY=N). */
Test(ex09, e1_latent_frames_and_tokens)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* 1 + (81 - 1) / 4 = 21; 80 frames do not fit; one frame is one latent frame */
    ex_check_int("9.1(a) latent frames of 81", ex09_latent_frames(81, 4), 21);
#endif
    ex_check_int("9.1(c) latent frames of 80 (not 4k + 1)", ex09_latent_frames(80, 4), -1);
    ex_check_int("9.1 latent frames of 1", ex09_latent_frames(1, 4), 1);
    ex_check_int("9.1 latent frames of 129", ex09_latent_frames(129, 4), 33);
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* Wan2.1-1.3B at 81 x 832 x 480: 21 x (480/16) x (832/16) = 21 x 30 x 52 = 32,760 */
    ex_check_int("9.1(a) tokens, Wan2.1-1.3B, 81 x 832 x 480", ex09_tokens("wan2.1-1.3b", 81, 832, 480), 32760);
#endif
    /* HunyuanVideo at 129 x 1280 x 720: 33 x 45 x 80 = 118,800 */
    ex_check_int("9.1 tokens, HunyuanVideo, 129 x 1280 x 720", ex09_tokens("hunyuanvideo", 129, 1280, 720), 118800);
    ex_check_int("9.1 tokens of 80 frames", ex09_tokens("wan2.1-14b", 80, 1280, 720), -1);
    ex_check_int("9.1 model \"sora\" (not in the table)", ex09_tokens("sora", 81, 1280, 720), -1);
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex09, e2_guidance_doubles_the_step)
{
    /* Wan 14B, 720p: linear 2 x 75,600 x 11,953,766,400 = 1.807409e15; attention
     * 4 x 40 x 75,600^2 x 5120 = 4.682023e15; cross 3.38564e13: forward 6.523288e15 */
    ex_check_near("9.2(a) PFLOP a step, Wan 14B 720p, with guidance",
                  ex09_step_flop("wan2.1-14b", 81, 1280, 720, 2) / 1e15, 2 * 6.523288, 1e-4);
    ex_check_near("9.2(b) PFLOP a step, Wan 14B 720p, guidance distilled",
                  ex09_step_flop("wan2.1-14b", 81, 1280, 720, 1) / 1e15, 6.523288, 1e-4);
}
#endif

Test(ex09, e3_attention_crossover)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* n_tok = M / (2 n_L d): Wan 14B 11,953,766,400 / (2 x 40 x 5120) = 29,184;
     * HunyuanVideo 60 x 12 x 3072^2 / (2 x 60 x 3072) = 6 x 3072 = 18,432 */
    ex_check_near("9.3(a) crossover tokens, Wan 14B", ex09_attention_crossover_tokens("wan2.1-14b"), 29184.0, 1e-6);
    ex_check_near("9.3(a) crossover tokens, HunyuanVideo", ex09_attention_crossover_tokens("hunyuanvideo"), 18432.0,
                  1e-6);
    /* 9.3(b): 720p is 45 x 80 = 3600 tokens a latent frame: 29,184 / 3600 =
     * 8.1, so 9 latent frames, 1 + 4 x 8 = 33 frames (33 x 720p is 9 x 3600
     * = 32,400 tokens, 29 frames 28,800, short of it); 480p is 30 x 52 =
     * 1560: 18.7, 19 latent frames, 73 frames */
    ex_check_int("9.3(b) tokens of 33 frames of 720p", ex09_tokens("wan2.1-14b", 33, 1280, 720), 32400);
    ex_check_int("9.3(b) tokens of 29 frames of 720p", ex09_tokens("wan2.1-14b", 29, 1280, 720), 28800);
    ex_check_int("9.3(b) tokens of 73 frames of 480p", ex09_tokens("wan2.1-14b", 73, 832, 480), 29640);
#endif
    ex_check_nan("9.3 model \"sora\"", ex09_attention_crossover_tokens("sora"), "not a model in the table");
}

Test(ex09, e4_batching_two_videos)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* At 45% of 989.4 TFLOP/s and 3.35 TB/s the ridge is 133 FLOP/B; one Wan
     * forward is at 8,887 FLOP/B, so t(b) = b F / peak and the gain is exactly 1 */
    ex_check_near("9.4(a) throughput gain of batch 2, Wan 14B, H100", ex09_batch_gain("wan2.1-14b", "h100", 2), 1.0,
                  1e-9);
    ex_check_near("9.4 throughput gain of batch 4, Wan 14B, H100", ex09_batch_gain("wan2.1-14b", "h100", 4), 1.0, 1e-9);
#endif
    ex_check_nan("9.4 GPU \"tpu\"", ex09_batch_gain("wan2.1-14b", "tpu", 2), "not a GPU in the table");
}

#ifndef NB_STUDENT_KIT /* the student kit checks this exercise through its variant */
Test(ex09, e5_memory)
{
    /* Wan 14B 720p: 28e9 + 11.36e9 + 75,600 x 58,368 x 2 = 48,185,241,600 B */
    ex_check_near("9.5(a) peak bytes, Wan 14B 720p", ex09_peak_memory("wan2.1-14b", "h100", 81, 1280, 720, 1, 0),
                  48185241600.0, 1.0);
    /* offloaded: only the DiT phase, 28e9 + 8,825,241,600 */
    ex_check_near("9.5(b) peak bytes, Wan 14B 720p, offloaded",
                  ex09_peak_memory("wan2.1-14b", "h100", 81, 1280, 720, 1, 1), 36825241600.0, 1.0);
    /* two GPUs: 37,800 tokens each, 4,412,620,800 B, still above the 3,583,180,800 B VAE tile */
    ex_check_near("9.5(c) peak bytes, Wan 14B 720p, split over 2",
                  ex09_peak_memory("wan2.1-14b", "h100", 81, 1280, 720, 2, 0), 43772620800.0, 1.0);
}
#endif

Test(ex09, e6_mdc_queue)
{
    /* M/D/1 at 6 jobs an hour, 261 s: rho = 0.435; Wq = 0.435 x 261 / (2 x 0.565) = 100.4735 s */
    ex_check_near("9.6 time in system, M/D/1, 6 an hour, 261 s", ex09_mdc_time(6, 261, 1), 261 + 0.435 * 261 / 1.13,
                  1e-6);
    /* M/D/2 at 6 an hour, 600 s: a = 1, Erlang C = 1/3, M/M/2 Wq = 200 s, half: 100 s */
    ex_check_near("9.6 time in system, M/D/2, 6 an hour, 600 s", ex09_mdc_time(6, 600, 2), 700.0, 1e-6);
    ex_check_nan("9.6 20 jobs an hour on one server of 261 s", ex09_mdc_time(20, 261, 1),
                 "20 x 261 > 3600: the queue is unstable");
}

Test(ex09, e7_journal)
{
#ifndef NB_STUDENT_KIT /* the student kit checks these parts through its variant */
    /* 50 steps: 1 + 50 + 1 records of 32 bytes, and the 200-byte payload: 1,864 bytes */
    ex_check_near("9.7(a) journal bytes, 50 steps, 200-byte payload", ex09_journal_bytes(50, 200), 1864.0, 1e-12);
#endif
    ex_check_near("9.7 journal bytes, 1 step, no payload", ex09_journal_bytes(1, 0), 96.0, 1e-12);
}

/* The variant of $NB_SEED (make exercise N=09 SEED=4711), judged as the grade
 * and the page judge it; at seed 0 these are the printed questions, whose
 * answers the tests above derive by hand. */
#include "kit_answers_09.h"

EX_VARIANT_TEST(ex09, e2_variant, 9, kit_answers_09, 2)
EX_VARIANT_TEST(ex09, e1_variant, 9, kit_answers_09, 1)
EX_VARIANT_TEST(ex09, e6_variant, 9, kit_answers_09, 6)
EX_VARIANT_TEST(ex09, e3_variant, 9, kit_answers_09, 3)
EX_VARIANT_TEST(ex09, e4_variant, 9, kit_answers_09, 4)
EX_VARIANT_TEST(ex09, e5_variant, 9, kit_answers_09, 5)
EX_VARIANT_TEST(ex09, e7_variant, 9, kit_answers_09, 7)
