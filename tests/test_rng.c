/* The generator: published test vectors, then the moments of each draw.
 * Statistical checks use a fixed seed and a tolerance of 5 standard errors
 * (sd / sqrt(n)), stated beside each; a correct generator fails one with
 * probability below 1e-6. */
#include "rng.h"

#include <criterion/criterion.h>
#include <math.h>

Test(rng, splitmix64_reference_outputs)
{
    /* splitmix64 (Steele, Lea and Flood 2014) from state 0: the first three
     * outputs are the widely published 0xe220a8397b1dcdaf, 0x6e789e6aa1b965f4,
     * 0x06c45d188009454f. */
    uint64_t x = 0;
    cr_expect_eq(splitmix64_next(&x), 0xe220a8397b1dcdafULL);
    cr_expect_eq(splitmix64_next(&x), 0x6e789e6aa1b965f4ULL);
    cr_expect_eq(splitmix64_next(&x), 0x06c45d188009454fULL);
}

Test(rng, xoshiro256starstar_by_hand)
{
    /* State {1,2,3,4}.  Output = rotl(s1*5, 7) * 9.
     * Call 1: s1 = 2 -> rotl(10,7) = 1280 -> 11520.  Update: t = 2<<17;
     *   s2 = 3^1 = 2, s3 = 4^2 = 6, s1 = 2^2 = 0, s0 = 1^6 = 7,
     *   s2 = 2^262144 = 262146, s3 = rotl(6,45).
     * Call 2: s1 = 0 -> 0.  Update: s2 = 262146^7 = 262149, s1 = 262149.
     * Call 3: 262149*5 = 1310745, rotl by 7 = 1310745*128 (no wrap),
     *   times 9 = 1509978240. */
    rng_state r = {{1, 2, 3, 4}};
    cr_expect_eq(rng_next(&r), 11520ULL);
    cr_expect_eq(rng_next(&r), 0ULL);
    cr_expect_eq(rng_next(&r), 1509978240ULL);
}

Test(rng, same_seed_same_stream_and_jump_differs)
{
    rng_state a = rng_make(7), b = rng_make(7), c = rng_make(8);
    int same = 1, differ = 0;
    for (int i = 0; i < 100; i++) {
        uint64_t x = rng_next(&a), y = rng_next(&b), z = rng_next(&c);
        same &= x == y;
        differ += x != z;
    }
    cr_expect(same, "one seed must replay one stream");
    cr_expect_gt(differ, 95, "seeds 7 and 8 should give unrelated streams");
    rng_state j = a;
    rng_jump(&j);
    cr_expect_neq(rng_next(&j), rng_next(&a), "a jumped stream is a different stream");
}

Test(rng, uniform_moments_and_range)
{
    /* U[0,1): mean 1/2, sd sqrt(1/12) = 0.2887; n = 1e6 -> 5 SE = 0.00144. */
    rng_state r = rng_make(1);
    const int n = 1000000;
    double sum = 0, lo = 1, hi = 0;
    for (int i = 0; i < n; i++) {
        double u = rng_uniform(&r);
        sum += u;
        lo = u < lo ? u : lo;
        hi = u > hi ? u : hi;
    }
    cr_expect(lo >= 0 && hi < 1, "range [0,1): got [%g, %g]", lo, hi);
    cr_expect(fabs(sum / n - 0.5) < 5 * 0.2887 / sqrt(n), "mean %g", sum / n);
}

Test(rng, exponential_mean_and_sd)
{
    /* Rate 2: mean 0.5 and sd 0.5; n = 1e6 -> 5 SE of the mean = 0.0025.
     * The sample sd: Var[X^2] = E[X^4] - E[X^2]^2 = 24/16 - (2/4)^2 = 1.25,
     * so 5 SE of the mean of X^2 is 5*sqrt(1.25/n) = 0.0056; we allow 0.01
     * on the sd. */
    rng_state r = rng_make(2);
    const int n = 1000000;
    double s1 = 0, s2 = 0;
    for (int i = 0; i < n; i++) {
        double x = rng_exponential(&r, 2.0);
        s1 += x;
        s2 += x * x;
    }
    double mean = s1 / n, sd = sqrt(s2 / n - mean * mean);
    cr_expect(fabs(mean - 0.5) < 5 * 0.5 / sqrt(n), "mean %g", mean);
    cr_expect(fabs(sd - 0.5) < 0.01, "sd %g", sd);
}

