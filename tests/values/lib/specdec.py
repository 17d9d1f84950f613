"""Speculative decoding (chapters 10 and 11), from the acceptance model of
Leviathan et al. (2023) as code/napkin/workloads/specdec.h states it: each
of gamma draft tokens is accepted independently with probability alpha; a
round yields N tokens, the accepted prefix plus one of the target's own,
so N is a geometric count capped at gamma + 1.

Two cost regimes for a round of gamma draft steps and one verification:
(i) free verification, a round costs gamma*c + 1 target steps; (ii) the
roofline, each step priced by the step model (lib/step.py): the plain step
at one new token per sequence, the verification at gamma + 1, the draft's
decode step at one.  Every sequence holds context + gamma + 1 tokens of KV
at the end of a round; a draft time-sliced on the target's GPUs shares
their memory (lib/memory.plan_resident)."""
import math

from lib import memory, model, roofline, step
from lib.model import Precision

BF16 = Precision.uniform("bf16")


# ---- the capped geometric process ----

def pmf(alpha, gamma, k):
    """P(N = k): k-1 drafts accepted then one rejected, or all gamma accepted."""
    if k < 1 or k > gamma + 1:
        return 0.0
    return alpha ** gamma if k == gamma + 1 else alpha ** (k - 1) * (1 - alpha)


def cdf(alpha, gamma, k):
    return sum(pmf(alpha, gamma, j) for j in range(1, min(k, gamma + 1) + 1))


def expected_tokens(alpha, gamma):
    """E[N] = sum over k of P(N >= k) = 1 + alpha + ... + alpha^gamma."""
    return sum(alpha ** j for j in range(gamma + 1))


def variance(alpha, gamma):
    """Var[N] from E[N^2] = sum of (2k - 1) P(N >= k)."""
    e = expected_tokens(alpha, gamma)
    e2 = sum((2 * k - 1) * alpha ** (k - 1) for k in range(1, gamma + 2))
    return max(0.0, e2 - e * e)


def walltime_speedup(alpha, gamma, c):
    """Regime (i): E[N] tokens for gamma*c + 1 target steps."""
    return expected_tokens(alpha, gamma) / (gamma * c + 1)


def operations_factor(alpha, gamma, c_hat):
    """Arithmetic per token against plain decoding: a round evaluates gamma
    draft tokens (c_hat each) and gamma + 1 target positions for E[N] tokens."""
    return (gamma * c_hat + gamma + 1) / expected_tokens(alpha, gamma)


def best_gamma(alpha, c, gamma_max=10):
    """(gamma, speedup): the best regime (i) draft length, the smallest on a tie."""
    sp = [(walltime_speedup(alpha, g, c), -g) for g in range(1, gamma_max + 1)]
    s, ng = max(sp)
    return -ng, s


def alpha_for_speedup(target, gamma, c, tol=1e-13):
    """The smallest alpha whose regime (i) speedup reaches target (E[N] is
    increasing in alpha: bisection); None when alpha = 1 does not."""
    if walltime_speedup(1.0, gamma, c) < target:
        return None
    if walltime_speedup(0.0, gamma, c) >= target:
        return 0.0
    lo, hi = 0.0, 1.0
    while hi - lo > tol:
        mid = (lo + hi) / 2
        if walltime_speedup(mid, gamma, c) < target:
            lo = mid
        else:
            hi = mid
    return hi


# ---- regime (ii): rounds priced on the step model ----

def estimate(target, draft, g, tp, batch, context, alpha, gamma, draft_tp=None, comm=True, prec=BF16):
    """t_target, t_verify, t_draft (0 without a draft model), c, verify_ratio,
    tokens, speedup_free, speedup_roofline = E[N] t_target / (gamma t_draft + t_verify)."""
    t_target = step.step_cost(target, g, batch, context, tp, prec, comm=comm)["time"]
    t_verify = step.step_cost(target, g, batch, context, tp, prec, new_tokens=gamma + 1, comm=comm)["time"]
    t_draft = 0.0
    if draft is not None:
        t_draft = step.step_cost(draft, g, batch, context, draft_tp or tp, prec, comm=comm)["time"]
    e = expected_tokens(alpha, gamma)
    c = t_draft / t_target
    return {"t_target": t_target, "t_verify": t_verify, "t_draft": t_draft, "c": c,
            "verify_ratio": t_verify / t_target, "tokens": e, "round": gamma * t_draft + t_verify,
            "speedup_free": walltime_speedup(alpha, gamma, c),
            "speedup_roofline": e * t_target / (gamma * t_draft + t_verify)}


def max_batch(target, draft, g, tp, context, gamma, draft_tp=None, own_gpus=False, prec=BF16, extra=0.0):
    """The largest batch whose every sequence holds context + gamma + 1
    tokens of KV: on the target's GPUs (with the draft when it shares them)
    and, for a draft on GPUs of its own, there too."""
    held = context + gamma + 1
    res = [(target, prec, tp)]
    if draft is not None and not own_gpus:
        res.append((draft, prec, draft_tp or tp))
    b = memory.max_batch(memory.plan_resident(res, g, extra=extra), held)
    if draft is not None and own_gpus:
        b = min(b, memory.max_batch(memory.plan_resident([(draft, prec, draft_tp or tp)], g), held))
    return b


def break_even_batch(speedup_at, batch_max):
    """The first batch in 1..batch_max whose speedup is below 1 (a scan
    upward), 0 when none is."""
    for b in range(1, batch_max + 1):
        if speedup_at(b) < 1.0:
            return b
    return 0


def heads_params(m, heads, own_vocab):
    """Medusa-style heads: each a hidden x hidden residual layer with its
    bias, plus a hidden x vocab projection of its own when own_vocab."""
    h = m["hidden"]
    return heads * (h * h + h + (h * m["vocab"] if own_vocab else 0))


def heads_time(m, g, heads, own_vocab, tp, tokens, prec=BF16):
    """The heads run on `tokens` positions per step, split over tp GPUs like
    the projections: one roofline GEMM lump on one GPU."""
    p = heads_params(m, heads, own_vocab) / tp
    t, _ = roofline.roofline_time(2 * tokens * p, p * model.DTYPE_BYTES[prec.weights],
                                  roofline.peak(g, prec.compute), g["mem_bw"])
    return t
