"""Time to first token as a closed-loop benchmark measures it (chapter 2;
code/napkin/serving/closed_loop.h states the model).

A step of n decodes and q prompt tokens costs t(n, q) = w + n c_dec + q c_tok
(w the weights' read, once a step).  The benchmark keeps C requests in
flight and averages over N (10 C by default): the first C arrive together
(the burst), the rest in the steady state.

Burst: the C prompts go through the engine's token budget B a step, first
come first served, after the decodes of those already prefilled (a step
takes at least one prompt token); a request's TTFT is the end of the step
that holds its prompt's last token.

Steady state at a request rate X: a step carries the m = X T prompts that
arrived during the one before and n = m (O - 1) decodes, so
T = w / (1 - X (P c_tok + (O - 1) c_dec)).  The prompts a step carries are
Poisson, so the step's variance is V = beta^2 X T / (1 - beta^2 X^2)
(beta = P c_tok); a request lands in a step picked by its length (mean
T + V / T), waits half of it, then runs its own step: w + n c_dec + beta +
beta X (T + V / T) (its prompt and those that arrived with it).  One
client's cycle is h + that + (O - 1) T, and C clients keep X cycle = C.

TTFT = (C (h + burst) + (N - C) (h + engine [+ cycle / C when the clock
starts at the previous send])) / N."""
import math

DEFAULT_BUDGET = 8192  # TensorRT-LLM's max_num_tokens, vLLM's and SGLang's defaults on these GPUs
ROUNDS = 10            # N = 10 C


def step_time(costs, decodes, tokens):
    w, c_dec, c_tok = costs
    if decodes <= 0 and tokens <= 0:
        return 0.0
    return w + decodes * c_dec + tokens * c_tok


def burst_ttft(costs, concurrency, prompt, output, budget=0):
    """Mean engine-side TTFT of C prompts arriving together at an idle engine."""
    B = budget or DEFAULT_BUDGET
    left = [prompt] * concurrency  # prompt tokens still to run, in arrival order
    done = decoding = 0
    t = total = 0.0
    while done < concurrency:
        room = max(1, B - decoding)
        q, finished = 0, 0
        i = done
        while room > 0 and i < concurrency:
            take = min(left[i], room)
            left[i] -= take
            q += take
            room -= take
            if left[i] == 0:
                finished += 1
                i += 1
        t += step_time(costs, decoding, q)
        total += finished * t
        done += finished
        if output > 1:
            decoding += finished
    return total / concurrency


def _steady(costs, prompt, output, overhead, X):
    w, c_dec, c_tok = costs
    beta = prompt * c_tok
    den = 1 - X * (beta + (output - 1) * c_dec)
    T = w / den if den > 0 else math.inf
    m = X * T
    n = m * (output - 1)
    V = beta * beta * X * T / (1 - beta * beta * X * X)
    landed = T + V / T
    engine = landed / 2 + w + n * c_dec + beta + beta * X * landed
    return {"step": T, "engine": engine, "cycle": overhead + engine + (output - 1) * T, "rate": X}


def bench_ttft(costs, concurrency, prompt, output, budget=0, requests=0, overhead=0.0, departure_wait=False):
    """The benchmark's mean TTFT and its parts: burst, steady, departure, rate, step."""
    C = concurrency
    N = requests or ROUNDS * C
    w, c_dec, c_tok = costs
    per = prompt * c_tok + (output - 1) * c_dec
    lo, hi = 0.0, (1 / per if per > 0 else 1e9)
    for _ in range(200):  # X cycle(X) grows with X: the rate that keeps C clients busy
        X = 0.5 * (lo + hi)
        if X * _steady(costs, prompt, output, overhead, X)["cycle"] < C:
            lo = X
        else:
            hi = X
    s = _steady(costs, prompt, output, overhead, lo)
    s["departure"] = s["cycle"] / C
    s["burst"] = overhead + burst_ttft(costs, C, prompt, output, budget)
    s["steady"] = overhead + (s["departure"] if departure_wait else 0.0) + s["engine"]
    s["mean"] = (C * s["burst"] + (N - C) * s["steady"]) / N
    return s