Test(rng, normal_and_lognormal)
{
    /* N(0,1): mean 0 +- 5/sqrt(n) = 0.005 at n = 1e6; variance 1 +- 5*sqrt(2/n) = 0.0071.
     * Lognormal(mu = log 300, sigma = 1): its median is e^mu = 300 exactly, so the
     * share below 300 is 1/2 +- 5*0.5/sqrt(n) = 0.0025. */
    rng_state r = rng_make(3);
    const int n = 1000000;
    double s1 = 0, s2 = 0;
    long below = 0;
    for (int i = 0; i < n; i++) {
        double z = rng_normal(&r);
        s1 += z;
        s2 += z * z;
        below += rng_lognormal(&r, log(300.0), 1.0) < 300.0;
    }
    cr_expect(fabs(s1 / n) < 5.0 / sqrt(n), "normal mean %g", s1 / n);
    cr_expect(fabs(s2 / n - 1) < 5 * sqrt(2.0 / n), "normal variance %g", s2 / n);
    cr_expect(fabs((double)below / n - 0.5) < 5 * 0.5 / sqrt(n), "lognormal share below median %g",
              (double)below / n);
}

static void check_poisson(double mean, uint64_t seed)
{
    /* Poisson(m): mean m, variance m.  n = 4e5 draws: 5 SE of the mean is
     * 5*sqrt(m/n).  The sample variance has SE sqrt((m + 2m^2)/n) (fourth
     * central moment m + 3m^2); 5 of those bound it. */
    rng_state r = rng_make(seed);
    const int n = 400000;
    double s1 = 0, s2 = 0;
    for (int i = 0; i < n; i++) {
        double k = (double)rng_poisson(&r, mean);
        s1 += k;
        s2 += k * k;
    }
    double m = s1 / n, v = s2 / n - m * m;
    cr_expect(fabs(m - mean) < 5 * sqrt(mean / n), "Poisson(%g) mean %g", mean, m);
    cr_expect(fabs(v - mean) < 5 * sqrt((mean + 2 * mean * mean) / n), "Poisson(%g) variance %g", mean, v);
}

Test(rng, poisson_small_mean_by_multiplication) { check_poisson(3.5, 4); }
Test(rng, poisson_large_mean_by_ptrs) { check_poisson(120.0, 5); }
Test(rng, poisson_near_the_switch) { check_poisson(30.0, 6); }

Test(rng, poisson_zero_mean_is_zero)
{
    rng_state r = rng_make(9);
    cr_expect_eq(rng_poisson(&r, 0.0), 0);
    cr_expect_eq(rng_poisson(&r, -1.0), 0);
}

Test(rng, below_is_unbiased_over_three)
{
    /* Each of 0,1,2 with p = 1/3: count sd sqrt(n p (1-p)) = 333.3 at n = 5e5;
     * 5 sd = 1667 around 166667. */
    rng_state r = rng_make(10);
    long count[3] = {0, 0, 0};
    const int n = 500000;
    for (int i = 0; i < n; i++) {
        uint64_t k = rng_below(&r, 3);
        cr_assert_lt(k, 3ULL);
        count[k]++;
    }
    for (int k = 0; k < 3; k++)
        cr_expect(fabs(count[k] - n / 3.0) < 5 * sqrt(n * (1.0 / 3) * (2.0 / 3)), "count[%d] = %ld", k, count[k]);
    cr_expect_eq(rng_below(&r, 0), 0ULL);
}

Test(rng, log_factorial_exact_and_stirling)
{
    /* 5! = 120; 16! = 20922789888000 (last exact case); 20! = 2432902008176640000
     * (first Stirling case); 100!: ln = 363.73937555556347 (published tables). */
    cr_expect_float_eq(log_factorial(0), 0, 1e-15);
    cr_expect_float_eq(log_factorial(5), log(120.0), 1e-13);
    cr_expect_float_eq(log_factorial(16), log(20922789888000.0), 1e-12);
    cr_expect_float_eq(log_factorial(20), log(2432902008176640000.0), 1e-12);
    cr_expect_float_eq(log_factorial(100), 363.73937555556347, 1e-10);
}
