#!/usr/bin/env python3
"""Import NVIDIA's published kernel measurements into napkin's measured-TSV format.

Run by a maintainer, never by make:

    pip install aiconfigurator-core pyarrow
    python3 tools/import_measured.py                 # the installed package
    python3 tools/import_measured.py --package-dir DIR   # an unpacked wheel

It writes code/specs/measured/ (or --out DIR): LICENSE, NOTICE, README.md,
<system>/<backend>/{gemm,attention_decode,attention_prefill,allreduce}.tsv,
serving_runs.tsv and serving_runs_moe.tsv.  Output is deterministic: sorted rows, fixed number
<system>/<engine>/alltoall.tsv (tools/measured_alltoall.py) and serving_runs.tsv.  Output is deterministic: sorted rows, fixed number
formats, no dates, so a rerun on the same package changes nothing.

Each table is read from its .parquet (needs pyarrow) or, when only a .csv
of the same name and columns is present, from that: the test fixture
(tests/measured_fixture/) uses CSV so the tests run without pyarrow.

Exit status: 0 written, 2 bad flag, missing package, table or column.
"""

import argparse
import csv
import hashlib
import importlib.util
import os
import re
import statistics
import sys

import measured_moe  # noqa: E402  (the MoE tables: tools/measured_moe.py)
import measured_mla
import measured_gdn  # the Gated DeltaNet tables: tools/measured_gdn.py
import measured_alltoall

PACKAGE = "aiconfigurator-core"
SYSTEMS = ("h100_sxm", "h200_sxm")
BACKENDS = (("trtllm", "1.3.0rc20"), ("vllm", "0.24.0"), ("sglang", "0.5.14"))

GEMM_M = tuple(2 ** i for i in range(16))  # 1 .. 32768
GEMM_NK = (1024, 1536, 2048, 2560, 3072, 3584, 4096, 5120, 6144, 7168, 8192,
           10240, 12288, 16384, 51200, 65536)
GEMM_DTYPES = {"bfloat16": "bf16", "fp8": "fp8", "fp8_block": "fp8_block"}
KV_DTYPES = {"bfloat16": "bf16", "fp8": "fp8"}
HEAD_DIMS = (64, 128)
# (query heads, KV heads) per GPU: GQA groups of 8 (Llama-3.1-70B, Qwen3-32B,
# gpt-oss: 64/8 heads) and of 4 (Llama-3.1-8B: 32/8) split over TP 1, 2, 4, 8.
# head_dim 64 keeps only the groups of 8 (gpt-oss); that keeps the set small.
HEAD_PAIRS = {128: ((64, 8), (32, 4), (16, 2), (8, 1), (32, 8), (16, 4), (8, 2), (4, 1)),
              64: ((64, 8), (32, 4), (16, 2), (8, 1))}
SERVING_MODELS = ("meta-llama/Llama-3.1-8B", "meta-llama/Llama-3.1-8B-Instruct",
                  "meta-llama/Llama-3.1-70B", "nvidia/Llama-3.1-8B-Instruct-FP8",
                  "Qwen/Qwen3-32B")
LICENCE_VALUE = "Apache-2.0 (code/specs/measured/LICENSE, NOTICE)"
UNITS = "time_s seconds; bytes bytes"
MS = 1e-3  # the package's latency columns are milliseconds


class ImportError_(Exception):
    """A problem with the input; main() prints it and exits 2."""


def fail(msg):
    raise ImportError_(msg)


# ---------------------------------------------------------------- the package

def find_package(package_dir):
    """(package root holding systems/, its version, the licence file path)."""
    if package_dir:
        root = package_dir
        if not os.path.isdir(os.path.join(root, "systems")):
            root = os.path.join(package_dir, "aiconfigurator_core")
        if not os.path.isdir(os.path.join(root, "systems")):
            fail(f"--package-dir {package_dir}: no systems/ or aiconfigurator_core/systems/ in it")
        parent = os.path.dirname(os.path.abspath(root))
        dist = sorted(d for d in os.listdir(parent)
                      if d.startswith("aiconfigurator_core-") and d.endswith(".dist-info"))
        if not dist:
            fail(f"--package-dir {package_dir}: no aiconfigurator_core-<version>.dist-info beside the package")
        version = dist[-1][len("aiconfigurator_core-"):-len(".dist-info")]
        info = os.path.join(parent, dist[-1])
        expression = None
        if os.path.exists(os.path.join(info, "METADATA")):
            with open(os.path.join(info, "METADATA"), encoding="utf-8") as f:
                expression = licence_expression(f.read())
        return root, version, find_licence(info), expression
    spec = importlib.util.find_spec("aiconfigurator_core")
    if spec is None or not spec.submodule_search_locations:
        fail(f"the {PACKAGE} package is not installed (pip install {PACKAGE} pyarrow), "
             "and no --package-dir was given")
    root = list(spec.submodule_search_locations)[0]
    import importlib.metadata as md
    dist = md.distribution(PACKAGE)
    licence = None
    for f in dist.files or ():
        if os.path.basename(str(f)).upper().startswith("LICENSE"):
            licence = str(dist.locate_file(f))
            break
    return root, dist.version, licence, licence_expression(dist.read_text("METADATA") or "")


