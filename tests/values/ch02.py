"""Chapter 2, measure it: the values of build/values/ch02/ derived again
from the committed CPU set (figures/measured/cpu-intel-xeon-processor-2c/),
code/specs/gpus.tsv, models.tsv, calibrations.tsv, the published kernel
tables and serving runs (code/specs/measured/) and the formulas of lib/:
the roofline and the calibrated rates, the published rows as the rate
model's points and a refit of it on half the GEMM table (lib/published.py,
lib/fit.py), the closed-loop request model with the benchmark's TTFT
(lib/request.py, lib/closed_loop.py) and the held-out error bands
(lib/validation.py); see tests/values/README.md."""
import data
from lib import calibrated, ceilings, fit, gemm, memory, model, published, request, roofline, step, validation
from lib.model import Precision

GB, KB, MiB, TB, TERA = 1e9, 1e3, 1024.0 * 1024.0, 1e12, 1e12
BF16 = Precision.uniform("bf16")
CPU_SET = "cpu-intel-xeon-processor-2c"

ECHOED = {
    # the committed CPU set's provenance and STREAM figures, as its headers and rows state them
    "ch02_cpu_device", "ch02_cpu_cores", "ch02_cpu_threads", "ch02_cpu_date", "ch02_cpu_blas", "ch02_cpu_loadavg",
    *(f"ch02_cpu_{k}_gbs" for k in ("copy", "read", "write", "triad")),            # stream.tsv gb_s
    *(f"ch02_cpu_{k}_best_gbs" for k in ("copy", "read", "write", "triad")),       # stream.tsv best_gb_s
    "ch02_cpu_ceiling_gbs",                       # gemm.tsv's bandwidth_measured
    "ch02_cpu_n", "ch02_cpu_k", "ch02_cpu_max_m", "ch02_cpu_points",  # the sweep's shape and size
    *(f"ch02_cpu_m{m}_meas_ms" for m in (1, 8, 32, 64, 128, 256, 512, 1024)),  # gemm.tsv time_s
    # lib/ceilings.py's published H200 figures and gpus.tsv's rows, as printed
    "ch02_gpu_h200_read_tbs", "ch02_gpu_h200_copy_tbs", "ch02_gpu_h200_gemm_tflops",
    "ch02_gpu_h200_sheet_tbs", "ch02_gpu_bf16_tflops",
    # no GPU set is committed under figures/measured/ (only CPU sets): the chapter says so
    "ch02_gpu_set", "ch02_gpu_gemv_set", "ch02_gpu_attn_ceiling", "ch02_gpu_attn_points", "ch02_gpu_gemv_points",
    # the engine versions the published kernel tables' and serving runs' headers and rows name
    "ch02_pub_kernels_trtllm_version", "ch02_pub_kernels_vllm_version", "ch02_pub_runs_trtllm_version",
    "ch02_pub_runs_vllm_version",
    # calibrations.tsv's fitted parameters of published:h100_sxm/trtllm and h200, as printed
    "ch02_pub_gemm_t0_us", "ch02_pub_gemm_flop_pct", "ch02_pub_gemm_byte_pct", "ch02_pub_gemm_blend",
    "ch02_pub_gemm_fp8_t0_us", "ch02_pub_gemm_fp8_flop_pct", "ch02_pub_h200_gemm_byte_pct",
    "ch02_pub_attn_t0_us", "ch02_pub_attn_item_ns", "ch02_pub_attn_byte_pct", "ch02_pub_attn_long_us",
    "ch02_pub_prefill_t0_us", "ch02_pub_prefill_flop_pct", "ch02_pub_prefill_item_ns",
    "ch02_pub_ar8_lat1_us", "ch02_pub_ar8_bw1_gbs", "ch02_pub_ar8_lat2_us", "ch02_pub_ar8_bw2_gbs",
    "ch02_pub_attn_tile",                         # the 128 positions one decode attention tile holds
    # the published tables' measured times, as printed
    "ch02_pub_gemm_m1_meas_us", "ch02_pub_attn_128_meas_us", "ch02_pub_attn_32k_meas_us",
    "ch02_pub_ar_512k_meas_us",
    # the printed book's exercise variant (seed 0): its drawn inputs
    "ch02_ex1_copy_ms", "ch02_ex1_read_ms", "ch02_ex2_size", "ch02_ex2_tp", "ch02_ex2_k",
    "ch02_ex3_tp", "ch02_ex3_n", "ch02_ex3_batch", "ch02_ex5_read_mb", "ch02_ex5_us",
    "ch02_ex4_bw_pct", "ch02_ex4_peak_pct",
    *(f"ch02_ex4_m{m}_{c}" for m in (1, 64, 128, 256, 512) for c in ("pred", "meas")),  # 2.4's table
    "ch02_ex7_launch_us", "ch02_ex7_work_us", "ch02_ex6_context", "ch02_ex6_batch",
}

