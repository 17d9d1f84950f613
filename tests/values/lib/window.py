"""A batch window under Poisson arrivals (chapter 3): a batch opens at its
first arrival and leaves when it holds Bmax requests or W seconds after
that arrival.  With X ~ Poisson(lambda*W), the arrivals a whole window
would see after the first:

  E[B] = 1 + sum_{j=0}^{Bmax-2} P(X > j)          (B = 1 + min(X, Bmax-1))
  E[D] = (E[B] - 1) / lambda                       (first arrival to dispatch)
  E[A] = sum_{j=0}^{Bmax-2} (j+1) P(X > j) / lambda (a batch's summed wait)
  mean wait per request = E[A] / E[B];  full share = P(X >= Bmax-1)."""
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
