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
    if mean == 0:
        return 1.0 if j == 0 else 0.0
    return math.exp(-mean + j * math.log(mean) - math.lgamma(j + 1))


def poisson_tail(j, mean):
    """P(X > j) for X ~ Poisson(mean)."""
    return max(0.0, 1.0 - sum(poisson_pmf(i, mean) for i in range(j + 1)))


def mean_batch(lam, w, bmax):
    k = lam * w
    return 1.0 + sum(poisson_tail(j, k) for j in range(bmax - 1))


def mean_wait(lam, w, bmax):
    """Seconds a request waits in the window, averaged over requests."""
    k = lam * w
    total = sum((j + 1) * poisson_tail(j, k) for j in range(bmax - 1)) / lam
    return total / mean_batch(lam, w, bmax)


def full_share(lam, w, bmax):
    """Share of batches the size trigger sends (X >= bmax - 1)."""
    return poisson_tail(bmax - 2, lam * w) if bmax >= 2 else 1.0


def wait_quantile_uncapped(k, q):
    """The q-quantile of a request's wait, over W, when the cap never binds:
    the first request of a batch waits the whole window; the X others arrive
    uniformly over it and wait a uniform share of it.  Per request, a share
    1/(1+k) waits W and k/(1+k) waits U*W, U uniform on [0, 1]."""
    others = k / (1.0 + k)
    return q / others if q < others else 1.0
