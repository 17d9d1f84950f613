"""Chapter 6, many fine-tunes: every value of build/values/ch06/ derived
again: adapter sizes and slots (lib/lora.py, lib/memory.py), the decode step
with adapters (lib/step.py plus lib/lora.py), popularity (closed forms and a
simulation of the stated admission rule), and the committed CPU measurement
(figures/measured/cpu-amd-epyc-2c/lora_bgmv.tsv) read again."""
import random

import data
from lib import lora, memory, model, roofline, step
from lib.model import Precision

GB, MB, TB = 1e9, 1e6, 1e12
BF16 = Precision.uniform("bf16")
ALL, QKVO = lora.MODULES, lora.ATTENTION
CONTEXT = 4096
LAUNCH_S = 2.5e-6  # the chapter's assumed fixed cost of one small kernel
CPU_SET = ("figures", "measured", "cpu-amd-epyc-2c", "lora_bgmv.tsv")

ECHOED = {
    "ch06_pop_adapters",      # popularity.c: three hundred adapters
    "ch06_pop_trials",        # and 4000 simulated batches
    "ch06_tenants",           # sizes.c: three hundred tenants
    "ch06_launch_us",         # the assumed 2.5 us per adapter kernel (lora.h)
    # the committed CPU measurement's provenance, as recorded
    "ch06_cpu_device", "ch06_cpu_cores", "ch06_cpu_date",
    # the printed book's exercise variant (seed 0): its drawn inputs
    "ch06_ex1_rank", "ch06_ex2_tp", "ch06_ex3_context", "ch06_ex3_slot_rank",
    "ch06_ex4_batch", "ch06_ex4_distinct", "ch06_ex4_launch_us",
    "ch06_ex5_tokens", "ch06_ex5_distinct", "ch06_ex5_tenant_rank", "ch06_ex5_slot_rank",
    "ch06_ex6_adapters", "ch06_ex6_batch", "ch06_ex7_step_ms",
}

MEASURED = set()  # chapter 6 times nothing on the build machine

# popularity.c's simulations (4000 batches, its own seeded stream) are
# checked against the closed form or against an independent simulation:
SIM_TRIALS = 20000
TOL = {
    # the simulated mean distinct count against the exact expectation: the
    # standard error of a 4000-batch mean is sd/sqrt(4000) = 3.4/63 = 0.054;
    # three of them
    "ch06_pop_sim_zipf1_b64": ("abs", 0.16),
    # its standard deviation against the exact one: the sample sd of 4000
    # has a standard error of about sd/sqrt(2*4000) = 0.04; three of them
    "ch06_pop_sim_zipf1_b64_sd": ("abs", 0.12),
    # admitted requests with 8 slots: the C's 4000-batch mean against this
    # file's SIM_TRIALS-batch one; the admitted count's sd is 1.24 (uniform)
    # and 5.64 (Zipf 1.0), so the standard errors are 0.020 and 0.089 for
    # the C and 0.009 and 0.040 here: three combined standard errors
    "ch06_slots8_uniform_admitted": ("abs", 0.07),
    "ch06_slots8_zipf1_admitted": ("abs", 0.3),
}
# ch06_slots_95_*: the fewest slots whose mean admitted reaches 95 % of 64
# (60.8), a whole number: the printed precision's one count either way
# covers the C's noise at the threshold (Zipf 1.0: 60.89 expected at 36
# slots, two standard errors of its 4000-batch mean above 60.8).