MEASURED = set()  # the CPU set is committed data; chapter 2's programs time nothing

# Counts exactly: the default rule's one unit in the last place would let an
# off-by-one pass.  Every other value to its printed precision.
TOL = {n: ("abs", 0) for n in ("ch02_pub_8b_runs", "ch02_pub_8b_banded_runs", "ch02_pub_8b_inside_band",
                               "ch02_pub_70b_best_tp_roof", "ch02_pub_70b_best_tp_cal", "ch02_pub_70b_best_c_roof",
                               "ch02_pub_70b_best_c_cal")}


def _cpu():
    out = {}
    smeta, srows = data.committed_set(CPU_SET, "stream")
    gmeta, grows = data.committed_set(CPU_SET, "gemm")
    out["ch02_cpu_device"] = smeta["device"]
    out["ch02_cpu_cores"] = smeta["cores"]
    out["ch02_cpu_threads"] = smeta["threads"]
    out["ch02_cpu_date"] = gmeta["date"][:10]
    out["ch02_cpu_blas"] = gmeta["blas"].split(";")[0].strip()
    out["ch02_cpu_loadavg"] = gmeta["loadavg"][:4]
    out["ch02_cpu_llc_mib"] = float(smeta["llc_bytes"]) / MiB
    out["ch02_cpu_stream_mib"] = float(srows[0]["array_bytes"]) / MiB
    stream = {r["kernel"]: r for r in srows}
    for k in ("copy", "read", "write", "triad"):
        out[f"ch02_cpu_{k}_gbs"] = float(stream[k]["gb_s"])
        out[f"ch02_cpu_{k}_best_gbs"] = float(stream[k]["best_gb_s"])
    stream_read = float(stream["read"]["gb_s"]) * GB
    bw = float(gmeta["bandwidth_measured"])  # the ceiling the sweep chose
    out["ch02_cpu_ceiling_is_gemv"] = "yes" if bw > stream_read * 1.000001 else "no"
    # the sweep: the rows of the file's last shape (the square), fp32 in and out
    shape = grows[-1]["shape"]
    sw = [r for r in grows if r["shape"] == shape]
    ms, ts = [float(r["m"]) for r in sw], [float(r["time_s"]) for r in sw]
    n, k, e = int(sw[0]["n"]), int(sw[0]["k"]), 4.0
    out["ch02_cpu_n"], out["ch02_cpu_k"], out["ch02_cpu_points"], out["ch02_cpu_max_m"] = n, k, len(sw), ms[-1]
    rates = [gemm.work(m, n, k, e, e)[0] / t for m, t in zip(ms, ts)]
    peak = max(rates)
    out["ch02_cpu_peak_gflops"] = peak / 1e9
    out["ch02_cpu_peak_m"] = ms[rates.index(peak)]
    out["ch02_cpu_ceiling_gbs"] = bw / GB
    out["ch02_cpu_ridge"] = roofline.ridge(peak, bw)
    out["ch02_cpu_knee_pred"] = gemm.knee_batch(n, k, e, e, peak, bw)
    out["ch02_cpu_knee_meas"] = gemm.measured_knee(ts[0], ms[-1], ts[-1])
    out["ch02_cpu_weight_mib"] = n * k * e / MiB
    pred = [gemm.predicted_time(m, n, k, e, e, peak, bw) for m in ms]
    es = gemm.error_summary([p for p, _ in pred], ts)
    out["ch02_cpu_err_median"] = 100 * es["median_abs"]
    out["ch02_cpu_err_worst"] = 100 * es["worst_abs"]
    out["ch02_cpu_err_mean"] = 100 * es["mean"]
    out["ch02_cpu_target"] = "met" if es["median_abs"] <= 0.25 else "not met"  # median |error| within 25 %
    for bound in ("memory", "compute"):
        pairs = [(p, t) for (p, b), t in zip(pred, ts) if b == bound]
        out[f"ch02_cpu_err_{bound}_median"] = 100 * gemm.error_summary(*zip(*pairs))["median_abs"]
        out[f"ch02_cpu_points_{bound}"] = len(pairs)
    m1_bytes = gemm.work(ms[0], n, k, e, e)[1]
    out["ch02_cpu_m1_gbs"] = m1_bytes / ts[0] / GB
    out["ch02_cpu_m1_pct_read"] = 100 * m1_bytes / ts[0] / bw
    tg = float(next(r for r in grows if r["shape"].startswith("gemv"))["time_s"])  # the BLAS's own GEMV
    out["ch02_cpu_gemv_gbs"] = m1_bytes / tg / GB
    out["ch02_cpu_gemv_pct_read"] = 100 * m1_bytes / tg / bw
    out["ch02_cpu_gemv_speedup"] = ts[0] / tg
    out["ch02_cpu_gemv_err"] = 100 * abs(gemm.relative_error(pred[0][0], tg))
    for m in (1, 8, 32, 64, 128, 256, 512, 1024):
        i = ms.index(m)
        out[f"ch02_cpu_m{m}_meas_ms"] = ts[i] * 1e3
        out[f"ch02_cpu_m{m}_pred_ms"] = pred[i][0] * 1e3
        out[f"ch02_cpu_m{m}_err"] = 100 * gemm.relative_error(pred[i][0], ts[i])
        out[f"ch02_cpu_m{m}_bound"] = pred[i][1]
        out[f"ch02_cpu_m{m}_gflops"] = gemm.work(m, n, k, e, e)[0] / ts[i] / 1e9
    return out


