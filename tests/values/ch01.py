"""Chapter 1, the decode roofline: every value of build/values/ch01/ derived
again from code/specs/gpus.tsv, models.tsv and calibrations.tsv and the
formulas of lib/ (see tests/values/README.md)."""
import math

import data
from lib import ceilings, memory, model, roofline, step
from lib.model import Precision

GB, KiB, MB = 1e9, 1024.0, 1e6

ECHOED = {
    # the memory policy the chapter states (vLLM's defaults)
    "ch01_usable_pct",          # 90 % of the driver's capacity usable
    "ch01_act_tokens",          # the activation reserve's 8192 batched tokens
    "ch01_sampled_tokens",      # and its 256 sampled positions
    # gpus.tsv, as printed
    "ch01_h100_driver_mib",     # driver_mib of the h100 row
    "ch01_h100_datasheet_gb",   # hbm_gb of the h100 row
    "ch01_allreduce_latency_us",  # allreduce_us of the h100 row
    "ch01_link_gbs",            # link_gb_s of the h100 row
    *(f"ch01_bf16_tflops_{k}" for k in ("h100", "h200", "a100", "b200", "mi300x", "l40s")),  # bf16_tflops
    *(f"ch01_hbm_tbs_{k}" for k in ("h100", "h200", "a100", "b200", "mi300x", "l40s")),      # hbm_tb_s
    # the printed book's exercise variant (seed 0): its drawn inputs
    "ch01_ex1_gpu_a", "ch01_ex1_gpu_b",       # the two GPUs exercise 1 compares
    "ch01_ex2_budget_gb", "ch01_ex2_context",  # exercise 2's cache budget and context
    "ch01_ex3_context", "ch01_ex3_usable_pct",  # exercise 3's usable share
    "ch01_ex4_tp", "ch01_ex4_context",        # exercise 4's shape
    "ch01_ex5_tp", "ch01_ex5_context", "ch01_ex5_gpu",  # exercise 5's shape and GPU
    "ch01_ex6_tp", "ch01_ex6_batch", "ch01_ex6_context",  # exercise 6's shape
    "ch01_ex7_small_batch", "ch01_ex7_large_batch",  # exercise 7's batches
    "ch01_ex8_gpu", "ch01_ex8_context",       # exercise 8's GPU and context
}

MEASURED = set()  # chapter 1 times nothing

TOL = {}  # every value to its printed precision

BF16 = Precision.uniform("bf16")
CTXS = (("1k", 1024), ("4k", 4096), ("32k", 32768))


def _value_key(key):
    return "".join(c for c in key if c.isalnum() and c.isascii()).lower()


def _ridges(gp):
    out = {}
    for key, g in gp.items():
        k = _value_key(key)
        for d in ("bf16", "fp8", "int8"):
            p = roofline.peak(g, d)
            out[f"ch01_ridge_{k}_{d}"] = roofline.ridge(p, g["mem_bw"]) if p > 0 else "none"
        out[f"ch01_bf16_tflops_{k}"] = g["flops"]["bf16"] / 1e12
        out[f"ch01_hbm_tbs_{k}"] = g["mem_bw"] / 1e12
        out[f"ch01_bf16_sparse_tflops_{k}"] = 2 * g["flops"]["bf16"] / 1e12  # the datasheet's 2:4 figure
        out[f"ch01_hbm_gb_{k}"] = g["mem_bytes"] / GB
        if key in ceilings.BABELSTREAM:
            c = ceilings.BABELSTREAM[key]
            out[f"ch01_read_pct_{k}"] = 100 * c["read"] / g["mem_bw"]
            out[f"ch01_copy_pct_{k}"] = 100 * c["copy"] / g["mem_bw"]
    return out


