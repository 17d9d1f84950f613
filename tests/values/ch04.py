"""Chapter 4, a batch window in C: every value of build/values/ch04/ that is
not a timing of this machine, derived again: the window's theory beside the
measured latencies (lib/window.py), and the exercises' answers from a
variant's inputs (see tests/values/README.md)."""
import math

import data
from lib import window

ECHOED = {
    # window_latency.c's set-up, as the chapter states it
    "ch04_callers",              # 96 caller threads replay the arrivals
    "ch04_max_batch",            # max batch 256: the window, not the size, closes every batch
    # machine_noise.c's set-up
    "ch04_noise_repeats",        # 5 repeats of the sleep test
    "ch04_noise_sleeps",         # 200 sleeps in each
    # the printed book's exercise variant (seed 0): its drawn inputs
    "ch04_ex1_batch", "ch04_ex1_window_ms", "ch04_ex1_queued",  # exercise 1's batcher and queue
    "ch04_ex1_now_a", "ch04_ex1_now_c",                           # and its two clock readings
    "ch04_ex2_now", "ch04_ex2_window_ms",                         # exercise 2's clock and window
    "ch04_ex3_n", "ch04_ex3_bad", "ch04_ex3_run_start", "ch04_ex3_run_end",  # exercise 3's batch
    "ch04_ex4_rate", "ch04_ex4_window_ms",                        # exercise 4's load
    "ch04_ex5_rate", "ch04_ex5_window_ms",                        # exercise 5's load
    "ch04_ex6_overhead_us", "ch04_ex6_fixed_ms", "ch04_ex6_per_item_ms", "ch04_ex6_batch",  # exercise 6
}

WINDOWS_MS = (1, 3)
LOADS = (0.5, 2, 8, 32)  # lambda*W: requests per window
MAX_BATCH = 256

MEASURED = {
    # machine_noise.c: how late this machine's sleeps wake
    "ch04_noise_late_p50_us", "ch04_noise_late_p99_us",
    "ch04_noise_late_p99_min_us", "ch04_noise_late_p99_max_us",
    # window_latency.c: the real batcher's latencies on this machine, and the machine
    *(f"ch04_w{w}_k{str(k).replace('.', 'p')}_{s}_over_w"
      for w in WINDOWS_MS for k in LOADS for s in ("p50", "p99", "mean")),
    "ch04_worst_mean_excess_us", "ch04_worst_late_pct",
    "ch04_cpu_model", "ch04_cores",
}


def _tag(k):
    return f"{k:g}".replace(".", "p")


# window_latency.c prints the theory's median from a simulation of 20000
# batches (seeded, not reproduced here): it is checked against the closed
# form.  The sample median of n ~ 20000 (1 + k) waits has a standard error of
# sqrt(0.25 / n) / f, f = k / (1 + k) the density of the wait over W: at most
# 0.003 (k = 2, n = 60000) and 0.0017 at k = 32, so 0.01 (the printed unit)
# is over three standard errors; at k = 0.5 the median is exactly the
# window (two requests in three wait it all).
TOL = {f"ch04_w{w}_k{_tag(k)}_p50_theory_over_w": ("abs", 0.01) for w in WINDOWS_MS for k in LOADS}


def derive():
    out = {}
    for wms in WINDOWS_MS:
        w = wms * 1e-3
        for k in LOADS:
            lam = k / w
            # the cap of 256 never binds at 32 arrivals a window: the quantile's closed form holds
            assert window.full_share(lam, w, MAX_BATCH) < 1e-12
            pre = f"ch04_w{wms}_k{_tag(k)}"
            out[pre + "_lambda"] = lam
            out[pre + "_mean_theory_over_w"] = window.mean_wait(lam, w, MAX_BATCH) / w
            out[pre + "_p50_theory_over_w"] = window.wait_quantile_uncapped(k, 0.5)
    return out


# ---- the exercises' answers, from a variant's printed inputs ----


def bisect_calls(bad, lo, hi):
    """Handler calls to find every bad request of [lo, hi) by halving: one
    call on the range; a range that passes, or a single request, stops."""
    if not any(bad[lo:hi]) or hi - lo == 1:
        return 1
    mid = lo + (hi - lo) // 2
    return 1 + bisect_calls(bad, lo, mid) + bisect_calls(bad, mid, hi)


def practice(seed, inputs):
    v = {k: data.printed(t) for k, t in inputs.items()}
    out = {}
    # 1: the oldest arrived at t = 1.000 s; the flusher sleeps out the rest of the window
    elapsed_ms = (v["ch04_ex1_now_a"] - 1.0) * 1e3
    out["4.1(a)"] = v["ch04_ex1_window_ms"] - elapsed_ms
    # 2: the deadline in whole nanoseconds, with and without the carry
    now_ns = round(v["ch04_ex2_now"] * 1e4) * 100000  # now prints to 0.1 ms
    sec, frac = divmod(now_ns, 10 ** 9)
    add = round(v["ch04_ex2_window_ms"] * 1e6)
    out["4.2(a1)"] = sec + (frac + add) // 10 ** 9
    out["4.2(a2)"] = (frac + add) % 10 ** 9
    out["4.2(b)"] = frac + add
    # 3: bisection's handler calls
    n = int(v["ch04_ex3_n"])
    one, start, end = int(v["ch04_ex3_bad"]), int(v["ch04_ex3_run_start"]), int(v["ch04_ex3_run_end"])
    out["4.3(a)"] = bisect_calls([i == one for i in range(n)], 0, n)
    out["4.3(b)"] = bisect_calls([i in (0, n - 1) for i in range(n)], 0, n)
    out["4.3(c)"] = bisect_calls([start <= i <= end for i in range(n)], 0, n)
    out["4.3(d)"] = bisect_calls([True] * n, 0, n)
    # 4: the window's mean wait, caps of 64 and 4
    lam, w = v["ch04_ex4_rate"], v["ch04_ex4_window_ms"] / 1e3
    out["4.4(a)"] = window.mean_wait(lam, w, 64) * 1e3
    out["4.4(b)"] = window.mean_wait(lam, w, 4) * 1e3
    # 5: the share of batches the size trigger sends
    lam, w = v["ch04_ex5_rate"], v["ch04_ex5_window_ms"] / 1e3
    out["4.5(a)"] = 100 * window.full_share(lam, w, 16)
    out["4.5(b)"] = 100 * window.full_share(lam, w, 32)
    # 6: one flusher, serial batches of overhead + fixed + batch x per-item
    over, fixed = v["ch04_ex6_overhead_us"] * 1e-6, v["ch04_ex6_fixed_ms"] * 1e-3
    item, b = v["ch04_ex6_per_item_ms"] * 1e-3, v["ch04_ex6_batch"]
    out["4.6(a)"] = 1 / (over + fixed + item)
    out["4.6(b)"] = b / (over + fixed + b * item)
    out["4.6(c)"] = 1 / item
    return out
