"""The serving model judged on published runs (chapter 2;
code/specs/measured/serving_runs.tsv).  Each run with pp 1 of a model the
table holds is priced twice, on the roofline and at the calibration of the
engine that served it (the kernel tables, never the runs; the GPU's default,
TensorRT-LLM's, where the engine has none), its memory planned by the
engine's own policy (lib/memory.engine_policy) and scheduled as the engine
schedules (prefill first for SGLang, lib/closed_loop.py); a run whose KV
cache holds fewer than C requests runs the ones it holds and queues the rest
(lib/request.py), and one that holds none is not priced.  "fp8" runs hold
fp8 weights, GEMMs and KV cache (activations stay bf16).  Errors are
predicted / measured - 1; TTFT is the closed-loop benchmark's (no
overhead).  A group is (model, system, backend, precision, tp); its figures
are medians (of an even count, the mean of the middle two)."""
import statistics

from lib import closed_loop, memory, request
from lib.model import Precision

MODEL_KEYS = {"llama-3.1-8b-instruct-fp8": "llama3-8b", "llama-3.1-8b-instruct": "llama3-8b",
              "llama-3.1-8b": "llama3-8b", "llama-3.1-70b": "llama3-70b", "qwen3-32b": "qwen3-32b"}
GPU_OF_SYSTEM = {"h100_sxm": "h100", "h200_sxm": "h200"}


def model_key(name):
    return MODEL_KEYS.get(name.rpartition("/")[2].lower())


def calibration_for(cals, system, backend):
    c = cals.get(f"published:{system}/{backend}")
    return c if c else cals[f"published:{system.split('_')[0]}_sxm/trtllm"]


def precision_of(text):
    return Precision("fp8", kv="fp8", act="bf16", compute="fp8") if text == "fp8" else Precision.uniform("bf16")


def run_residual(row, models, gpus, cals):
    """The run's errors, or None when it is not priced."""
    key = model_key(row["model"])
    if key is None or int(row["pp"]) != 1:
        return None
    m, g = models[key], gpus[GPU_OF_SYSTEM.get(row["system"], "h100")]
    prec = precision_of(row["precision"])
    tp, P, O, C = int(row["tp"]), int(row["isl"]), int(row["osl"]), int(row["concurrency"])
    pol = memory.engine_policy(row["backend"], m, g, prec, tp)
    first = closed_loop.prefill_first(row["backend"])
    bench = {"prefill_first": first, "mixed": not first}  # the others batch in flight (request.h)
    er = request.estimate(m, g, prec, tp, P, O, C, policy=pol, ttft_model="bench", bench=bench)
    if er["running"] < 1:
        return {"row": row, "priced": False}
    cal = calibration_for(cals, row["system"], row["backend"])
    ec = request.estimate(m, g, prec, tp, P, O, C, cal=cal, policy=pol, ttft_model="bench", bench=bench)
    tpot, ttft = float(row["tpot_s"]), float(row["ttft_s"])
    return {"row": row, "priced": True, "tpot_err_roofline": er["tpot"] / tpot - 1, "tpot_err": ec["tpot"] / tpot - 1,
            "ttft_err": ec["ttft_closed"] / ttft - 1, "estimate": ec}


def serving_groups(rows, models, gpus, cals):
    """(model, system, backend, precision, tp) -> runs, priced, and the
    medians tpot_err_roofline, tpot_err, tpot_abs_err, ttft_err."""
    groups = {}
    for row in rows:
        r = run_residual(row, models, gpus, cals)
        if r is None:
            continue
        k = (row["model"], row["system"], row["backend"], row["precision"], int(row["tp"]))
        groups.setdefault(k, []).append(r)
    out = {}
    for k, rs in groups.items():
        p = [r for r in rs if r["priced"]]
        med = (lambda xs: statistics.median(xs) if xs else float("nan"))
        out[k] = {"runs": len(rs), "priced": len(p),
                  "tpot_err_roofline": med([r["tpot_err_roofline"] for r in p]),
                  "tpot_err": med([r["tpot_err"] for r in p]),
                  "tpot_abs_err": med([abs(r["tpot_err"]) for r in p]),
                  "ttft_err": med([r["ttft_err"] for r in p])}
    return out


# ---- the error band of a calibrated answer (code/napkin/calib/band.h) ----
# Held-out runs (FNV-1a-64 of the run's id odd) like the question: same
# engine, model class by parameters (< 20 B, 20-50 B, > 50 B), concurrency
# (1-16, 17-64, 65+), op mix (prompt >= 8 x output, or not).  A run's miss
# is measured / answered - 1; the band is its 10th to 90th percentile
# (linear between order statistics), none below 8 runs.

BAND_MIN_RUNS = 8


def held_out(run_id):
    h = 14695981039346656037
    for b in run_id.encode():
        h = ((h ^ b) * 1099511628211) % (1 << 64)
    return h & 1 == 1


def band_regime(engine, m, concurrency, prompt, output):
    from lib import model
    if m["experts"] > 1 or "mla" in m["arch"]:
        return None
    p = model.params(m)["total"]
    cls = 0 if p < 20e9 else 1 if p <= 50e9 else 2
    conc = 0 if concurrency <= 16 else 1 if concurrency <= 64 else 2
    mix = 0 if output > 0 and prompt >= 8 * output else 1
    return (engine, cls, conc, mix)