def _sizes(m8, m70):
    out = {}
    for mk, m in (("8b", m8), ("70b", m70)):
        base = model.params(m)["total"]
        for sk, targets in (("qkvo", QKVO), ("all", ALL)):
            for r in (8, 16, 64):
                p = lora.adapter_params(m, r, targets)
                pre = f"ch06_{mk}_{sk}_r{r}"
                out[pre + "_mb"] = p * 2 / MB
                out[pre + "_mparams"] = p / 1e6
                out[pre + "_pct"] = 100 * p / base
    out["ch06_8b_q_layer"] = lora.module_params(m8, "q", 16)
    out["ch06_8b_k_layer"] = lora.module_params(m8, "k", 16)
    out["ch06_8b_up_layer"] = lora.module_params(m8, "up", 16)
    out["ch06_8b_kv_width"] = m8["kv_heads"] * m8["head_dim"]
    out["ch06_70b_kv_width"] = m70["kv_heads"] * m70["head_dim"]
    for mk, m in (("8b", m8), ("70b", m70)):
        out[f"ch06_{mk}_layers"] = m["layers"]
        out[f"ch06_{mk}_hidden"] = m["hidden"]
    out["ch06_8b_ffn"] = m8["ffn"]
    # the GQA trap: k and v taken as hidden x hidden, so every module r * 2 * hidden
    right = lora.adapter_params(m70, 16, QKVO)
    square = m70["layers"] * 4 * 16 * 2 * m70["hidden"]
    out["ch06_70b_qkvo_r16_square_mparams"] = square / 1e6
    out["ch06_gqa_overcount_pct"] = 100 * (square / right - 1)
    whole, per_gpu = lora.adapter_bytes(m70, 16, QKVO), lora.adapter_bytes(m70, 16, QKVO, tp=4)
    out["ch06_70b_qkvo_r16_tp4_mb"] = per_gpu / MB
    out["ch06_70b_qkvo_r16_tp4_share_pct"] = 100 * per_gpu / whole
    # three hundred tenants on 4 GPUs each: full copies against one base plus adapters
    tenants, tp = 300, 4
    base_bytes = model.weight_bytes(m70, "bf16")
    out["ch06_tenants"] = tenants
    out["ch06_copies_gpus"] = tenants * tp
    out["ch06_adapters_gpus"] = tp
    out["ch06_copies_tb"] = tenants * base_bytes / TB
    out["ch06_adapters_gb"] = (base_bytes + tenants * whole) / GB
    out["ch06_all_adapters_gb"] = tenants * whole / GB
    out["ch06_70b_base_gb"] = base_bytes / GB
    out["ch06_copies_fifty_gpus"] = 50 * tp
    return out


def _plan(m, g, tp, rank, targets, slots):
    return memory.plan(m, g, BF16, tp, extra=slots * lora.adapter_bytes(m, rank, targets, tp))


def _slots(m8, m70, g):
    out = {}
    q16, a64 = lora.adapter_bytes(m70, 16, QKVO, 4), lora.adapter_bytes(m70, 64, ALL, 4)
    none = _plan(m70, g, 4, 16, QKVO, 0)
    seq = none["kv_per_token"] * CONTEXT
    out["ch06_kv_seq_mb"] = seq / MB
    out["ch06_slot_qkvo_r16_mb"] = q16 / MB
    out["ch06_slot_all_r64_mb"] = a64 / MB
    out["ch06_slot_all_r64_seqs"] = a64 / seq
    out["ch06_slot_qkvo_r16_seqs"] = q16 / seq
    out["ch06_max_batch_0"] = memory.max_batch(none, CONTEXT)
    out["ch06_kv_budget_gb"] = none["kv_budget"] / GB
    for s in (8, 32, 64, 128):
        out[f"ch06_max_batch_qkvo_r16_s{s}"] = memory.max_batch(_plan(m70, g, 4, 16, QKVO, s), CONTEXT)
        out[f"ch06_max_batch_all_r64_s{s}"] = memory.max_batch(_plan(m70, g, 4, 64, ALL, s), CONTEXT)
    q64 = lora.adapter_bytes(m70, 64, QKVO, 4)
    out["ch06_pad_64_over_16"] = q64 / q16
    b16 = memory.max_batch(_plan(m70, g, 4, 16, QKVO, 64), CONTEXT)
    b64 = memory.max_batch(_plan(m70, g, 4, 64, QKVO, 64), CONTEXT)
    out["ch06_max_batch_qkvo_r64_s64"] = b64
    out["ch06_pad_batch_lost"] = b16 - b64
    e0 = _plan(m8, g, 1, 64, ALL, 0)
    out["ch06_8b_slot_all_r64_mb"] = lora.adapter_bytes(m8, 64, ALL) / MB
    out["ch06_8b_kv_seq_mb"] = e0["kv_per_token"] * CONTEXT / MB
    out["ch06_8b_max_batch_0"] = memory.max_batch(e0, CONTEXT)
    out["ch06_8b_max_batch_all_r64_s64"] = memory.max_batch(_plan(m8, g, 1, 64, ALL, 64), CONTEXT)
    # a miss loads each GPU's shard over its own PCIe link
    out["ch06_pcie_gb_s"] = g["host_bw"] / GB
    out["ch06_load_qkvo_r16_ms"] = 1e3 * q16 / g["host_bw"]
    out["ch06_load_all_r64_ms"] = 1e3 * a64 / g["host_bw"]
    out["ch06_host_300_qkvo_r16_gb"] = 300 * lora.adapter_bytes(m70, 16, QKVO) / GB
    out["ch06_host_300_all_r64_gb"] = 300 * lora.adapter_bytes(m70, 64, ALL) / GB
    return out