def _fit_chain(m, g):
    out = {}
    pc = model.params(m)
    kv_tok = model.kv_bytes_per_token(m, "bf16")
    out["ch01_params70_b"] = pc["total"] / 1e9
    out["ch01_w70_gb"] = model.weight_bytes(m, "bf16") / GB
    out["ch01_kv_tok_70b"] = kv_tok
    out["ch01_kv_tok_70b_kib"] = kv_tok / KiB
    out["ch01_kv_seq4k_70b_gb"] = kv_tok * 4096 / GB
    out["ch01_usable_pct"] = memory.POLICY["usable"] * 100
    out["ch01_act_tokens"] = memory.POLICY["activation_tokens"]
    out["ch01_sampled_tokens"] = memory.POLICY["sampled_tokens"]
    sheet_policy = dict(memory.POLICY, capacity=g["mem_bytes_datasheet"])
    drv, sheet = memory.plan(m, g, BF16, 4), memory.plan(m, g, BF16, 4, sheet_policy)
    out["ch01_h100_driver_gb"] = g["mem_bytes"] / GB
    out["ch01_h100_driver_mib"] = g["mem_bytes"] / (1024 * 1024)
    out["ch01_h100_driver_gib"] = g["mem_bytes"] / 1024 ** 3
    out["ch01_h100_datasheet_gb"] = g["mem_bytes_datasheet"] / GB
    out["ch01_h100_usable_gb"] = drv["usable"] / GB
    out["ch01_h100_usable_datasheet_gb"] = sheet["usable"] / GB
    b_drv, b_sheet = memory.max_batch(drv, 4096), memory.max_batch(sheet, 4096)
    out["ch01_tp4_b4k_datasheet"] = b_sheet
    out["ch01_tp2_left_datasheet_gb"] = memory.plan(m, g, BF16, 2, sheet_policy)["kv_budget"] / GB
    out["ch01_tp4_b4k_driver_gain_pct"] = 100.0 * (b_drv - b_sheet) / b_sheet
    tok, smp = memory.POLICY["activation_tokens"], memory.POLICY["sampled_tokens"]
    act = model.activation_bytes(m, tok, smp, "bf16", 4)
    act_nolog = model.activation_bytes(m, tok, 0, "bf16", 4)
    out["ch01_tp4_act_logits_mb"] = (act - act_nolog) / MB
    out["ch01_tp4_act_stream_mb"] = act_nolog / MB
    out["ch01_tp4_act_all_logits_gb"] = model.activation_bytes(m, tok, tok, "bf16", 4) / GB
    ridge_b = round(roofline.ridge_batch(g, BF16))
    out["ch01_ridge_batch"] = ridge_b
    for tp in (2, 4, 8):
        p = memory.plan(m, g, BF16, tp)
        pre = f"ch01_tp{tp}"
        out[pre + "_weights_gb"] = p["weights"] / GB
        out[pre + "_act_gb"] = p["activations"] / GB
        out[pre + "_kv_tok"] = p["kv_per_token"]
        out[pre + "_kv_tok_kib"] = p["kv_per_token"] / KiB
        out[pre + "_left_gb"] = p["kv_budget"] / GB
        out[pre + "_model_fits"] = "yes" if p["fits"] else "no"
        out[pre + "_kv_tokens_k"] = memory.kv_token_capacity(p) / 1e3
        for cn, ctx in CTXS:
            b = memory.max_batch(p, ctx) if p["fits"] else 0
            c = step.step_cost(m, g, ridge_b, ctx, tp, BF16)
            out[f"{pre}_b{cn}"] = b
            out[f"{pre}_fits_ridge_{cn}"] = "yes" if b >= ridge_b else "no"
            out[f"{pre}_ridge_{cn}_kvw"] = c["kv"] / c["weight"]
            out[f"{pre}_ridge_{cn}_intensity"] = c["intensity"]
            out[f"{pre}_ridge_{cn}_bound"] = c["bound"]
            if b >= ridge_b:  # a step time only for a batch that is held
                out[f"{pre}_ridge_{cn}_ms"] = c["time"] * 1e3
            out[f"{pre}_ridge_{cn}_compute_pct"] = 100 * c["time_compute"] / c["time_memory"]
    return out