def _gpu(gp, mt):
    out = {}
    h100, h200 = gp["h100"], gp["h200"]
    pub = ceilings.BABELSTREAM["h200"]
    read, copy, gemm_pub = pub["read"], pub["copy"], ceilings.GEMM_BF16["h200"]
    p100, p200 = h100["flops"]["bf16"], h200["flops"]["bf16"]
    n = k = 8192
    out["ch02_gpu_h200_read_tbs"] = read / TB
    out["ch02_gpu_h200_copy_tbs"] = copy / TB
    out["ch02_gpu_h200_gemm_tflops"] = gemm_pub / TERA
    out["ch02_gpu_h200_sheet_tbs"] = h200["mem_bw"] / TB
    out["ch02_gpu_bf16_tflops"] = p200 / TERA
    out["ch02_gpu_ridge_h100"] = roofline.ridge(p100, h100["mem_bw"])
    out["ch02_gpu_ridge_h200"] = roofline.ridge(p200, h200["mem_bw"])
    out["ch02_gpu_knee_h100"] = gemm.knee_batch(n, k, 2, 2, p100, h100["mem_bw"])
    out["ch02_gpu_knee_h200"] = gemm.knee_batch(n, k, 2, 2, p200, h200["mem_bw"])
    out["ch02_gpu_ridge_h200_pub"] = roofline.ridge(gemm_pub, read)
    out["ch02_gpu_knee_h200_pub"] = gemm.knee_batch(n, k, 2, 2, gemm_pub, read)
    out["ch02_gpu_h200_read_pct"] = 100 * read / h200["mem_bw"]
    out["ch02_gpu_h200_copy_pct"] = 100 * copy / h200["mem_bw"]
    out["ch02_gpu_h200_gemm_pct"] = 100 * gemm_pub / p200
    for m in (1, 4096):
        ds = gemm.predicted_time(m, n, k, 2, 2, p200, h200["mem_bw"])[0]
        pb = gemm.predicted_time(m, n, k, 2, 2, gemm_pub, read)[0]
        out[f"ch02_gpu_h200_m{m}_us_ds"] = ds * 1e6
        out[f"ch02_gpu_h200_m{m}_us_pub"] = pb * 1e6
        out[f"ch02_gpu_h200_m{m}_shift"] = 100 * (pb / ds - 1)
    m8, m70 = mt["llama3-8b"], mt["llama3-70b"]
    out["ch02_group_8b"] = m8["heads"] // m8["kv_heads"]
    out["ch02_group_70b"] = m70["heads"] // m70["kv_heads"]
    # no GPU set among figures/measured/ (every committed set is a CPU's)
    out["ch02_gpu_set"] = out["ch02_gpu_gemv_set"] = "none yet"
    out["ch02_gpu_attn_ceiling"] = f"published read {read / TB:.2f} TB/s (no measured GPU set)"
    # decode attention over one layer's cache: K and V bytes over the read ceiling
    per_layer = model.kv_bytes_per_token(m8, "bf16") / m8["layers"]
    plan = memory.plan(m8, h200, BF16, 1)
    fits16 = [c for c in (1024 << i for i in range(8)) if memory.fits(plan, 16, c)]
    out["ch02_gpu_attn_b16_max_fit_k"] = (max(fits16) if fits16 else 0) // 1024
    out["ch02_gpu_attn_32k_us_pub"] = per_layer * 32768 / read * 1e6
    out["ch02_gpu_attn_32k_85_us"] = per_layer * 32768 / read / 0.85 * 1e6
    out["ch02_gpu_kv_layer_token_kb"] = per_layer / KB
    out["ch02_gpu_attn_1k_us"] = per_layer * 1024 / h200["mem_bw"] * 1e6
    for b in (1, 8):
        out[f"ch02_gpu_gemv_b{b}_bound"] = gemm.predicted_time(b, n, k, 2, 2, gemm_pub, read)[1]
    return out


