/* Chapter 5's argument, checked through the functions its program calls
 * (latency_load: serve_batch_times, queue_capacity, md1_formula, the memory
 * plan): the service time of one request on the H100's published ceilings,
 * the capacity it gives, the M/D/1 knee, and the memory that holds the
 * batches.  Hand arithmetic on LLaMA-3-8B's config.json beside each (the
 * step's byte and FLOP counts are derived in tests/test_ch03.c). */
#include <criterion/criterion.h>
#include <math.h>

#include "ceilings.h"
#include "memory.h"
#include "queue.h"
#include "batch_vs_sequential.h"

#define REL(a, b, tol)                                                                                         \
    cr_assert(fabs((a) - (b)) <= (tol) * fabs(b), "%s = %.9g, expected %.9g (rel. tol. %g)", #a, (double)(a), \
              (double)(b), (double)(tol))

/* One request of 512 + 256 tokens at batch 1, H100 at 3.18 TB/s and 800
 * TFLOP/s.  Decode: 3,851,717,667,840 B / 3.18e12 = 1.211232 s (test_ch03).
 * Prefill of 512 tokens: the projections are compute-bound (intensity over
 * 400 against a ridge of 252): 2 * 512 * 7,504,658,432 / 800e12 = 9.6060
 * ms; the norms, residual adds and SiLU-mul are memory-bound, per layer
 * 2 * (2*512*4096*2 + 8192) + 2 * 3*512*4096*2 + 3*512*14336*2 =
 * 85,999,616 B, * 32 / 3.18e12 = 0.8654 ms; attention (174 FLOP/B) reads 32
 * * 2 * (2 * 1,048,576 + 4,194,304) B = 0.1266 ms; embedding and final norm
 * 4 * 512 * 4096 * 2 + 8192 B = 5.3 us.  The prefill samples only the last
 * position: the head's share of the projections for 512 tokens, 2 * 512 *
 * 4096 * 128,256 / 800e12 = 0.6724 ms, becomes one row's memory-bound read
 * of the head, (1,050,673,152 + 4096 * 2 + 128,256 * 4) / 3.18e12 = 0.3306
 * ms.  Prefill 10.261 ms. */
#define S1 (3851717667840.0 / 3.18e12 + 2 * 512 * 7504658432.0 / 800e12 + 32 * 85999616.0 / 3.18e12 + \
            32 * 2 * 6291456.0 / 3.18e12 + (4 * 512 * 4096 * 2.0 + 8192) / 3.18e12 - \
            2 * 512 * 4096 * 128256.0 / 800e12 + (1050673152.0 + 4096 * 2.0 + 128256 * 4.0) / 3.18e12)

static void times_at_ceilings(double *times, int n)
{
    model_spec m = model_builtin("llama3-8b");
    gpu_spec sheet = gpu_builtin("h100");
    published_ceilings p;
    cr_assert_eq(published_ceilings_for("h100", &p), 0);
    gpu_spec g = gpu_at_published_ceilings(&sheet, &p);
    serve_workload w = {1, 512, 256, 1, precision_uniform(DT_BF16)};
    char err[256];
    cr_assert_eq(serve_batch_times(&m, &g, &w, n, times, err, sizeof err), 0, "%s", err);
}

Test(ch05, one_request_takes_1_22_s)
{
    double t[1];
    times_at_ceilings(t, 1);
    REL(t[0], S1, 1e-5);
    REL(S1, 1.221493, 1e-5);
    /* served one at a time the replica completes 1 / 1.2215 = 0.819 a second */
    queue_config c = {1, 1, 0, 0, t, SERVICE_FIXED, 1, 0};
    REL(queue_capacity(&c), 1 / S1, 1e-5);
}

Test(ch05, md1_knee_at_90_percent)
{
    /* T = S (1 + rho / (2 (1 - rho))): at rho = 0.9, S * (1 + 0.9 / 0.2) =
     * 5.5 S = 6.72 s; at 0.5, 1.5 S. */
    queue_formula f;
    cr_assert_eq(md1_formula(0.9 / S1, 1 / S1, &f), 0);
    REL(f.time, 5.5 * S1, 1e-9);
    cr_assert_eq(md1_formula(0.5 / S1, 1 / S1, &f), 0);
    REL(f.time, 1.5 * S1, 1e-9);
}

Test(ch05, batches_of_64_raise_capacity_and_fit)
{
    /* A batch of 64 costs little more than one: its decode reads the weights
     * once a step for 64 tokens.  Lower bound on s(64): the 255 weight reads
     * 255 * 15,009,857,536 / 3.18e12 = 1.2036 s plus 64 prefills of the
     * projections 64 * 9.6060 ms = 0.6148 s: 1.818 s, so the capacity is at
     * most 64 / 1.818 = 35.2 per s.  And sharing must buy at least 30-fold:
     * the 64 sequences' own KV and activations (under 0.7 s in all) cannot
     * bring s(64) up to 64 * S1 / 30 = 2.61 s. */
    double t[64];
    times_at_ceilings(t, 64);
    double lo = 255 * 15009857536.0 / 3.18e12 + 64 * 2 * 512 * 7504658432.0 / 800e12;
    cr_assert(t[63] > lo && t[63] < 64 * S1 / 30, "s(64) = %g s, floor %g s", t[63], lo);
    queue_config c = {1, 64, 0, 0, t, SERVICE_FIXED, 1, 0};
    double mu = queue_capacity(&c);
    cr_assert(mu > 30 / S1 && mu < 64 / lo, "capacity %g", mu);
    /* And every batch of up to 64 fits: a sequence of 768 tokens holds
     * 768 * 131,072 = 100,663,296 B; left (0.9 * capacity - 16,060,522,496 -
     * 1,269,301,248 reserve) holds 592 of them with the driver's 85.52e9. */
    model_spec m = model_builtin("llama3-8b");
    gpu_spec g = gpu_builtin("h100");
    replica_memory r;
    char err[256];
    cr_assert_eq(replica_memory_plan(&m, &g, precision_uniform(DT_BF16), 1, memory_policy_default(), &r, err,
                                     sizeof err),
                 0, "%s", err);
    int cap = max_batch_for_memory(&r, 768);
    cr_assert_eq(cap, (int)floor((0.9 * g.mem_bytes - 16060522496.0 - 1269301248.0) / 100663296.0));
    cr_assert_geq(cap, 64);
}
