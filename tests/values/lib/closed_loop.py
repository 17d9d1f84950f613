"""Time to first token as a closed-loop benchmark measures it (chapter 2;
code/napkin/serving/closed_loop.h states the model).

A step of n decodes and q prompt tokens costs t(n, q) = w + n c_dec + q c_tok
(w the weights' read, once a step); a step of decodes alone t(n, 0) =
w_dec + n c_dec, w_dec the read of the weights the decodes route to (a
mixture's experts touched; 0 in costs: w, a dense model's).  The benchmark keeps C requests in
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

Prefill first (SGLang's scheduler: a batch of waiting prompts runs before
any decode, and the two are not mixed by default): a step with prompts to
run carries no decodes, t(0, q) = w + q c_tok.  A request that arrives
while others prefill then loses no ground, so the C clients stay one
cohort: every round is the burst again, K = the last prompt's first token
in it, then O - 1 steps of the C decodes, d = w + C c_dec.  Steady TTFT =
h + the burst's; a request's decode waits out the round's prefill steps
after its first token (K - t_i), so TPOT = d + (K - mean t_i) / (O - 1);
cycle = h + K + (O - 1) d; rate = C / cycle.

simulate() replays the benchmark step by step (code/napkin/serving/
simulate.h states it): C clients each keep one request in flight and the
benchmark sends N; a request reaches the engine after its overhead
(exponential with mean h, seeded, or exactly h) and asks for an output
length uniform in round(O (1 -+ spread)); the engine admits at step
boundaries, fills a step with one token of every decoding request and then
prompt tokens first come first served (earliest arrival, then the earlier
sent) up to max(1, B - decodes), chunking a prompt the rest of the budget
cannot hold; a prompt's first token comes at the end of the step that holds
its last token, and each step decodes one token of every decoding request
(prefill first: a step with arrived prompts carries no decodes and
decodes none).
After a step the clients are visited in order: one whose request has all
its tokens sends the next (its two draws, overhead then length, from the
project's generator, lib/rng.py), so the seeded run replays the same
draws.  An idle engine waits for the next arrival."""
import math

from lib import rng

DEFAULT_BUDGET = 8192  # TensorRT-LLM's max_num_tokens, vLLM's and SGLang's defaults on these GPUs
ROUNDS = 10            # N = 10 C
# Engines whose scheduler runs waiting prompts before any decode by default:
# SGLang (its event loop takes a prefill batch whenever prompts wait and mixes
# decodes into it only with --enable-mixed-chunk, off by default); TensorRT-LLM's
# in-flight batching and vLLM V1's scheduler put decodes in every step.
PREFILL_FIRST = frozenset({"sglang"})


def prefill_first(engine):
    return engine in PREFILL_FIRST


def step_time(costs, decodes, tokens):
    w, c_dec, c_tok = costs[:3]
    w_dec = costs[3] if len(costs) > 3 else 0.0
    if decodes <= 0 and tokens <= 0:
        return 0.0
    if tokens <= 0 and w_dec > 0:  # decodes alone read only the weights they route to
        w = w_dec
    return w + decodes * c_dec + tokens * c_tok


def burst_firsts(costs, concurrency, prompt, output, budget=0, prefill_first=False):
    """Each of C prompts' engine-side first token, arriving together at an
    idle engine, in arrival order."""
    B = budget or DEFAULT_BUDGET
    left = [prompt] * concurrency  # prompt tokens still to run, in arrival order
    done = decoding = 0
    t = 0.0
    firsts = []
    while done < concurrency:
        riding = 0 if prefill_first else decoding
        room = max(1, B - riding)
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
        t += step_time(costs, riding, q)
        firsts += [t] * finished
        done += finished
        if output > 1:
            decoding += finished
    return firsts


def burst_ttft(costs, concurrency, prompt, output, budget=0, prefill_first=False):
    """Mean engine-side TTFT of C prompts arriving together at an idle engine."""
    firsts = burst_firsts(costs, concurrency, prompt, output, budget, prefill_first)
    return sum(firsts) / concurrency


def _steady(costs, prompt, output, overhead, X):
    w, c_dec, c_tok = costs[:3]
    beta = prompt * c_tok
    den = 1 - X * (beta + (output - 1) * c_dec)
    T = w / den if den > 0 else math.inf
    m = X * T
    n = m * (output - 1)
    V = beta * beta * X * T / (1 - beta * beta * X * X)
    landed = T + V / T
    engine = landed / 2 + w + n * c_dec + beta + beta * X * landed
    return {"step": T, "engine": engine, "cycle": overhead + engine + (output - 1) * T, "rate": X}


def _cohort(costs, concurrency, output, overhead, firsts):
    """A prefill-first engine's round: every client in one cohort (above)."""
    d = step_time(costs, concurrency, 0)
    K, engine = firsts[-1], sum(firsts) / len(firsts)
    cycle = overhead + K + (output - 1) * d
    return {"step": d + (K - engine) / (output - 1) if output > 1 else d, "engine": engine, "cycle": cycle,
            "rate": concurrency / cycle}


def bench_ttft(costs, concurrency, prompt, output, budget=0, requests=0, overhead=0.0, departure_wait=False,
               prefill_first=False):
    """The benchmark's mean TTFT and its parts: burst, steady, departure, rate, step."""
    C = concurrency
    N = requests or ROUNDS * C
    firsts = burst_firsts(costs, C, prompt, output, budget, prefill_first)
    if prefill_first:
        s = _cohort(costs, C, output, overhead, firsts)
    else:
        s = _steady(costs, prompt, output, overhead, _steady_rate(costs, C, prompt, output, overhead))
    s["departure"] = s["cycle"] / C
    s["burst"] = overhead + sum(firsts) / C
    s["steady"] = overhead + (s["departure"] if departure_wait else 0.0) + s["engine"]
    s["mean"] = (C * s["burst"] + (N - C) * s["steady"]) / N
    return s


def _steady_rate(costs, C, prompt, output, overhead):
    """The request rate X whose cycle keeps C clients busy: X cycle(X) = C
    (it grows with X), by halving."""
    w, c_dec, c_tok = costs[:3]
    per = prompt * c_tok + (output - 1) * c_dec
    lo, hi = 0.0, (1 / per if per > 0 else 1e9)
    for _ in range(200):
        X = 0.5 * (lo + hi)
        if X * _steady(costs, prompt, output, overhead, X)["cycle"] < C:
            lo = X
        else:
            hi = X
    return lo


def simulate(costs, concurrency, prompt, output, budget=0, requests=0, overhead=0.0, seed=1, spread=0.0,
             jitter=True, prefill_first=False):
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
        riding = 0 if prefill_first and admitted else decoding  # prefill first: prompts pause the decodes
        room, tokens = max(1, B - riding), 0
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
        t += step_time(costs, riding, tokens)
        for r in live:
            if r["state"] == "decoding":
                if riding == 0:
                    continue  # paused for the prompts
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