def _fitted(cal100, cal200, h100):
    """The fitted parameters as printed, and the calibrated ridge."""
    g, d, p = cal100["ops"]["gemm_bf16"], cal100["ops"]["attn_decode_bf16"], cal100["ops"]["attn_prefill"]
    out = {"ch02_pub_gemm_t0_us": g["t0"] * 1e6, "ch02_pub_gemm_flop_pct": g["flop_frac"] * 100,
           "ch02_pub_gemm_byte_pct": g["byte_frac"] * 100, "ch02_pub_gemm_blend": g["blend"],
           "ch02_pub_gemm_fp8_t0_us": cal100["ops"]["gemm_fp8"]["t0"] * 1e6,
           "ch02_pub_gemm_fp8_flop_pct": cal100["ops"]["gemm_fp8"]["flop_frac"] * 100,
           "ch02_pub_h200_gemm_byte_pct": cal200["ops"]["gemm_bf16"]["byte_frac"] * 100,
           "ch02_pub_attn_t0_us": d["t0"] * 1e6, "ch02_pub_attn_item_ns": d["t_item"] * 1e9,
           "ch02_pub_attn_byte_pct": d["byte_frac"] * 100, "ch02_pub_attn_long_us": d["t_long"] * 1e6,
           "ch02_pub_attn_tile": calibrated.SHORT_SPAN,
           "ch02_pub_prefill_t0_us": p["t0"] * 1e6, "ch02_pub_prefill_flop_pct": p["flop_frac"] * 100,
           "ch02_pub_prefill_item_ns": p["t_item"] * 1e9}
    # one sequence of 8 KV heads: the serial tail reads one head's bytes at
    # item_frac, the whole read all 8 heads' at byte_frac
    out["ch02_pub_attn_tail_b1_pct"] = d["byte_frac"] / (8 * d["item_frac"]) * 100 if d["item_frac"] > 0 else 0
    l1, b1, l2, b2 = cal100["allreduce"][8]
    out.update({"ch02_pub_ar8_lat1_us": l1 * 1e6, "ch02_pub_ar8_bw1_gbs": b1 / 1e9,
                "ch02_pub_ar8_lat2_us": l2 * 1e6, "ch02_pub_ar8_bw2_gbs": b2 / 1e9})
    pk = h100["flops"]["bf16"]
    out["ch02_pub_ridge_roof"] = pk / h100["mem_bw"]
    # where flop/(f_c P) meets bytes/(f_b beta)
    out["ch02_pub_ridge_cal"] = g["flop_frac"] * pk / (g["byte_frac"] * h100["mem_bw"])
    return out


