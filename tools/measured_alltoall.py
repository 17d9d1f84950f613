"""The expert-parallel all-to-all tables of aiconfigurator-core, for
tools/import_measured.py (which calls import_all with itself as `im`, for its
Table, provenance and writing helpers).

For every system of the package and every engine that measured one, the
newest version's tables become <system>/<engine>/alltoall.tsv:

    implementation phase dtype ep nodes hidden topk experts tokens time_s

- trtllm, vllm: comm/<engine>/<version>/moe_a2a_perf (comm_backend, phase,
  comm_dtype, ep_size, node_num, hidden_size, topk, num_experts, num_tokens,
  latency in us); implementation = comm_backend.
- sglang: comm/sglang/<version>/wideep_deepep_ll_perf (dispatch_avg_t_us,
  combine_avg_t_us: implementation deepep_ll) and wideep_deepep_normal_perf
  (transmit + notify us of each phase: implementation deepep_normal); these
  tables have no EP column: ep = 8 x node_num (eight GPUs a node), and no
  dtype column (dtype "default", as the package keys them).

A shape measured at several SM budgets (dispatch_sms, combine_sms, sms) keeps
the fastest: an engine tunes its SM budget, and the fastest is the one a
tuned deployment runs.  Repeats of one shape at one budget keep their median.
"""

import os

US = 1e-6  # these tables' times are microseconds
ENGINES = ("trtllm", "vllm", "sglang")
DTYPES = {"bfloat16": "bf16", "fp8": "fp8", "nvfp4": "nvfp4", "fp4": "fp4", "default": "default"}
A2A_COLS = ("device", "comm_backend", "phase", "comm_dtype", "ep_size", "node_num", "hidden_size", "topk",
            "num_experts", "num_tokens", "latency")
LL_COLS = ("device", "node_num", "hidden_size", "num_token", "num_topk", "num_experts", "dispatch_avg_t_us",
           "combine_avg_t_us")
NORMAL_COLS = ("device", "node_num", "hidden_size", "num_token", "num_topk", "num_experts", "dispatch_sms",
               "dispatch_transmit_us", "dispatch_notify_us", "combine_sms", "combine_transmit_us",
               "combine_notify_us")
GPUS_PER_NODE = 8


def newest_with(root, system, engine, files):
    """The newest version folder of comm/<engine>/ holding one of files (parquet or csv), or None."""
    d = os.path.join(root, "systems", "data", system, "comm", engine)
    if not os.path.isdir(d):
        return None
    have = []
    for v in os.listdir(d):
        names = os.listdir(os.path.join(d, v)) if os.path.isdir(os.path.join(d, v)) else []
        if any(f + ext in names for f in files for ext in (".parquet", ".csv")):
            have.append(v)
    return max(have, key=_version_key) if have else None


def _version_key(v):
    import re
    return tuple(int(x) if x.isdigit() else -1 for x in re.split(r"[.\-]", v))


def _present(root, rel, name):
    return any(os.path.exists(os.path.join(root, rel, name + ext)) for ext in (".parquet", ".csv"))


def _fastest(keyed, im):
    """{(shape..., sms): [times]} -> {shape: time}: the median of repeats, then the fastest SM budget."""
    rows, dups = im.median_of_duplicates(keyed)
    best = {}
    for key, t in rows:
        shape = key[:-1]
        if shape not in best or t < best[shape]:
            best[shape] = t
    return best, dups


def rows_moe_a2a(t, im):
    keyed = {}
    for r in t.rows:
        dtype = DTYPES.get(str(r["comm_dtype"]))
        if dtype is None:
            im.fail(f"{t.rel}: column comm_dtype: unknown dtype {r['comm_dtype']!r}")
        sms = im.num(r, "sms", t) if "sms" in r and r["sms"] not in (None, "") else 0
        key = (str(r["comm_backend"]), str(r["phase"]), dtype, im.num(r, "ep_size", t), im.num(r, "node_num", t),
               im.num(r, "hidden_size", t), im.num(r, "topk", t), im.num(r, "num_experts", t),
               im.num(r, "num_tokens", t), sms)
        keyed.setdefault(key, []).append(im.num(r, "latency", t, float) * US)
    return _fastest(keyed, im)


def rows_deepep(ll, normal, im):
    keyed = {}
    for t, impl in ((ll, "deepep_ll"), (normal, "deepep_normal")):
        if t is None:
            continue
        for r in t.rows:
            nodes = im.num(r, "node_num", t)
            shape = (nodes * GPUS_PER_NODE, nodes, im.num(r, "hidden_size", t), im.num(r, "num_topk", t),
                     im.num(r, "num_experts", t), im.num(r, "num_token", t))
            for phase in ("dispatch", "combine"):
                if impl == "deepep_ll":
                    us, sms = im.num(r, f"{phase}_avg_t_us", t, float), 0
                else:
                    us = im.num(r, f"{phase}_transmit_us", t, float) + im.num(r, f"{phase}_notify_us", t, float)
                    sms = im.num(r, f"{phase}_sms", t)
                keyed.setdefault((impl, phase, "default", *shape, sms), []).append(us * US)
    return _fastest(keyed, im)