def _batch_sweep(m, g):
    out = {}
    tp = 4
    p = memory.plan(m, g, BF16, tp)
    for cn, ctx in CTXS:
        out[f"ch01_marginal_intensity_{cn}"] = step.marginal_intensity(m, g, ctx, tp, BF16)
        cross = step.compute_bound_batch(m, g, ctx, tp, BF16, 1 << 16)
        out[f"ch01_compute_bound_batch_{cn}"] = cross if cross else "none"
        out[f"ch01_compute_bound_fits_{cn}"] = "yes" if cross and memory.fits(p, cross, ctx) else "no"
        for b in (1, 16, 64, 256):
            if not memory.fits(p, b, ctx):
                continue
            c = step.step_cost(m, g, b, ctx, tp, BF16)
            out[f"ch01_sweep_{cn}_b{b}_ms"] = c["time"] * 1e3
            out[f"ch01_sweep_{cn}_b{b}_user_tps"] = 1 / c["time"]
            out[f"ch01_sweep_{cn}_b{b}_total_tps"] = b / c["time"]
        fit = memory.max_batch(p, ctx)
        if fit > 0:
            c = step.step_cost(m, g, fit, ctx, tp, BF16)
            out[f"ch01_sweep_{cn}_fit_ms"] = c["time"] * 1e3
            out[f"ch01_sweep_{cn}_fit_user_tps"] = 1 / c["time"]
            out[f"ch01_sweep_{cn}_fit_total_tps"] = fit / c["time"]
            out[f"ch01_sweep_{cn}_fit_intensity"] = c["intensity"]
    return out


def _step_ops(m, g):
    out = {}
    tp, batch, ctx = 4, 64, 4096
    c = step.step_cost(m, g, batch, ctx, tp, BF16)
    by_kind, count = {}, 0
    for op in c["ops"]:
        count += op["reps"]
        by_kind[op["kind"]] = by_kind.get(op["kind"], 0.0) + op["t"]
        if op["kind"] not in model.COMM_KINDS:
            nbytes = op["w"] + op["kv"] + op["act"]
            out[f"ch01_op_{op['name']}_intensity"] = op["flop"] / nbytes
    out["ch01_step_intensity"] = c["intensity"]
    out["ch01_step_ms"] = c["time"] * 1e3
    out["ch01_step_weight_gb"] = c["weight"] / GB
    out["ch01_step_kv_gb"] = c["kv"] / GB
    out["ch01_step_act_gb"] = c["act"] / GB
    out["ch01_step_weight_pct"] = 100 * c["weight"] / c["bytes"]
    out["ch01_step_kv_pct"] = 100 * c["kv"] / c["bytes"]
    out["ch01_step_act_pct"] = 100 * c["act"] / c["bytes"]
    out["ch01_step_attn_time_pct"] = 100 * by_kind["attention"] / c["time"]
    out["ch01_step_proj_time_pct"] = 100 * (by_kind["projection"] + by_kind["logits"]) / c["time"]
    out["ch01_step_small_time_pct"] = 100 * (by_kind["norm"] + by_kind["elementwise"] + by_kind["embedding"]) / c["time"]
    out["ch01_step_compute_pct"] = 100 * c["time_compute"] / c["time"]
    out["ch01_step_comm_ms"] = c["time_comm"] * 1e3
    out["ch01_step_comm_pct"] = 100 * c["time_comm"] / c["time"]
    out["ch01_step_allreduce_us"] = 1e6 * roofline.allreduce_time(g, tp, batch * m["hidden"] * 2.0)
    out["ch01_allreduce_latency_us"] = 1e6 * g["allreduce_latency"]
    out["ch01_link_gbs"] = g["link_bw"] / GB
    out["ch01_step_nocomm_ms"] = (c["time"] - c["time_comm"]) * 1e3
    out["ch01_step_collectives"] = 2 * m["layers"] + 2  # two per layer, the embedding's, the logits gather
    for t in (4, 8):
        c1 = step.step_cost(m, g, 1, ctx, t, BF16)
        out[f"ch01_comm_b1_tp{t}_pct"] = 100 * c1["time_comm"] / c1["time"]
        out[f"ch01_comm_b1_tp{t}_ms"] = c1["time_comm"] * 1e3
        out[f"ch01_step_b1_tp{t}_ms"] = c1["time"] * 1e3
    out["ch01_step_tflops"] = c["flop"] / c["time"] / 1e12
    out["ch01_step_gqa_group"] = m["heads"] // m["kv_heads"]
    out["ch01_step_op_count"] = count
    out["ch01_step_op_count_1us_pct"] = 100 * count * 1e-6 / c["time"]
    return out


QUANT = (("bf16", Precision.uniform("bf16")),
         ("w8a16", Precision("int8", "bf16", "bf16", "bf16")),  # int8 weights, bf16 math
         ("w8kv8", Precision("int8", "fp8", "bf16", "bf16")),   # and an fp8 cache
         ("fp8", Precision.uniform("fp8")))                     # fp8 tensor cores


