"""CUDA graphs (chapter 8), from the conventions its header states:

- a step launches one kernel per op occurrence; per-layer ops once per
  layer, the TP collectives one kernel each; the two attention ops (scores
  and values) are one flash-style kernel;
- fusion folds kernels away: norm+residual folds each residual add into the
  norm after it, gate+act folds SiLU(gate)*up into the gate/up GEMM;
- eagerly the host pays `launch` per kernel; a graph costs one graph launch
  (4 us) plus 1 us per replayed kernel; host and GPU overlap within a step,
  which takes max(GPU, host), plus any per-step host work graphs keep;
- a graph replays the smallest captured size at or above the step's tokens;
  the dummy rows go through every op but attention;
- one captured graph holds 26 MiB.
"""
import math

from lib import model, step

GRAPH_LAUNCH = 4e-6
NODE = 1e-6
GRAPH_BYTES = 26.0 * 1024 * 1024

NORM_RESIDUAL, GATE_ACT = 1, 2
# the ops a fusion folds into a neighbour's kernel
_FOLDED = {"attn_value": 0, "attn_residual": NORM_RESIDUAL, "mlp_residual": NORM_RESIDUAL, "act_mul": GATE_ACT}


def kernels(m, tp, fusion=0):
    """{"per_layer", "once", "layers", "comm", "total"} of one decode step."""
    per_layer = once = comm = 0
    for op in model.step_ops(m, 1, 1, tp, model.Precision.uniform("bf16")):
        bit = _FOLDED.get(op["name"])
        if bit is not None and (bit == 0 or fusion & bit):
            continue
        if op["reps"] == 1:
            once += 1
        else:
            per_layer += 1
        if op["kind"] in model.COMM_KINDS:
            comm += op["reps"]
    return {"per_layer": per_layer, "once": once, "layers": m["layers"], "comm": comm,
            "total": per_layer * m["layers"] + once}


def vllm_capture_list(max_size=512):
    """[1, 2, 4] + range(8, 256, 8) + range(256, max_size + 1, 16), capped."""
    sizes = [1, 2, 4] + list(range(8, 256, 8)) + list(range(256, max_size + 1, 16))
    return [s for s in sizes if s <= max_size]


def padded(sizes, tokens):
    """The smallest captured size >= tokens, 0 beyond the list (eager)."""
    return next((s for s in sorted(sizes) if s >= tokens), 0)


def padded_gpu_time(m, g, batch, context, tp, prec, rows):
    """GPU seconds of a decode step padded to `rows` rows: attention over the
    real sequences, every other op over all rows."""
    real = step.step_cost(m, g, batch, context, tp, prec)
    pad = step.step_cost(m, g, rows, context, tp, prec)
    attn = lambda c: sum(op["t"] for op in c["ops"] if op["kind"] == "attention")  # noqa: E731
    return pad["time"] - attn(pad) + attn(real)


def step_both_ways(m, g, batch, context, tp, prec, launch, step_host=0.0, sizes=None):
    """One decode step eagerly and as a graph (sizes None: captured at exactly
    this batch).  gpu, gpu_padded, padded_tokens, host_eager, host_graph,
    step_eager, step_graph, saved, pad_waste, kernels."""
    k = kernels(m, tp)
    gpu = step.step_cost(m, g, batch, context, tp, prec)["time"]
    rows = batch if sizes is None else padded(sizes, batch)
    gpu_pad = gpu if rows == batch else (padded_gpu_time(m, g, batch, context, tp, prec, rows) if rows else gpu)
    host_e = k["total"] * launch
    host_g = GRAPH_LAUNCH + k["total"] * NODE
    t_e = step_host + max(gpu, host_e)
    t_g = step_host + max(gpu_pad, host_g) if rows else t_e
    return {"kernels": k, "gpu": gpu, "gpu_padded": gpu_pad, "padded_tokens": rows, "host_eager": host_e,
            "host_graph": host_g, "step_eager": t_e, "step_graph": t_g, "saved": 1 - t_g / t_e,
            "pad_waste": gpu_pad / gpu - 1}


def threshold_batch(m, g, context, tp, prec, launch, threshold, batch_max):
    """The smallest batch in 1..batch_max whose saving (graph at exactly that
    batch) is below threshold; 0 when none is."""
    for b in range(1, batch_max + 1):
        if step_both_ways(m, g, b, context, tp, prec, launch)["saved"] < threshold:
            return b
    return 0


def implied_launch(t_eager, t_graph, n_kernels):
    """The least eager launch cost consistent with a published pair: the
    eager launches must cover the saving plus the graph's own host time."""
    return (t_eager - t_graph + GRAPH_LAUNCH + n_kernels * NODE) / n_kernels


def launch_on_gpu(t_eager, t_graph, gpu, n_kernels):
    """(launch, per-step host work) reading a pair on a GPU whose step takes
    `gpu`: the graph step is GPU-bound, so t_graph - gpu is host work both
    ways and the eager step's launches are the rest; (nan, nan) when the
    pair does not fit that GPU."""
    host = t_graph - gpu
    if host < 0:
        return math.nan, math.nan
    launch = (t_eager - host) / n_kernels
    return (launch, host) if launch * n_kernels > gpu else (math.nan, math.nan)
