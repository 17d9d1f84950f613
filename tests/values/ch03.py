"""Chapter 3, batching in practice: every value of build/values/ch03/
derived again from code/specs/gpus.tsv, models.tsv, calibrations.tsv, the
published ceilings (lib/ceilings.py) and the formulas of lib/ (see
tests/values/README.md).  The ragged batches replay the seeded draws
(lib/rng.py); the batch window's simulated figures are checked against the
closed form within their standard error."""
import math
import random

import data
from lib import ceilings, memory, model, packing, serve, step, window
from lib.model import Precision
from lib.rng import Rng

GB, KiB, TB, TERA = 1e9, 1024.0, 1e12, 1e12
BF16 = Precision.uniform("bf16")

ECHOED = {
    # the printed book's exercise variant (seed 0): its drawn inputs
    "ch03_ex1_len1", "ch03_ex1_len2", "ch03_ex1_len3", "ch03_ex1_len4", "ch03_ex1_token",  # 3.1's lengths, token
    *(f"ch03_ex2_len{i}" for i in range(1, 9)),                  # 3.2's eight prompt lengths
    "ch03_ex3_rate", "ch03_ex3_window_ms", "ch03_ex3_cap",        # 3.3's quiet endpoint
    "ch03_ex4_rate",                                              # 3.4's busy endpoint
    "ch03_ex5_rate", "ch03_ex5_budget_ms", "ch03_ex5_cap",        # 3.5's rate, budget and cap
    "ch03_ex6_n", "ch03_ex6_prompt", "ch03_ex6_output",           # 3.6's workload
    "ch03_ex7_short", "ch03_ex7_long", "ch03_ex7_reserve_gb",     # 3.7's contexts and reserve
    # the worked example the chapter states: 32 requests, 512 + 256 tokens
    "ch03_decode_steps",        # output - 1 = 255 decode steps after the prefill's first token
    "ch03_final_ctx",           # 512 + 256
    # lib/ceilings.py's published figures, as printed
    "ch03_read_tbs", "ch03_copy_tbs", "ch03_gemm_tflops",
    "ch03_sheet_tbs",           # hbm_tb_s of the h100 row
}

MEASURED = set()  # chapter 3 times nothing

# The batch window's simulated figures (20,000 batches from a seeded stream
# the C draws across 41 windows in turn) are checked against the closed
# form: within four standard errors of a 20,000-batch mean, the error
# estimated from the per-batch spread of an independent run (window.py's
# wait_standard_error).  Four errors: a 1-in-16,000 false alarm per value.
WINDOWS_MS = (20, 50, 100, 300)
SIM_BATCHES = 20000
LAMBDA, MAX_BATCH, CONTEXT = 100.0, 32, 768


def _window_tol():
    tol = {}
    rnd = random.Random(3)
    for w in WINDOWS_MS:
        se_b, se_w = window.wait_standard_error(LAMBDA, w / 1e3, MAX_BATCH, SIM_BATCHES, rnd)
        tol[f"ch03_w{w}_batch_sim"] = ("abs", 4 * se_b)
        tol[f"ch03_w{w}_wait_sim_ms"] = ("abs", 4 * se_w * 1e3)
    return tol


# Counts are exact: the runner's one unit of slack in the last printed
# place is for a rounded real, and a sequence or a step is not one.
COUNTS = ("ch03_chat_longest", "ch03_chat_tokens", "ch03_chat_slots", "ch03_chat_bucket_batches",
          "ch03_mixed_longest", "ch03_mixed_tokens", "ch03_mixed_slots", "ch03_mixed_bucket_batches",
          "ch03_steps_seq", "ch03_steps_batch", "ch03_cap_768",
          "ch03_cap_prompt_512", "ch03_cap_prompt_2048", "ch03_cap_prompt_6144")

TOL = dict(_window_tol(), **{name: ("abs", 0.0) for name in COUNTS})


def _pct(x):
    """A share printed as "69%": the runner compares numbers without a unit,
    so a percentage is derived as its printed text (printf's %.0f rounds as
    Python's format does: the double's exact value, ties to even)."""
    return f"{x:.0f}%"


