"""Serving N requests on the step model (chapter 3): a request's prefill is
one step over its whole prompt (context 0, logits for its last position
only, which gives the first output token); each further output token is a
decode step over the prompt and the tokens before it.  One after another:
N times one request, request k done at k times its time.  As one batch:
the same steps with every sequence in lockstep."""
from lib import step


def batch(m, g, prec, batch_size, prompt, output, tp=1, cal=None):
    """prefill, decode and total seconds, steps, of one batch."""
    pre = step.step_cost(m, g, batch_size, 0, tp, prec, new_tokens=prompt, cal=cal, logits_last=True)["time"]
    dec = sum(step.step_cost(m, g, batch_size, prompt + k - 1, tp, prec, cal=cal)["time"] for k in range(1, output))
    total = pre + dec
    return {"prefill": pre, "decode": dec, "total": total, "steps": output, "first_token": pre,
            "mean_latency": total, "tokens_per_s": batch_size * output / total}


def sequential(m, g, prec, n, prompt, output, tp=1, cal=None):
    one = batch(m, g, prec, 1, prompt, output, tp, cal)
    t = one["total"]
    return {"prefill": n * one["prefill"], "decode": n * one["decode"], "total": n * t, "steps": n * output,
            "mean_latency": (n + 1) / 2 * t,  # request k finishes at k*t
            "first_token": (n - 1) / 2 * t + one["prefill"], "tokens_per_s": output / t}