def licence_expression(metadata):
    for line in metadata.splitlines():
        if line.startswith(("License-Expression:", "License:")):
            return line.split(":", 1)[1].strip()
    return None


def find_licence(dist_info):
    """The LICENSE file the wheel ships, or None (0.12.0 ships none)."""
    for sub in ("licenses", "."):
        d = os.path.join(dist_info, sub)
        if os.path.isdir(d):
            for name in sorted(os.listdir(d)):
                if name.upper().startswith("LICENSE"):
                    return os.path.join(d, name)
    return None


def licence_text(shipped, expression, fallback):
    """(path of the licence text to copy, where it came from).  A wheel
    without a LICENSE file must declare Apache-2.0 in its METADATA; then the
    standard Apache-2.0 text (--licence-text) is the one that applies."""
    if shipped:
        return shipped, f"the LICENSE file the package ships ({os.path.basename(os.path.dirname(shipped))}/{os.path.basename(shipped)})"
    if expression != "Apache-2.0":
        fail(f"the package ships no LICENSE file and its METADATA declares {expression or 'no licence'}, not Apache-2.0")
    if not os.path.isfile(fallback):
        fail(f"--licence-text {fallback}: no such file (the package ships no LICENSE file; "
             "give the Apache-2.0 text, e.g. /usr/share/common-licenses/Apache-2.0)")
    with open(fallback, encoding="utf-8") as f:
        if "Apache License" not in f.read(2000):
            fail(f"--licence-text {fallback}: not the Apache License text")
    return fallback, (f"the package ships no LICENSE file; its METADATA declares License-Expression: Apache-2.0, "
                      f"and this is the standard Apache-2.0 text (sha256 {sha256(fallback)})")


def copyright_line(root):
    """The widest-span NVIDIA copyright of the package's SPDX headers."""
    seen = set()
    for dirpath, dirnames, filenames in os.walk(root):
        dirnames.sort()
        for name in sorted(filenames):
            if not name.endswith((".py", ".yaml", ".pyi")):
                continue
            with open(os.path.join(dirpath, name), encoding="utf-8", errors="replace") as f:
                for line in f.read(4096).splitlines():
                    m = re.search(r"SPDX-FileCopyrightText:\s*(Copyright.*?)\s*$", line)
                    if m:
                        seen.add(m.group(1))
    if not seen:
        fail(f"{root}: no SPDX-FileCopyrightText header found")
    # "2025-2026" spans more years than "2026": take the earliest first year.
    return min(seen, key=lambda s: (re.search(r"\d{4}", s).group(0) if re.search(r"\d{4}", s) else "9999", -len(s)))


def sha256(path):
    h = hashlib.sha256()
    with open(path, "rb") as f:
        for block in iter(lambda: f.read(1 << 20), b""):
            h.update(block)
    return h.hexdigest()


def version_key(v):
    return tuple(int(x) if x.isdigit() else -1 for x in re.split(r"[.\-]", v))


# ---------------------------------------------------------------- tables

class Table:
    """Rows of one source table as dicts, with where it came from."""

    def __init__(self, root, rel, need):
        self.rel = rel
        path = os.path.join(root, rel)
        csv_path = path[:-len(".parquet")] + ".csv" if path.endswith(".parquet") else None
        if os.path.exists(path) and path.endswith(".parquet"):
            try:
                import pyarrow.parquet as pq
            except ImportError:
                fail(f"{rel}: reading parquet needs pyarrow (pip install pyarrow)")
            t = pq.read_table(path)
            cols = t.column_names
            self.rows = t.to_pylist()
        elif csv_path and os.path.exists(csv_path):
            path = csv_path
            self.rel = rel[:-len(".parquet")] + ".csv"
            with open(path, newline="", encoding="utf-8") as f:
                reader = csv.DictReader(f)
                cols = reader.fieldnames or []
                self.rows = list(reader)
        elif os.path.exists(path):
            with open(path, newline="", encoding="utf-8") as f:
                reader = csv.DictReader(f)
                cols = reader.fieldnames or []
                self.rows = list(reader)
        else:
            fail(f"missing table {rel} (looked for it{' and its .csv' if csv_path else ''} under {root})")
        missing = [c for c in need if c not in cols]
        if missing:
            fail(f"{self.rel}: missing column{'s' if len(missing) > 1 else ''} {', '.join(missing)}")
        self.path = path
        self.sha256 = sha256(path)

    def devices(self):
        return ", ".join(sorted({str(r["device"]) for r in self.rows})) or "unknown"


def num(row, col, table, kind=int):
    """A cell as int or float; parquet gives numbers, the CSV stand-ins text."""
    v = row[col]
    try:
        f = float(v)
    except (TypeError, ValueError):
        f = float("nan")
    if f != f or (kind is int and f != int(f)):
        fail(f"{table.rel}: column {col}: {v!r} is not {'an integer' if kind is int else 'a number'}")
    return int(f) if kind is int else f


