"""Which experts a batch touches (chapter 13; model/moe.h states it).

A router is described by each expert's inclusion probability pi_i, the
chance that one token's top-k includes expert i (sum pi_i = k, each at
most 1).  Tokens route independently, so T tokens touch sum_i 1 - (1 -
pi_i)^T experts in expectation; uniform routing is pi_i = k/E.  A Zipf(s)
router gives expert i a share proportional to 1/(i+1)^s, scaled to sum k
and capped at 1: pi_i = min(1, c/(i+1)^s) with c the one constant that
makes the sum k (found here by bisection, the cap's water level)."""
import math


def zipf_inclusion(E, k, s):
    w = [(i + 1.0) ** -s for i in range(E)]
    lo, hi = 0.0, k / min(w)  # at hi every expert is capped: the sum is E >= k

    def total(c):
        return sum(min(1.0, c * x) for x in w)

    for _ in range(200):
        mid = 0.5 * (lo + hi)
        if total(mid) < k:
            lo = mid
        else:
            hi = mid
    c = 0.5 * (lo + hi)
    return [min(1.0, c * x) for x in w]


def expected_touched(pi, tokens):
    return sum(1 - (1 - p) ** tokens for p in pi)


def uniform_touched(E, k, tokens):
    return E * (1 - (1 - k / E) ** tokens)


def hot_rank(E, k, s, ep, tokens):
    """The hottest GPU of an expert-parallel group, the experts dealt out
    round-robin hottest first (expert i on GPU i mod ep): (its share of the
    routed pairs over the mean, the expected experts of its own that
    `tokens` tokens of the group touch)."""
    pi = zipf_inclusion(E, k, s)
    mine = pi[0::ep]
    return ep * sum(mine) / k, expected_touched(mine, tokens)


def tokens_to_cover(E, k, share):
    """The fewest tokens whose expected touched share reaches `share`:
    (1 - k/E)^T <= 1 - share, solved for T and rounded up."""
    t = math.ceil(math.log(1 - share) / math.log(1 - k / E))
    # the logarithms' last bits: step to the exact boundary
    while t > 1 and (1 - k / E) ** (t - 1) <= 1 - share:
        t -= 1
    while (1 - k / E) ** t > 1 - share:
        t += 1
    return t