def _adapter_step(m, g, tp, batch, distinct, launch_s, rank=16, targets=QKVO):
    base = step.step_cost(m, g, batch, CONTEXT, tp, BF16)
    a = lora.adapter_step(m, g, rank, targets, tp, batch, distinct, launch_s, roofline.peak(g, "bf16"))
    a["base"] = base
    a["time"] = base["time"] + a["time_adapter"]
    a["ratio"] = a["time"] / base["time"]
    return a


def _step(m8, m70, g, a100):
    out = {}
    batch = 64
    for key, m, tp in (("ch06_visible70", m70, 4), ("ch06_visible8", m8, 1)):
        out[key] = next((d for d in range(1, batch + 1)
                         if _adapter_step(m, g, tp, batch, d, 0.0)["ratio"] >= 1.05), 0)
    d1, d8, d64 = (_adapter_step(m70, g, 4, batch, d, LAUNCH_S) for d in (1, 8, 64))
    d64o, d8o = _adapter_step(m70, g, 4, batch, 64, 0.0), _adapter_step(m70, g, 4, batch, 8, 0.0)
    base = d1["base"]
    out["ch06_base_ms"] = 1e3 * base["time"]
    out["ch06_base_weight_gb"] = base["weight"] / GB
    out["ch06_base_bytes_gb"] = base["bytes"] / GB
    out["ch06_ratio_d1"], out["ch06_ratio_d8"], out["ch06_ratio_d64"] = d1["ratio"], d8["ratio"], d64["ratio"]
    out["ch06_ratio_d64_say"] = d64["ratio"]  # the same ratio, as the key numbers say it
    out["ch06_ratio_d64_ops"], out["ch06_ratio_d8_ops"] = d64o["ratio"], d8o["ratio"]
    out["ch06_launches"] = d1["launches"]
    out["ch06_launch_us"] = 1e6 * LAUNCH_S
    out["ch06_launch_ms"] = 1e3 * d1["time_launch"]
    out["ch06_ops_d1_us"] = 1e6 * d1["time_ops"]
    out["ch06_ops_d64_ms"] = 1e3 * d64["time_ops"]
    out["ch06_adapter_mb_d8"] = d8["weight"] / MB
    out["ch06_adapter_gb_d64"] = d64["weight"] / GB
    out["ch06_adapter_act_mb"] = d8["act"] / MB
    out["ch06_adapter_pct_weights_d1"] = 100 * d1["weight"] / base["weight"]
    out["ch06_share_d8_pct"] = 100 * d8["time_adapter"] / d8["time"]
    out["ch06_share_d8_launch_pct"] = 100 * d8["time_launch"] / d8["time_adapter"]
    out["ch06_tps_base"] = batch / base["time"]
    out["ch06_tps_d8"] = batch / d8["time"]
    out["ch06_intensity_d1"] = d1["flop"] / d1["weight"]
    out["ch06_intensity_d64"] = d64["flop"] / d64["weight"]
    out["ch06_ridge_h100"] = roofline.ridge_batch(g, BF16)
    out["ch06_added_ms_d8"] = 1e3 * d8["time_adapter"]
    e1, e64 = _adapter_step(m8, g, 1, batch, 1, LAUNCH_S), _adapter_step(m8, g, 1, batch, 64, LAUNCH_S)
    out["ch06_8b_base_ms"] = 1e3 * e1["base"]["time"]
    out["ch06_8b_ratio_d1"], out["ch06_8b_ratio_d64"] = e1["ratio"], e64["ratio"]
    out["ch06_8b_ratio_d64_ops"] = _adapter_step(m8, g, 1, batch, 64, 0.0)["ratio"]
    for b in (1, 16, 64):  # as many distinct adapters as sequences, at most 8
        out[f"ch06_op_b{b}_ratio"] = _adapter_step(m70, g, 4, b, min(b, 8), LAUNCH_S)["ratio"]
    s8, s64 = (_adapter_step(m70, g, 4, batch, 8, LAUNCH_S, rank=r) for r in (8, 64))
    s8o, s64o = (_adapter_step(m70, g, 4, batch, 8, 0.0, rank=r) for r in (8, 64))
    out["ch06_pad_ratio_r8"], out["ch06_pad_ratio_r64"] = s8["ratio"], s64["ratio"]
    out["ch06_pad_ops_x"] = s64o["time_ops"] / s8o["time_ops"]
    # Punica's operator: one 4096 -> 4096 projection, rank 16, 64 tokens of 64 adapters
    sh, ex = lora.bgmv_ops(64, 4096, 4096, 16, 64)
    nbytes = sh["w"] + sh["act"] + ex["w"] + ex["act"]
    out["ch06_punica_mb"] = nbytes / MB
    out["ch06_punica_roof_us"] = 1e6 * nbytes / a100["mem_bw"]
    out["ch06_punica_pct"] = 100 * nbytes / 116e-6 / a100["mem_bw"]
    return out