TIMINGS = {}  # collection_meta.yaml folder -> what it says, for the README
BUS_BW = {}   # system -> (tp, GB/s): NCCL's best all-reduce bus bandwidth, for the README


def timing_of(root, rel_dir):
    """What collection_meta.yaml says about how a table was timed."""
    meta = os.path.join(root, rel_dir, "collection_meta.yaml")
    if not os.path.exists(meta):
        TIMINGS[rel_dir] = "no collection_meta.yaml"
        return "no collection_meta.yaml; no timing method stated"
    provenance, methods = None, []
    with open(meta, encoding="utf-8") as f:
        for line in f:
            m = re.match(r"^provenance:\s*(\S.*?)\s*$", line)
            if m:
                provenance = m.group(1)
            m = re.match(r"^\s*([A-Za-z_]*(?:timing|cuda_graph|graph_replay|l2|warmup|iterations|repeat|flush)"
                         r"[A-Za-z_]*):\s*(\S.*?)\s*$", line, re.I)
            if m:
                methods.append(f"{m.group(1)}={m.group(2)}")
    TIMINGS[rel_dir] = (f"provenance {provenance}" if provenance else "no provenance") + (
        "; " + ", ".join(methods) if methods else "; no timing method")
    parts = [f"collection_meta.yaml provenance: {provenance}" if provenance
             else "collection_meta.yaml states no provenance"]
    parts.append("timing: " + ", ".join(methods) if methods else "no timing method stated")
    return "; ".join(parts)


# ---------------------------------------------------------------- writing

def fmt_time(seconds):
    return "%.6e" % seconds


def write_tsv(path, meta, header, rows):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    with open(path, "w", encoding="utf-8", newline="\n") as f:
        for k, v in meta:
            f.write(f"# {k}: {' '.join(str(v).split())}\n")
        f.write("\t".join(header) + "\n")
        for r in rows:
            f.write("\t".join(str(c) for c in r) + "\n")
    return len(rows)


def common_meta(measurement, ctx, system, device, backend, version, sources, timing, selection):
    return [("measurement", measurement), ("kind", "published"), ("system", system),
            ("device", device), ("backend", backend), ("backend_version", version),
            ("source_package", f"{PACKAGE} {ctx['version']}"),
            ("source_file", ", ".join(t.rel for t in sources)),
            ("source_sha256", ", ".join(t.sha256 for t in sources)),
            ("timing", timing), ("licence", LICENCE_VALUE), ("copyright", ctx["copyright"]),
            ("selection", selection), ("units", UNITS)]


def median_of_duplicates(keyed):
    """{key: [times]} -> sorted [(key, median)], and how many keys had several."""
    dups = sum(1 for v in keyed.values() if len(v) > 1)
    return [(k, statistics.median(v)) for k, v in sorted(keyed.items())], dups


def dup_note(dups):
    return (f"{dups} shape(s) appeared more than once: their median time is kept" if dups
            else "no shape appeared more than once (the median of repeats would be kept)")


def kernel_sources(table, rows):
    return "; ".join(sorted({str(r.get("kernel_source", "?")) for r in rows})) or "none"


def import_gemm(ctx, system, backend, version, out):
    rel = f"systems/data/{system}/gemm/{backend}/{version}"
    t = Table(ctx["root"], f"{rel}/gemm_perf.parquet", ("device", "gemm_dtype", "m", "n", "k", "latency"))
    keyed, kept = {}, []
    for r in t.rows:
        dtype = GEMM_DTYPES.get(str(r["gemm_dtype"]))
        m, n, k = num(r, "m", t), num(r, "n", t), num(r, "k", t)
        if dtype is None or m not in GEMM_M or n not in GEMM_NK or k not in GEMM_NK:
            continue
        kept.append(r)
        keyed.setdefault((dtype, m, n, k), []).append(num(r, "latency", t, float) * MS)
    rows, dups = median_of_duplicates(keyed)
    sel = (f"gemm_dtype bfloat16/fp8/fp8_block as bf16/fp8/fp8_block; m powers of two 1..32768; "
           f"n and k in {{{','.join(map(str, GEMM_NK))}}} (those present); {dup_note(dups)}; "
           f"{len(rows)} of {len(t.rows)} rows")
    meta = common_meta("gemm", ctx, system, t.devices(), backend, version, [t],
                       timing_of(ctx["root"], rel), sel)
    meta.append(("kernel_source", kernel_sources(t, kept)))
    return write_tsv(os.path.join(out, "gemm.tsv"), meta, ("dtype", "m", "n", "k", "time_s"),
                     [(*key, fmt_time(s)) for key, s in rows])


ATTN_COLS = ("device", "batch_size", "isl", "num_heads", "num_key_value_heads", "head_dim",
             "window_size", "attn_dtype", "kv_cache_dtype", "step", "latency")


