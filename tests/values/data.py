"""Readers of the committed data tables, for the second derivation.

Every table is read from the repository (code/specs/*.tsv,
code/specs/measured/** and the sets committed under figures/measured/), never from a program's output: a re-derivation
starts where the C code starts, from the same committed inputs.

Units: gpus() and models() convert to SI (FLOP/s, bytes, bytes/s, seconds)
as the tables' own headers state them; the other tables come back as text
rows (dicts of column -> string), and their readers convert what they use.
"""
import os

ROOT = os.path.abspath(os.path.join(os.path.dirname(__file__), "..", ".."))
SPECS = os.path.join(ROOT, "code", "specs")

TERA = 1e12
GB = 1e9
MIB = 1024.0 * 1024.0

# Bytes per element of each dtype (a weight, a cached value, an activation).
DTYPE_BYTES = {"fp32": 4.0, "bf16": 2.0, "fp16": 2.0, "fp8": 1.0, "int8": 1.0, "int4": 0.5}


def table(path):
    """Rows of a TSV whose '#' lines are comments and whose first other line
    is the header: a list of dicts column -> text.  A row may end before its
    optional last columns; they come back as absent keys."""
    rows, header = [], None
    with open(path, encoding="utf-8") as f:
        for line in f:
            line = line.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            cells = line.split("\t")
            if header is None:
                header = cells
                continue
            rows.append(dict(zip(header, cells)))
    return rows


def printed(text):
    """A number as the book prints it ("16,384", "0.92"): a variant's input
    or a printed value, thousands separators dropped."""
    return float(text.replace(",", ""))


def _num(text):
    """A table number, or None for '-' (no such figure)."""
    return None if text in ("-", "", None) else float(text)


def gpus():
    """code/specs/gpus.tsv by key.  Dense FLOP rates per dtype in FLOP/s
    (0 where the GPU has none), mem_bw in B/s, mem_bytes the driver-reported
    capacity (MiB, else the datasheet's GB), mem_bytes_datasheet, link_bw
    B/s per direction, allreduce_latency s, host_bw B/s."""
    out = {}
    for r in table(os.path.join(SPECS, "gpus.tsv")):
        flops = {d: (_num(r[c]) or 0.0) * TERA
                 for d, c in (("bf16", "bf16_tflops"), ("fp16", "fp16_tflops"),
                              ("fp8", "fp8_tflops"), ("int8", "int8_tops"))}
        sheet = float(r["hbm_gb"]) * GB
        mib = _num(r["driver_mib"])
        out[r["key"]] = {
            "key": r["key"], "name": r["name"], "flops": flops,
            "mem_bw": float(r["hbm_tb_s"]) * 1e12,
            "mem_bytes_datasheet": sheet,
            "mem_bytes": mib * MIB if mib else sheet,
            "link_bw": (_num(r["link_gb_s"]) or 0.0) * GB,
            "allreduce_latency": (_num(r["allreduce_us"]) or 0.0) * 1e-6,
            "host_bw": (_num(r["pcie_gb_s"]) or 0.0) * GB,
        }
    return out


def _arch(text):
    """The arch column: comma-separated name=value or bare flags."""
    out = {}
    if not text or text == "-":
        return out
    for item in text.split(","):
        k, _, v = item.partition("=")
        out[k] = v if v else True
    return out


def models():
    """code/specs/models.tsv by key: the integer shape columns, tied as a
    bool, max_position (None when unknown) and the parsed arch column."""
    out = {}
    for r in table(os.path.join(SPECS, "models.tsv")):
        m = {"key": r["key"], "name": r["name"]}
        for c in ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab",
                  "experts", "experts_active"):
            m[c] = int(r[c])
        m["tied"] = r["tied"] == "1"
        mp = r.get("max_position", "-")
        m["max_position"] = None if mp in ("-", "") else int(mp)
        m["arch"] = _arch(r.get("arch", "-"))
        out[r["key"]] = m
    return out