def _popularity():
    out = {}
    n = 300
    uni, z1, z12 = lora.zipf_probs(n, 0.0), lora.zipf_probs(n, 1.0), lora.zipf_probs(n, 1.2)
    out["ch06_pop_adapters"] = n
    out["ch06_pop_trials"] = 4000
    out["ch06_pop_uniform_b64"] = lora.expected_distinct(uni, 64)
    out["ch06_pop_zipf1_b64"] = lora.expected_distinct(z1, 64)
    out["ch06_pop_zipf12_b64"] = lora.expected_distinct(z12, 64)
    out["ch06_pop_uniform_b256"] = lora.expected_distinct(uni, 256)
    out["ch06_pop_zipf1_b256"] = lora.expected_distinct(z1, 256)
    out["ch06_pop_sim_zipf1_b64"] = lora.expected_distinct(z1, 64)
    out["ch06_pop_sim_zipf1_b64_sd"] = lora.distinct_stddev(z1, 64)
    out["ch06_pop_top8_zipf1_pct"] = 100 * sum(z1[:8])
    rng = random.Random(6)
    target = 0.95 * 64
    for key, p in (("uniform", uni), ("zipf1", z1)):
        means, _ = lora.admitted_by_slots(p, 64, 64, SIM_TRIALS, rng)
        out[f"ch06_slots8_{key}_admitted"] = means[8]
        out[f"ch06_slots_95_{key}"] = next(s for s in range(1, 65) if means[s] >= target)
    return out


def _cpu():
    """The committed CPU run of the batched adapter operator, read again."""
    meta, rows = data.measured_run(*CPU_SET)
    first, last = rows[0], rows[-1]
    f = lambda r, c: float(r[c])
    read, comp = float(meta["read_ceiling_b_s"]), float(meta["compute_ceiling_flop_s"])

    def pred(r):  # the op's roofline from the run's two ceilings
        return roofline.roofline_time(f(r, "flop"), f(r, "bytes"), comp, read)[0]
    return {
        "ch06_cpu_device": meta["device"], "ch06_cpu_cores": meta["cores"], "ch06_cpu_date": meta["date"][:10],
        "ch06_cpu_read_gb_s": read / GB, "ch06_cpu_compute_gflops": comp / 1e9, "ch06_cpu_ridge": comp / read,
        "ch06_cpu_batch": f(first, "batch"), "ch06_cpu_dmax": f(last, "distinct"),
        "ch06_cpu_d1_ms": 1e3 * f(first, "time_s"), "ch06_cpu_dmax_ms": 1e3 * f(last, "time_s"),
        "ch06_cpu_rise_pct": 100 * (f(last, "time_s") / f(first, "time_s") - 1),
        "ch06_cpu_pred_d1_ms": 1e3 * pred(first), "ch06_cpu_pred_dmax_ms": 1e3 * pred(last),
        "ch06_cpu_gap_d1_pct": 100 * (f(first, "time_s") / pred(first) - 1),
        "ch06_cpu_gap_dmax_pct": 100 * (f(last, "time_s") / pred(last) - 1),
        "ch06_cpu_intensity_dmax": f(last, "flop") / f(last, "adapter_bytes"),
    }


def derive():
    gp, mt = data.gpus(), data.models()
    m8, m70, g = mt["llama3-8b"], mt["llama3-70b"], gp["h100"]
    out = {}
    for part in (_sizes(m8, m70), _slots(m8, m70, g), _step(m8, m70, g, gp["a100"]), _popularity(), _cpu()):
        out.update(part)
    return out


# ---- the exercises' answers, from a variant's printed inputs ----