def attention_rows(t, decode):
    keyed, kept = {}, []
    for r in t.rows:
        hd, heads, kvh = num(r, "head_dim", t), num(r, "num_heads", t), num(r, "num_key_value_heads", t)
        kv = KV_DTYPES.get(str(r["kv_cache_dtype"]))
        if (num(r, "window_size", t) != 0 or hd not in HEAD_DIMS or (heads, kvh) not in HEAD_PAIRS[hd]
                or str(r["attn_dtype"]) != "bfloat16" or kv is None):
            continue
        if "beam_width" in r and r["beam_width"] not in (None, "") and num(r, "beam_width", t) != 1:
            continue
        # Decode attends over the prompt plus the tokens generated so far.
        length = num(r, "isl", t) + num(r, "step", t) if decode else num(r, "isl", t)
        kept.append(r)
        keyed.setdefault((num(r, "batch_size", t), length, heads, kvh, hd, kv), []).append(
            num(r, "latency", t, float) * MS)
    return keyed, kept


def pairs_text():
    return "; ".join(f"head_dim {hd}: " + " ".join(f"{h}/{k}" for h, k in HEAD_PAIRS[hd]) for hd in HEAD_DIMS)


def import_attention(ctx, system, backend, version, out, decode):
    rel = f"systems/data/{system}/attention/{backend}/{version}"
    name = "generation_attention_perf" if decode else "context_attention_perf"
    t = Table(ctx["root"], f"{rel}/{name}.parquet", ATTN_COLS)
    keyed, kept = attention_rows(t, decode)
    rows, dups = median_of_duplicates(keyed)
    what = "context = isl + step (the KV length attended)" if decode else "prompt = isl"
    sel = (f"{what}; window_size 0; attn_dtype bfloat16; beam_width 1; kv_cache_dtype bfloat16/fp8 as bf16/fp8; "
           f"head_dim 64 and 128; query/KV heads per GPU {pairs_text()}; {dup_note(dups)}; "
           f"{len(rows)} of {len(t.rows)} rows")
    measurement = "attention_decode" if decode else "attention_prefill"
    meta = common_meta(measurement, ctx, system, t.devices(), backend, version, [t],
                       timing_of(ctx["root"], rel), sel)
    meta.append(("kernel_source", kernel_sources(t, kept)))
    header = ("batch", "context" if decode else "prompt", "heads", "kv_heads", "head_dim", "kv_dtype", "time_s")
    return write_tsv(os.path.join(out, measurement + ".tsv"), meta, header,
                     [(*key, fmt_time(s)) for key, s in rows])


def latest_nccl(root, system):
    d = os.path.join(root, f"systems/data/{system}/comm/nccl")
    if not os.path.isdir(d):
        fail(f"missing table systems/data/{system}/comm/nccl/<version>/nccl_perf.parquet (no comm/nccl/ under {root})")
    versions = sorted(os.listdir(d), key=version_key)
    if not versions:
        fail(f"systems/data/{system}/comm/nccl/ has no version folder")
    return versions[-1]


def import_allreduce(ctx, system, backend, version, out):
    crel = f"systems/data/{system}/comm/{backend}/{version}"
    ct = Table(ctx["root"], f"{crel}/custom_allreduce_perf.parquet",
               ("device", "allreduce_dtype", "num_gpus", "message_size", "latency"))
    impl_col = "implementation" if ct.rows and "implementation" in ct.rows[0] else "backend"
    if ct.rows and impl_col not in ct.rows[0]:
        fail(f"{ct.rel}: missing column implementation (or backend)")
    nver = latest_nccl(ctx["root"], system)
    nrel = f"systems/data/{system}/comm/nccl/{nver}"
    nt = Table(ctx["root"], f"{nrel}/nccl_perf.parquet",
               ("device", "op_name", "nccl_dtype", "num_gpus", "message_size", "latency"))
    keyed = {}
    # message_size counts bf16 (2-byte) elements in both tables.
    for r in ct.rows:
        if str(r["allreduce_dtype"]) != "bfloat16":
            continue
        keyed.setdefault((str(r[impl_col]), num(r, "num_gpus", ct), 2 * num(r, "message_size", ct)),
                         []).append(num(r, "latency", ct, float) * MS)
    for r in nt.rows:
        if str(r["op_name"]) != "all_reduce" or str(r["nccl_dtype"]) != "half":
            continue
        keyed.setdefault(("nccl", num(r, "num_gpus", nt), 2 * num(r, "message_size", nt)),
                         []).append(num(r, "latency", nt, float) * MS)
    rows, dups = median_of_duplicates(keyed)
    # Bus bandwidth 2 (tp-1)/tp x bytes / time: with bytes = 2 x message_size
    # it should come out near the NVLink rate, a check on the unit.
    nccl = [(tp, 2 * (tp - 1) / tp * b / s / 1e9) for (impl, tp, b), s in rows if impl == "nccl"]
    if nccl:
        top = max(tp for tp, _ in nccl)
        BUS_BW[system] = (top, max(bw for tp, bw in nccl if tp == top))
    sel = (f"custom all-reduce rows with allreduce_dtype bfloat16 (implementation from its {impl_col} column) "
           f"plus NCCL {nver} all_reduce rows with nccl_dtype half (implementation nccl; the newest NCCL folder); "
           f"tp = num_gpus; bytes = 2 x message_size (message_size counts 2-byte elements); {dup_note(dups)}; "
           f"{len(rows)} of {len(ct.rows) + len(nt.rows)} rows")
    timing = (f"custom: {timing_of(ctx['root'], crel)}; nccl: {timing_of(ctx['root'], nrel)}")
    devices = ", ".join(sorted({ct.devices(), nt.devices()}))
    meta = common_meta("allreduce", ctx, system, devices, backend, version, [ct, nt], timing, sel)
    meta.append(("nccl_version", nver))
    return write_tsv(os.path.join(out, "allreduce.tsv"), meta, ("implementation", "tp", "bytes", "time_s"),
                     [(*key, fmt_time(s)) for key, s in rows])