def _kernels(cal, h100, m8):
    """The published H100 tables against the roofline and the calibration."""
    out = {}
    pk, bw = h100["flops"]["bf16"], h100["mem_bw"]
    N = K = 8192
    for r in data.measured("h100_sxm", "trtllm", "gemm"):
        if r["dtype"] != "bf16" or float(r["n"]) != N or float(r["k"]) != K:
            continue
        m, tm = float(r["m"]), float(r["time_s"])
        flop, nbytes = 2 * m * K * N, 2 * K * N + 2 * m * (K + N)  # weight once, X in and Y out
        tr = roofline.roofline_time(flop, nbytes, pk, bw)[0]
        tc = calibrated.price_compute(cal, "gemm_bf16", flop, nbytes, 0, 0, pk, bw, 1.0)
        if m == 1:
            out.update({"ch02_pub_gemm_m1_meas_us": tm * 1e6, "ch02_pub_gemm_m1_roof_us": tr * 1e6,
                        "ch02_pub_gemm_m1_cal_us": tc * 1e6, "ch02_pub_gemm_m1_gap": (tm / tr - 1) * 100})
        if m == 8192:
            out["ch02_pub_gemm_m8192_meas_tflops"] = flop / tm / 1e12
            out["ch02_pub_gemm_m8192_gap"] = (tm / tr - 1) * 100
    # decode attention of LLaMA-3-8B's one-GPU shape at batch 8: the two
    # halves of the fused kernel as the step model writes them
    for r in data.measured("h100_sxm", "trtllm", "attention_decode"):
        if (float(r["batch"]), float(r["heads"]), float(r["kv_heads"]), float(r["head_dim"]), r["kv_dtype"]) != \
                (8, 32, 8, 128, "bf16"):
            continue
        ctx, tm = float(r["context"]), float(r["time_s"])
        if ctx not in (128, 32768):
            continue
        ops = [op for op in model.step_ops(m8, 8, int(ctx) - 1, 1, BF16) if op["kind"] == "attention"]
        tr = tc = nbytes = 0.0
        for op in ops:
            b = op["w"] + op["kv"] + op["act"]
            nbytes += b
            tr += roofline.roofline_time(op["flop"], b, pk, bw)[0]
            tc += calibrated.price_compute(cal, op["cls"], op["flop"], b, op["items"], op["span"], pk, bw, op["share"])
        if ctx == 128:
            out["ch02_pub_attn_128_meas_us"] = tm * 1e6
            out["ch02_pub_attn_128_roof_us"] = tr * 1e6
        else:
            out.update({"ch02_pub_attn_32k_meas_us": tm * 1e6, "ch02_pub_attn_32k_roof_us": tr * 1e6,
                        "ch02_pub_attn_32k_cal_us": tc * 1e6, "ch02_pub_attn_32k_meas_tbs": nbytes / tm / 1e12})
    # TensorRT-LLM's all-reduce at TP 8, a decode step's message at batch 64
    # of LLaMA-3-8B (64 x 4096 x 2 B), against the ring of the GPU table
    for r in data.measured("h100_sxm", "trtllm", "allreduce"):
        if r["implementation"] == "trtllm" and int(r["tp"]) == 8 and float(r["bytes"]) == 524288:
            out["ch02_pub_ar_512k_meas_us"] = float(r["time_s"]) * 1e6
            out["ch02_pub_ar_512k_ring_us"] = roofline.allreduce_time(h100, 8, 524288) * 1e6
    return out


def _step(cal, h100, m8):
    """LLaMA-3-8B's decode step on one H100, batch 64 at 2k: the roofline,
    the achieved shares alone (no fixed costs) and the whole calibration."""
    shares = {"gpu": cal["gpu"], "allreduce": cal["allreduce"],
              "ops": {c: dict(r, t0=0.0, t_item=0.0) for c, r in cal["ops"].items()}}
    a = step.step_cost(m8, h100, 64, 2048, 1, BF16)
    b = step.step_cost(m8, h100, 64, 2048, 1, BF16, cal=shares)
    c = step.step_cost(m8, h100, 64, 2048, 1, BF16, cal=cal)
    # kernels: one per op, the two halves of attention one fused kernel
    kernels = sum(op["reps"] for op in a["ops"] if op["kind"] != "attention") + \
        sum(op["reps"] for op in a["ops"] if op["kind"] == "attention") // 2
    return {"ch02_pub_step_roof_ms": a["time"] * 1e3, "ch02_pub_step_shares_ms": b["time"] * 1e3,
            "ch02_pub_step_cal_ms": c["time"] * 1e3, "ch02_pub_step_gap": (c["time"] / a["time"] - 1) * 100,
            "ch02_pub_step_fixed_ms": (c["time"] - b["time"]) * 1e3,
            "ch02_pub_step_fixed_share": (c["time"] - b["time"]) / (c["time"] - a["time"]) * 100,
            "ch02_pub_step_kernels": kernels,
            "ch02_pub_step_tps_roof": 64 / a["time"], "ch02_pub_step_tps_cal": 64 / c["time"]}


