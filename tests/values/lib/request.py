"""One request end to end on a replica that keeps C requests in flight
(chapter 5), as the chapter and request.h state it: a closed loop, always
busy, running either one prompt's prefill p (logits at its last position
only) or one decode step of every decoding slot; d is the mean decode step
of C sequences over the contexts prompt .. prompt + output - 2 (the step is
linear in the context: the mean of the two ends).  Without chunking:

  e2e = C p + (o - 1) d,  TTFT = p,  TPOT = (e2e - p) / (o - 1),
  requests/s = C / e2e (Little),  tokens/s = o C / e2e,
  TTFT in the busy loop = d/2 + rho p / (2 (1 - rho)) + p,  rho = C p / e2e
  (half the step in flight, the M/D/1 wait behind queued prefills);

with chunked prefill (chunk tokens a step), a prompt rides on n =
ceil(prompt/chunk) mixed steps, n/(n + o - 1) of the slots prefill, each
step carries the decodes of the others (C_dec = C (o-1)/(n+o-1), rounded)
plus q = C prompt/(n+o-1) prompt tokens (at most chunk C) sitting halfway
through their prompt; the mixed step is d(C_dec) plus the chunk's step less
its weight read (which the decode step already pays):

  TTFT = n t_mix, TPOT = t_mix, e2e = (n + o - 1) t_mix, loop TTFT = t_mix/2 + TTFT.

Costs at a price per GPU-hour over tp GPUs: input per million prompt tokens
from the prefill's share of the time, output per million output tokens
from the rest (without chunking: the decode steps, (o - 1) d / C per
request over o tokens).

A batch run to completion (batch_time) is one prefill of the prompts and
output - 1 decode steps; batch_times sums those steps per op from each op's
line in the context (decode_span_time), the service times of chapter 5's
queue.  best_concurrency: the most in flight whose TPOT meets a target.

An engine whose scheduler runs prompts first (the benchmark's
prefill_first, lib/closed_loop.py) keeps its clients in cohorts: with the
benchmark's TTFT, TPOT is then the cohort's (the decode step plus the
round's prefill after a request's first token over o - 1) and e2e the
cohort's cycle less the overhead.

An engine never turns a request away for want of KV cache: when C
sequences of prompt + output tokens do not fit but B >= 1 do (B the
largest batch), it runs B and the other C - B wait in its queue; every
time is B's, and a client waits (C / B - 1) e2e_B for a slot, which adds to
e2e and the closed-loop TTFT (running = B; C when C fits, 0 when none does,
the times then C's)."""
import math

from lib import closed_loop, memory, roofline, step


def _mean_decode(m, g, prec, tp, batch, prompt, output, cal):
    if output < 2:
        return 0.0
    a = step.step_cost(m, g, batch, prompt, tp, prec, cal=cal)["time"]
    b = step.step_cost(m, g, batch, prompt + output - 2, tp, prec, cal=cal)["time"]
    return 0.5 * (a + b)


def estimate(m, g, prec, tp, prompt, output, concurrency, chunk=0, price=0.0, cal=None, policy=None,
             ttft_model="busy", bench=None):
    """ttft_model "busy": ttft_closed is the busy loop's formula above;
    "bench": the closed-loop benchmark's (lib/closed_loop.py, without
    chunking), its options in bench (budget, requests, overhead,
    departure_wait, prefill_first), the step costs w = the weights' read at
    the bandwidth (at most p), c_tok = (p - w) / prompt, c_dec = (d - w_dec) / C,
    w_dec the read of a step of C decodes' weights (at most d).
    running: the requests the KV cache holds at once (the docstring above)."""
    args = (m, g, prec, tp, prompt, output)
    kw = dict(chunk=chunk, price=price, cal=cal, policy=policy, ttft_model=ttft_model, bench=bench)
    r = _in_flight(*args, concurrency, **kw)
    B, C = r["max_batch"], concurrency
    fits = memory.fits(memory.plan(m, g, prec, tp, policy), C, prompt + output)
    r["running"] = C if fits else 0
    if fits or B < 1 or B >= C:
        return r
    held = _in_flight(*args, B, **kw)
    wait = (C / B - 1) * held["e2e"]
    held["e2e"] += wait
    held["ttft_closed"] += wait
    held["running"] = B
    return held