SERVING_COLS = ("id", "model_path", "system", "backend", "backend_version", "precision", "gemm_quant_mode", "mode",
                "isl", "osl", "batch_size", "tp_size", "pp_size", "silicon_ttft_ms", "silicon_tpot_ms")


def serving_meta(measurement, ctx, rows, devices, t, selection, note):
    """The provenance of a serving-runs table (rows: model, system, backend, ...): the systems and
    backends its rows hold, the devices of those systems, and a note on what its TTFT is."""
    systems = ", ".join(sorted({r[1] for r in rows}))
    meta = common_meta(measurement, ctx, systems,
                       ", ".join(f"{devices[s]} ({s})" for s in sorted(devices) if s in systems),
                       ", ".join(sorted({r[2] for r in rows})), "per row (backend_version column)", [t],
                       "end-to-end benchmark runs, silicon_ttft_ms and silicon_tpot_ms converted to seconds",
                       selection)
    meta.append(("note", note))
    return meta


def import_serving(ctx, out, devices, systems):
    rel = "systems/silicon_sample.csv"
    t = Table(ctx["root"], rel, SERVING_COLS)
    rows = []
    for r in t.rows:
        if r["mode"] != "agg" or r["system"] not in systems or r["model_path"] not in SERVING_MODELS:
            continue
        for c in ("id", "backend_version", "precision", "gemm_quant_mode"):
            if "\t" in r[c] or "\n" in r[c]:
                fail(f"{rel}: row {r['id']!r}: column {c} holds a tab or newline")
        rows.append((r["model_path"], r["system"], r["backend"], r["backend_version"] or "-",
                     r["precision"] or "-", num(r, "isl", t), num(r, "osl", t), num(r, "batch_size", t),
                     num(r, "tp_size", t), num(r, "pp_size", t), r["id"],
                     num(r, "silicon_ttft_ms", t, float) * MS, num(r, "silicon_tpot_ms", t, float) * MS,
                     r["gemm_quant_mode"] or "-"))
    rows.sort()
    sel = ("mode agg rows of the dense models " + ", ".join(SERVING_MODELS) + " (those present) on "
           + " and ".join(systems) + f"; concurrency = batch_size; gemm_quant = gemm_quant_mode (fp8 per-tensor or fp8_block, which GEMM curve applies); "
           f"empty precision, backend_version or gemm_quant written -; "
           f"{len(rows)} of {len(t.rows)} rows")
    meta = serving_meta("serving_runs", ctx, rows, devices, t, sel,
                        "ttft_s is the benchmark's closed-loop TTFT: concurrency requests kept in flight, "
                        "so it includes queueing behind other requests' prefills and decode steps")
    header = ("id", "model", "system", "backend", "backend_version", "precision", "isl", "osl",
              "concurrency", "tp", "pp", "ttft_s", "tpot_s", "gemm_quant")
    return write_tsv(os.path.join(out, "serving_runs.tsv"), meta, header,
                     [(r[10], *r[:10], fmt_time(r[11]), fmt_time(r[12]), r[13]) for r in rows])


# The mixtures of experts of silicon_sample.csv (their config.json has routed
# experts); the MoE table keeps their runs and every disaggregated run.
MOE_MODELS = ("MiniMaxAI/MiniMax-M2.5", "Qwen/Qwen3-235B-A22B-FP8", "Qwen/Qwen3.5-397B-A17B",
              "deepseek-ai/DeepSeek-R1", "deepseek-ai/DeepSeek-V3", "moonshotai/Kimi-K2.5",
              "openai/gpt-oss-120b", "zhipuai/GLM-5")
# (column written, the package's column): the layout of the run as it states it.
MOE_LAYOUT = (("concurrency", "batch_size"), ("tp", "tp_size"), ("pp", "pp_size"),
              ("attention_dp", "attention_dp_size"), ("moe_tp", "moe_tp_size"), ("moe_ep", "moe_ep_size"))
MOE_POOL = (("workers", "num_workers"), ("batch", "batch_size"), ("tp", "tp_size"), ("pp", "pp_size"),
            ("attention_dp", "attention_dp_size"), ("moe_tp", "moe_tp_size"), ("moe_ep", "moe_ep_size"))
MOE_COLS = tuple(src for _, src in MOE_LAYOUT) + tuple(
    f"{pool}_{src}" for pool in ("prefill", "decode") for _, src in MOE_POOL)


