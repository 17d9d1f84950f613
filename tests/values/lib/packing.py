"""Ragged batches (chapter 3): a batch of sequences padded to its longest,
packed end to end, or bucketed by length (sequence i to the first bucket
whose upper edge holds it, longer ones to the last; each bucket one batch
padded to its own longest).  Slots are token positions computed, waste the
share of slots that is padding, and causal attention computes L(L+1)/2
query-key pairs for a row of length L."""
import math


def pairs(length):
    return length * (length + 1) / 2


def padded(lengths):
    n, top = len(lengths), max(lengths) if lengths else 0
    slots, tokens = n * top, sum(lengths)
    return {"tokens": tokens, "slots": slots, "waste": (slots - tokens) / slots if slots else 0.0,
            "attn_pairs": n * pairs(top), "batches": 1 if n else 0}


def packed(lengths):
    tokens = sum(lengths)
    return {"tokens": tokens, "slots": tokens, "waste": 0.0, "attn_pairs": sum(pairs(x) for x in lengths),
            "batches": 1 if lengths else 0}


def bucketed(lengths, edges):
    groups = {}
    for x in lengths:
        b = next((i for i, e in enumerate(edges) if x <= e), len(edges) - 1)
        groups.setdefault(b, []).append(x)
    costs = [padded(g) for g in groups.values()]
    slots, tokens = sum(c["slots"] for c in costs), sum(lengths)
    return {"tokens": tokens, "slots": slots, "waste": (slots - tokens) / slots if slots else 0.0,
            "attn_pairs": sum(c["attn_pairs"] for c in costs), "batches": len(costs)}


def offsets(lengths):
    """cu[0..n]: cu[0] = 0, cu[i+1] = cu[i] + len[i]."""
    cu = [0]
    for x in lengths:
        cu.append(cu[-1] + x)
    return cu


def draw_length(rng, median, sigma, lo, hi, tail_share=0.0, tail_median=0.0, tail_sigma=0.0):
    """One prompt length from a lognormal (or, with probability tail_share,
    the tail's lognormal; the choice drawn first), clamped to [lo, hi] and
    rounded half away from zero."""
    tail = tail_share > 0 and rng.uniform() < tail_share
    x = rng.lognormal(math.log(tail_median if tail else median), tail_sigma if tail else sigma)
    if not x >= lo:
        return lo
    if x >= hi:
        return hi
    return int(math.floor(x + 0.5))
