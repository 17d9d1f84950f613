"""Chapter 5, the serving queue: every value of build/values/ch05/ derived
again: one request end to end in a closed loop (lib/request.py) at the
roofline and at the calibrated rates, the batch times and capacities of a
replica that runs batches to completion, its queue under Poisson load by an
independent simulation (lib/queueing.py), the M/D/1 closed form, the KV
caps, the closed-loop benchmark's TTFT against NVIDIA's measured runs
(lib/closed_loop.py: the closed form and a replay of the seeded
benchmark; lib/validation.py: the fitted overhead and the held-out
errors), and the exercises' answers from a variant's inputs (see
tests/values/README.md)."""
import math
import statistics

import data
from lib import ceilings, closed_loop, memory, model, queueing, request, validation
from lib.model import Precision

BF16 = Precision.uniform("bf16")

ECHOED = {
    # end_to_end.c's set-up, as the chapter states it
    "ch05_e2e_price",            # $2.50 per GPU-hour: an assumed price, an input the reader changes
    "ch05_e2e_chunk",            # chunks of 512 prompt tokens a step
    # latency_load.c's GPU: the H100's published ceilings (lib/ceilings.py)
    "ch05_read_tbs",             # BabelStream's read-only 3.18 TB/s
    "ch05_gemm_tflops",          # the measured bf16 GEMM's 800 TFLOP/s
    # the printed book's exercise variant (seed 0): its drawn inputs
    "ch05_ex1_rate", "ch05_ex1_latency", "ch05_ex1_tokens",       # exercise 1's load
    "ch05_ex2_service", "ch05_ex2_rate",                          # exercise 2's server
    "ch05_ex3_service", "ch05_ex3_near", "ch05_ex3_far",          # exercise 3's server and targets
    "ch05_ex4_service", "ch05_ex4_cs2", "ch05_ex4_rate",          # exercise 4's server
    "ch05_ex5_prompt", "ch05_ex5_output", "ch05_ex5_batch", "ch05_ex5_cap",  # exercise 5's requests
    "ch05_ex6_rate", "ch05_ex6_load_pct",                         # exercise 6's traffic
    "ch05_ex8_price", "ch05_ex8_concurrency",                     # exercise 8's price and load
    "ch05_ex9_budget_ms", "ch05_ex9_concurrency", "ch05_ex9_chunk",  # exercise 9's budget
    "ch05_ex10_tpot_ms", "ch05_ex10_prompt",                      # exercise 10's target
    # bench_ttft.c's set-up: TensorRT-LLM's max_num_tokens (cited from its source),
    # the slice of runs it plots (prompt, output) and the concurrency of its time figure
    "ch05_bench_budget", "ch05_bench_prompt", "ch05_bench_output", "ch05_bench_time_c",
    # calibrated.c's search: the TTFT limit the section states
    "ch05_cal_search_ttft_max_ms",
}

MEASURED = set()  # chapter 5 times nothing

PCTS = (25, 50, 75, 90, 95)  # the Little's-law table's loads, % of capacity
MAX_BATCH = 64
SIM_REQUESTS = 200000  # measured requests a simulated point (latency_load.c's count), a tenth more first as warm-up
SIM_SEED = 5005