def calibrations():
    """code/specs/calibrations.tsv by calibration name: {"gpu": key,
    "ops": {class: {t0, t_item, flop_frac, byte_frac, blend, item_frac,
    t_long}}, "allreduce": {tp: (latency1, bandwidth1, latency2,
    bandwidth2)}, "alltoall": {kernel: {latency, per_token, bandwidth, ep}}}
    (kernel "decode_dispatch", ...), in seconds and bytes/s as the file
    states them."""
    out = {}
    for r in table(os.path.join(SPECS, "calibrations.tsv")):
        cal = out.setdefault(r["calibration"], {"gpu": r["gpu"], "ops": {}, "allreduce": {}, "alltoall": {}})
        if r["class"].startswith("alltoall_"):  # ep in tp, latency in t0_s, per token in t_item_s
            cal["alltoall"][r["class"][len("alltoall_"):]] = {
                "latency": float(r["t0_s"]), "per_token": float(r["t_item_s"]),
                "bandwidth": float(r["bandwidth1"]), "ep": int(r["tp"])}
        elif r["class"] == "allreduce":
            cal["allreduce"][int(r["tp"])] = tuple(float(r[c]) for c in
                                                   ("latency1_s", "bandwidth1", "latency2_s", "bandwidth2"))
        else:
            cal["ops"][r["class"]] = {
                "t0": float(r["t0_s"]), "t_item": float(r["t_item_s"]),
                "flop_frac": float(r["flop_frac"]), "byte_frac": float(r["byte_frac"]),
                "blend": float(r["blend"]), "item_frac": float(r["item_frac"]),
                "t_long": float(r["t_long_s"])}
    return out


def vision_models():
    """code/specs/vision_models.tsv as text rows."""
    return table(os.path.join(SPECS, "vision_models.tsv"))


def vision_lms():
    """code/specs/vision_lms.tsv as text rows."""
    return table(os.path.join(SPECS, "vision_lms.tsv"))


def vision_lm_models():
    """code/specs/vision_lms.tsv by key, in models()'s shape (no arch
    column: plain dense decoders; max_position unknown)."""
    out = {}
    for r in vision_lms():
        m = {"key": r["key"], "name": r["name"]}
        for c in ("layers", "hidden", "heads", "kv_heads", "head_dim", "ffn", "vocab",
                  "experts", "experts_active"):
            m[c] = int(r[c])
        m["tied"] = r["tied"] == "1"
        m["max_position"] = None
        m["arch"] = {}
        out[r["key"]] = m
    return out


def video_models():
    """code/specs/video_models.tsv as text rows."""
    return table(os.path.join(SPECS, "video_models.tsv"))


def measured(system, backend, kind):
    """A published measured set, code/specs/measured/<system>/<backend>/<kind>.tsv
    (kind: gemm, attention_decode, attention_prefill, allreduce), as text rows."""
    return table(os.path.join(SPECS, "measured", system, backend, kind + ".tsv"))


def serving_runs():
    """code/specs/measured/serving_runs.tsv as text rows."""
    return table(os.path.join(SPECS, "measured", "serving_runs.tsv"))


def repo_path(*parts):
    """A path inside the repository (tests/configs/, fixtures)."""
    return os.path.join(ROOT, *parts)


def table_meta(path):
    """The '# key: value' lines of a measured table's header, as a dict."""
    meta = {}
    with open(path, encoding="utf-8") as f:
        for line in f:
            if not line.startswith("#"):
                break
            k, sep, v = line[1:].partition(":")
            if sep:
                meta[k.strip()] = v.strip()
    return meta


def committed_set(name, kind):
    """A measured set committed with the book, figures/measured/<name>/<kind>.tsv:
    (meta, rows as text dicts)."""
    path = os.path.join(ROOT, "figures", "measured", name, kind + ".tsv")
    return table_meta(path), table(path)


def measured_run(*parts):
    """A committed measurement (figures/measured/<device>/<what>.tsv): its
    provenance ('# key: value' lines) as a dict and its rows as text dicts."""
    path = repo_path(*parts)
    return table_meta(path), table(path)
