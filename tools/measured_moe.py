"""The routed experts' grouped-GEMM tables, for tools/import_measured.py.

aiconfigurator-core times each engine's fused MoE kernel (routing applied,
gate/up GEMM, activation, down GEMM, the weighted sum) as
systems/data/<system>/moe/<engine>/<version>/moe_perf.parquet: columns
moe_dtype, num_tokens (the tokens of the whole expert-parallel group),
hidden_size, inter_size (one expert's width before the moe_tp split), topk,
num_experts, moe_tp_size, moe_ep_size, distribution, kernel_source and
latency (ms).  This module keeps the rows the book's models need and writes
<system>/<engine>/moe.tsv:

    dtype tokens hidden inter topk experts moe_tp moe_ep distribution time_s

Which rows (each one reason, so the table stays small):
  - the (hidden, inter, topk, experts) shapes of the mixtures in
    code/specs/models.tsv and of the measured serving runs (MOE_SHAPES);
  - per engine, the newest version whose moe_perf holds one of them (a
    newer folder that times other models only is passed over);
  - one kernel per (engine, dtype), the one the engine serves our models
    with (pick_kernel);
  - tokens powers of two 1..16384 and moe_tp x moe_ep <= 8 (one node);
  - every distribution the table has (balanced, power_law_1.01, 1.2).
The wideep_* tables time DeepEP-style kernels at EP >= 16 across nodes:
not imported here (they need the all-to-all's layouts).
"""

import os

# (hidden, inter, topk, experts) -> the models that have it
MOE_SHAPES = {
    (7168, 2048, 8, 256): "DeepSeek-V3/R1",
    (4096, 1536, 8, 128): "Qwen3-235B-A22B",
    (2048, 768, 8, 128): "Qwen3-30B-A3B",
    (2880, 2880, 4, 128): "gpt-oss-120b",
    (2880, 2880, 4, 32): "gpt-oss-20b",
    (4096, 14336, 2, 8): "Mixtral-8x7B",
    (5120, 8192, 1, 16): "Llama-4-Scout",
    (5120, 8192, 1, 128): "Llama-4-Maverick",
    (7168, 2048, 8, 384): "Kimi-K2.5",
}
# Shapes kept in one dtype only: the format the model's checkpoint is
# released in (Kimi-K2.5's routed experts: int4 weight-only, group 32,
# compressed-tensors, which the engines serve with a Marlin WNA16 kernel).
MOE_SHAPE_DTYPES = {(7168, 2048, 8, 384): ("int4_wo",)}
MOE_DTYPES = {"bfloat16": "bf16", "fp8": "fp8", "fp8_block": "fp8_block", "int4_wo": "int4_wo",
              "w4a16_mxfp4": "w4a16_mxfp4"}
MOE_TOKENS = tuple(2 ** i for i in range(15))  # 1 .. 16384
MOE_MAX_GPUS = 8
MOE_COLS = ("device", "moe_dtype", "num_tokens", "hidden_size", "inter_size", "topk", "num_experts",
            "moe_tp_size", "moe_ep_size", "distribution", "kernel_source", "latency")
# Kernels for another activation than SwiGLU (Nemotron's squared ReLU, a
# SiLU stand-in for gpt-oss's clamped SwiGLU): not what our models run.
OTHER_ACTIVATION = ("nongated", "situ_as_silu")


def newest_version(root, system, engine, version_key, shape_of):
    """The newest moe/<engine>/<version>/ whose moe_perf holds one of MOE_SHAPES, or None."""
    base = os.path.join(root, "systems", "data", system, "moe", engine)
    if not os.path.isdir(base):
        return None
    for v in sorted(os.listdir(base), key=version_key, reverse=True):
        d = os.path.join(base, v)
        if any(os.path.exists(os.path.join(d, f)) for f in ("moe_perf.parquet", "moe_perf.csv")):
            if shape_of(v):
                return v
    return None


def pick_kernel(rows_by_kernel):
    """One kernel_source of one (engine, dtype): a SwiGLU kernel, the one
    covering most of our shapes, then most rows, then by name (stable).
    The package's collectors time the kernel an engine's MoE layer picks
    for that dtype on Hopper; where it timed two (vLLM's fp8_block: Triton
    and FlashInfer CUTLASS), the one run on more shapes is its default."""
    swiglu = {k: r for k, r in rows_by_kernel.items() if not any(s in k for s in OTHER_ACTIVATION)}
    pool = swiglu or rows_by_kernel

    def rank(k):
        shapes = {key[2:6] for key in pool[k]}  # (hidden, inter, topk, experts)
        return (-len(shapes), -len(pool[k]), k)
    return min(pool, key=rank)


