"""The published kernel tables (code/specs/measured/<system>/<backend>/) as
the rate model's points (chapter 2), and the held-out verdicts on them.

A point is (flop, bytes, items, span, peak, bandwidth, time).  A GEMM row
(bf16 or fp8; other dtypes are no class here) is Y = X W^T with W in the
row's dtype and the activations X and Y in bf16, at the dtype's dense peak.  An attention row
is both halves of one layer's fused kernel (lib/model.attention_ops), its
KV cache in the row's kv_dtype, at the bf16 peak: a decode row of context
L attends L positions, L - 1 of them cached; a prefill row of prompt L (L
>= 2: a one-token prompt is priced as decode) has nothing cached.  The
model's time of a point is the class's rate (lib/calibrated.op_rate_time,
the kernel whole); an all-reduce row's is its curve's.  Errors are
predicted / measured - 1; their summary the median and worst of the sizes
(the median of an even count the mean of the middle two).

TensorRT-LLM's fp8 (per-tensor) GEMM table times the activation's cast to
fp8 with each GEMM, which its serving graph does inside the op before
(code/napkin/calib/published.h): an fp8 GEMM point of that engine carries
an extra, the cast of its M x K activation (M K bf16 read, M K fp8
written) at the rates' elementwise class, at most half the measured time;
the model's time of such a point is the GEMM's plus that extra, in a fit
and in a verdict alike.  The other engines' fp8 GEMMs cast apart in their
tables as in serving: no extra."""
import statistics

import data
from lib import calibrated, model
from lib.model import Precision

GEMM_CLASSES = {"gemm_bf16": "bf16", "gemm_fp8": "fp8"}
DECODE_CLASSES = {"attn_decode_bf16": "bf16", "attn_decode_fp8": "fp8"}
CLASSES = ("gemm_bf16", "gemm_fp8", "attn_decode_bf16", "attn_decode_fp8", "attn_prefill")
ALLREDUCE_IMPL = {"trtllm": "trtllm", "vllm": "vllm_graph", "sglang": "sglang_graph"}


def quantize_apart(backend, rates):
    """The elementwise rate that prices the fp8 cast a backend's GEMM table
    times with each GEMM: TensorRT-LLM's, once the rates have one; else None."""
    return rates["elementwise"] if backend == "trtllm" and "elementwise" in rates else None


def rate_points(system, backend, cls, g, quantize=None):
    """The points of one class, in the table's row order; an fp8 GEMM point's
    extra the cast priced by `quantize` (an elementwise rate, or None)."""
    pts = []
    if cls in GEMM_CLASSES:
        d = GEMM_CLASSES[cls]
        for r in data.measured(system, backend, "gemm"):
            if r["dtype"] != d:
                continue
            m, n, k = (float(r[c]) for c in ("m", "n", "k"))
            e = data.DTYPE_BYTES[d]
            t = float(r["time_s"])
            extra = 0.0
            if quantize and d == "fp8":
                cast = m * k * (data.DTYPE_BYTES["bf16"] + data.DTYPE_BYTES["fp8"])
                extra = min(calibrated.op_rate_time(quantize, 0.0, cast, 0.0, 0.0, g["flops"]["bf16"], g["mem_bw"]),
                            0.5 * t)
            pts.append({"flop": 2 * m * n * k, "bytes": e * n * k + 2 * (m * k + m * n), "items": 0.0, "span": 0.0,
                        "peak": g["flops"][d], "bw": g["mem_bw"], "time": t, "extra": extra})
        return pts
    prefill = cls == "attn_prefill"
    for r in data.measured(system, backend, "attention_prefill" if prefill else "attention_decode"):
        kv = r["kv_dtype"]
        if kv not in ("bf16", "fp8") or (not prefill and kv != DECODE_CLASSES[cls]):
            continue
        b, L = int(r["batch"]), int(r["prompt" if prefill else "context"])
        if prefill and L < 2:
            continue
        prec = Precision("bf16", kv=kv, act="bf16", compute="bf16")
        shape = (int(r["heads"]), int(r["kv_heads"]), int(r["head_dim"]), prec)
        ops = model.attention_ops(b, 0, L, *shape) if prefill else model.attention_ops(b, L - 1, 1, *shape)
        pts.append({"flop": sum(o["flop"] for o in ops), "bytes": sum(o["w"] + o["kv"] + o["act"] for o in ops),
                    "items": sum(o["items"] for o in ops), "span": ops[0]["span"], "peak": g["flops"]["bf16"],
                    "bw": g["mem_bw"], "time": float(r["time_s"])})
    return pts


def link_points(system, backend, tp):
    impl = ALLREDUCE_IMPL.get(backend, "nccl")
    return [(float(r["bytes"]), float(r["time_s"])) for r in data.measured(system, backend, "allreduce")
            if r["implementation"] == impl and int(r["tp"]) == tp]


def summary(errors):
    a = [abs(e) for e in errors]
    return {"points": len(a), "median_abs": statistics.median(a), "worst_abs": max(a)} if a else None


def op_errors(rate, pts):
    return [(calibrated.op_rate_time(rate, p["flop"], p["bytes"], p["items"], p["span"], p["peak"], p["bw"])
             + p.get("extra", 0.0)) / p["time"] - 1 for p in pts]


def compare(cal, system, backend, g, half=0):
    """class -> summary of the rates `cal` on the set system/backend (half 2:
    its even rows only, no all-reduce)."""
    out = {}
    for cls in CLASSES:
        if cls not in cal["ops"]:
            continue
        pts = rate_points(system, backend, cls, g, quantize_apart(backend, cal["ops"]))
        if half:
            pts = pts[half - 1::2]
        s = summary(op_errors(cal["ops"][cls], pts))
        if s:
            out[cls] = s
    for tp, link in ([] if half else sorted(cal["allreduce"].items())):
        s = summary([calibrated.link_rate_time(link, b) / t - 1 for b, t in link_points(system, backend, tp)])
        if s:
            out[f"allreduce_tp{tp}"] = s
    return out


def agreement(system, backend_a, backend_b, cls, g):
    """Two engines' times of the same kernels (points with the same FLOPs,
    bytes and items), b over a - 1, merged in sorted order."""
    key = (lambda p: (p["flop"], p["bytes"], p["items"]))
    a = sorted(rate_points(system, backend_a, cls, g), key=key)
    b = sorted(rate_points(system, backend_b, cls, g), key=key)
    i = j = 0
    e = []
    while i < len(a) and j < len(b):
        ka, kb = key(a[i]), key(b[j])
        if ka < kb:
            i += 1
        elif ka > kb:
            j += 1
        else:
            e.append(b[j]["time"] / a[i]["time"] - 1)
            i, j = i + 1, j + 1
    return summary(e)