def import_one(ctx, system, engine, out, im):
    """Write <out>/<system>/<engine>/alltoall.tsv; its row count, or None when the engine measured none."""
    if engine == "sglang":
        files = ("wideep_deepep_ll_perf", "wideep_deepep_normal_perf")
    else:
        files = ("moe_a2a_perf",)
    version = newest_with(ctx["root"], system, engine, files)
    if version is None:
        return None
    rel = f"systems/data/{system}/comm/{engine}/{version}"
    if engine == "sglang":
        ll = im.Table(ctx["root"], f"{rel}/{files[0]}.parquet", LL_COLS) if _present(ctx["root"], rel, files[0]) else None
        normal = (im.Table(ctx["root"], f"{rel}/{files[1]}.parquet", NORMAL_COLS)
                  if _present(ctx["root"], rel, files[1]) else None)
        sources = [t for t in (ll, normal) if t is not None]
        best, dups = rows_deepep(ll, normal, im)
        how = ("deepep_ll: wideep_deepep_ll_perf's dispatch_avg_t_us and combine_avg_t_us; deepep_normal: "
               "wideep_deepep_normal_perf's <phase>_transmit_us + <phase>_notify_us; ep = 8 x node_num; "
               "dtype default (no dtype column)")
    else:
        t = im.Table(ctx["root"], f"{rel}/{files[0]}.parquet", A2A_COLS)
        sources = [t]
        best, dups = rows_moe_a2a(t, im)
        how = "implementation = comm_backend; dtype = comm_dtype (bfloat16 as bf16); time = latency"
    n_in = sum(len(t.rows) for t in sources)
    sel = (f"every row; {how}; times us / 1e6; of several SM budgets the fastest is kept; {im.dup_note(dups)}; "
           f"{len(best)} rows from {n_in} source rows (a deepep row gives a dispatch and a combine row)")
    devices = ", ".join(sorted({t.devices() for t in sources}))
    meta = im.common_meta("alltoall", ctx, system, devices, engine, version, sources,
                          im.timing_of(ctx["root"], rel), sel)
    meta.append(("kernel_source", "; ".join(sorted({str(r.get("kernel_source", "?")) for t in sources
                                                    for r in t.rows})) or "none"))
    header = ("implementation", "phase", "dtype", "ep", "nodes", "hidden", "topk", "experts", "tokens", "time_s")
    return im.write_tsv(os.path.join(out, system, engine, "alltoall.tsv"), meta, header,
                        [(*key, im.fmt_time(s)) for key, s in sorted(best.items())])


README = """
## The expert-parallel all-to-all

`<system>/<engine>/alltoall.tsv`: implementation phase dtype ep nodes hidden
topk experts tokens time_s, one per system and engine that measured one,
from the engine's newest version holding the tables:

{versions}

- TensorRT-LLM and vLLM: `comm/<engine>/<version>/moe_a2a_perf`, every row
  (implementation = comm_backend: trtllm_deepep_ll / trtllm_deepep_ht,
  deepep_ll / deepep_ht, ...; dtype = comm_dtype, bfloat16 written bf16).
- SGLang: `comm/sglang/<version>/wideep_deepep_ll_perf` (implementation
  deepep_ll, dispatch_avg_t_us and combine_avg_t_us) and
  `wideep_deepep_normal_perf` (deepep_normal, transmit + notify us of each
  phase); these tables have no EP column (ep = 8 x node_num) and no dtype
  (dtype default, as the package keys them).
- A shape measured at several SM budgets keeps the fastest (an engine tunes
  its budget); repeats of one shape keep their median.  Older versions
  (SGLang 0.5.6.post2's multi-node DeepEP rows) are left out: one version
  per engine.
"""


def import_all(ctx, out, counts, im):
    """Every system's every engine's all-to-all table; appends its section to README.md."""
    data = os.path.join(ctx["root"], "systems", "data")
    systems = sorted(s for s in os.listdir(data) if os.path.isdir(os.path.join(data, s)))
    versions = []
    for system in systems:
        for engine in ENGINES:
            n = import_one(ctx, system, engine, out, im)
            if n is None:
                continue
            counts[f"{system}/{engine}/alltoall.tsv"] = n
            with open(os.path.join(out, system, engine, "alltoall.tsv"), encoding="utf-8") as f:
                v = next(l for l in f if l.startswith("# backend_version: "))[len("# backend_version: "):].strip()
            versions.append(f"- {system}/{engine}: {engine} {v}")
    with open(os.path.join(out, "README.md"), "a", encoding="utf-8", newline="\n") as f:
        f.write(README.format(versions="\n".join(versions) or "- (none in this package)"))