def _worked(m, sheet, g):
    out = {}
    n, prompt, output = 32, 512, 256
    seq, one = serve.sequential(m, g, BF16, n, prompt, output), serve.batch(m, g, BF16, n, prompt, output)
    seq_s, one_s = serve.sequential(m, sheet, BF16, n, prompt, output), serve.batch(m, sheet, BF16, n, prompt, output)
    out["ch03_read_tbs"] = g["mem_bw"] / TB
    out["ch03_copy_tbs"] = ceilings.BABELSTREAM["h100"]["copy"] / TB
    out["ch03_sheet_tbs"] = sheet["mem_bw"] / TB
    out["ch03_gemm_tflops"] = g["flops"]["bf16"] / TERA
    out["ch03_bw_share"] = _pct(100 * g["mem_bw"] / sheet["mem_bw"])
    out["ch03_flops_share"] = _pct(100 * g["flops"]["bf16"] / sheet["flops"]["bf16"])
    out["ch03_seq_s"] = seq["total"]
    out["ch03_batch_s"] = one["total"]
    out["ch03_ratio"] = seq["total"] / one["total"]
    out["ch03_seq_sheet_s"] = seq_s["total"]
    out["ch03_batch_sheet_s"] = one_s["total"]
    out["ch03_seq_prefill_s"] = seq["prefill"]
    out["ch03_seq_decode_s"] = seq["decode"]
    out["ch03_batch_prefill_s"] = one["prefill"]
    out["ch03_batch_decode_s"] = one["decode"]
    out["ch03_one_step_ms"] = 1e3 * seq["decode"] / (n * (output - 1))
    out["ch03_batch_step_ms"] = 1e3 * one["decode"] / (output - 1)
    out["ch03_seq_mean_latency_s"] = seq["mean_latency"]
    out["ch03_seq_first_token_s"] = seq["first_token"]
    out["ch03_batch_first_token_s"] = one["first_token"]
    out["ch03_seq_tok_s"] = seq["tokens_per_s"]
    out["ch03_batch_tok_s"] = one["tokens_per_s"]
    out["ch03_steps_seq"] = seq["steps"]
    out["ch03_steps_batch"] = one["steps"]
    out["ch03_decode_steps"] = output - 1
    out["ch03_final_ctx"] = prompt + output
    # one decode step streams every weight but the embedding table, of
    # which it gathers its tokens' rows
    out["ch03_weights_gb"] = step.step_cost(m, g, 1, prompt, 1, BF16)["weight"] / GB
    out["ch03_weights_all_gb"] = model.weight_bytes(m, "bf16") / GB
    rm = memory.plan(m, sheet, BF16, 1)
    out["ch03_kv_budget_gb"] = rm["kv_budget"] / GB
    out["ch03_kv_per_token_kib"] = rm["kv_per_token"] / KiB
    out["ch03_cap_768"] = memory.max_batch(rm, prompt + output)
    for p in (512, 2048, 6144):
        cap = memory.max_batch(rm, p + 256)
        out[f"ch03_cap_prompt_{p}"] = cap

        def ratio(k):
            s, b = serve.sequential(m, g, BF16, k, p, 256), serve.batch(m, g, BF16, k, p, 256)
            return s["total"], b["total"], s["total"] / b["total"]

        s32, b32, r32 = ratio(32)
        out[f"ch03_ratio_32_prompt_{p}"] = r32
        out[f"ch03_seq_32_prompt_{p}"] = s32
        out[f"ch03_batch_32_prompt_{p}"] = b32
        out[f"ch03_fits_256_prompt_{p}"] = "yes" if 256 <= cap else "no"
        if 256 <= cap:  # a ratio only for a batch whose cache is held
            out[f"ch03_ratio_256_prompt_{p}"] = ratio(256)[2]
        if cap >= 1:
            out[f"ch03_ratio_cap_prompt_{p}"] = ratio(cap)[2]
    return out


def _calibrated(m, sheet):
    cal = data.calibrations()["published:h100_sxm/trtllm"]
    seq = serve.sequential(m, sheet, BF16, 32, 512, 256, cal=cal)
    one = serve.batch(m, sheet, BF16, 32, 512, 256, cal=cal)
    return {"ch03_cal_seq_s": seq["total"], "ch03_cal_batch_s": one["total"],
            "ch03_cal_ratio": seq["total"] / one["total"]}