# The queue's figures come from latency_load.c's seeded simulation of
# 200,000 requests a point; _latency_load() runs the same process as often
# with Python's generator, so the two figures differ by both runs' sampling
# error.  SIGMA is each figure's standard deviation over one run of 200,000,
# measured by running lib/queueing.simulate() with eight other seeds (so it
# includes the queue's autocorrelation, which the textbook standard error of
# the mean would miss).  The runs are independent, so their difference has
# sqrt(2) sigma; each tolerance is 4 sqrt(2) sigma, about 5.7 sigma (and
# sigma estimated from eight runs is itself uncertain by about a quarter).
# These tolerances are wider than the printed precision for that sampling
# error alone: the process simulated is the one the chapter states.
SIGMA = {
    # load, % of capacity: (mean time s, p99 s, lambda x mean time, requests in system, waiting, mean batch)
    25: (0.0011, 0.0014, 0.0076, 0.031, 0.011, 0.020),
    50: (0.0021, 0.0036, 0.029, 0.084, 0.031, 0.052),
    75: (0.0031, 0.0101, 0.064, 0.167, 0.055, 0.110),
    90: (0.0064, 0.0212, 0.159, 0.296, 0.133, 0.168),
    95: (0.0192, 0.1388, 0.502, 0.658, 0.481, 0.192),
}
SIGMA_WINDOW = {  # (mean time s, mean batch) without and with the 0.5 s window
    "light": ((0.0015, 0.0019), (0.0006, 0.0019)),
    "heavy": ((0.0064, 0.168), (0.0065, 0.167)),
}
SIGMA_AT = {64: 0.0022, 32: 0.0026}  # mean time at the whole rate between the caps of 16 and 32
# md1_sim is latency_load.c's simulation of 1,000,000 requests one at a time
# (M/D/1): it is checked against the closed form, within 4 standard
# deviations of such a run's mean, measured as above (ten runs of 100,000,
# scaled by sqrt(1/10)); the closed form carries no error of its own.
SIGMA_MD1 = {25: 0.00074, 50: 0.0021, 75: 0.0117, 90: 0.072, 95: 0.29}
K_TWO_RUNS, K_ONE_RUN = 4 * math.sqrt(2), 4.0


def _tolerances():
    tol = {}
    for pct, (t, p99, little, in_sys, in_q, batch) in SIGMA.items():
        pre = f"ch05_t{pct}_"
        for name, sd in (("time", t), ("p99", p99), ("little", little), ("l", in_sys), ("lq", in_q),
                         ("batch", batch)):
            tol[pre + name] = ("abs", K_TWO_RUNS * sd)
        # the same mean printed to a whole request: its sampling error plus the rounding
        tol[pre + "l_say"] = ("abs", K_TWO_RUNS * in_sys + 0.5)
        tol[pre + "md1_sim"] = ("abs", K_ONE_RUN * SIGMA_MD1[pct])
    for tag, ((t0, b0), (t1, b1)) in SIGMA_WINDOW.items():
        tol[f"ch05_w_{tag}_none"] = ("abs", K_TWO_RUNS * t0)
        tol[f"ch05_w_{tag}_batch_none"] = ("abs", K_TWO_RUNS * b0)
        tol[f"ch05_w_{tag}_window"] = ("abs", K_TWO_RUNS * t1)
        tol[f"ch05_w_{tag}_batch_window"] = ("abs", K_TWO_RUNS * b1)
    for cap, sd in SIGMA_AT.items():
        tol[f"ch05_at_time_{cap}"] = ("abs", K_TWO_RUNS * sd)
    return tol


TOL = _tolerances()