def count_or_dash(row, col, table):
    """An integer column as written: "-" where the package leaves it empty
    (NaN), its 0 (unknown) kept as 0."""
    v = row[col]
    if v is None or (isinstance(v, str) and v.strip() == ""):
        return "-"
    try:
        f = float(v)
    except (TypeError, ValueError):
        f = 0.0
        fail(f"{table.rel}: column {col}: {v!r} is not an integer")
    if f != f:
        return "-"
    return num(row, col, table)


def benchmark_concurrency(row):
    """The benchmark's own concurrency, where the package states it inside
    silicon_data_source ("silicon_concurrency=N"), else "-": the requests
    the whole replica kept in flight, beside batch_size (per attention rank)."""
    m = re.search(r"(?:^|;)\s*silicon_concurrency=(\d+)\s*(?:;|$)", row["silicon_data_source"] or "")
    return int(m.group(1)) if m else "-"


def measured_date(row):
    """The day the run was measured, where silicon_data_source states it
    ("measured=2026-01-14T22:26:21Z" or "...T00:00:00.000Z"), else "-": it
    tells apart two measurements of the same columns (validate_moe.c reads
    the DeepSeek-R1 sweep with multi-token prediction by it)."""
    m = re.search(r"(?:^|;)\s*measured=(\d{4}-\d{2}-\d{2})", row["silicon_data_source"] or "")
    return m.group(1) if m else "-"


def import_serving_moe(ctx, out, devices, systems):
    rel = "systems/silicon_sample.csv"
    t = Table(ctx["root"], rel, SERVING_COLS + ("moe_quant_mode", "silicon_data_source") + MOE_COLS)
    rows = []
    for r in t.rows:
        if r["system"] not in systems or not (r["model_path"] in MOE_MODELS or r["mode"] == "disagg"):
            continue
        for c in ("id", "model_path", "backend_version", "precision", "gemm_quant_mode", "moe_quant_mode", "mode"):
            if "\t" in (r[c] or "") or "\n" in (r[c] or ""):
                fail(f"{rel}: row {r['id']!r}: column {c} holds a tab or newline")
        layout = [count_or_dash(r, src, t) for _, src in MOE_LAYOUT]
        pools = [count_or_dash(r, f"{pool}_{src}", t) for pool in ("prefill", "decode") for _, src in MOE_POOL]
        rows.append((r["model_path"], r["system"], r["backend"], r["mode"], r["id"], r["backend_version"] or "-",
                     r["precision"] or "-", r["gemm_quant_mode"] or "-", r["moe_quant_mode"] or "-",
                     num(r, "isl", t), num(r, "osl", t), *layout, *pools,
                     fmt_time(num(r, "silicon_ttft_ms", t, float) * MS),
                     fmt_time(num(r, "silicon_tpot_ms", t, float) * MS), benchmark_concurrency(r),
                     measured_date(r)))
    rows.sort(key=lambda x: x[:5])
    sel = ("rows on " + " and ".join(systems) + " of the mixtures of experts " + ", ".join(MOE_MODELS)
           + " (those present), any mode, and every mode disagg row (dense models too); "
           "concurrency = batch_size (the benchmark's, per attention rank in an aggregated run); "
           "prefill_* and decode_* are the pools of a disaggregated run (workers = num_workers, "
           "batch = batch_size per attention rank); a count the package leaves empty is written -, "
           "its 0 (unknown) kept as 0; empty precision, backend_version or quant modes written -; "
           "benchmark_concurrency = the silicon_concurrency=N that silicon_data_source states (the requests "
           "the replica kept in flight), - where it states none; measured = the day of its measured= "
           "(YYYY-MM-DD), - where it states none; "
           f"sorted by model, system, backend, mode, id; {len(rows)} of {len(t.rows)} rows")
    meta = serving_meta("serving_runs_moe", ctx, rows, devices, t, sel,
                        "ttft_s is the benchmark's closed-loop TTFT; gemm_quant and moe_quant are the package's "
                        "gemm_quant_mode and moe_quant_mode (the dense GEMMs' and the experts' weight formats)")
    header = ("id", "model", "system", "backend", "backend_version", "mode", "precision", "gemm_quant", "moe_quant",
              "isl", "osl", *(name for name, _ in MOE_LAYOUT),
              *(f"{pool}_{name}" for pool in ("prefill", "decode") for name, _ in MOE_POOL), "ttft_s", "tpot_s",
              "benchmark_concurrency", "measured")
    return write_tsv(os.path.join(out, "serving_runs_moe.tsv"), meta, header,
                     [(r[4], r[0], r[1], r[2], r[5], r[3], *r[6:]) for r in rows])


# ---------------------------------------------------------------- texts

