"""Servers under Poisson arrivals, first come first served (chapter 9):
M/D/1 exactly (the Pollaczek-Khinchine mean, Erlang's distribution of the
wait), and M/D/c and M/D/1 simulated by an independent event loop (each
arrival takes the server that frees first; the first tenth of the jobs
warm the queue up and are not measured)."""
import decimal
import heapq
import math


def md1_mean_time(lam, D):
    rho = lam * D
    return D + rho * D / (2 * (1 - rho))


def md1_wait_cdf(lam, D, t):
    """Erlang: P(W <= t) = (1 - rho) sum_{k=0}^{floor(t/D)} (lam (kD - t))^k / k! e^{-lam (kD - t)}.
    The sum alternates over terms near e^(lam t): it is summed in 60-digit
    decimals, so the tail keeps its digits where doubles would not."""
    with decimal.localcontext() as ctx:
        ctx.prec = 60
        L, Dd, T = decimal.Decimal(lam), decimal.Decimal(D), decimal.Decimal(t)
        s, fact = decimal.Decimal(0), decimal.Decimal(1)
        for k in range(int(math.floor(t / D)) + 1):
            if k:
                fact *= k
            x = L * (k * Dd - T)
            s += (x ** k if k else 1) / fact * (-x).exp()
        return float((1 - L * Dd) * s)


def md1_time_quantile(lam, D, q):
    """The q-quantile of the time in system: the wait's quantile plus D."""
    if md1_wait_cdf(lam, D, 0.0) >= q:
        return D
    lo, hi = 0.0, D
    while md1_wait_cdf(lam, D, hi) < q:
        lo, hi = hi, 2 * hi
    for _ in range(200):
        mid = (lo + hi) / 2
        lo, hi = (mid, hi) if md1_wait_cdf(lam, D, mid) < q else (lo, mid)
    return D + (lo + hi) / 2


def simulate(lam, D, c, jobs, rnd):
    """`jobs` measured arrivals at rate lam to c servers of D seconds each,
    interarrival times drawn by rnd.exponential(lam): mean time, p95 time (the order statistic at floor(0.95 (n - 1))),
    time-average jobs present over the measured arrivals' span."""
    warm = jobs // 10
    free = [0.0] * c
    t, arrive, finish = 0.0, [], []
    for _ in range(warm + jobs):
        t += rnd.exponential(lam)
        start = max(t, heapq.heappop(free))
        heapq.heappush(free, start + D)
        arrive.append(t)
        finish.append(start + D)
    t0, t1 = arrive[warm], arrive[-1]
    times = sorted(f - a for a, f in zip(arrive[warm:], finish[warm:]))
    present = sum(max(0.0, min(f, t1) - max(a, t0)) for a, f in zip(arrive, finish))
    return {"mean": sum(times) / len(times), "p95": times[int(math.floor(0.95 * (jobs - 1)))],
            "in_system": present / (t1 - t0)}


def erlang_c(c, a):
    """The chance an arrival waits in M/M/c at offered load a = lambda S < c."""
    head = sum(a ** k / math.factorial(k) for k in range(c))
    last = a ** c / math.factorial(c) / (1 - a / c)
    return last / (head + last)


def mdc_wait_approx(lam, S, c):
    """M/D/c mean wait as half the M/M/c one, Erlang C x S / (c - a) / 2
    (exact at c = 1, where it is Pollaczek-Khinchine's)."""
    a = lam * S
    return 0.5 * erlang_c(c, a) * S / (c - a)
