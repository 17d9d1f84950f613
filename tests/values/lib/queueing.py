"""A serving replica as a queue (chapter 5), from first principles.

Closed forms for one server fed by Poisson arrivals at rate lambda, service
S of mean E[S] and squared coefficient of variation cs2 (0 fixed, 1
exponential), rho = lambda E[S] < 1 (Pollaczek-Khinchine):

  Wq = rho (1 + cs2) E[S] / (2 (1 - rho)),  W = Wq + E[S],
  Lq = lambda Wq,  L = lambda W  (Little);

M/D/1 is cs2 = 0, M/M/1 cs2 = 1.  Inverted for a target mean time T:
rho = 2x / (1 + cs2 + 2x), x = (T - E[S]) / E[S].

The batch queue: requests arrive as a Poisson process and wait in one
first-come queue; whenever the server is free it takes the oldest waiting
requests, at most `limit` of them (the batch size and the KV cap, whichever
is smaller), and serves them together for times[n-1] seconds (a batch run to
completion); with a window it first waits until `limit` are waiting or the
oldest has waited `window` seconds.  Its capacity is the best n / times[n-1]
over n <= limit.  simulate() runs it with Python's own generator (Mersenne
Twister), so it shares nothing with the C's: its figures carry sampling
error, which the chapter files state as tolerances."""
import bisect
import math
import random


def mg1(lam, service, cs2):
    """{rho, wait, time, in_queue, in_system}, or None when rho >= 1."""
    rho = lam * service
    if not (lam > 0 and service > 0 and cs2 >= 0) or rho >= 1:
        return None
    wq = rho * (1 + cs2) * service / (2 * (1 - rho))
    return {"rho": rho, "wait": wq, "time": wq + service, "in_queue": lam * wq, "in_system": lam * (wq + service)}


def md1(lam, mu):
    return mg1(lam, 1 / mu, 0.0)


def mm1(lam, mu):
    return mg1(lam, 1 / mu, 1.0)


def mdc_wait(lam, service, c):
    """M/D/c mean wait: Erlang C's M/M/c wait, P(wait) / (c mu - lambda),
    halved for a fixed service (Allen-Cunneen, cs2 = 0); None when rho >= 1.
    Erlang C from its sum: a^c / c! / (1 - rho) over sum_{k<c} a^k / k! +
    a^c / c! / (1 - rho), a = lambda service."""
    a = lam * service
    rho = a / c
    if not (lam > 0 and service > 0 and c >= 1) or rho >= 1:
        return None
    top = a ** c / math.factorial(c) / (1 - rho)
    p_wait = top / (sum(a ** k / math.factorial(k) for k in range(c)) + top)
    return 0.5 * p_wait / (c / service - lam)


def mg1_max_rate(service, cs2, target):
    """The highest arrival rate whose M/G/1 mean time in system is at most target."""
    if target <= service:
        return 0.0
    x = (target - service) / service
    return 2 * x / (1 + cs2 + 2 * x) / service


def capacity(times, limit):
    """Requests/s a replica that runs batches of at most `limit` sustains."""
    return max(n / times[n - 1] for n in range(1, min(limit, len(times)) + 1))


def simulate(lam, times, limit, requests, warmup, seed, window=0.0):
    """The batch queue for warmup + requests Poisson arrivals.  Per-request
    figures over the measured requests (after the warm-up); time averages
    (requests present, waiting), the busy share and the mean batch over the
    span from the first measured arrival to the last arrival."""
    rng = random.Random(seed)
    n_all = warmup + requests
    arr, t = [], 0.0
    for _ in range(n_all):
        t += rng.expovariate(lam)
        arr.append(t)
    disp, done, batches = [0.0] * n_all, [0.0] * n_all, []
    free, head = 0.0, 0
    while head < n_all:
        ready = arr[head]  # the oldest waiting
        if window > 0:
            full = arr[head + limit - 1] if head + limit - 1 < n_all else math.inf
            ready = min(arr[head] + window, full)
        d = max(free, ready)
        n = bisect.bisect_right(arr, d, head, min(head + limit, n_all)) - head
        s = times[n - 1]
        disp[head:head + n] = [d] * n
        done[head:head + n] = [d + s] * n
        batches.append((d, n, s))
        free, head = d + s, head + n
    t0, t1 = arr[warmup], arr[-1]
    span = t1 - t0
    w = sorted([c - a for c, a in zip(done[warmup:], arr[warmup:])])

    def present(ends):
        """Time-average count of requests between arrival and ends[i] (both
        sorted: one first-come queue, one server) over the span: the sum of
        each one's stay clipped to the span, over its length."""
        j0, k = bisect.bisect_right(ends, t0), bisect.bisect_right(ends, t1)
        j0 = min(j0, warmup)  # a measured request arrives at t0 or later
        clipped_ends = math.fsum(ends[j0:k]) + (n_all - k) * t1
        clipped_starts = (warmup - j0) * t0 + math.fsum(arr[warmup:])
        return (clipped_ends - clipped_starts) / span

    busy = sum([min(d + s, t1) - max(d, t0) for d, _, s in batches if d + s > t0 and d < t1])
    in_span = [n for d, n, _ in batches if t0 <= d <= t1]
    return {
        "mean_time": sum(w) / requests,
        "p99_time": w[min(requests - 1, math.ceil(0.99 * requests) - 1)],
        "in_system": present(done),
        "in_queue": present(disp),
        "mean_batch": sum(in_span) / len(in_span),
        "utilization": busy / span,
    }
