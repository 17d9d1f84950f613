"""Serving layouts of chapter 13, on the closed loop of request.h (lib/request.py
states it for chapter 5; its estimate takes neither a cached prefix nor
spread experts, which these do): one
request end to end on a replica holding C requests in flight, with prefix
caching or expert parallelism, and disaggregated prefill and decode
(disagg.h).

The closed loop (no chunked prefill): p the prompt's prefill (logits at its
last position), d the mean decode step of C sequences over the contexts
prompt .. prompt + output - 2 (linear in the context: the mean of the two
ends); e2e = C p + (o - 1) d, TTFT = p, TPOT = (e2e - p)/(o - 1),
requests/s = C/e2e (Little), input cost = price per GPU-second x GPUs x p
per prompt token.

Prefix caching: S prompt tokens shared, found cached by a share h: p = h
p_hit + (1 - h) p_miss, a hit prefilling prompt - S tokens against the S
cached; memory holds the prefix once (extra bytes) and each slot prompt +
output - floor(h S) tokens of its own.

Expert parallelism (lib/expert_parallel.py): every step one GPU's of the
group, at its replica's shape; memory one GPU's of the group; concurrency,
throughput and cost one attention replica's.

Disaggregation: a prefill pool serves (prefill_gpus/tp)/p requests/s, a
decode pool (decode_gpus/tp) C/((o - 1) d); the KV of a prompt crosses the
KV link from each GPU of an instance (latency + its share over the link):
TTFT = p + t_kv, TPOT = d, requests/s the smaller pool's; the balanced
split p C/((o - 1) d).  The search takes the largest C whose TPOT meets the
target, then the split that serves most (the first among equals); the
aggregated server its own largest C on the same GPUs."""
import math

from lib import expert_parallel as ep, memory, model, roofline, step


def _step(s, batch, context, new_tokens, logits_last):
    lay, tp, m, prec = s.get("ep"), s["tp"], s["model"], s["prec"]
    ops = ep.step_ops(m, lay, batch, context, tp, prec, new_tokens, logits_last) if lay else None
    return step.step_cost(m, s["gpu"], batch, context, tp, prec, new_tokens, cal=s.get("cal"),
                          logits_last=logits_last, ops=ops)


def setup(m, g, prec, tp, prompt, output, concurrency=1, price=0.0, prefix=0, hit=0.0, lay=None):
    return {"model": m, "gpu": g, "prec": prec, "tp": tp, "prompt": prompt, "output": output,
            "concurrency": concurrency, "price": price, "prefix": prefix, "hit": hit, "ep": lay}


def fit(s):
    """(memory plan of one GPU, the largest C that fits)."""
    m, prec, tp = s["model"], s["prec"], s["tp"]
    cached = s["prefix"] > 0 and s["hit"] > 0
    extra = model.kv_bytes_per_token(m, prec.kv, tp) * s["prefix"] if cached else 0.0
    own = s["prompt"] + s["output"] - (math.floor(s["hit"] * s["prefix"]) if cached else 0)
    p = memory.plan(m, s["gpu"], prec, tp, extra=extra)
    if s.get("ep"):
        p = ep.adjust_plan(m, prec, p, s["ep"]["ep"], tp)
    return p, ep.max_batch(m, prec, p, own, tp)


def estimate(s):
    C, o, prompt = s["concurrency"], s["output"], s["prompt"]
    plan, cmax = fit(s)
    p = _step(s, 1, 0, prompt, True)["time"]
    if s["prefix"] > 0 and s["hit"] > 0:
        h = s["hit"]
        p = h * _step(s, 1, s["prefix"], prompt - s["prefix"], True)["time"] + (1 - h) * p
    d = 0.5 * (_step(s, C, prompt, 1, False)["time"] + _step(s, C, prompt + o - 2, 1, False)["time"]) if o > 1 else 0.0
    e2e = C * p + (o - 1) * d
    gpus = s["tp"]
    return {"prefill": p, "decode": d, "ttft": p, "e2e": e2e, "tpot": (e2e - p) / (o - 1) if o > 1 else 0.0,
            "requests_per_s": C / e2e, "tokens_per_s": o * C / e2e, "max_batch": cmax, "fits": C <= cmax,
            "cost_in": s["price"] / 3600 * gpus * p / prompt * 1e6}


def best_concurrency(s, tpot_max):
    """The largest C that fits and meets the TPOT target (0: none)."""
    _, cmax = fit(s)
    for c in range(cmax, 0, -1):
        if estimate(dict(s, concurrency=c))["tpot"] <= tpot_max:
            return c
    return 0


def disagg_estimate(s, prefill_gpus, decode_gpus, kv_link_bw, kv_link_latency=0.0):
    e = estimate(s)
    tp, C, o = s["tp"], s["concurrency"], s["output"]
    kv_gpu = model.kv_bytes_per_token(s["model"], s["prec"].kv, tp) * s["prompt"]
    t_kv = roofline.p2p_time(kv_gpu, kv_link_bw, kv_link_latency)
    pre = (prefill_gpus // tp) / e["prefill"]
    dec = (decode_gpus // tp) * C / ((o - 1) * e["decode"])
    return {"prefill_gpus": prefill_gpus, "decode_gpus": decode_gpus, "c": C, "kv_bytes": kv_gpu * tp,
            "kv_time": t_kv, "ttft": e["prefill"] + t_kv, "tpot": e["decode"], "requests_per_s": min(pre, dec),
            "ratio": e["prefill"] * C / ((o - 1) * e["decode"]), "fits": e["fits"]}


def disagg_search(s, gpus, tpot_max, kv_link_bw):
    tp = s["tp"]
    _, cmax = fit(s)
    c = next((c for c in range(cmax, 0, -1)
              if disagg_estimate(dict(s, concurrency=c), tp, tp, kv_link_bw)["tpot"] <= tpot_max), 0)
    best = None
    for p in range(tp, gpus - tp + 1, tp):
        r = disagg_estimate(dict(s, concurrency=c), p, (gpus - p) // tp * tp, kv_link_bw)
        if r["tpot"] <= tpot_max and (best is None or r["requests_per_s"] > best["requests_per_s"]):
            best = r
    ca = best_concurrency(s, tpot_max)
    a = estimate(dict(s, concurrency=ca))
    best.update(agg_c=ca, agg_rps=gpus // tp * a["requests_per_s"], agg_tpot=a["tpot"])
    return best