def quantile(sorted_values, q):
    n = len(sorted_values)
    pos = q * (n - 1)
    i = int(pos)
    if i >= n - 1:
        return sorted_values[-1]
    return sorted_values[i] + (pos - i) * (sorted_values[i + 1] - sorted_values[i])


def band_runs(rows, models, gpus, cals):
    """[(regime, residual)] of the held-out priced runs."""
    out = []
    for row in rows:
        r = run_residual(row, models, gpus, cals)
        if not r or not r["priced"] or not held_out(row["id"]):
            continue
        q = band_regime(row["backend"], models[model_key(row["model"])], int(row["concurrency"]), int(row["isl"]),
                        int(row["osl"]))
        if q:
            out.append((q, r))
    return out


def tpot_band(runs, regime):
    """(lo, hi) of the TPOT's misses in the regime, or None."""
    miss = sorted(1 / (1 + r["tpot_err"]) - 1 for q, r in runs if q == regime)
    if len(miss) < BAND_MIN_RUNS:
        return None
    return quantile(miss, 0.10), quantile(miss, 0.90)


# ---- the benchmark's TTFT on held-out runs (code/napkin/calib/validate_ttft.h) ----
# Each run with pp 1 of a model the table holds, on a system and engine
# with a calibration of its own, that fits memory (the book's policy) is
# priced by the closed-loop benchmark (lib/closed_loop.py) at the default
# token budget, scheduled as its engine schedules (prefill first or not),
# calibrated and on the roofline.  The one parameter fitted on
# serving runs is each engine's per-request overhead h, on the runs whose
# id hashes even: the h minimising sum |a + b h - m| / m, the TTFT
# linearised in h (a, b from h0 and h0 + 10 ms: the steady state's rate
# depends on h) at h0 = 0 and again at the first fit; that is the weighted
# median of (m - a) / b with weights b / m (the first h whose running weight
# reaches half the total), never below 0.  Every figure is on the odd half:
# medians of |predicted / measured - 1| and of the signed error.

TTFT_ENGINES = ("trtllm", "vllm", "sglang")
LINEARISE_STEP = 10e-3


def _ttft_run(row, models, gpus, cals):
    """The run as validate_ttft prices it, or None when it is not answered."""
    key = model_key(row["model"])
    cal = cals.get(f"published:{row['system']}/{row['backend']}")
    if key is None or int(row["pp"]) != 1 or row["backend"] not in TTFT_ENGINES or cal is None:
        return None
    m, g = models[key], gpus["h200" if row["system"] == "h200_sxm" else "h100"]
    prec = precision_of(row["precision"])
    tp, P, O, C = int(row["tp"]), int(row["isl"]), int(row["osl"]), int(row["concurrency"])
    if not memory.fits(memory.plan(m, g, prec, tp), C, P + O):
        return None

    first = closed_loop.prefill_first(row["backend"])

    def ttft(h, roofline=False):
        return request.estimate(m, g, prec, tp, P, O, C, cal=None if roofline else cal, ttft_model="bench",
                                bench={"overhead": h, "prefill_first": first, "mixed": not first})["ttft_closed"]

    tpot = request.estimate(m, g, prec, tp, P, O, C, cal=cal, ttft_model="bench",
                            bench={"prefill_first": first, "mixed": not first})["tpot"]
    return {"row": row, "ttft": ttft, "measured": float(row["ttft_s"]), "held_out": held_out(row["id"]),
            "tpot_err": tpot / float(row["tpot_s"]) - 1}


def fit_overhead(runs):
    """The engine's h from its fitting runs (see above)."""
    h = 0.0
    for _ in range(2):
        pts = []
        for r in runs:
            t0, t1 = r["ttft"](h), r["ttft"](h + LINEARISE_STEP)
            b = (t1 - t0) / LINEARISE_STEP
            if b > 0:
                a = t0 - b * h
                pts.append(((r["measured"] - a) / b, b / r["measured"]))
        pts.sort(key=lambda x: x[0])
        total, acc, h = sum(w for _, w in pts), 0.0, 0.0
        for x, w in pts:
            acc += w
            if acc >= total / 2:
                h = x
                break
        h = max(h, 0.0)
    return h


def ttft_validation(rows, models, gpus, cals):
    """{"overhead": engine -> h, "groups": (model, system, backend) ->
    {answered, ttft_abs, ttft_bias, ttft_roof_abs}, and over every group:
    answered, ttft_abs, ttft_roof_abs}."""
    runs = [r for r in (_ttft_run(row, models, gpus, cals) for row in rows) if r]
    h = {e: fit_overhead([r for r in runs if r["row"]["backend"] == e and not r["held_out"]]) for e in TTFT_ENGINES}
    held = []
    for r in runs:
        if r["held_out"]:
            hh = h[r["row"]["backend"]]
            held.append((r, r["ttft"](hh) / r["measured"] - 1, r["ttft"](hh, True) / r["measured"] - 1))

    def figures(sel):
        return {"answered": len(sel), "ttft_abs": statistics.median(abs(e) for _, e, _ in sel),
                "ttft_bias": statistics.median(e for _, e, _ in sel),
                "ttft_roof_abs": statistics.median(abs(f) for _, _, f in sel)}

    groups = {}
    for x in held:
        row = x[0]["row"]
        groups.setdefault((row["model"], row["system"], row["backend"]), []).append(x)
    out = figures(held)
    out.update(overhead=h, groups={k: figures(v) for k, v in groups.items()})
    return out
