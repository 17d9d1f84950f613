"""Chapter 12, sizing a training cluster: every value of build/values/ch12/
derived again from the conventions of training arithmetic (lib/train.py):
6 N D and the attention term, the cluster a deadline needs under Llama 3's
interruption rate, and what the first pipeline stage's GPU holds (see
tests/values/README.md)."""
import math

import data
from lib import model, train

ECHOED = {
    "ch12_price",  # the chapter's assumed rental price per H100-hour, $2.00
    # the printed book's exercise variant (seed 0): its drawn inputs
    "ch12_ex1_params_b", "ch12_ex1_tokens_t", "ch12_ex1_days", "ch12_ex1_mfu_pct",  # exercise 1's run
    "ch12_ex2_model", "ch12_ex2_reported_pct", "ch12_ex2_seq", "ch12_ex2_seq_long",  # exercise 2's
    "ch12_ex3_model", "ch12_ex3_seq", "ch12_ex3_seq_long", "ch12_ex3_middle",         # exercise 3's
    "ch12_ex4_seq", "ch12_ex4_microbatches", "ch12_ex4_pp", "ch12_ex4_pp_long", "ch12_ex4_few",  # exercise 4's
    "ch12_ex5_size1", "ch12_ex5_size2", "ch12_ex5_size3", "ch12_ex5_target_pct",     # exercise 5's
    "ch12_ex6_pp", "ch12_ex6_dp", "ch12_ex6_seq",                                    # exercise 6's
    "ch12_ex7_gpus", "ch12_ex7_mfu_pct", "ch12_ex7_goodput_pct",                     # exercise 7's
}

MEASURED = set()  # chapter 12 times nothing

# Counts (GPUs, nodes, microbatches, sequence lengths, degrees) exactly: the
# default rule allows one unit in the last printed place, which for a count
# would let an off-by-one pass.
TOL = {n: ("abs", 0) for n in (
    *(f"ch12_70b_{s}_max_mb" for s in ("k_none", "k_tp", "k_tp_sp", "k_tp_sel", "k_tp_sp_sel", "k_full", "m_none",
                                       "m_tp", "m_tp_sp", "m_full", "m_full_sp")),
    *(f"ch12_70b_{s}_max_seq" for s in ("k_tp", "k_tp_sp_sel", "m_tp_sp", "m_full_sp")),
    "ch12_70b_max_mb_fp32", "ch12_70b_mb_next", "ch12_q1_gpus", "ch12_q1_nodes", "ch12_q1_z0_tp", "ch12_q1_z0_dp",
    "ch12_q1_z1_tp", "ch12_q1_z1_dp", "ch12_q1_gpus_mfu30", "ch12_q1_gpus_mfu50", "ch12_q1_gpus_sparse",
    "ch12_q1_gpus_attn_4096", "ch12_q1_gpus_attn_8192", "ch12_q1_gpus_goodput90", "ch12_q1_flop_exp",
    "ch12_l3_flop_exp")}

SETTINGS = (("k_none", "korthikanti", 1, False, "none"), ("k_tp", "korthikanti", 8, False, "none"),
            ("k_tp_sp", "korthikanti", 8, True, "none"), ("k_tp_sel", "korthikanti", 8, False, "selective"),
            ("k_tp_sp_sel", "korthikanti", 8, True, "selective"), ("k_full", "korthikanti", 8, False, "full"),
            ("m_none", "modern", 1, False, "none"), ("m_tp", "modern", 8, False, "none"),
            ("m_tp_sp", "modern", 8, True, "none"), ("m_full", "modern", 8, False, "full"),
            ("m_full_sp", "modern", 8, True, "full"))


def _layout(setting, seq):
    _, act, tp, sp, r = setting
    return {"seq": seq, "act": act, "tp": tp, "sp": sp, "recompute": r, "pp": 4, "dp": 16, "zero": 1}


