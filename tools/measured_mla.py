"""Latent attention (MLA) tables for tools/import_measured.py.

For each system and engine, from the newest version folder of
systems/data/<system>/mla/<engine>/ that holds the tables:

  - the kernel tables context_mla_perf / generation_mla_perf (the attention
    kernel alone, FlashMLA-class in decode), written as mla_prefill.tsv and
    mla_decode.tsv;
  - where an engine has only the module tables (vLLM 0.24.0:
    mla_context_module_perf / mla_generation_module_perf), those, written as
    mla_prefill_module.tsv and mla_decode_module.tsv.  A "module" is the
    package's MLAModule (sdk/operations/mla.py): "For context: replaces
    q_b_proj + kv_b_proj + ContextMLA + proj. For generation: replaces
    MLABmm(pre) + GenerationMLA + MLABmm(post)", timed as one op for
    DeepSeek-V3's weights (gemm_type bf16 or fp8_block);
  - the absorbed products mla_bmm/<engine>/<ver>/mla_bmm_perf (mla_gen_pre:
    q_nope through W_UK; mla_gen_post: the latent output through W_UV),
    written as mla_bmm.tsv.

Rows kept: DeepSeek-V3's 128 heads over TP 1, 2, 4, 8 (num_heads = 128, 64,
32, 16 heads per GPU: the tables' num_heads is the per-GPU count, the
tp_size column is not: it reads 1 at 64 heads), bf16 MLA compute, bf16 or fp8
KV cache.  The module hands back {file: rows} and adds its section to the
measured README.
"""

import os

HEADS = (128, 64, 32, 16)  # DeepSeek-V3's 128 heads over TP 1, 2, 4, 8
SYSTEMS_READY = ("h100_sxm", "h200_sxm")  # another system is one entry here
KV = {"bfloat16": "bf16", "fp8": "fp8"}
BMM_OPS = {"mla_gen_pre": "pre", "mla_gen_post": "post"}
KERNEL_COLS = ("device", "mla_dtype", "kv_cache_dtype", "num_heads", "batch_size", "isl", "tp_size", "step",
               "latency")
MODULE_COLS = KERNEL_COLS + ("gemm_type", "kernel_source")
BMM_COLS = ("device", "op_name", "bmm_dtype", "num_tokens", "num_heads", "latency")
SECTION = """
## Latent attention (MLA)

`tools/measured_mla.py` adds, per system and engine (the newest version
folder holding the tables, named in each file's `backend_version`):

- `<system>/<engine>/mla_decode.tsv`: batch context heads kv_dtype time_s,
  from `generation_mla_perf` (the attention kernel alone; context = isl +
  step, the positions attended);
- `<system>/<engine>/mla_prefill.tsv`: batch prompt heads kv_dtype time_s,
  from `context_mla_perf` (prompt = isl);
- where an engine measured only the whole module (vLLM):
  `mla_decode_module.tsv` and `mla_prefill_module.tsv` with the same columns
  plus gemm_dtype (fp8_block rows only, DeepSeek-V3's
  weights) and kernel.  The package's MLAModule says what a module is:
  in context q_b_proj + kv_b_proj + the attention + o_proj, in generation the
  absorbed products before and after + the attention;
- `<system>/<engine>/mla_bmm.tsv`: op dtype tokens heads time_s, from
  `mla_bmm_perf` (pre: q_nope through W_UK; post: the latent output through
  W_UV, the absorbed products of decode).

Kept: num_heads 128, 64, 32, 16 (DeepSeek-V3's 128 heads per GPU at TP 1, 2,
4, 8; num_heads is the per-GPU count), mla_dtype bfloat16, KV bf16 or fp8,
bmm dtype bf16 or fp8.  {engines}
"""


def newest(im, root, rel, names):
    """The newest version folder under rel holding all of `names` (.parquet or .csv), or None."""
    d = os.path.join(root, rel)
    if not os.path.isdir(d):
        return None
    for ver in sorted(os.listdir(d), key=im.version_key, reverse=True):
        if all(any(os.path.exists(os.path.join(d, ver, n + ext)) for ext in (".parquet", ".csv")) for n in names):
            return ver
    return None


def kernel_rows(im, t, decode, module):
    keyed = {}
    for r in t.rows:
        kv = KV.get(str(r["kv_cache_dtype"]))
        heads = im.num(r, "num_heads", t)
        if kv is None or heads not in HEADS or str(r["mla_dtype"]) != "bfloat16":
            continue
        isl, step = im.num(r, "isl", t), im.num(r, "step", t)
        length = isl + step if decode else isl
        key = (im.num(r, "batch_size", t), length, heads, kv)
        if module:
            if str(r["gemm_type"]) != "fp8_block":  # DeepSeek-V3's published weights; halves the table
                continue
            key = ("fp8_block", str(r["kernel_source"])) + key
        keyed.setdefault(key, []).append(im.num(r, "latency", t, float) * im.MS)
    return keyed


