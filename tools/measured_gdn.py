"""Gated DeltaNet (linear attention) tables for tools/import_measured.py.

For each system and engine, from the newest version folder of
systems/data/<system>/linear_attention/<engine>/ holding gdn_perf:

  - the recurrent decode kernel (kernel_source fused_recurrent_gated_delta_rule,
    SGLang's ..._packed_decode; phase generation), written as gdn_decode.tsv;
  - the chunked prefill kernel (chunk_gated_delta_rule, phase context),
    written as gdn_prefill.tsv.

Rows kept: model_name Qwen/Qwen3.5-397B-A17B (the model of the measured
serving runs; its 16 key and 64 value heads over TP 1..16, the table's
num_k_heads and num_v_heads being the per-GPU counts).  The convolution's
kernels (causal_conv1d_*) are left out: the cost model prices the
convolution as an elementwise pass.  The module hands back {file: rows} and
adds its section to the measured README.
"""

import os

MODEL = "Qwen/Qwen3.5-397B-A17B"
SYSTEMS_READY = ("h100_sxm", "h200_sxm")  # another system is one entry here
KERNELS = {"decode": ("fused_recurrent_gated_delta_rule", "fused_recurrent_gated_delta_rule_packed_decode"),
           "prefill": ("chunk_gated_delta_rule",)}
COLS = ("device", "kernel_source", "phase", "batch_size", "seq_len", "num_k_heads", "head_k_dim", "num_v_heads",
        "head_v_dim", "model_name", "latency")
SECTION = """
## Gated DeltaNet (linear attention)

`tools/measured_gdn.py` adds, per system and engine (the newest version
folder of `linear_attention/<engine>/` holding `gdn_perf`, named in each
file's `backend_version`):

- `<system>/<engine>/gdn_decode.tsv`: batch k_heads v_heads k_dim v_dim
  time_s, the recurrent step (kernel_source fused_recurrent_gated_delta_rule,
  SGLang's _packed_decode variant; phase generation);
- `<system>/<engine>/gdn_prefill.tsv`: batch prompt k_heads v_heads k_dim
  v_dim time_s, the chunked scan (chunk_gated_delta_rule; phase context;
  prompt = seq_len).

Kept: model_name Qwen/Qwen3.5-397B-A17B only (heads are per GPU: 16 key and
64 value heads over TP 1 to 16); the convolution kernels (causal_conv1d_*)
left out.  {engines}
"""


def newest(im, root, rel):
    d = os.path.join(root, rel)
    if not os.path.isdir(d):
        return None
    for ver in sorted(os.listdir(d), key=im.version_key, reverse=True):
        if any(os.path.exists(os.path.join(d, ver, "gdn_perf" + ext)) for ext in (".parquet", ".csv")):
            return ver
    return None


def import_phase(im, ctx, system, engine, ver, out, t, phase):
    rel = f"systems/data/{system}/linear_attention/{engine}/{ver}"
    keyed = {}
    for r in t.rows:
        if str(r["model_name"]) != MODEL or str(r["kernel_source"]) not in KERNELS[phase]:
            continue
        if str(r["phase"]) != ("generation" if phase == "decode" else "context"):
            continue
        key = (im.num(r, "batch_size", t),)
        if phase == "prefill":
            key += (im.num(r, "seq_len", t),)
        key += tuple(im.num(r, c, t) for c in ("num_k_heads", "num_v_heads", "head_k_dim", "head_v_dim"))
        keyed.setdefault(key, []).append(im.num(r, "latency", t, float) * im.MS)
    rows, dups = im.median_of_duplicates(keyed)
    kept = [r for r in t.rows if str(r["kernel_source"]) in KERNELS[phase] and str(r["model_name"]) == MODEL]
    sel = (f"model_name {MODEL}; kernel_source {'/'.join(KERNELS[phase])}; "
           f"{'phase generation' if phase == 'decode' else 'phase context, prompt = seq_len'}; heads per GPU; "
           f"{im.dup_note(dups)}; {len(rows)} of {len(t.rows)} rows")
    name = "gdn_" + phase
    meta = im.common_meta(name, ctx, system, t.devices(), engine, ver, [t], im.timing_of(ctx["root"], rel), sel)
    meta.append(("kernel_source", im.kernel_sources(t, kept)))
    header = ("batch",) + (("prompt",) if phase == "prefill" else ()) + ("k_heads", "v_heads", "k_dim", "v_dim",
                                                                         "time_s")
    return name + ".tsv", im.write_tsv(os.path.join(out, name + ".tsv"), meta, header,
                                       [(*key, im.fmt_time(s)) for key, s in rows])


def import_gdn(im, ctx, out_root, systems, engines):
    """Write every system's and engine's Gated DeltaNet tables; {relative path: rows}."""
    counts, said = {}, []
    for system in systems:
        if system not in SYSTEMS_READY:
            continue
        for engine in engines:
            ver = newest(im, ctx["root"], f"systems/data/{system}/linear_attention/{engine}")
            if not ver:
                said.append(f"{system}/{engine}: no gdn_perf table")
                continue
            rel = f"systems/data/{system}/linear_attention/{engine}/{ver}"
            t = im.Table(ctx["root"], f"{rel}/gdn_perf.parquet", COLS)
            out = os.path.join(out_root, system, engine)
            for phase in ("decode", "prefill"):
                f, n = import_phase(im, ctx, system, engine, ver, out, t, phase)
                counts[f"{system}/{engine}/{f}"] = n
            said.append(f"{system}/{engine}: {ver}")
    with open(os.path.join(out_root, "README.md"), "a", encoding="utf-8", newline="\n") as f:
        f.write(SECTION.format(engines="Imported: " + "; ".join(said) + "."))
    return counts