def _activations(m, g):
    """LLaMA-3-70B at 8k, TP 8 x PP 4 (1F1B) x DP 16, ZeRO-1, microbatch 1."""
    seq, GB = 8192, 1e9
    sbh = seq * m["hidden"]
    out = {"ch12_70b_5ash": 5 * m["heads"] * seq / m["hidden"], "ch12_70b_sbh_mb": sbh / 1e6}
    for st in SETTINGS:
        n, lay = st[0], _layout(st, seq)
        mem = train.stage_memory(m, g, **lay)
        whole = mem["act_per_layer"] * m["layers"] / GB
        out[f"ch12_70b_{n}_layer_gb"] = mem["act_per_layer"] / GB
        out[f"ch12_70b_{n}_coef"] = mem["act_per_layer"] / sbh
        out[f"ch12_70b_{n}_model_gb"] = whole
        out[f"ch12_70b_{n}_gpu_gb"] = mem["activations"] / GB
        out[f"ch12_70b_{n}_max_mb"] = train.max_micro_batch(m, g, 4096, **lay)
    for i in (1, 4, 8, 10):  # the longest sequence, in steps of 1024, that fits at microbatch 1
        last, sq = 0, 1024
        while train.stage_memory(m, g, **_layout(SETTINGS[i], sq))["fits"]:
            last, sq = sq, sq + 1024
        out[f"ch12_70b_{SETTINGS[i][0]}_max_seq"] = last
    x = 5 * m["heads"] * seq / m["hidden"]
    out["ch12_70b_scores_pct"] = 100 * x / (34 + x)

    def per_layer(i):
        return train.stage_memory(m, g, **_layout(SETTINGS[i], seq))["act_per_layer"]

    out["ch12_70b_overcount"] = per_layer(0) / per_layer(6)
    out["ch12_70b_sp_gain"] = per_layer(7) / per_layer(8)
    base = _layout(SETTINGS[8], seq)
    mem = train.stage_memory(m, g, **base)
    state = mem["weights"] + mem["grads"] + mem["optimizer"]
    out.update({"ch12_70b_params_gpu_b": mem["params"] / 1e9, "ch12_70b_weights_gb": mem["weights"] / GB,
                "ch12_70b_grads_gb": mem["grads"] / GB, "ch12_70b_opt_gb": mem["optimizer"] / GB,
                "ch12_70b_opt_zero0_gb": mem["optimizer"] * 16 / GB,  # unsharded over the 16 of dp
                "ch12_70b_state_gb": state / GB, "ch12_70b_total_gb": mem["total"] / GB,
                "ch12_70b_cap_gb": mem["capacity"] / GB, "ch12_70b_room_gb": (mem["capacity"] - state) / GB})
    fp32 = (2.0, 4.0, 12.0)  # fp32 gradients: Megatron-LM's default
    m32 = train.stage_memory(m, g, state=fp32, **base)
    out["ch12_70b_grads_fp32_gb"] = m32["grads"] / GB
    out["ch12_70b_total_fp32_gb"] = m32["total"] / GB
    out["ch12_70b_max_mb_fp32"] = train.max_micro_batch(m, g, 4096, state=fp32, **base)
    out["ch12_70b_whole_state_tb"] = 16 * model.params(m)["total"] / 1e12
    out["ch12_70b_gpipe16_gpu_gb"] = train.stage_memory(m, g, schedule="gpipe", microbatches=16,
                                                        **base)["activations"] / GB
    out["ch12_70b_pp8_gpu_gb"] = train.stage_memory(m, g, **dict(base, pp=8, dp=8))["activations"] / GB
    nxt = train.max_micro_batch(m, g, 4096, **base) + 1
    mn = train.stage_memory(m, g, mb=nxt, **base)
    out.update({"ch12_70b_mb_next": nxt, "ch12_70b_mb_next_gpu_gb": mn["activations"] / GB,
                "ch12_70b_mb_next_total_gb": mn["total"] / GB})
    gap = 0.0
    sq = 1024
    while sq <= 131072:
        a = train.stage_memory(m, g, **_layout(SETTINGS[4], sq))["activations"]
        c = train.stage_memory(m, g, **_layout(SETTINGS[8], sq))["activations"]
        gap, sq = max(gap, abs(a - c) / c), sq * 2
    out["ch12_ksel_msp_gap_pct"] = 100 * gap
    return out