def import_moe(im, ctx, system, engine, out):
    """Write out/moe.tsv for one system and engine; returns {relative path: rows}
    ({} when the package has no MoE table of ours for that engine)."""
    root = ctx["root"]
    tables = {}

    def load(v):
        rel = f"systems/data/{system}/moe/{engine}/{v}/moe_perf.parquet"
        t = im.Table(root, rel, MOE_COLS)
        tables[v] = t
        return any(shape_of_row(im, r, t) in MOE_SHAPES for r in t.rows)

    version = newest_version(root, system, engine, im.version_key, load)
    if version is None:
        return {}
    t = tables[version]
    by_kernel = {}
    for r in t.rows:
        shape = shape_of_row(im, r, t)
        dtype = MOE_DTYPES.get(str(r["moe_dtype"]))
        tokens = im.num(r, "num_tokens", t)
        tp, ep = im.num(r, "moe_tp_size", t), im.num(r, "moe_ep_size", t)
        if shape not in MOE_SHAPES or dtype is None or tokens not in MOE_TOKENS or tp * ep > MOE_MAX_GPUS:
            continue
        if dtype not in MOE_SHAPE_DTYPES.get(shape, (dtype,)):
            continue
        key = (dtype, tokens, *shape, tp, ep, str(r["distribution"]))
        by_kernel.setdefault(dtype, {}).setdefault(str(r["kernel_source"]), []).append(
            (key, im.num(r, "latency", t, float) * im.MS))
    keyed, chosen = {}, []
    for dtype in sorted(by_kernel):
        kernel = pick_kernel({k: [key for key, _ in v] for k, v in by_kernel[dtype].items()})
        chosen.append(f"{dtype} {kernel}")
        for key, s in by_kernel[dtype][kernel]:
            keyed.setdefault(key, []).append(s)
    rows, dups = im.median_of_duplicates(keyed)
    rel_dir = f"systems/data/{system}/moe/{engine}/{version}"
    shapes = "; ".join(f"{h}/{i}/{k}/{e} {name}" for (h, i, k, e), name in sorted(MOE_SHAPES.items()))
    only = "; ".join(f"{h}/{i}/{k}/{e} only {'/'.join(d)}" for (h, i, k, e), d in sorted(MOE_SHAPE_DTYPES.items()))
    sel = (f"shapes hidden/inter/topk/experts {shapes} (those present; {only}); num_tokens powers of two 1..16384; "
           f"moe_tp x moe_ep <= {MOE_MAX_GPUS}; every distribution; one kernel per dtype (a SwiGLU kernel, "
           f"the one timed on most of these shapes); {im.dup_note(dups)}; {len(rows)} of {len(t.rows)} rows")
    meta = im.common_meta("moe", ctx, system, t.devices(), engine, version, [t], im.timing_of(root, rel_dir), sel)
    meta.append(("kernel_source", "; ".join(chosen)))
    meta.append(("tokens", "num_tokens of the whole expert-parallel group; the time is one GPU's (rank 0, "
                           "the busiest under a power law)"))
    n = im.write_tsv(os.path.join(out, "moe.tsv"), meta,
                     ("dtype", "tokens", "hidden", "inter", "topk", "experts", "moe_tp", "moe_ep",
                      "distribution", "time_s"),
                     [(*key, im.fmt_time(s)) for key, s in rows])
    return {f"{system}/{engine}/moe.tsv": n}


def shape_of_row(im, r, t):
    return (im.num(r, "hidden_size", t), im.num(r, "inter_size", t), im.num(r, "topk", t),
            im.num(r, "num_experts", t))


README_FILES = ("- `<system>/<backend>/moe.tsv`: dtype tokens hidden inter topk experts moe_tp moe_ep "
                "distribution time_s")
README_SELECTION = (
    "- MoE (the routed experts' fused grouped GEMM, tools/measured_moe.py): the\n"
    "  shapes (hidden/inter/topk/experts) of " + ", ".join(sorted(set(MOE_SHAPES.values()))) + ";\n"
    "  per engine the newest moe_perf version holding them; one SwiGLU kernel per\n"
    "  dtype (each file's kernel_source line names it); tokens powers of two 1 to\n"
    "  16384 (the whole expert-parallel group's); moe_tp x moe_ep <= 8; the\n"
    "  distributions balanced, power_law_1.01 and power_law_1.2 as timed; Kimi-K2.5's\n"
    "  shape in its released format only (int4_wo: the moe_int4 class).")
