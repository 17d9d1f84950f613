/* Chapter 2's argument, checked through the functions its programs call
 * (gpu_predicted, the solution set): the knee of a GEMM, the published
 * ceilings and the GPU they describe, and a knee read off a sweep.  Every
 * expected number is hand arithmetic on the datasheet rows (H100 989.4
 * TFLOP/s, 3.35 TB/s; H200 989.4, 4.8) and the published ceilings
 * (BabelStream read-only: H100 3.18 TB/s, H200 4.48; cuBLAS bf16 800 and 790
 * TFLOP/s), written beside it. */
#include <criterion/criterion.h>
#include <math.h>

#include "ceilings.h"
#include "gemm_model.h"
#include "roofline.h"
#include "specs.h"

#define REL(a, b, tol)                                                                                         \
    cr_assert(fabs((a) - (b)) <= (tol) * fabs(b), "%s = %.9g, expected %.9g (rel. tol. %g)", #a, (double)(a), \
              (double)(b), (double)(tol))

Test(ch02, knee_of_a_square_bf16_weight)
{
    /* 2mnk/P = 2(mk + nk + mn)/beta gives m = 1 / (beta/P - (n + k)/(nk)).
     * H100, 8192^2: 1 / (3.35/989.4 - 2/8192) = 1 / 0.00314175 = 318.29, a
     * little above the ridge 295.34; H200: 1 / (4.8/989.4 - 2/8192) = 217.05. */
    REL(gemm_knee_batch(8192, 8192, 2, 2, 989.4e12, 3.35e12), 318.294, 1e-5);
    REL(gemm_knee_batch(8192, 8192, 2, 2, 989.4e12, 4.8e12), 217.048, 1e-5);
}

Test(ch02, gate_up_knee_is_215_so_batch_128_is_below_it)
{
    /* LLaMA-3-70B gate and up at TP 4: n = 2 * 28672 / 4 = 14336, k = 8192.
     * 1 / (4.8/989.4 - (14336 + 8192)/(14336 * 8192)) = 1 / (0.00485142 -
     * 0.00019183) = 214.6. */
    double knee = gemm_knee_batch(14336, 8192, 2, 2, 989.4e12, 4.8e12);
    REL(knee, 214.61, 1e-4);
    /* m = 128: bytes 2*(128*8192 + 14336*8192) + 2*128*14336 = 240,648,192
     * over 4.8e12 = 50.135 us; FLOP 30.06e9 / 989.4e12 = 30.4 us: memory. */
    bound_kind b;
    REL(gemm_predicted_time(128, 14336, 8192, 2, 2, 989.4e12, 4.8e12, &b), 240648192.0 / 4.8e12, 1e-12);
    cr_assert_eq(b, BOUND_MEMORY);
}

Test(ch02, published_ceilings_and_the_gpu_at_them)
{
    published_ceilings h100, h200;
    cr_assert_eq(published_ceilings_for("h100", &h100), 0);
    cr_assert_eq(published_ceilings_for("h200", &h200), 0);
    cr_assert_eq(published_ceilings_for("l40s", &h200) == 0 ? 1 : 0, 0, "no published set for the L40S");
    cr_assert_eq(published_ceilings_for("h200", &h200), 0);
    /* read-only 4.48 of 4.8 TB/s: 93.3%; copy 4.01: 83.5% */
    REL(h200.read_bw / 4.8e12, 0.93333, 1e-4);
    REL(h200.copy_bw / 4.8e12, 0.83542, 1e-4);
    /* A weight read is a read: the H100 at its ceilings streams 3.18 TB/s,
     * not the 2.90 of a copy; bf16 800 TFLOP/s, and fp8 scaled alike:
     * 1978.9 * 800 / 989.4 = 1600.08 TFLOP/s.  Memory and links unchanged. */
    gpu_spec sheet = gpu_builtin("h100");
    gpu_spec g = gpu_at_published_ceilings(&sheet, &h100);
    REL(g.mem_bw, 3.18e12, 1e-12);
    REL(gpu_peak_flops(&g, DT_BF16), 800e12, 1e-12);
    REL(gpu_peak_flops(&g, DT_FP8), 1978.9e12 * 800 / 989.4, 1e-9);
    cr_assert_eq(g.mem_bytes, sheet.mem_bytes);
    cr_assert_eq(g.link_bw, sheet.link_bw);
    /* the measured ridge on the H200's ceilings: 790 / 4.48 = 176.3 FLOP/B,
     * against the datasheet's 206.1 */
    REL(ridge_intensity(h200.gemm_bf16, h200.read_bw), 176.339, 1e-5);
}

Test(ch02, knee_read_off_a_sweep)
{
    /* The flat floor t = 48.9 us meets the line through (512, 121.5 us),
     * t = m * 121.5 / 512, at m = 48.9 * 512 / 121.5 = 206.06. */
    REL(measured_knee_batch(48.9, 512, 121.5), 206.064, 1e-5);
}