def _quantized(m, g):
    out = {}
    tp, ctx, batch = 4, 4096, 64
    for key, prec in QUANT:
        p = memory.plan(m, g, prec, tp)
        fit = memory.max_batch(p, ctx)
        c = step.step_cost(m, g, batch, ctx, tp, prec)
        cf = step.step_cost(m, g, fit, ctx, tp, prec)
        pre = f"ch01_q_{key}_"
        out[pre + "weights_gb"] = p["weights"] / GB
        out[pre + "kv_tok_kib"] = p["kv_per_token"] / KiB
        out[pre + "left_gb"] = p["kv_budget"] / GB
        out[pre + "b4k"] = fit
        out[pre + "ridge"] = roofline.ridge(roofline.peak(g, prec.compute), g["mem_bw"])
        out[pre + "ridge_batch"] = roofline.ridge_batch(g, prec)
        out[pre + "b64_ms"] = c["time"] * 1e3
        out[pre + "b64_user_tps"] = 1 / c["time"]
        out[pre + "fit_ms"] = cf["time"] * 1e3
        out[pre + "fit_total_tps"] = fit / cf["time"]
        out[pre + "fit_intensity"] = cf["intensity"]
        out[pre + "fit_bound"] = cf["bound"]
    # the int8-weight, fp8-KV ceiling: its projections, and fp8 math at that batch
    w8 = dict(QUANT)["w8kv8"]
    w8f = Precision("fp8", "fp8", "bf16", "fp8")
    b = memory.max_batch(memory.plan(m, g, w8, tp), ctx)
    c16, c8 = step.step_cost(m, g, b, ctx, tp, w8), step.step_cost(m, g, b, ctx, tp, w8f)
    proj = [op for op in c16["ops"] if op["kind"] in model.PROJECTION_KINDS]
    proj_all = sum(op["t"] for op in proj)
    out["ch01_q_w8kv8_fit_proj_compute_pct"] = 100 * sum(op["t"] for op in proj if op["bound"] == "compute") / proj_all
    gate_up = next(op for op in proj if op["name"] == "gate_up_proj")
    out["ch01_q_w8kv8_fit_gate_up_intensity"] = gate_up["flop"] / (gate_up["w"] + gate_up["kv"] + gate_up["act"])
    out["ch01_q_w8kv8_fit_gate_up_bound"] = gate_up["bound"]
    out["ch01_q_w8kv8_fit_proj_time_pct"] = 100 * proj_all / c16["time"]
    out["ch01_q_w8f8_fit_ms"] = c8["time"] * 1e3
    out["ch01_q_w8f8_fit_total_tps"] = b / c8["time"]
    out["ch01_q_fp8math_gain_pct"] = 100 * (c16["time"] / c8["time"] - 1)
    p2 = memory.plan(m, g, Precision.uniform("fp8"), 2)
    out["ch01_q_fp8_tp2_weights_gb"] = p2["weights"] / GB
    out["ch01_q_fp8_tp2_b4k"] = memory.max_batch(p2, ctx)
    return out


def _calibrated(m, g):
    cal = data.calibrations()["published:h100_sxm/trtllm"]
    a = step.step_cost(m, g, 64, 4096, 4, BF16)
    b = step.step_cost(m, g, 64, 4096, 4, BF16, cal=cal)
    return {"ch01_cal_step_roof_ms": a["time"] * 1e3,
            "ch01_cal_step_ms": b["time"] * 1e3,
            "ch01_cal_step_gap_pct": (b["time"] / a["time"] - 1) * 100,
            "ch01_cal_user_tps": 1 / b["time"],
            "ch01_cal_total_tps": 64 / b["time"],
            "ch01_cal_comm_ms": b["time_comm"] * 1e3,
            "ch01_cal_comm_roof_ms": a["time_comm"] * 1e3}