# The ragged batches: prompt lengths lognormal (median 300, sigma 0.8) for
# chat, and with 10 % documents (median 4000, sigma 0.6) for the mix, clamped
# to [16, 8192]; bucket edges 256 .. 8192; 400 batches a point; seed 2024.
EDGES = (256, 512, 1024, 2048, 4096, 8192)
CHAT = {"median": 300, "sigma": 0.8, "lo": 16, "hi": 8192}
MIXED = dict(CHAT, tail_share=0.10, tail_median=4000, tail_sigma=0.6)


def _prefill_flop(m, batch, tokens):
    ops = model.step_ops(m, batch, 0, 1, BF16, new_tokens=tokens, logits_last=True)
    return sum(op["reps"] * op["flop"] for op in ops)


def _padding(m):
    out = {}
    rng = Rng(2024)
    kv = model.kv_bytes_per_token(m, "bf16")
    for name, dist in (("chat", CHAT), ("mixed", MIXED)):
        lens = [packing.draw_length(rng, **dist) for _ in range(32)]
        pc, pk, bc = packing.padded(lens), packing.packed(lens), packing.bucketed(lens, EDGES)
        fp = _prefill_flop(m, 32, max(lens))
        fk = sum(_prefill_flop(m, 1, x) for x in lens)  # FLOPs add up sequence by sequence
        pre = f"ch03_{name}_"
        out[pre + "longest"] = max(lens)
        out[pre + "tokens"] = pk["tokens"]
        out[pre + "slots"] = pc["slots"]
        out[pre + "waste"] = _pct(100 * pc["waste"])
        out[pre + "bucket_waste"] = _pct(100 * bc["waste"])
        out[pre + "bucket_batches"] = bc["batches"]
        out[pre + "flop_padded_t"] = fp / TERA
        out[pre + "flop_packed_t"] = fk / TERA
        out[pre + "flop_ratio"] = fp / fk
        out[pre + "attn_ratio"] = pc["attn_pairs"] / pk["attn_pairs"]
        out[pre + "kv_padded_gb"] = pc["slots"] * kv / GB
        out[pre + "kv_packed_gb"] = pk["tokens"] * kv / GB
    n = 1
    while n <= 256:  # the mean waste against the batch size: chat then mixed, each point
        for name, dist in (("chat", CHAT), ("mixed", MIXED)):
            pad = buck = 0.0
            for _ in range(400):
                lens = [packing.draw_length(rng, **dist) for _ in range(n)]
                pad += packing.padded(lens)["waste"] / 400
                buck += packing.bucketed(lens, EDGES)["waste"] / 400
            if n in (32, 256):
                out[f"ch03_{name}_mean_waste_{n}"] = _pct(100 * pad)
                out[f"ch03_{name}_mean_bucket_waste_{n}"] = _pct(100 * buck)
        n *= 2
    return out


def _windows(m, g):
    out = {}

    def tok_s(b):
        return b / step.step_cost(m, g, b, CONTEXT, 1, BF16)["time"]

    for w in WINDOWS_MS:
        e = window.expected(LAMBDA, w / 1e3, MAX_BATCH)
        pre = f"ch03_w{w}_"
        out[pre + "batch"] = e["mean_batch"]
        out[pre + "batch_say"] = e["mean_batch"]  # the same mean, printed to a whole request
        out[pre + "batch_sim"] = e["mean_batch"]  # TOL: the simulation's standard error
        out[pre + "wait_ms"] = 1e3 * e["mean_wait"]
        out[pre + "wait_sim_ms"] = 1e3 * e["mean_wait"]
        out[pre + "full"] = _pct(100 * e["full_share"])
        out[pre + "tok_s"] = tok_s(int(math.floor(e["mean_batch"] + 0.5)))
    out["ch03_tok_s_batch1"] = tok_s(1)
    out["ch03_tok_s_batch32"] = tok_s(MAX_BATCH)
    # the window that fills a batch of 32 half the time: full share is
    # P(X >= 31) with X ~ Poisson(lambda W), rising in W; bisect for 0.5
    lo, hi = 0.0, 10.0
    for _ in range(60):
        mid = (lo + hi) / 2
        if window.expected(LAMBDA, mid, MAX_BATCH)["full_share"] >= 0.5:
            hi = mid
        else:
            lo = mid
    out["ch03_half_full_window_ms"] = 1e3 * hi
    return out