def _end_to_end(m, g):
    """end_to_end.c: LLaMA-3-70B bf16 on 4 x H100 at the datasheet's rates,
    prompts of 2048 and outputs of 256 tokens, $2.50 per GPU-hour."""
    tp, prompt, output, price, chunk = 4, 2048, 256, 2.50, 512

    def est(c, ch=0, p=prompt):
        return request.estimate(m, g, BF16, tp, p, output, c, chunk=ch, price=price)

    one = est(1)
    cmax = one["max_batch"]
    at, chunked, full = est(64), est(64, chunk), est(cmax)
    # in-flight batching (TensorRT-LLM, vLLM): every prompt rides in a step of the running decodes
    mixed = request.estimate(m, g, BF16, tp, prompt, output, 64, price=price, ttft_model="bench",
                             bench={"mixed": True})
    out = {
        "ch05_e2e_cmax": cmax, "ch05_e2e_price": price, "ch05_e2e_chunk": chunk,
        "ch05_e2e_p_ms": one["prefill_time"] * 1e3,
        "ch05_e2e_d1_ms": one["decode_step"] * 1e3,
        "ch05_e2e_alone_e2e_s": one["e2e"],
        "ch05_e2e_c64_d_ms": at["decode_step"] * 1e3,
        "ch05_e2e_c64_tpot_ms": at["tpot"] * 1e3,
        "ch05_e2e_c64_stall_ms": (at["tpot"] - at["decode_step"]) * 1e3,
        "ch05_e2e_c64_ttft_ms": at["ttft"] * 1e3,
        "ch05_e2e_c64_e2e_s": at["e2e"],
        "ch05_e2e_c64_tokens": at["tokens_per_s"],
        "ch05_e2e_c64_rps": at["requests_per_s"],
        "ch05_e2e_c64_cost_in": at["cost_in"],
        "ch05_e2e_c64_cost_out": at["cost_out"],
        "ch05_e2e_chunk_ttft_ms": chunked["ttft"] * 1e3,
        "ch05_e2e_chunk_tpot_ms": chunked["tpot"] * 1e3,
        "ch05_e2e_chunk_steps": chunked["prefill_steps"],
        "ch05_e2e_chunk_tokens": chunked["tokens_per_s"],
        "ch05_e2e_mixed_tpot_ms": mixed["tpot"] * 1e3,
        "ch05_e2e_mixed_stall_ms": (mixed["tpot"] - at["decode_step"]) * 1e3,
        "ch05_e2e_mixed_steps": mixed["prefill_steps"],
        "ch05_e2e_cmax_tpot_ms": full["tpot"] * 1e3,
        "ch05_e2e_cmax_tokens": full["tokens_per_s"],
        "ch05_e2e_cmax_cost_out": full["cost_out"],
        "ch05_e2e_c1_cost_out": one["cost_out"],
        "ch05_e2e_ttft_128_ms": est(1, p=128)["ttft"] * 1e3,
        "ch05_e2e_ttft_32k_s": est(1, p=32768)["ttft"],
    }
    # the figure's two cost curves, whole prompts and chunks, over the concurrencies it plots
    gap, c = 0.0, 1
    while c <= cmax:
        a, b = est(c)["cost_out"], est(c, chunk)["cost_out"]
        gap = max(gap, abs(b - a) / a)
        c += 1 if c < 16 else 4
    out["ch05_e2e_cost_gap_pct"] = 100 * gap
    return out


def _calibrated(m, g):
    """calibrated.c: the operating point (64 in flight) at the published
    H100 TensorRT-LLM rates, beside the roofline; its TTFT the closed-loop
    benchmark's (default budget and rounds, no overhead)."""
    cal = data.calibrations()["published:h100_sxm/trtllm"]
    a = request.estimate(m, g, BF16, 4, 2048, 256, 64, price=2.5, ttft_model="bench")
    b = request.estimate(m, g, BF16, 4, 2048, 256, 64, price=2.5, cal=cal, ttft_model="bench")
    return {"ch05_cal_ttft_closed_roof_ms": a["ttft_closed"] * 1e3,
            "ch05_cal_ttft_ms": b["ttft"] * 1e3,
            "ch05_cal_ttft_closed_ms": b["ttft_closed"] * 1e3,
            "ch05_cal_tpot_ms": b["tpot"] * 1e3,
            "ch05_cal_tokens": b["tokens_per_s"],
            "ch05_cal_cost_out": b["cost_out"],
            "ch05_cal_tpot_gap_pct": (b["tpot"] / a["tpot"] - 1) * 100}


def _search(m, g):
    """calibrated.c's serve --search at TP 4: the largest concurrency within
    0.5 s of the benchmark's TTFT and 50 ms TPOT, and with the TPOT limit
    alone, on the roofline and at TensorRT-LLM's H100 rates."""
    cal = data.calibrations()["published:h100_sxm/trtllm"]
    out = {"ch05_cal_search_ttft_max_ms": 500}
    for tag, c in (("roof", None), ("cal", cal)):
        for name, ttft_max in ((f"ch05_cal_search_c_{tag}", 0.5), (f"ch05_cal_search_tpot_only_c_{tag}", 0.0)):
            out[name] = request.best_concurrency(m, g, BF16, 4, 2048, 256, 0.05, cal=c, ttft_max=ttft_max,
                                                 ttft_model="bench")
    return out


