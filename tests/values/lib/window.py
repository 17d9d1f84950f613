"""A batch window under Poisson arrivals (chapters 3 and 4), from first
principles: requests arrive at rate lambda; a batch opens at its first
arrival and is dispatched when it holds bmax requests or W seconds after
that first arrival, whichever comes first; dispatch is instant.

With k = lambda*W and X ~ Poisson(k) the arrivals a full window sees after
the first, a batch holds B = 1 + min(X, bmax - 1).  While the batch is open
at time t in [0, W] it holds 1 + N(t) requests (N(t) ~ Poisson(lambda t),
and the batch is open while N(t) <= bmax - 2); the total wait of its
requests is the integral of what it holds while open, so

  E[B] = 1 + sum_{j=0}^{bmax-2} P(X > j)
  E[total wait] = integral_0^W E[(1 + N(t)) 1{N(t) <= bmax-2}] dt
                = sum_{j=0}^{bmax-2} (j + 1) P(X > j) / lambda

(integral_0^W P(N(t) = j) dt = P(X > j) / lambda), and the long-run mean
wait per request is E[total wait] / E[B].  A batch fills (the size trigger
fires first) when X >= bmax - 1."""
import math


def poisson_pmf(j, mean):
    if mean <= 0:
        return 1.0 if j == 0 else 0.0
    return math.exp(-mean + j * math.log(mean) - math.lgamma(j + 1))


def poisson_tail(j, mean):
    """P(X > j)."""
    return max(0.0, 1.0 - sum(poisson_pmf(i, mean) for i in range(j + 1)))


def expected(rate, window, max_batch):
    """mean_batch, mean_close (s), mean_wait (s), full_share."""
    mean = rate * window
    tails = [poisson_tail(j, mean) for j in range(max_batch - 1)]
    b = 1 + sum(tails)
    a = sum((j + 1) * t for j, t in enumerate(tails)) / rate
    full = 1.0 if max_batch == 1 else poisson_tail(max_batch - 2, mean)
    return {"mean_batch": b, "mean_close": (b - 1) / rate, "mean_wait": a / b, "full_share": full}


def simulate(rate, window, max_batch, batches, rnd):
    """The same process run batch by batch with exponential gaps from
    rnd.expovariate (any generator): per-batch (size, summed wait) pairs."""
    out, t = [], rnd.expovariate(rate)
    for _ in range(batches):
        arrived = [t]
        deadline = t + window
        t += rnd.expovariate(rate)
        while len(arrived) < max_batch and t <= deadline:
            arrived.append(t)
            t += rnd.expovariate(rate)
        close = arrived[-1] if len(arrived) == max_batch else deadline
        out.append((len(arrived), sum(close - a for a in arrived)))
    return out


def wait_standard_error(rate, window, max_batch, batches, rnd, sample=4000):
    """(standard error of the simulated mean batch, of the simulated mean
    wait per request) for a run of `batches` batches, from the per-batch
    spread of a sample run: the mean batch is a plain mean; the mean wait a
    ratio of sums, whose error by the delta method is
    sd(A - r*B) / (sqrt(n) * E[B])."""
    pairs = simulate(rate, window, max_batch, sample, rnd)
    n = len(pairs)
    mb = sum(b for b, _ in pairs) / n
    r = sum(a for _, a in pairs) / sum(b for b, _ in pairs)
    var_b = sum((b - mb) ** 2 for b, _ in pairs) / (n - 1)
    dev = [a - r * b for b, a in pairs]
    var_d = sum(d * d for d in dev) / (n - 1)
    return math.sqrt(var_b / batches), math.sqrt(var_d / batches) / mb


def mean_batch(lam, w, bmax):
    return expected(lam, w, bmax)["mean_batch"]


def mean_wait(lam, w, bmax):
    """Seconds a request waits in the window, averaged over requests."""
    return expected(lam, w, bmax)["mean_wait"]


def full_share(lam, w, bmax):
    """Share of batches the size trigger sends (X >= bmax - 1)."""
    return expected(lam, w, bmax)["full_share"]


def wait_quantile_uncapped(k, q):
    """The q-quantile of a request's wait, over W, when the cap never binds:
    the first request of a batch waits the whole window; the X others arrive
    uniformly over it and wait a uniform share of it.  Per request, a share
    1/(1+k) waits W and k/(1+k) waits U*W, U uniform on [0, 1]."""
    others = k / (1.0 + k)
    return q / others if q < others else 1.0