def _achieved():
    """The fastest GEMM of each dtype in the TensorRT-LLM H100 table as a
    share of the dense peak, and the engine versions the tables name."""
    h100 = data.gpus()["h100"]
    rows = data.measured("h100_sxm", "trtllm", "gemm")
    out = {}
    for dt, name in (("bf16", "ch02_pub_gemm_best_pct"), ("fp8", "ch02_pub_gemm_fp8_best_pct")):
        best = max(2 * float(r["m"]) * float(r["n"]) * float(r["k"]) / float(r["time_s"]) for r in rows
                   if r["dtype"] == dt)
        out[name] = 100 * best / h100["flops"][dt]
    meta = data.table_meta
    out["ch02_pub_kernels_trtllm_version"] = meta(data.repo_path(
        "code/specs/measured/h100_sxm/trtllm/gemm.tsv"))["backend_version"]
    out["ch02_pub_kernels_vllm_version"] = meta(data.repo_path(
        "code/specs/measured/h100_sxm/vllm/attention_decode.tsv"))["backend_version"]
    runs = data.serving_runs()
    out["ch02_pub_runs_trtllm_version"] = next(r["backend_version"] for r in runs
                                               if r["backend"] == "trtllm" and r["model"] == LLAMA8)
    out["ch02_pub_runs_vllm_version"] = next(r["backend_version"] for r in runs
                                             if r["backend"] == "vllm" and r["backend_version"] != "-")
    return out


def _serving_shapes():
    """The LLaMA-3.1-8B runs' range of prompts, outputs and concurrencies."""
    rows = [r for r in data.serving_runs() if r["model"] == "meta-llama/Llama-3.1-8B-Instruct"
            and r["system"] == "h100_sxm" and r["backend"] == "trtllm"]
    out = {}
    for what, col in (("prompt", "isl"), ("output", "osl"), ("concurrency", "concurrency")):
        vals = [int(r[col]) for r in rows]
        out[f"ch02_pub_8b_{what}_min"], out[f"ch02_pub_8b_{what}_max"] = min(vals), max(vals)
    return out


LLAMA8 = "meta-llama/Llama-3.1-8B-Instruct"
LLAMA70 = "meta-llama/Llama-3.1-70B"