BENCH_MODEL = "meta-llama/Llama-3.1-8B-Instruct"
BENCH_CONC = (8, 16, 32, 64, 128)  # the concurrencies NVIDIA measured
BENCH_PROMPT, BENCH_OUTPUT, BENCH_TIME_C = 1024, 512, 64
BENCH_SEED, BENCH_SPREAD = 5, 0.1  # bench_ttft.c's replay: seed 5, outputs 10 % apart, overheads exponential


def _bench(m, g):
    """bench_ttft.c: LLaMA-3.1-8B-Instruct bf16 on one H100 under
    TensorRT-LLM: its measured runs (the group's medians, the plotted
    slice), the benchmark's closed form at the engine's token budget and
    the overhead fitted on the fitting half of every engine's runs, the
    replayed benchmark (same seed: the same draws), and the held-out
    errors."""
    cals, rows = data.calibrations(), data.serving_runs()
    cal = cals["published:h100_sxm/trtllm"]
    v = validation.ttft_validation(rows, data.models(), data.gpus(), cals)
    h, budget = v["overhead"]["trtllm"], closed_loop.DEFAULT_BUDGET
    out = {"ch05_bench_overhead_ms": h * 1e3, "ch05_bench_budget": budget, "ch05_bench_prompt": BENCH_PROMPT,
           "ch05_bench_output": BENCH_OUTPUT, "ch05_bench_time_c": BENCH_TIME_C,
           "ch05_bench_t_requests": closed_loop.ROUNDS * BENCH_TIME_C}

    def est(c, roofline=False, departure_wait=False):
        return request.estimate(m, g, BF16, 1, BENCH_PROMPT, BENCH_OUTPUT, c, cal=None if roofline else cal,
                                ttft_model="bench",
                                bench={"budget": budget, "overhead": h, "departure_wait": departure_wait})

    def sim(e, c):
        return closed_loop.simulate(e["costs"], c, BENCH_PROMPT, BENCH_OUTPUT, budget=budget, overhead=h,
                                    seed=BENCH_SEED, spread=BENCH_SPREAD)

    group = [r for r in rows if r["model"] == BENCH_MODEL and r["system"] == "h100_sxm" and r["backend"] == "trtllm"]
    for c in BENCH_CONC:
        at = [r for r in group if int(r["concurrency"]) == c]
        ttft = statistics.median(float(r["ttft_s"]) for r in at)
        # the departure interval: a request's latency over the concurrency (Little's law)
        dep = statistics.median((float(r["ttft_s"]) + (int(r["osl"]) - 1) * float(r["tpot_s"])) / c for r in at)
        out.update({f"ch05_bench_c{c}_runs": len(at), f"ch05_bench_c{c}_ttft_ms": ttft * 1e3,
                    f"ch05_bench_c{c}_dep_ms": dep * 1e3, f"ch05_bench_c{c}_ratio": ttft / dep})
        run, = [r for r in at if int(r["isl"]) == BENCH_PROMPT and int(r["osl"]) == BENCH_OUTPUT and int(r["tp"]) == 1]
        e = est(c)
        reqs, _ = sim(e, c)
        pre = f"ch05_bench_s{c}_"
        out.update({pre + "measured_ms": float(run["ttft_s"]) * 1e3, pre + "closed_ms": e["ttft_closed"] * 1e3,
                    pre + "roof_ms": est(c, roofline=True)["ttft_closed"] * 1e3,
                    pre + "sim_ms": statistics.mean(r["first"] - r["sent"] for r in reqs) * 1e3,
                    pre + "dep_ms": e["bench"]["departure"] * 1e3,
                    pre + "held_out": "held out" if validation.held_out(run["id"]) else "fitted on"})
    e8, e64 = est(8), est(BENCH_TIME_C)
    out["ch05_bench_prefill_ms"] = e8["ttft"] * 1e3
    out["ch05_bench_s8_wait_ms"] = est(8, departure_wait=True)["ttft_closed"] * 1e3
    b = e64["bench"]
    out.update(ch05_bench_t_burst_ms=b["burst"] * 1e3, ch05_bench_t_steady_ms=b["steady"] * 1e3,
               ch05_bench_t_step_ms=b["step"] * 1e3, ch05_bench_t_arrivals=b["rate"] * b["step"])
    reqs, makespan = sim(e64, BENCH_TIME_C)
    x = [r["first"] - r["sent"] for r in reqs]
    srt = sorted(x)
    out.update(ch05_bench_t_sim_burst_ms=statistics.mean(x[:BENCH_TIME_C]) * 1e3,
               ch05_bench_t_sim_steady_ms=statistics.mean(x[BENCH_TIME_C:]) * 1e3,
               ch05_bench_t_sim_p50_ms=validation.quantile(srt, 0.50) * 1e3,
               ch05_bench_t_sim_p99_ms=validation.quantile(srt, 0.99) * 1e3, ch05_bench_t_makespan_s=makespan)
    grp = v["groups"][(BENCH_MODEL, "h100_sxm", "trtllm")]
    out.update(ch05_bench_val_runs=grp["answered"], ch05_bench_val_abs_pct=100 * grp["ttft_abs"],
               ch05_bench_val_bias_pct=100 * grp["ttft_bias"], ch05_bench_val_roof_abs_pct=100 * grp["ttft_roof_abs"],
               ch05_bench_val_all_abs_pct=100 * v["ttft_abs"], ch05_bench_val_all_runs=v["answered"],
               ch05_bench_val_all_roof_pct=100 * v["ttft_roof_abs"])
    return out