def write_texts(ctx, out, systems, backends):
    with open(ctx["licence"], encoding="utf-8") as f:
        licence = f.read()
    with open(os.path.join(out, "LICENSE"), "w", encoding="utf-8", newline="\n") as f:
        f.write(licence)
    with open(os.path.join(out, "NOTICE"), "w", encoding="utf-8", newline="\n") as f:
        f.write(f"These tables are derived from {PACKAGE} {ctx['version']}, {ctx['copyright'].rstrip('.')}, "
                "Apache-2.0; selected rows converted to TSV, units converted to seconds and bytes.\n")
    backend_list = ", ".join(f"{b} {v}" for b, v in backends)
    busbw = "; ".join(f"{s}: {bw:.0f} GB/s at TP {tp}" for s, (tp, bw) in sorted(BUS_BW.items()))
    said = {}
    for d, text in sorted(TIMINGS.items()):
        said.setdefault(text, []).append(d[len("systems/data/"):])
    claim = ("None states a timing method (CUDA-graph replay, warm-up, L2 handling), so none is claimed here."
             if all(t.endswith("no timing method") for t in TIMINGS.values())
             else "Only the timing methods listed are claimed.")
    timings = "\n".join(f"- {text}: " + ", ".join(dirs) for text, dirs in sorted(said.items()))
    readme = f"""# Published measurements of other machines

These tables are NVIDIA's published kernel and serving measurements, taken
from the PyPI package `{PACKAGE}` {ctx['version']} ({ctx['copyright']};
Apache-2.0, see LICENSE and NOTICE). They were measured on NVIDIA's machines
(the kernel and serving tables on H100 SXM and H200 SXM; the all-to-all's
also on B200, B300, GB200 and GB300, below), never on the reader's GPU:
their provenance says
`kind: published`, which keeps them apart from the sets `make measure`
writes (`kind: gpu` or `kind: cpu`), and they never go under
`figures/measured/`.

About LICENSE: {ctx['licence_source']}.

## Files

- `<system>/<backend>/gemm.tsv`: dtype m n k time_s
- `<system>/<backend>/attention_decode.tsv`: batch context heads kv_heads head_dim kv_dtype time_s
- `<system>/<backend>/attention_prefill.tsv`: batch prompt heads kv_heads head_dim kv_dtype time_s
- `<system>/<backend>/allreduce.tsv`: implementation tp bytes time_s
{measured_moe.README_FILES}
- `serving_runs.tsv`: id model system backend backend_version precision isl osl concurrency tp pp ttft_s tpot_s gemm_quant
- `serving_runs_moe.tsv`: id model system backend backend_version mode precision gemm_quant moe_quant isl osl
  concurrency tp pp attention_dp moe_tp moe_ep, then prefill_ and decode_ workers batch tp pp attention_dp
  moe_tp moe_ep, ttft_s tpot_s benchmark_concurrency measured

The latent attention (`mla_*.tsv`), Gated DeltaNet (`gdn_*.tsv`) and
all-to-all (`alltoall.tsv`) tables are described in their own sections below.

Systems: {', '.join(systems)}. Backends: {backend_list}. Each file starts with
`# key: value` provenance lines (the package, the file inside it and its
sha256, the backend and version, what the package says about timing, the
licence and copyright, the rows kept), then a header row, then rows.

## Selection

- GEMM: bf16, fp8 and fp8_block; M powers of two 1 to 32768; N and K in
  {', '.join(map(str, GEMM_NK))} (those present).
- Attention: window size 0, bf16 attention, bf16 or fp8 KV, head_dim 64 and
  128, and the per-GPU head counts of grouped-query models split over TP 1,
  2, 4 and 8 ({pairs_text()}, as query/KV heads). Decode's `context` is
  the KV length attended (isl + step); prefill's `prompt` is isl.
- All-reduce: the backend's custom all-reduce (each implementation it
  measured) and NCCL's all_reduce (half) from the newest NCCL folder of the
  system, for TP 2, 4 and 8. The package's `message_size` counts 2-byte
  elements: the package's models call it with tokens x hidden size, and
  counted as 2 bytes each, NCCL's largest messages reach a bus bandwidth
  (2 (tp-1)/tp x bytes / time) of {busbw}, the NVLink 4 rate of these
  machines (900 GB/s per GPU, 450 GB/s each way); counted as 1 byte they
  would reach half of that. `bytes` is 2 x message_size.
- Serving runs: aggregated (mode agg) runs of dense models
  ({', '.join(SERVING_MODELS)}; those present) on H100 and H200 SXM;
  `concurrency` is the benchmark's batch_size, and `ttft_s` is its
  closed-loop TTFT, which includes queueing behind other requests.
  `gemm_quant` is the package's gemm_quant_mode (fp8 per tensor or
  fp8_block), which says which GEMM curve a run used; `-` where empty.
- MoE and disaggregated serving runs (`serving_runs_moe.tsv`): every run on
  H100 and H200 SXM of the mixtures of experts ({', '.join(MOE_MODELS)};
  those present) and every disaggregated (mode disagg) run, dense models
  too, with every layout column the run states: tp, pp, attention_dp,
  moe_tp, moe_ep and `concurrency` (batch_size) of an aggregated run, and
  each pool's workers, batch, tp, pp, attention_dp, moe_tp and moe_ep of a
  disaggregated one (`prefill_*`, `decode_*`).  A count the package leaves
  empty is `-`; its 0 (unknown) is kept as 0.  `benchmark_concurrency` is
  the `silicon_concurrency=N` the row's `silicon_data_source` states (the
  requests the whole replica kept in flight), `-` where it states none;
  `measured` is the day of its `measured=` (YYYY-MM-DD), `-` where none.
{measured_moe.README_SELECTION}
- A shape measured more than once keeps its median (each file says how many).

Times are in seconds (the package's milliseconds / 1000), sizes in bytes.

## How the package says they were timed

Each source folder's collection_meta.yaml, as read (each file's `timing`
line repeats it). {claim}

{timings}

## Regenerating

    pip install {PACKAGE}=={ctx['version']} pyarrow
    python3 tools/import_measured.py
    # or, from an unpacked wheel:
    python3 tools/import_measured.py --package-dir DIR

The output is deterministic; a rerun on the same package changes nothing.
"""
    with open(os.path.join(out, "README.md"), "w", encoding="utf-8", newline="\n") as f:
        f.write(readme)


