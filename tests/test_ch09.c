/* Chapter 9's numbers, checked from the chapter's own program down: the
 * exact M/D/1 figures of the 8-way placement (Pollaczek-Khinchine mean,
 * Erlang's waiting-time distribution), one meaning of "step", and the GPU
 * counts head-splitting parallelism refuses. */
#include <criterion/criterion.h>
#include <math.h>

#include "chapter_values.h"
#include "specs.h"
#include "video.h"

#define NEAR(a, b, tol)                                                                                    \
    cr_assert(fabs((a) - (b)) <= (tol), "%s = %.9g, expected %.9g (abs. tol. %g)", #a, (double)(a), (double)(b), \
              (double)(tol))

/* Below one service time nobody has arrived twice: P(Wq <= t) = (1 - rho) e^{lambda t}.
 * rho = 0.5, D = 1: t = 0.5 gives 0.5 e^0.25 = 0.6420127; t = 1.5 adds the k = 1
 * term -0.5 * 0.5 e^0.5 ... (1 - rho)(e^0.75 - 0.25 e^0.25) = 0.5 (2.1170000 - 0.3210064) = 0.8979968. */
Test(ch09, md1_wait_cdf_by_hand)
{
    NEAR(md1_wait_cdf(0.5, 1, 0), 0.5, 1e-15);
    NEAR(md1_wait_cdf(0.5, 1, 0.5), 0.5 * exp(0.25), 1e-12);
    NEAR(md1_wait_cdf(0.5, 1, 1.5), 0.5 * (exp(0.75) - 0.25 * exp(0.25)), 1e-12);
    cr_assert(isnan(md1_wait_cdf(1.0, 1, 1)), "rho = 1 has no distribution");
    cr_assert(isnan(md1_wait_cdf(-1.0, 1, 1)));
}

/* The distribution's mean must be Pollaczek-Khinchine's rho D / (2 (1 - rho)):
 * 0.5 at rho = 0.5, D = 1; integrate P(Wq > t) in steps of 1e-3 (the tail past
 * t = 20 is below 1e-7). */
Test(ch09, md1_distribution_has_the_pk_mean)
{
    double sum = 0, h = 1e-3;
    for (double t = h / 2; t < 20; t += h)
        sum += (1 - md1_wait_cdf(0.5, 1, t)) * h;
    NEAR(sum, 0.5, 1e-5);
}

/* At rho = 0.944 (the chapter's busy point) the 95th percentile of the time in
 * system is 26.9054 service times: Erlang's sum evaluated at 60 digits
 * (mpmath) gives P(Wq <= 25.9054455 D) = 0.9500000. */
Test(ch09, md1_p95_at_rho_0_944)
{
    /* the sum is good to about 1e-8 there, the density 0.0055 per D: 1e-4 D */
    NEAR(md1_time_quantile(0.944, 1, 0.95), 26.9054455, 1e-4);
    NEAR(md1_time_quantile(0.944 / 261.46, 261.46, 0.95), 26.9054455 * 261.46, 1e-4 * 261.46);
    /* a job that finds the server free half the time: the median is the service */
    NEAR(md1_time_quantile(0.5, 1, 0.5), 1, 1e-12);
}

/* The chapter quotes exact figures for the 8-way placement at its busy point:
 * mean D (1 + rho / (2 (1 - rho))), rho = rate D, D the 8-GPU request time
 * the library gives; and the p95 from the distribution. */
Test(ch09, busy_point_is_exact_not_simulated)
{
    gpu_spec h100 = gpu_builtin("h100");
    video_model wan = video_model_builtin("wan2.1-14b");
    video_request q = video_request_default(&wan, &h100);
    q.gpus = 8;
    double rate = chapter_value("ch09/requests", "ch09_busy_rate");
    video_placement p;
    char err[512];
    cr_assert_eq(video_placements(&q, rate, 1000, 1, &p, err, sizeof err), 0, "%s", err);
    double d = p.service_sp, rho = rate / 3600 * d;
    NEAR(chapter_value("ch09/requests", "ch09_busy_rho_sp"), rho, 5e-4);
    NEAR(chapter_value("ch09/requests", "ch09_busy_sp_min"), d * (1 + rho / (2 * (1 - rho))) / 60, 0.05);
    NEAR(chapter_value("ch09/requests", "ch09_busy_sp_p95"), md1_time_quantile(rate / 3600, d, 0.95) / 60, 0.05);
}

/* One meaning of "step": a denoising step with both guidance forwards.  Wan's
 * forward is 6.52329e15 FLOP, at 45% of 989.4 TFLOP/s 14.65 s; a step 29.30 s,
 * whether the chapter speaks of batching or of time. */
Test(ch09, a_step_is_both_guidance_forwards)
{
    double step = 2 * 6.52329e15 / (989.4e12 * 0.45);
    NEAR(chapter_value("ch09/requests", "ch09_batch1_step_s"), step, 0.05);
    NEAR(chapter_value("ch09/requests", "ch09_t_step_1"), step, 0.05);
    NEAR(chapter_value("ch09/requests", "ch09_batch2_step_s"), 2 * step, 0.1);
}

/* Ulysses hands each GPU heads / gpus whole heads: 40 heads split 1, 2, 4, 5
 * and 8 ways within the published table, never 3 or 6. */
Test(ch09, head_splitting_needs_a_divisor)
{
    gpu_spec h100 = gpu_builtin("h100");
    video_model wan = video_model_builtin("wan2.1-14b");
    video_request q = video_request_default(&wan, &h100);
    video_estimate e;
    char err[512];
    const int ok[] = {1, 2, 4, 5, 8}, refused[] = {3, 6, 7};
    for (int i = 0; i < 5; i++) {
        q.gpus = ok[i];
        cr_assert_eq(video_estimate_compute(&q, &e, err, sizeof err), 0, "%d: %s", ok[i], err);
    }
    for (int i = 0; i < 3; i++) {
        q.gpus = refused[i];
        cr_assert_eq(video_estimate_compute(&q, &e, err, sizeof err), -1, "%d GPUs accepted", refused[i]);
        cr_assert(strstr(err, "--gpus") && strstr(err, "40 heads"), "%s", err);
    }
}