def import_kernel(im, ctx, system, engine, ver, out, decode, module):
    rel = f"systems/data/{system}/mla/{engine}/{ver}"
    phase = "generation" if decode else "context"
    name = f"mla_{phase}_module_perf" if module else f"{phase}_mla_perf"
    t = im.Table(ctx["root"], f"{rel}/{name}.parquet", MODULE_COLS if module else KERNEL_COLS)
    rows, dups = im.median_of_duplicates(kernel_rows(im, t, decode, module))
    what = "context = isl + step (the positions attended)" if decode else "prompt = isl"
    sel = (f"{what}; num_heads (per GPU) {', '.join(map(str, HEADS))}; mla_dtype bfloat16; "
           f"kv_cache_dtype bfloat16/fp8 as bf16/fp8; {im.dup_note(dups)}; {len(rows)} of {len(t.rows)} rows")
    if module:
        sel += "; gemm_type fp8_block only (DeepSeek-V3's weights); a module is q_b_proj + kv_b_proj + attention + o_proj (context) or the absorbed " \
               "products + attention (generation), per the package's MLAModule"
    measurement = ("mla_decode" if decode else "mla_prefill") + ("_module" if module else "")
    meta = im.common_meta(measurement, ctx, system, t.devices(), engine, ver, [t], im.timing_of(ctx["root"], rel),
                          sel)
    meta.append(("kernel_source", im.kernel_sources(t, t.rows)))
    header = ("batch", "context" if decode else "prompt", "heads", "kv_dtype", "time_s")
    if module:
        header = ("gemm_dtype", "kernel") + header
    return measurement + ".tsv", im.write_tsv(os.path.join(out, measurement + ".tsv"), meta, header,
                                              [(*key, im.fmt_time(s)) for key, s in rows])


def import_bmm(im, ctx, system, engine, ver, out):
    rel = f"systems/data/{system}/mla_bmm/{engine}/{ver}"
    t = im.Table(ctx["root"], f"{rel}/mla_bmm_perf.parquet", BMM_COLS)
    keyed = {}
    for r in t.rows:
        op, dt = BMM_OPS.get(str(r["op_name"])), KV.get(str(r["bmm_dtype"]))
        heads = im.num(r, "num_heads", t)
        if op is None or dt is None or heads not in HEADS:
            continue
        keyed.setdefault((op, dt, im.num(r, "num_tokens", t), heads), []).append(
            im.num(r, "latency", t, float) * im.MS)
    rows, dups = im.median_of_duplicates(keyed)
    sel = (f"op_name mla_gen_pre/mla_gen_post as pre/post; bmm_dtype bfloat16/fp8 as bf16/fp8; num_heads "
           f"{', '.join(map(str, HEADS))}; {im.dup_note(dups)}; {len(rows)} of {len(t.rows)} rows")
    meta = im.common_meta("mla_bmm", ctx, system, t.devices(), engine, ver, [t], im.timing_of(ctx["root"], rel), sel)
    meta.append(("kernel_source", im.kernel_sources(t, t.rows)))
    return "mla_bmm.tsv", im.write_tsv(os.path.join(out, "mla_bmm.tsv"), meta,
                                       ("op", "dtype", "tokens", "heads", "time_s"),
                                       [(*key, im.fmt_time(s)) for key, s in rows])


def import_mla(im, ctx, out_root, systems, engines):
    """Write every system's and engine's MLA tables; {relative path: rows}.  A system or engine
    without an mla/ folder gets none (the README says which engines have what)."""
    counts, said = {}, []
    for system in systems:
        if system not in SYSTEMS_READY:
            continue
        for engine in engines:
            out = os.path.join(out_root, system, engine)
            kernel = newest(im, ctx["root"], f"systems/data/{system}/mla/{engine}",
                            ("context_mla_perf", "generation_mla_perf"))
            module = None if kernel else newest(im, ctx["root"], f"systems/data/{system}/mla/{engine}",
                                                ("mla_context_module_perf", "mla_generation_module_perf"))
            for decode in (True, False):
                if kernel or module:
                    f, n = import_kernel(im, ctx, system, engine, kernel or module, out, decode, module is not None)
                    counts[f"{system}/{engine}/{f}"] = n
            bmm = newest(im, ctx["root"], f"systems/data/{system}/mla_bmm/{engine}", ("mla_bmm_perf",))
            if bmm:
                f, n = import_bmm(im, ctx, system, engine, bmm, out)
                counts[f"{system}/{engine}/{f}"] = n
            said.append(f"{system}/{engine}: " + (f"kernel tables {kernel}" if kernel else
                                                  f"module tables only {module}" if module else "no MLA tables")
                        + (f", bmm {bmm}" if bmm else ", no bmm table"))
    with open(os.path.join(out_root, "README.md"), "a", encoding="utf-8", newline="\n") as f:
        f.write(SECTION.format(engines="Imported: " + "; ".join(said) + "."))
    return counts
