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
request over o tokens)."""
import math

from lib import memory, roofline, step


def _mean_decode(m, g, prec, tp, batch, prompt, output, cal):
    if output < 2:
        return 0.0
    a = step.step_cost(m, g, batch, prompt, tp, prec, cal=cal)["time"]
    b = step.step_cost(m, g, batch, prompt + output - 2, tp, prec, cal=cal)["time"]
    return 0.5 * (a + b)


def estimate(m, g, prec, tp, prompt, output, concurrency, chunk=0, price=0.0, cal=None, policy=None):
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