def _exercise_variant(gp):
    """The seed-0 variant's values that follow from the tables: exercise 1's
    pair is the B200 and the MI300X (the printed variant's, echoed as
    ch01_ex1_gpu_a and _b), exercise 5's GPU and 8's the H100."""
    out = {}
    for side, key in (("a", "b200"), ("b", "mi300x")):
        g = gp[key]
        out[f"ch01_ex1_{side}_bf16"] = g["flops"]["bf16"] / 1e12
        out[f"ch01_ex1_{side}_fp8"] = g["flops"]["fp8"] / 1e12
        out[f"ch01_ex1_{side}_tbs"] = g["mem_bw"] / 1e12
    out["ch01_ex5_driver_gb"] = gp["h100"]["mem_bytes"] / GB
    # the chapter's reserve, the activations of an 8192-token step on one GPU
    # (LLaMA-3-8B alone in 3; LLaMA-3-70B at the printed variant's TP 8 in 4
    # and TP 4 in 5), printed to the MB
    mt = data.models()
    for name, key, tp in (("ch01_ex3_reserve_gb", "llama3-8b", 1), ("ch01_ex4_reserve_gb", "llama3-70b", 8),
                          ("ch01_ex5_reserve_gb", "llama3-70b", 4)):
        out[name] = _chapter_reserve_gb(mt[key], tp)
    out["ch01_ex8_ridge_batch"] = round(roofline.ridge_batch(gp["h100"], BF16))
    return out


def _chapter_reserve_gb(m, tp):
    """The chapter's activation reserve in GB, rounded to the MB as the
    exercises print it (their answers use the printed figure)."""
    pol = memory.POLICY
    return round(model.activation_bytes(m, pol["activation_tokens"], pol["sampled_tokens"], "bf16", tp) / 1e6) / 1e3


def derive():
    gp, mt = data.gpus(), data.models()
    m, g = mt["llama3-70b"], gp["h100"]
    out = {}
    for part in (_ridges(gp), _fit_chain(m, g), _batch_sweep(m, g), _step_ops(m, g), _quantized(m, g),
                 _calibrated(m, g), _exercise_variant(gp)):
        out.update(part)
    return out


# ---- the exercises' answers, from a variant's printed inputs ----


def _estimate(with_act, without_act):
    """A part a hand estimate answers is judged in a range: the step model's
    number with and without the activations' bytes, 2 % wider each side;
    the key is its middle."""
    lo, hi = min(with_act, without_act) * 0.98, max(with_act, without_act) * 1.02
    return (lo + hi) / 2