def _sci(name, x, digits):
    e = math.floor(math.log10(x))
    return {f"{name}_mant": round(x / 10 ** e, digits), f"{name}_exp": e}


def _layout_search(m, g, gpus, node, **base):
    """The fitting (tp, pp) with the least model parallelism, then the fewest stages."""
    best = None
    tp = 1
    while tp <= node and tp <= gpus:
        ok_tp = m["heads"] % tp == 0 and (m["kv_heads"] % tp == 0 or tp % m["kv_heads"] == 0)
        for pp in range(1, m["layers"] + 1):
            if tp * pp > gpus:
                break
            if not ok_tp or m["layers"] % pp or gpus % (tp * pp):
                continue
            mem = train.stage_memory(m, g, tp=tp, pp=pp, dp=gpus // (tp * pp), **base)
            if mem["fits"] and (best is None or (tp * pp, pp) < (best[0] * best[1], best[1])):
                best = (tp, pp, gpus // (tp * pp), mem["total"])
        tp *= 2
    return best


def _cluster(mt, g):
    peak = g["flops"]["bf16"]
    m8, m405 = mt["llama3-8b"], mt["llama3-405b"]
    P, D, DAYS, MFU, NODE, PRICE = 7e9, 1e12, 21.0, 0.4, 8, 2.0
    out = {"ch12_l8_matmul_b": train.matmul_params(m8) / 1e9, "ch12_l8_total_b": model.params(m8)["total"] / 1e9}
    flop = train.flop_per_token(P)["model"] * D

    def plan(flop=flop, mfu=MFU, peak=peak, **kw):
        return train.cluster_for_deadline(flop / (peak * mfu), DAYS * 86400, NODE, **kw)

    gs = flop / (peak * MFU)
    c = plan()
    out.update(_sci("ch12_q1_flop", flop, 1))
    out.update({"ch12_peak_tflops": peak / 1e12, "ch12_q1_gpu_hours": gs / 3600, "ch12_q1_gpu_days": gs / 86400,
                "ch12_q1_gpus_exact": c["gpus_exact"], "ch12_q1_gpus": c["gpus"], "ch12_q1_nodes": c["nodes"],
                "ch12_q1_days": c["seconds"] / 86400, "ch12_q1_goodput_pct": 100 * c["goodput"],
                "ch12_q1_rented_hours": c["gpu_hours"], "ch12_price": PRICE,
                "ch12_q1_cost_k": c["gpu_hours"] * PRICE / 1e3})
    for z in (0, 1):
        tp, pp, dp, total = _layout_search(m8, g, c["gpus"], NODE, seq=4096, zero=z)
        out[f"ch12_q1_z{z}_tp"], out[f"ch12_q1_z{z}_dp"], out[f"ch12_q1_z{z}_gb"] = tp, dp, total / 1e9
    out["ch12_q1_l8_state_gb"] = 16 * model.params(m8)["total"] / 1e9
    out["ch12_q1_gpus_mfu30"] = plan(mfu=0.3)["gpus"]
    out["ch12_q1_gpus_mfu50"] = plan(mfu=0.5)["gpus"]
    sp = plan(peak=2 * peak)  # the 2:4-sparse figure
    out["ch12_q1_gpus_sparse"] = sp["gpus"]
    out["ch12_q1_days_sparse_real"] = gs / (sp["gpus"] * train.goodput(sp["gpus"])) / 86400
    for seq in (2048, 4096, 8192, 32768):
        fa = train.flop_per_token(P, m8, seq)
        out[f"ch12_attn_share_{seq}"] = 100 * fa["attention"] / fa["dense"]
        if seq in (4096, 8192):
            out[f"ch12_q1_gpus_attn_{seq}"] = plan(flop=fa["model"] * D)["gpus"]
    ff = train.flop_per_token(P, recompute="full")
    out["ch12_full_ratio"] = ff["hardware"] / ff["model"]
    out["ch12_full_hfu_pct"] = 100 * MFU * ff["hardware"] / ff["model"]
    out["ch12_q1_gpus_goodput90"] = plan(rate=0.0, hours_lost=0.0, other=0.9)["gpus"]
    rate, lost = train.LLAMA3_RATE, train.LLAMA3_HOURS_LOST
    k = rate * lost / 24
    out.update({"ch12_fail_per_gpu_year": rate * 365, "ch12_fail_minutes_lost": lost * 60,
                "ch12_fail_per_day_q1": rate * c["gpus"], "ch12_fail_per_day_16k": rate * 16384,
                "ch12_fail_mtbf_hours_16k": 24 / (rate * 16384), "ch12_goodput_1k_pct": 100 * train.goodput(1024),
                "ch12_fail_best_gpus": 1 / (2 * k), "ch12_fail_best_work": 1 / (4 * k)})
    n405 = train.matmul_params(m405)
    f405 = train.flop_per_token(n405)["dense"] * 15.6e12
    out["ch12_l3_params_b"] = n405 / 1e9
    out.update(_sci("ch12_l3_flop", f405, 2))
    for tf in (430, 400, 380):
        out[f"ch12_l3_mfu_{tf}"] = 100 * tf * 1e12 / peak
    util = 100 * f405 / (peak * 30.84e6 * 3600)
    out["ch12_l3_util_pct"] = util
    out["ch12_l3_util_pct_say"] = util
    out["ch12_l3_card_days_16k"] = 30.84e6 / 16384 / 24
    out["ch12_l3_days_16k"] = f405 / (peak * 0.41) / (16384 * train.goodput(16384)) / 86400
    return out


def derive():
    mt, g = data.models(), data.gpus()["h100"]
    out = _activations(mt["llama3-70b"], g)
    out.update(_cluster(mt, g))
    return out


def _model_by_name(mt, name):
    """A model input is printed by its table name; find its row."""
    for m in mt.values():
        if m["name"] == name:
            return m
    raise KeyError(f"no model named {name!r} in models.tsv")


def practice(seed, inputs):
    """The exercise parts (exercises/12-sizing-a-training-cluster.md) from a
    variant's drawn inputs: H100 servers of eight, the dense bf16 peak."""
    mt, g = data.models(), data.gpus()["h100"]
    peak = g["flops"]["bf16"]
    v = {k: data.printed(t) for k, t in inputs.items() if k not in
         ("ch12_ex2_model", "ch12_ex3_model", "ch12_ex3_middle")}
    out = {}

    # 1: the sparse trap, no interruptions counted (goodput 1)
    n, t, days, mfu = v["ch12_ex1_params_b"] * 1e9, v["ch12_ex1_tokens_t"] * 1e12, v["ch12_ex1_days"], \
        v["ch12_ex1_mfu_pct"] / 100
    flop = train.flop_per_token(n)["dense"] * t

    def gpus(pk):
        return train.cluster_for_deadline(flop / (pk * mfu), days * 86400, 8, rate=0.0, hours_lost=0.0)["gpus"]

    rent = gpus(2 * peak)  # the 2:4-sparse figure
    out["12.1(a)"], out["12.1(b)"] = rent, gpus(peak)
    out["12.1(c)"] = flop / (peak * mfu * rent) / 86400

    # 2: hardware over model FLOPs under recomputation
    m2 = _model_by_name(mt, inputs["ch12_ex2_model"])
    n2 = train.matmul_params(m2)

    def factor(seq, rc):
        f = train.flop_per_token(n2, m2, seq, rc)
        return f["hardware"] / f["model"]

    full = factor(v["ch12_ex2_seq"], "full")
    out["12.2(a)"], out["12.2(b)"] = full, v["ch12_ex2_reported_pct"] / full
    out["12.2(c1)"] = factor(v["ch12_ex2_seq"], "selective")
    out["12.2(c2)"] = factor(v["ch12_ex2_seq_long"], "selective")

    # 3: one layer's activation bytes over s b h (microbatch 1, no TP)
    def coefficient(m, seq, act):
        return train.layer_activation_bytes(m, seq, 1, 1, False, "none", act) / (seq * m["hidden"])

    m3 = _model_by_name(mt, inputs["ch12_ex3_model"])
    out["12.3(a1)"] = coefficient(m3, v["ch12_ex3_seq"], "korthikanti")
    out["12.3(a2)"] = coefficient(m3, v["ch12_ex3_seq_long"], "korthikanti")
    for pid, m in (("12.3(b1)", mt["llama3-8b"]), ("12.3(b2)", _model_by_name(mt, inputs["ch12_ex3_middle"])),
                   ("12.3(b3)", mt["mixtral-8x7b"])):
        out[pid] = coefficient(m, 8192, "modern")

    # 4: LLaMA-3-70B's first stage, TP 8 with SP, in GB
    m70 = mt["llama3-70b"]
    seq4, mb4, pa, pb, few = (int(v[k]) for k in ("ch12_ex4_seq", "ch12_ex4_microbatches", "ch12_ex4_pp",
                                                 "ch12_ex4_pp_long", "ch12_ex4_few"))

    def stage_act(pp, schedule, microbatches):
        return train.stage_memory(m70, g, seq=seq4, tp=8, sp=True, pp=pp, schedule=schedule,
                                  microbatches=microbatches)["activations"] / 1e9

    out["12.4(a)"], out["12.4(b)"] = stage_act(pa, "1f1b", mb4), stage_act(pb, "1f1b", mb4)
    out["12.4(c)"], out["12.4(d)"] = stage_act(pa, "gpipe", mb4), stage_act(pa, "1f1b", few)

    # 5: Llama 3's interruption rate at three sizes
    for pid, k in (("12.5(a1)", "ch12_ex5_size1"), ("12.5(a2)", "ch12_ex5_size2"), ("12.5(a3)", "ch12_ex5_size3")):
        out[pid] = 100 * train.goodput(v[k])
    lost_per_gpu = train.LLAMA3_RATE * train.LLAMA3_HOURS_LOST / 24  # goodput = 1 - lost_per_gpu x G
    out["12.5(b)"] = (1 - v["ch12_ex5_target_pct"] / 100) / lost_per_gpu
    out["12.5(c)"] = train.LLAMA3_RATE * v["ch12_ex5_size2"]

    # 6: LLaMA-3-70B's state and microbatch on one H100, TP 8, 1F1B
    pp6, dp6, seq6 = int(v["ch12_ex6_pp"]), int(v["ch12_ex6_dp"]), int(v["ch12_ex6_seq"])

    def lay(zero, sp=True):
        return {"seq": seq6, "tp": 8, "pp": pp6, "dp": dp6, "sp": sp, "zero": zero}

    for i, z in enumerate((0, 1, 3), 1):
        mem = train.stage_memory(m70, g, **lay(z))
        out[f"12.6(a{i})"] = (mem["weights"] + mem["grads"] + mem["optimizer"]) / 1e9
        out[f"12.6(b{i})"] = train.max_micro_batch(m70, g, 4096, **lay(z))
    out["12.6(c)"] = train.max_micro_batch(m70, g, 4096, **lay(1, sp=False))

    # 7: Llama 3 405B's published 3.8e25 FLOP over 30.84 M GPU-hours
    f7, hours = 3.8e25, 30.84e6
    util = 100 * f7 / (peak * hours * 3600)
    out["12.7(a)"] = util
    out["12.7(b)"] = f7 / (peak * v["ch12_ex7_mfu_pct"] / 100 * v["ch12_ex7_gpus"] * v["ch12_ex7_goodput_pct"] / 100) \
        / 86400
    out["12.7(c)"] = 100 * util / v["ch12_ex7_mfu_pct"]
    return out