def _serving_runs(gp, mt, cals):
    """The published serving runs against the serving model, both ways."""
    out = {}
    cal, h100, m8 = cals["published:h100_sxm/trtllm"], gp["h100"], mt["llama3-8b"]
    for r in data.serving_runs():
        if (r["model"], r["system"], r["backend"]) != (LLAMA8, "h100_sxm", "trtllm"):
            continue
        tp, P, O, C = (int(r[c]) for c in ("tp", "isl", "osl", "concurrency"))
        if tp == 1 and C == 8 and P == 1024:  # TTFT against the output length
            e = request.estimate(m8, h100, BF16, tp, P, O, C, cal=cal, ttft_model="bench")
            out[f"ch02_pub_ttft_c8_o{O}_ms"] = float(r["ttft_s"]) * 1e3
            out[f"ch02_pub_ttft_c8_o{O}_model_ms"] = e["ttft_closed"] * 1e3
    # the band each calibrated TPOT carries: held-out runs like it
    held = validation.band_runs(data.serving_runs(), mt, gp, cals)
    banded = inside = 0
    for r in data.serving_runs():
        if (r["model"], r["system"], r["backend"]) != (LLAMA8, "h100_sxm", "trtllm"):
            continue
        tp, P, O, C = (int(r[c]) for c in ("tp", "isl", "osl", "concurrency"))
        band = validation.tpot_band(held, validation.band_regime("trtllm", m8, C, P, O))
        if band:
            t = request.estimate(m8, h100, BF16, tp, P, O, C, cal=cal, ttft_model="bench",
                                 bench={"mixed": True})["tpot"]  # TensorRT-LLM batches in flight
            banded += 1
            inside += t * (1 + band[0]) <= float(r["tpot_s"]) <= t * (1 + band[1])
    out["ch02_pub_8b_banded_runs"], out["ch02_pub_8b_inside_band"] = banded, inside
    groups = validation.serving_groups(data.serving_runs(), mt, gp, cals)
    runs, worst = 0, 0.0
    for (model_name, system, backend, _, tp), s in groups.items():
        if (model_name, system, backend) == (LLAMA8, "h100_sxm", "trtllm"):
            out[f"ch02_pub_tpot_tp{tp}_cal"] = 100 * s["tpot_err"]
            out[f"ch02_pub_tpot_tp{tp}_roof"] = 100 * s["tpot_err_roofline"]
            out[f"ch02_pub_ttft_tp{tp}_cal"] = 100 * s["ttft_err"]
            worst = max(worst, s["tpot_abs_err"])
            runs += s["runs"]
        for sysname, be, tag in (("h200_sxm", "trtllm", "h200_tp4"), ("h100_sxm", "vllm", "h100_vllm_tp4")):
            if (model_name, system, backend, tp) == (LLAMA70, sysname, be, 4):
                out[f"ch02_pub_70b_{tag}_cal"] = 100 * s["tpot_err"]
                out[f"ch02_pub_70b_{tag}_roof"] = 100 * s["tpot_err_roofline"]
    out["ch02_pub_8b_runs"], out["ch02_pub_8b_worst_tp_median"] = runs, 100 * worst
    return out


def _serving_questions(gp, mt, cal):
    """LLaMA-3-70B on up to 8 H100s, 2k prompts, 256 outputs, TTFT (the
    benchmark's) <= 1 s and TPOT <= 50 ms: the TP of the fewest GPU-seconds
    a request at its best concurrency, and a million output tokens' cost at
    $2.50 per GPU-hour; on the roofline and at the calibration."""
    out = {}
    m, h100 = mt["llama3-70b"], gp["h100"]
    for tag, c in (("roof", None), ("cal", cal)):
        best = None
        for tp in (2, 4, 8):
            n = request.best_concurrency(m, h100, BF16, tp, 2048, 256, 0.05, cal=c, ttft_max=1.0, ttft_model="bench")
            if n == 0:
                continue
            e = request.estimate(m, h100, BF16, tp, 2048, 256, n, price=2.5, cal=c, ttft_model="bench")
            gs = request.gpu_seconds_per_request(e, tp, n)
            if best is None or gs < best[0]:
                best = (gs, tp, n, e["cost_out"])
        gs, tp, n, cost = best
        out.update({f"ch02_pub_70b_best_tp_{tag}": tp, f"ch02_pub_70b_best_c_{tag}": n,
                    f"ch02_pub_70b_gpus_per_req_{tag}": gs, f"ch02_pub_70b_cost_{tag}": cost})
    return out


CLASS_IN_WORDS = {"gemm_bf16": "a bf16 GEMM", "gemm_fp8": "an fp8 GEMM",
                  "attn_decode_bf16": "a decode attention kernel over a bf16 cache",
                  "attn_decode_fp8": "a decode attention kernel over an fp8 cache",
                  "attn_prefill": "a prefill attention kernel"}


def _kernel_validation(gp, cal):
    """The TensorRT-LLM H100 fit judged on the H200's tables (cross-system;
    its fp8 GEMM rows' cast priced apart, lib/published.py), and the two
    engines' own times of the same kernels."""
    out = {}
    xs = published.compare(cal, "h200_sxm", "trtllm", gp["h200"])
    worst = max(xs, key=lambda c: xs[c]["worst_abs"])
    for c, s in xs.items():
        out[f"ch02_pub_xsys_{c}_median"], out[f"ch02_pub_xsys_{c}_worst"] = 100 * s["median_abs"], 100 * s["worst_abs"]
    out["ch02_pub_xsys_worst"] = 100 * xs[worst]["worst_abs"]
    out["ch02_pub_xsys_worst_class"] = CLASS_IN_WORDS.get(worst, worst)
    for c, name in (("attn_decode_bf16", "attn"), ("attn_decode_fp8", "attn_fp8"), ("gemm_bf16", "gemm")):
        out[f"ch02_pub_agree_{name}_median"] = 100 * published.agreement("h100_sxm", "trtllm", "vllm", c,
                                                                         gp["h100"])["median_abs"]
    # the rate model refitted on the odd rows of the H100 bf16 GEMM table, judged on the even rows
    pts = published.rate_points("h100_sxm", "trtllm", "gemm_bf16", gp["h100"])
    half = fit.fit_op_rate(pts[0::2])
    out["ch02_pub_half_gemm_median"] = 100 * published.summary(published.op_errors(half, pts[1::2]))["median_abs"]
    return out