def practice(seed, inputs):
    gp, mt = data.gpus(), data.models()
    v = {k: data.printed(t) for k, t in inputs.items() if not k.endswith(("_gpu", "_gpu_a", "_gpu_b"))}
    out = {}
    # 1: each GPU's tensor cores on the other's memory, from the datasheet
    # figures as printed
    for cores, mem, ids in (("a", "b", ("1.1(a1)", "1.1(a2)")), ("b", "a", ("1.1(a3)", "1.1(a4)"))):
        bw = v[f"ch01_ex1_{mem}_tbs"]
        out[ids[0]] = v[f"ch01_ex1_{cores}_bf16"] / bw
        out[ids[1]] = v[f"ch01_ex1_{cores}_fp8"] / bw
    # 2: what grouped-query attention buys
    mha, gqa = mt["llama2-13b"], mt["llama3-8b"]
    kv13, kv8 = model.kv_bytes_per_token(mha, "bf16"), model.kv_bytes_per_token(gqa, "bf16")
    budget, ctx2 = v["ch01_ex2_budget_gb"] * GB, v["ch01_ex2_context"]
    out["1.2(a1)"], out["1.2(a2)"] = kv13, kv8
    out["1.2(b1)"] = math.floor(budget / (kv13 * ctx2))
    out["1.2(b2)"] = math.floor(budget / (kv8 * ctx2))
    out["1.2(c)"] = gqa["heads"] / gqa["kv_heads"]
    # 3: LLaMA-3-8B alone on an H200, the exercise's policy
    h200 = gp["h200"]
    usable, reserve = v["ch01_ex3_usable_pct"] / 100, v["ch01_ex3_reserve_gb"] * GB
    pol = memory.exercise_policy(usable)
    ctx3 = int(v["ch01_ex3_context"])
    b3 = memory.max_batch(memory.plan(gqa, h200, BF16, 1, pol, extra=reserve), ctx3)
    out["1.3(a)"] = b3
    out["1.3(b)"] = roofline.ridge(h200["flops"]["bf16"], h200["mem_bw"])
    c = step.step_cost(gqa, h200, b3, ctx3, 1, BF16)
    out["1.3(c)"] = c["kv"] / c["weight"]
    # 4: LLaMA-3-70B on H200s at their ridge batch, exercise 3's policy
    m70 = mt["llama3-70b"]
    tp4, ctx4 = int(v["ch01_ex4_tp"]), int(v["ch01_ex4_context"])
    p4 = memory.plan(m70, h200, BF16, tp4, pol, extra=v["ch01_ex4_reserve_gb"] * GB)
    out["1.4(a1)"] = p4["weights"] / GB
    out["1.4(a2)"] = p4["kv_per_token"]
    out["1.4(b)"] = memory.max_batch(p4, ctx4)
    ridge = round(roofline.ridge_batch(h200, BF16))
    c = step.step_cost(m70, h200, ridge, ctx4, tp4, BF16)
    out["1.4(c1)"] = c["kv"] / c["weight"]
    out["1.4(c2)"] = _estimate(c["intensity"], c["flop"] / (c["weight"] + c["kv"]))
    # 5: int8 weights and cache; 90 % usable and the chapter's reserve kept
    g5 = gp[inputs["ch01_ex5_gpu"].lower()]
    tp5, ctx5 = int(v["ch01_ex5_tp"]), int(v["ch01_ex5_context"])
    pol5 = memory.exercise_policy(0.9)
    res5 = v["ch01_ex5_reserve_gb"] * GB
    out["1.5(a1)"] = memory.max_batch(memory.plan(m70, g5, BF16, tp5, pol5, extra=res5), ctx5)
    out["1.5(a2)"] = memory.max_batch(memory.plan(m70, g5, Precision("int8", "int8", "bf16", "bf16"), tp5, pol5,
                                                  extra=res5), ctx5)
    r16, r8 = (roofline.ridge(g5["flops"][d], g5["mem_bw"]) for d in ("bf16", "int8"))
    out["1.5(b)"] = r16 / 2  # a one-byte weight brings 2 FLOP per byte per sequence
    out["1.5(c1)"] = r8
    out["1.5(c2)"] = r8 / 2
    # 6: pace against throughput on H100s, the roofline with the all-reduces
    h100 = gp["h100"]
    tp6, b6, ctx6 = int(v["ch01_ex6_tp"]), int(v["ch01_ex6_batch"]), int(v["ch01_ex6_context"])
    c1, cb = step.step_cost(m70, h100, 1, ctx6, tp6, BF16), step.step_cost(m70, h100, b6, ctx6, tp6, BF16)

    def by_hand(c):  # weights and cache over the bandwidth, plus the collectives
        return (c["weight"] + c["kv"]) / h100["mem_bw"] + c["time_comm"]

    t1, tb, h1, hb = c1["time"], cb["time"], by_hand(c1), by_hand(cb)
    out["1.6(a1)"] = _estimate(1 / t1, 1 / h1)
    out["1.6(a2)"] = _estimate(1 / tb, 1 / hb)
    out["1.6(b)"] = _estimate(b6 / tb, b6 / hb)
    out["1.6(c1)"] = _estimate(b6 * t1 / tb, b6 * h1 / hb)
    out["1.6(c2)"] = _estimate(tb / t1, hb / h1)
    # 7: a mixture of experts at decode, one GPU, a one-token context
    mx = mt["mixtral-8x7b"]
    pc = model.params(mx)
    out["1.7(a1)"], out["1.7(a2)"] = pc["total"] / 1e9, pc["active"] / 1e9
    for pid, b in (("1.7(b1)", 1), ("1.7(b2)", v["ch01_ex7_small_batch"]), ("1.7(b3)", v["ch01_ex7_large_batch"])):
        out[pid] = step.step_cost(mx, h100, int(b), 1, 1, BF16)["weight"] / GB
    # 8: the interview follow-up, the chapter's memory policy
    g8 = gp[inputs["ch01_ex8_gpu"].lower()]
    ctx8 = int(v["ch01_ex8_context"])
    ridge8 = round(roofline.ridge_batch(g8, BF16))
    out["1.8(a)"] = memory.max_batch(memory.plan(m70, g8, BF16, 4), ctx8)
    out["1.8(b)"] = memory.max_batch(memory.plan(m70, g8, BF16, 8), ctx8)
    c = step.step_cost(m70, g8, ridge8, ctx8, 8, BF16)
    out["1.8(c)"] = _estimate(c["intensity"], c["flop"] / (c["weight"] + c["kv"]))
    return out