# ---------------------------------------------------------------- main

def main(argv):
    here = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--package-dir", metavar="DIR",
                    help="an unpacked aiconfigurator-core wheel (the folder holding aiconfigurator_core/)")
    ap.add_argument("--out", metavar="DIR", default=os.path.join(here, "code", "specs", "measured"),
                    help="where to write (default code/specs/measured)")
    ap.add_argument("--licence-text", metavar="FILE", default="/usr/share/common-licenses/Apache-2.0",
                    help="the Apache-2.0 text to copy when the package ships no LICENSE file")
    ap.add_argument("--systems", metavar="LIST", default=",".join(SYSTEMS),
                    help="comma-separated systems (default %(default)s)")
    ap.add_argument("--backends", metavar="LIST", default=",".join(f"{b}={v}" for b, v in BACKENDS),
                    help="comma-separated backend=version pairs (default %(default)s)")
    ap.add_argument("--quiet", action="store_true", help="print nothing on success")
    args = ap.parse_args(argv)  # a bad flag exits 2 with argparse's message
    systems = tuple(x for x in args.systems.split(",") if x)
    if not systems or any(not re.fullmatch(r"[a-z0-9_]+", x) for x in systems):
        ap.error(f"--systems {args.systems!r}: expected names like h100_sxm,h200_sxm")
    backends = []
    for item in args.backends.split(","):
        m = re.fullmatch(r"([a-z0-9_]+)=([A-Za-z0-9_.+\-]+)", item)
        if not m:
            ap.error(f"--backends {args.backends!r}: expected backend=version pairs like trtllm=1.3.0rc20")
        backends.append((m.group(1), m.group(2)))
    try:
        root, version, shipped, expression = find_package(args.package_dir)
        licence, licence_source = licence_text(shipped, expression, args.licence_text)
        ctx = {"root": root, "version": version, "licence": licence, "licence_source": licence_source,
               "copyright": copyright_line(root)}
        os.makedirs(args.out, exist_ok=True)
        counts, devices = {}, {}
        for system in systems:
            for backend, bver in backends:
                out = os.path.join(args.out, system, backend)
                counts[f"{system}/{backend}/gemm.tsv"] = import_gemm(ctx, system, backend, bver, out)
                counts[f"{system}/{backend}/attention_decode.tsv"] = import_attention(ctx, system, backend, bver, out, True)
                counts[f"{system}/{backend}/attention_prefill.tsv"] = import_attention(ctx, system, backend, bver, out, False)
                counts[f"{system}/{backend}/allreduce.tsv"] = import_allreduce(ctx, system, backend, bver, out)
                counts.update(measured_moe.import_moe(sys.modules[__name__], ctx, system, backend, out))
            with open(os.path.join(args.out, system, backends[0][0], "gemm.tsv"), encoding="utf-8") as f:
                devices[system] = next(l for l in f if l.startswith("# device: "))[len("# device: "):].strip()
        counts["serving_runs.tsv"] = import_serving(ctx, args.out, devices, systems)
        counts["serving_runs_moe.tsv"] = import_serving_moe(ctx, args.out, devices, systems)
        write_texts(ctx, args.out, systems, backends)
        counts.update(measured_mla.import_mla(sys.modules[__name__], ctx, args.out, systems, [b for b, _ in backends]))
        counts.update(measured_gdn.import_gdn(sys.modules[__name__], ctx, args.out, systems, [b for b, _ in backends]))
        measured_alltoall.import_all(ctx, args.out, counts, sys.modules[__name__])
    except ImportError_ as e:
        print(f"import_measured: {e}", file=sys.stderr)
        return 2
    except OSError as e:
        print(f"import_measured: {e}", file=sys.stderr)
        return 2
    if not args.quiet:
        total = 0
        for rel in sorted(counts) + ["LICENSE", "NOTICE", "README.md"]:
            size = os.path.getsize(os.path.join(args.out, rel))
            total += size
            rows = f"{counts[rel]:7d} rows" if rel in counts else " " * 12
            print(f"{rel:40s} {rows} {size:9d} bytes")
        print(f"{'total':40s} {'':12s} {total:9d} bytes")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