def _mixed(m, g, prec, tp, prompt, o, C, p, prompt_weight, budget, cal):
    """In-flight batching (bench "mixed": TensorRT-LLM, vLLM): each prompt
    rides in a step with the running decodes.  A prompt takes n =
    ceil(prompt / budget) steps, a request o - 1 decode steps; its decode
    steps carry the other C - 1 prompts spread over their n + o - 1 steps, m
    = (C - 1) / (n + o - 1) a step, and 1 + (C - 1)(o - 1)/(n + o - 1)
    decodes (rounded).  A step with a prompt reads the larger of the prompt's
    weights w_p and the decode step's w_d and adds p - w_p:
    TPOT = d + min(1, m n) max(0, w_p - w_d) + m (p - w_p);
    e2e = n (d + max(0, w_p - w_d)) + p - w_p + (o - 1) TPOT."""
    n = -(-prompt // (budget or closed_loop.DEFAULT_BUDGET))
    m_step = (C - 1) / (n + o - 1)
    dec = max(1, round_half_away(1 + (C - 1) * (o - 1) / (n + o - 1)))
    d = _mean_decode(m, g, prec, tp, dec, prompt, o, cal)
    w_d = roofline.memory_time(step.step_cost(m, g, dec, prompt + o // 2, tp, prec, cal=cal)["weight"], g["mem_bw"])
    w_p = roofline.memory_time(prompt_weight, g["mem_bw"])
    more, work = max(0.0, w_p - w_d), max(0.0, p - w_p)
    tpot = d + min(1.0, m_step * n) * more + m_step * work
    return {"tpot": tpot, "e2e": n * (d + more) + work + (o - 1) * tpot, "prefill_steps": n, "mixed_step": tpot}


def _in_flight(m, g, prec, tp, prompt, output, concurrency, chunk=0, price=0.0, cal=None, policy=None,
               ttft_model="busy", bench=None):
    """estimate with all C in flight, whether or not they fit."""
    C, o = concurrency, output
    plan = memory.plan(m, g, prec, tp, policy)
    r = {"max_batch": memory.max_batch(plan, prompt + output)}
    pc = step.step_cost(m, g, 1, 0, tp, prec, new_tokens=prompt, cal=cal, logits_last=True)
    p = pc["time"]
    r["prefill_time"], r["prefill_bound"] = p, pc["bound"]
    per_s = price / 3600 * tp
    if chunk == 0 or chunk >= prompt:
        d = _mean_decode(m, g, prec, tp, C, prompt, o, cal)
        e2e = C * p + (o - 1) * d
        rho = C * p / e2e
        r.update(decode_step=d, prefill_steps=1, ttft=p, e2e=e2e, tpot=(e2e - p) / (o - 1) if o > 1 else 0.0,
                 ttft_closed=d / 2 + (rho * p / (2 * (1 - rho)) if rho < 1 else math.inf) + p,
                 cost_in=per_s * p / prompt * 1e6,
                 cost_out=per_s * (o - 1) * d / C / o * 1e6 if o > 1 else math.nan)
        if ttft_model == "bench":
            w = min(roofline.memory_time(pc["weight"], g["mem_bw"]), p)
            # a step of the C decodes alone reads its own weights (a mixture: the experts touched),
            # so that it costs d
            dc = step.step_cost(m, g, C, prompt, tp, prec, cal=cal)
            w_dec = min(roofline.memory_time(dc["weight"], g["mem_bw"]), d) if o > 1 else w
            costs = (w, (d - w_dec) / C if o > 1 else 0.0, (p - w) / prompt, w_dec)
            r["costs"] = costs  # the linear step the benchmark and its replay (closed_loop.simulate) price
            opts = {k: v for k, v in (bench or {}).items() if k != "mixed"}
            b = r["bench"] = closed_loop.bench_ttft(costs, C, prompt, o, **opts)
            r["ttft_closed"] = b["mean"]
            if opts.get("prefill_first"):  # cohorts: the round's prompts pause every decode
                r["tpot"], r["e2e"] = b["step"], b["cycle"] - opts.get("overhead", 0.0)
            elif (bench or {}).get("mixed") and o > 1:
                r.update(_mixed(m, g, prec, tp, prompt, o, C, p, pc["weight"], opts.get("budget", 0), cal))
    else:
        n = -(-prompt // chunk)
        steps = n + o - 1
        c_dec = max(1, round_half_away(C * (o - 1) / steps))
        q = min(C * prompt / steps, chunk * C)
        d = _mean_decode(m, g, prec, tp, c_dec, prompt, o, cal)
        qc = step.step_cost(m, g, 1, prompt // 2, tp, prec, new_tokens=max(1, round_half_away(q)), cal=cal,
                            logits_last=True)
        extra = max(0.0, qc["time"] - roofline.memory_time(qc["weight"], g["mem_bw"]))
        t_mix = d + extra
        e2e = steps * t_mix
        share = e2e / C
        in_s = share * extra / t_mix
        r.update(decode_step=d, mixed_step=t_mix, prefill_steps=n, ttft=n * t_mix, ttft_closed=t_mix / 2 + n * t_mix,
                 tpot=t_mix, e2e=e2e, cost_in=per_s * in_s / prompt * 1e6, cost_out=per_s * (share - in_s) / o * 1e6)
    r["requests_per_s"] = C / r["e2e"]
    r["tokens_per_s"] = o * r["requests_per_s"]
    return r


def round_half_away(x):
    return int(math.floor(x + 0.5)) if x >= 0 else -int(math.floor(-x + 0.5))


def batch_time(m, g, prec, tp, batch, prompt, output):
    """A batch of `batch` requests run to completion in lockstep (chapter 5's
    batch_vs_sequential): one prefill of the prompts (logits at the last
    position), then output - 1 decode steps over contexts prompt ..
    prompt + output - 2."""
    t = step.step_cost(m, g, batch, 0, tp, prec, new_tokens=prompt, logits_last=True)["time"]
    for ctx in range(prompt, prompt + output - 1):
        t += step.step_cost(m, g, batch, ctx, tp, prec)["time"]
    return t


def decode_span_time(m, g, prec, tp, batch, ctx_from, ctx_to):
    """Seconds of the decode steps of `batch` sequences over the contexts
    ctx_from .. ctx_to (inclusive), at the roofline, summed without pricing
    every step: each op's FLOPs and bytes are linear in the context (the
    attention reads K and V of every cached position, nothing else grows),
    so two steps give every op's line, a third checks it, and each op's time
    at a context is the larger of its FLOP time and its byte time."""
    if ctx_to < ctx_from:
        return 0.0
    a = step.step_cost(m, g, batch, ctx_from, tp, prec)
    if ctx_to == ctx_from:
        return a["time"]
    b = step.step_cost(m, g, batch, ctx_to, tp, prec)
    mid = (ctx_from + ctx_to) // 2
    c = step.step_cost(m, g, batch, mid, tp, prec)
    pk = roofline.peak(g, prec.compute)
    span = ctx_to - ctx_from
    total = 0.0
    for oa, ob, oc in zip(a["ops"], b["ops"], c["ops"]):
        if oa["kind"] in ("allreduce", "allgather"):  # the bytes of a collective do not grow with the context
            assert oa["t"] == ob["t"]
            total += oa["t"] * (span + 1)
            continue
        fa, fb = oa["flop"], ob["flop"]
        qa, qb = (o["w"] + o["kv"] + o["act"] for o in (oa, ob))
        qc = oc["w"] + oc["kv"] + oc["act"]
        x = (mid - ctx_from) / span
        assert abs(qa + x * (qb - qa) - qc) <= 1e-9 * qc and abs(fa + x * (fb - fa) - oc["flop"]) <= 1e-9 * max(1.0, oc["flop"])
        if fa == fb and qa == qb:  # an op the context leaves alone
            total += oa["t"] * (span + 1)
            continue
        for i in range(span + 1):
            f = fa + (fb - fa) * i / span
            q = qa + (qb - qa) * i / span
            total += oa["reps"] * roofline.roofline_time(f, q, pk, g["mem_bw"])[0]
    return total


def batch_times(m, g, prec, tp, nmax, prompt, output):
    """batch_time for n = 1 .. nmax, the decode steps summed by
    decode_span_time: the service times of a replica that runs batches to
    completion."""
    return [batch_time_summed(m, g, prec, tp, n, prompt, output) for n in range(1, nmax + 1)]


def batch_time_summed(m, g, prec, tp, batch, prompt, output):
    """batch_time, its decode steps summed by decode_span_time."""
    t = step.step_cost(m, g, batch, 0, tp, prec, new_tokens=prompt, logits_last=True)["time"]
    return t + decode_span_time(m, g, prec, tp, batch, prompt, prompt + output - 2)


def best_concurrency(m, g, prec, tp, prompt, output, tpot_max, policy=None, cal=None, ttft_max=0.0,
                     ttft_model="busy", bench=None):
    """The largest concurrency that fits memory (C sequences of prompt +
    output tokens) and keeps TPOT at or below tpot_max: 0 when one request
    alone misses it.  TPOT grows with the concurrency, so the last one that
    meets the target is found by halving.  With ttft_max > 0 the TTFT
    (ttft_closed, of ttft_model) must meet it too; it need not grow with
    the concurrency, so it is scanned down from the TPOT's answer."""
    def est(c):
        return estimate(m, g, prec, tp, prompt, output, c, policy=policy, cal=cal, ttft_model=ttft_model,
                        bench=bench)

    one = est(1)
    hi = one["max_batch"]
    if hi <= 0 or one["tpot"] > tpot_max:
        return 0
    if est(hi)["tpot"] > tpot_max:
        lo = 1
        while hi - lo > 1:
            mid = (lo + hi) // 2
            if est(mid)["tpot"] <= tpot_max:
                lo = mid
            else:
                hi = mid
        hi = lo
    if ttft_max <= 0:
        return hi
    for c in range(hi, 0, -1):
        if est(c)["ttft_closed"] <= ttft_max:
            return c
    return 0


def gpu_seconds_per_request(est, tp, concurrency):
    """GPU-seconds one request holds: its share of the replica's time, e2e / C,
    on every one of its tp GPUs."""
    return tp * est["e2e"] / concurrency
