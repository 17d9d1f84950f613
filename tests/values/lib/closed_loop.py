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
starts at the previous send])) / N.

simulate() replays the benchmark step by step (code/napkin/serving/
simulate.h states it): C clients each keep one request in flight and the
benchmark sends N; a request reaches the engine after its overhead
(exponential with mean h, seeded, or exactly h) and asks for an output
length uniform in round(O (1 -+ spread)); the engine admits at step
boundaries, fills a step with one token of every decoding request and then
prompt tokens first come first served (earliest arrival, then the earlier
sent) up to max(1, B - decodes), chunking a prompt the rest of the budget
cannot hold; a prompt's first token comes at the end of the step that holds
its last token, and each step decodes one token of every decoding request.
After a step the clients are visited in order: one whose request has all
its tokens sends the next (its two draws, overhead then length, from the
project's generator, lib/rng.py), so the seeded run replays the same
draws.  An idle engine waits for the next arrival."""
import math

from lib import rng

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


def simulate(costs, concurrency, prompt, output, budget=0, requests=0, overhead=0.0, seed=1, spread=0.0,
             jitter=True):
    """Every request of one replayed benchmark, in the order sent: dicts of
    sent, arrived, first, last (seconds from the start) and output; and the
    makespan.  Returns (requests, makespan)."""
    C, P, O = concurrency, prompt, output
    N, B = requests or ROUNDS * C, budget or DEFAULT_BUDGET
    lo, hi = math.floor(O * (1 - spread) + 0.5), math.floor(O * (1 + spread) + 0.5)  # rounded, half up
    g = rng.Rng(seed)
    q = []

    def send(t):
        arrived = t + (g.exponential(1 / overhead) if jitter and overhead > 0 else overhead)
        out = max(1, lo + g.below(hi - lo + 1)) if spread > 0 else O
        q.append({"sent": t, "arrived": arrived, "first": None, "last": None, "output": out,
                  "state": "waiting", "progress": 0, "produced": 0})
        return len(q) - 1

    clients = [send(0.0) for _ in range(C)]
    t, done = 0.0, 0
    while done < N:
        live = [q[i] for i in clients]
        decoding = sum(1 for r in live if r["state"] == "decoding")
        waiting = [i for i in clients if q[i]["state"] == "waiting"]
        admitted = sorted((i for i in waiting if q[i]["arrived"] <= t), key=lambda i: (q[i]["arrived"], i))
        if decoding == 0 and not admitted:
            t = min(q[i]["arrived"] for i in waiting)
            continue
        room, tokens = max(1, B - decoding), 0
        for i in admitted:
            if room <= 0:
                break
            r = q[i]
            take = min(P - r["progress"], room)
            r["progress"] += take
            tokens += take
            room -= take
            if r["progress"] < P:
                break  # chunked: the budget is spent
            r["state"] = "prefilled"
        t += step_time(costs, decoding, tokens)
        for r in live:
            if r["state"] == "decoding":
                r["produced"] += 1
            elif r["state"] == "prefilled":
                r["state"], r["produced"], r["first"] = "decoding", 1, t
            else:
                continue
            if r["produced"] >= r["output"]:
                r["state"], r["last"] = "done", t
        kept = []
        for i in clients:
            if q[i]["state"] != "done":
                kept.append(i)
                continue
            done += 1
            if len(q) < N:
                kept.append(send(t))
        clients = kept
    return q, t