def practice(seed, inputs):
    gp, mt = data.gpus(), data.models()
    m8, m70, g = mt["llama3-8b"], mt["llama3-70b"], gp["h100"]
    v = {k: data.printed(t) for k, t in inputs.items()}
    out = {}
    # 1: the 70B's q,k,v,o adapter and the blog's square count; the 8B's all-seven
    r = int(v["ch06_ex1_rank"])
    p = lora.adapter_params(m70, r, QKVO)
    out["6.1(a)"] = p / 1e6
    out["6.1(b)"] = 100 * (m70["layers"] * 4 * r * 2 * m70["hidden"] / p - 1)
    out["6.1(c)"] = p * 2 / MB
    out["6.1(d)"] = lora.adapter_params(m8, r, ALL) / 1e6
    # 2: one GPU's share at the drawn degree and at TP 8
    out["6.2(a1)"] = lora.adapter_bytes(m70, r, QKVO, int(v["ch06_ex2_tp"])) / MB
    out["6.2(a2)"] = lora.adapter_bytes(m70, r, QKVO, 8) / MB
    # 3: slots against the KV cache, 70B at TP 4
    ctx, sr = int(v["ch06_ex3_context"]), int(v["ch06_ex3_slot_rank"])
    for pid, rank, targets, slots in (("6.3(a1)", sr, ALL, 0), ("6.3(a2)", sr, ALL, 16), ("6.3(a3)", sr, ALL, 64),
                                      ("6.3(b1)", 16, QKVO, 16), ("6.3(b2)", 16, QKVO, 64)):
        out[pid] = memory.max_batch(_plan(m70, g, 4, rank, targets, slots), ctx)
    out["6.3(c)"] = lora.adapter_bytes(m70, sr, ALL, 4) / MB
    # 4: what the adapters add to the step, in percent (slots = distinct adapters)
    b, d, launch = int(v["ch06_ex4_batch"]), int(v["ch06_ex4_distinct"]), v["ch06_ex4_launch_us"] * 1e-6

    def added(batch, distinct, launch_s, rank=16):
        return 100 * (_adapter_step(m70, g, 4, batch, distinct, launch_s, rank=rank)["ratio"] - 1)

    out["6.4(a)"] = added(b, d, launch)
    out["6.4(b)"] = added(b, d, 0.0)
    out["6.4(c)"] = added(1, 1, launch)
    out["6.4(d)"] = added(b, b, launch)
    # 5: the gathered shrink's FLOP per adapter byte; the padded rank in 4's setting
    t = v["ch06_ex5_tokens"]
    for pid, sets in (("6.5(a1)", 1), ("6.5(a2)", v["ch06_ex5_distinct"]), ("6.5(a3)", t)):
        sh, _ = lora.bgmv_ops(t, 4096, 4096, 16, sets)
        out[pid] = sh["flop"] / sh["w"]
    out["6.5(b1)"] = added(b, d, launch, rank=int(v["ch06_ex5_slot_rank"]))
    out["6.5(b2)"] = added(b, d, launch, rank=int(v["ch06_ex5_tenant_rank"]))
    # 6: distinct adapters among a batch, uniform and Zipf 1
    n, batch6 = int(v["ch06_ex6_adapters"]), int(v["ch06_ex6_batch"])
    uni, z1 = lora.zipf_probs(n, 0.0), lora.zipf_probs(n, 1.0)
    out["6.6(a)"] = lora.expected_distinct(uni, batch6)
    out["6.6(b)"] = lora.expected_distinct(z1, batch6)
    out["6.6(c1)"] = lora.expected_distinct(uni, 8)
    out["6.6(c2)"] = lora.expected_distinct(z1, 8)
    # 7: copies against adapters, and a miss over each GPU's PCIe link
    out["6.7(a1)"] = n * 4
    out["6.7(a2)"] = 4
    small, big = lora.adapter_bytes(m70, r, QKVO, 4), lora.adapter_bytes(m70, 64, ALL, 4)
    out["6.7(b1)"] = 1e3 * small / g["host_bw"]
    out["6.7(b2)"] = 1e3 * big / g["host_bw"]
    out["6.7(c1)"] = 100 * (1e3 * small / g["host_bw"]) / v["ch06_ex7_step_ms"]
    out["6.7(c2)"] = 100 * (1e3 * big / g["host_bw"]) / v["ch06_ex7_step_ms"]
    return out