def _pct_text(x, decimals):
    return f"{100 * x:.{decimals}f}%"


def _latency_load(m, sheet):
    """latency_load.c: LLaMA-3-8B bf16 on one H100 at its published
    ceilings, requests of 512 prompt and 256 output tokens in batches run to
    completion, under Poisson load."""
    g = ceilings.at_published(sheet)
    prompt, output = 512, 256
    times = request.batch_times(m, g, BF16, 1, MAX_BATCH, prompt, output)
    out = {"ch05_read_tbs": g["mem_bw"] / 1e12, "ch05_gemm_tflops": ceilings.GEMM_BF16["h100"] / 1e12}
    for n in (1, 16, 32, 64):
        out[f"ch05_s{n}"] = times[n - 1]
    # the KV budget on the datasheet's memory (the driver's figure, the book's policy)
    plan = memory.plan(m, sheet, BF16, 1)
    out["ch05_kv_cap_768"] = memory.max_batch(plan, prompt + output)
    assert memory.max_batch(plan, prompt + output) >= MAX_BATCH  # every timed batch fits: the cap never binds
    tokens = memory.kv_token_capacity(plan)
    out["ch05_ctx_cap_32"] = math.floor(tokens / 32 / 1000) * 1000  # contexts "about", to the thousand below
    out["ch05_ctx_cap_16"] = math.floor(tokens / 16 / 1000) * 1000
    mu1, mu64 = queueing.capacity(times, 1), queueing.capacity(times, MAX_BATCH)
    mu32, mu16 = queueing.capacity(times, 32), queueing.capacity(times, 16)
    out.update(ch05_cap1=mu1, ch05_cap64=mu64, ch05_cap32=mu32, ch05_cap16=mu16, ch05_cap_gain=mu64 / mu1)

    seed = [SIM_SEED]

    def sim(lam, limit, window=0.0):
        seed[0] += 1
        return queueing.simulate(lam, times, limit, SIM_REQUESTS, SIM_REQUESTS // 10, seed[0], window)

    for pct in PCTS:
        lam = pct / 100 * mu64
        s = sim(lam, MAX_BATCH)
        pre = f"ch05_t{pct}_"
        out[pre + "lambda"] = lam
        out[pre + "time"] = s["mean_time"]
        out[pre + "p99"] = s["p99_time"]
        out[pre + "little"] = lam * s["mean_time"]
        out[pre + "l"] = s["in_system"]
        out[pre + "l_say"] = s["in_system"]  # the key numbers' rounding of the same mean
        out[pre + "lq"] = s["in_queue"]
        out[pre + "batch"] = s["mean_batch"]
        out[pre + "util"] = _pct_text(s["utilization"], 1)
        # one at a time at the same share of its own capacity: M/D/1, its
        # simulation checked against the closed form (TOL says how closely)
        md1 = queueing.md1(pct / 100 * mu1, mu1)["time"]
        out[pre + "md1_time"] = md1
        out[pre + "md1_sim"] = md1
    for tag, load in (("light", 0.025), ("heavy", 0.9)):
        a = sim(load * mu64, MAX_BATCH)
        b = sim(load * mu64, MAX_BATCH, window=0.5)
        out[f"ch05_w_{tag}_none"] = a["mean_time"]
        out[f"ch05_w_{tag}_window"] = b["mean_time"]
        out[f"ch05_w_{tag}_batch_none"] = a["mean_batch"]
        out[f"ch05_w_{tag}_batch_window"] = b["mean_batch"]
    # a whole number of requests/s between the capacities of the caps of 16 and 32
    lam = math.floor((mu32 + mu16) / 2)
    out["ch05_at_lambda"] = lam
    out["ch05_at_over_cap16"] = "more" if lam > mu16 else "less"
    for cap in (MAX_BATCH, 32):
        s = sim(lam, cap)
        out[f"ch05_at_time_{cap}"] = s["mean_time"]
        out[f"ch05_at_util_{cap}"] = _pct_text(s["utilization"], 0)
    return out


def derive():
    gp, mt = data.gpus(), data.models()
    out = {}
    out.update(_end_to_end(mt["llama3-70b"], gp["h100"]))
    out.update(_calibrated(mt["llama3-70b"], gp["h100"]))
    out.update(_search(mt["llama3-70b"], gp["h100"]))
    out.update(_bench(mt["llama3-8b"], gp["h100"]))
    out.update(_latency_load(mt["llama3-8b"], gp["h100"]))
    return out


# ---- the exercises' answers, from a variant's printed inputs ----


EX5_TOL = 0.05  # 5.6 counts replicas for a capacity known to 5 %


def practice(seed, inputs):
    gp, mt = data.gpus(), data.models()
    m8, m70, h100 = mt["llama3-8b"], mt["llama3-70b"], gp["h100"]
    v = {k: data.printed(t) for k, t in inputs.items()}
    out = {}
    # 1: Little's law: in flight = rate x time in system; their KV cache
    inflight = v["ch05_ex1_rate"] * v["ch05_ex1_latency"]
    out["5.1(a)"] = inflight
    out["5.1(b)"] = inflight * v["ch05_ex1_tokens"] * model.kv_bytes_per_token(m8, "bf16") / 1e9
    out["5.1(c)"] = 2 * inflight  # the latency doubles at the same traffic
    # 2: M/M/1 against M/D/1
    sv, lam = v["ch05_ex2_service"], v["ch05_ex2_rate"]
    mm, md = queueing.mg1(lam, sv, 1.0), queueing.mg1(lam, sv, 0.0)
    out["5.2(a)"] = mm["rho"]
    out["5.2(b1)"], out["5.2(b2)"] = mm["time"], md["time"]
    out["5.2(c1)"], out["5.2(c2)"] = mm["wait"], md["wait"]
    # 3: the highest rate for each mean-time target, fixed and exponential service
    sv = v["ch05_ex3_service"]
    rates = [queueing.mg1_max_rate(sv, cs2, t) for cs2 in (0.0, 1.0)
             for t in (v["ch05_ex3_near"], v["ch05_ex3_far"])]
    for pid, r in zip(("5.3(a1)", "5.3(a2)", "5.3(b1)", "5.3(b2)"), rates):
        out[pid] = r
    out["5.3(c1)"] = 100 * (1 - rates[0] * sv)
    out["5.3(c2)"] = 100 * (1 - rates[2] * sv)
    # 4: Pollaczek-Khinchine's wait with the drawn variation, none, and exponential's
    sv, cs2, lam = v["ch05_ex4_service"], v["ch05_ex4_cs2"], v["ch05_ex4_rate"]
    out["5.4(a)"] = queueing.mg1(lam, sv, cs2)["wait"]
    out["5.4(b1)"] = queueing.mg1(lam, sv, 0.0)["wait"]
    out["5.4(b2)"] = queueing.mg1(lam, sv, 1.0)["wait"]
    # 5: a replica running batches to completion, LLaMA-3-8B on one H100 at the datasheet's rates
    prompt, output = int(v["ch05_ex5_prompt"]), int(v["ch05_ex5_output"])
    batch, cap = int(v["ch05_ex5_batch"]), int(v["ch05_ex5_cap"])

    def t(n):
        return request.batch_time_summed(m8, h100, BF16, 1, n, prompt, output)

    t_b = t(batch)
    c_b, c_k, c_1 = batch / t_b, cap / t(cap), 1 / t(1)
    out["5.5(a1)"], out["5.5(a2)"], out["5.5(b)"], out["5.5(c)"] = t_b, c_b, c_k, c_1
    # 6: replicas to carry the rate with none above the load limit, for a
    # capacity known to 5 %: the middle of the counts of its two ends
    rate, load = v["ch05_ex6_rate"], v["ch05_ex6_load_pct"] / 100
    for pid, c in (("5.6(a)", c_b), ("5.6(b)", c_k), ("5.6(c)", c_1)):
        lo = math.ceil(rate / (load * c * (1 + EX5_TOL)) - 1e-9)
        hi = math.ceil(rate / (load * c * (1 - EX5_TOL)) - 1e-9)
        out[pid] = 0.5 * (lo + hi)
    # 8: cost per million output tokens, one in flight and many
    price, conc = v["ch05_ex8_price"], int(v["ch05_ex8_concurrency"])
    out["5.8(a)"] = request.estimate(m8, h100, BF16, 1, 1024, 512, 1, price=price)["cost_out"]
    out["5.8(b)"] = request.estimate(m8, h100, BF16, 1, 1024, 512, conc, price=price)["cost_out"]
    # 9: the longest prompt (to 256 tokens) whose prefill alone meets the budget; whole prompts and chunks
    budget = v["ch05_ex9_budget_ms"] * 1e-3
    longest = 0
    for n in range(256, 65537, 256):
        e = request.estimate(m8, h100, BF16, 1, n, 512, 1)
        if e["max_batch"] < 1 or e["ttft"] > budget:
            break
        longest = n
    out["5.9(a)"] = longest + 127.5  # judged as the 256 tokens past it: the range's middle
    conc, chunk = int(v["ch05_ex9_concurrency"]), int(v["ch05_ex9_chunk"])
    whole = request.estimate(m8, h100, BF16, 1, 1024, 512, conc)
    chunked = request.estimate(m8, h100, BF16, 1, 1024, 512, conc, chunk=chunk)
    out["5.9(b1)"], out["5.9(b2)"] = whole["ttft"] * 1e3, whole["tpot"] * 1e3
    out["5.9(b3)"], out["5.9(b4)"] = chunked["ttft"] * 1e3, chunked["tpot"] * 1e3
    # 10: LLaMA-3-70B at TP 2, 4, 8: the largest concurrency within the TPOT target, and GPU-seconds a request
    target, prompt = v["ch05_ex10_tpot_ms"] * 1e-3, int(v["ch05_ex10_prompt"])
    gs = []
    for i, tp in enumerate((2, 4, 8)):
        c = request.best_concurrency(m70, h100, BF16, tp, prompt, 512, target)
        out[f"5.10(a{i + 1})"] = c
        g = request.gpu_seconds_per_request(request.estimate(m70, h100, BF16, tp, prompt, 512, c), tp, c)
        out[f"5.10(b{i + 1})"] = g
        gs.append(g)
    out["5.10(c)"] = (2, 4, 8)[gs.index(min(gs))]
    return out