def derive():
    gp, mt = data.gpus(), data.models()
    m, sheet = mt["llama3-8b"], gp["h100"]
    g = ceilings.at_published_ceilings(sheet)
    out = {}
    for part in (_worked(m, sheet, g), _calibrated(m, sheet), _padding(m), _windows(m, g)):
        out.update(part)
    return out


# ---- the exercises' answers, from a variant's printed inputs ----


def practice(seed, inputs):
    v = {k: data.printed(t) for k, t in inputs.items()}
    gp, mt = data.gpus(), data.models()
    m = mt["llama3-8b"]
    out = {}
    # 1: offsets of a packed batch, and padding to the longest, by hand
    lens = [int(v[f"ch03_ex1_len{i}"]) for i in range(1, 5)]
    cu = packing.offsets(lens)
    pc = packing.padded(lens)
    out["3.1(a)"] = cu[3]
    out["3.1(b)"] = cu[2] + int(v["ch03_ex1_token"])
    out["3.1(c1)"] = pc["slots"]
    out["3.1(c2)"] = pc["waste"]
    # 2: buckets for a long tail, edges 128, 512, 2048, 8192
    lens = [int(v[f"ch03_ex2_len{i}"]) for i in range(1, 9)]
    pad, buck = packing.padded(lens), packing.bucketed(lens, (128, 512, 2048, 8192))
    out["3.2(a1)"], out["3.2(a2)"] = pad["slots"], pad["waste"]
    out["3.2(b1)"], out["3.2(b2)"], out["3.2(b3)"] = buck["slots"], buck["waste"], buck["batches"]
    out["3.2(c)"] = pad["attn_pairs"] / buck["attn_pairs"]
    # 3 and 4: a quiet endpoint and a busy one, the same window and cap
    wms, cap = v["ch03_ex3_window_ms"], int(v["ch03_ex3_cap"])
    e = window.expected(v["ch03_ex3_rate"], wms / 1e3, cap)
    out["3.3(a)"], out["3.3(b)"] = e["mean_batch"], 1e3 * e["mean_wait"]
    e = window.expected(v["ch03_ex4_rate"], wms / 1e3, cap)
    out["3.4(a1)"], out["3.4(a2)"], out["3.4(b)"] = e["mean_batch"], 1e3 * e["mean_close"], 1e3 * e["mean_wait"]
    # 5: the longest window whose mean wait meets the budget (the wait rises
    # with the window: double, then bisect)
    rate, budget, cap5 = v["ch03_ex5_rate"], v["ch03_ex5_budget_ms"] / 1e3, int(v["ch03_ex5_cap"])

    def wait(w):
        return window.expected(rate, w, cap5)["mean_wait"]

    lo, hi = 0.0, budget
    while wait(hi) <= budget:
        lo, hi = hi, 2 * hi
    for _ in range(100):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if wait(mid) <= budget else (lo, mid)
    out["3.5(a1)"] = 1e3 * lo
    out["3.5(a2)"] = window.expected(rate, lo, cap5)["mean_batch"]
    # 6: sequential against one batch on the datasheet H100
    h100 = gp["h100"]
    n, prompt, output = int(v["ch03_ex6_n"]), int(v["ch03_ex6_prompt"]), int(v["ch03_ex6_output"])
    for pid, p in (("3.6(a)", prompt), ("3.6(b)", 4096)):
        s, b = serve.sequential(m, h100, BF16, n, p, output), serve.batch(m, h100, BF16, n, p, output)
        out[pid] = s["total"] / b["total"]
    # 7: the memory cap: 90 % of the driver's figure less weights and a reserve
    pol = memory.exercise_policy(0.9)
    reserve = v["ch03_ex7_reserve_gb"] * GB
    for pid, gk, ctx in (("3.7(a)", "h100", v["ch03_ex7_short"]), ("3.7(b)", "h100", v["ch03_ex7_long"]),
                         ("3.7(c)", "l40s", v["ch03_ex7_long"])):
        out[pid] = memory.max_batch(memory.plan(m, gp[gk], BF16, 1, pol, extra=reserve), int(ctx))
    return out