def derive():
    gp, mt, cals = data.gpus(), data.models(), data.calibrations()
    cal = cals["published:h100_sxm/trtllm"]
    h100, m8 = gp["h100"], mt["llama3-8b"]
    out = {}
    for part in (_cpu(), _gpu(gp, mt), _fitted(cal, cals["published:h200_sxm/trtllm"], h100),
                 _kernels(cal, h100, m8), _step(cal, h100, m8), _serving_shapes(), _serving_runs(gp, mt, cals),
                 _serving_questions(gp, mt, cal), _achieved(),
                 _kernel_validation(gp, cal)):
        out.update(part)
    return out


# ---- the exercises' answers, from a variant's printed inputs ----


def practice(seed, inputs):
    v = {k: data.printed(t) for k, t in inputs.items()}
    gp, mt = data.gpus(), data.models()
    h200 = gp["h200"]
    pk, bw = h200["flops"]["bf16"], h200["mem_bw"]
    out = {}
    # 1: STREAM over 2^28 floats: a copy reads and writes them, a read reads them
    nbytes = 268435456 * 4.0
    c, rd = 2 * nbytes / (v["ch02_ex1_copy_ms"] * 1e-3), nbytes / (v["ch02_ex1_read_ms"] * 1e-3)
    out["2.1(a1)"], out["2.1(a2)"] = c / 1e12, rd / 1e12
    out["2.1(b)"] = 100 * c / bw
    out["2.1(c)"] = c / 2e12
    # 2: knees of bf16 GEMMs on the H200
    size = v["ch02_ex2_size"]
    out["2.2(a)"] = gemm.knee_batch(size, size, 2, 2, pk, bw)
    out["2.2(c)"] = gemm.knee_batch(8192, v["ch02_ex2_k"], 2, 2, pk, bw)
    # 3: the gate-up projection at batch 1 and at the batch
    n3 = v["ch02_ex3_n"]
    out["2.3(c)"] = gemm.predicted_time(v["ch02_ex3_batch"], n3, 8192, 2, 2, pk, bw)[0] / \
        gemm.predicted_time(1, n3, 8192, 2, 2, pk, bw)[0]
    # 4: the error of the printed table's predictions against its "measured" times
    ms = (1, 64, 128, 256, 512)
    pred = [v[f"ch02_ex4_m{m}_pred"] for m in ms]
    meas = [v[f"ch02_ex4_m{m}_meas"] for m in ms]
    out["2.4(a)"] = 100 * gemm.error_summary(pred, meas)["median_abs"]
    errs = [abs(gemm.relative_error(p, t)) for p, t in zip(pred, meas)]
    out["2.4(b)"] = ms[errs.index(max(errs))]
    # 5: a kernel that reads the weight and a 16.4 kB vector
    got = (v["ch02_ex5_read_mb"] * 1e6 + 16.4e3) / (v["ch02_ex5_us"] * 1e-6)
    out["2.5(a)"], out["2.5(b)"] = got / 1e12, 100 * got / bw
    # 6: the cache one decode step reads
    ctx = v["ch02_ex6_context"]
    out["2.6(a)"] = model.kv_bytes_per_token(mt["llama3-70b"], "bf16") * ctx / GB
    out["2.6(c)"] = v["ch02_ex6_batch"] * model.kv_bytes_per_token(mt["llama3-8b"], "bf16") * ctx / GB
    # 7: launches overlap the work; the host sets the step's pace
    out["2.7(c)"] = 100 * (1 - v["ch02_ex7_work_us"] / v["ch02_ex7_launch_us"])
    return out
