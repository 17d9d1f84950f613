"""The calibrated rate model (chapter 2; code/specs/calibrations.tsv holds
the fitted parameters), as the rate model's documentation states it:

  t = t0 + t_item*items + (tc^q + tm^q)^(1/q),
      tc = flop / (flop_frac * peak),  tm = bytes / (byte_frac * bandwidth)

and for decode attention with a span (cached positions per work item):

  span <= 128:  t = t0 + t_serial + (ti^q + tc^q + tm^q)^(1/q)
  span >  128:  t = t0 + t_serial + t_long + ti + (tc^q + tm^q)^(1/q)
      ti = t_item*items,  t_serial = (bytes/items) / (item_frac*bandwidth)

An op that is a share s of one fused kernel (each half of attention: 0.5)
carries s of t0 and t_long, and its tail is read at item_frac/s.  An
all-reduce takes the faster of two algorithms, min over i of latency_i +
bytes/bandwidth_i, on the curve of its TP degree; an all-gather is priced
as an all-reduce of half its bytes.  Classes or TP degrees the calibration
has no rates for fall back to the roofline."""
from lib import roofline

SHORT_SPAN = 128  # cached positions one tile of a decode attention kernel holds


def _blend(terms, q):
    hi = max(terms)
    if hi <= 0:
        return 0.0
    return hi * sum((t / hi) ** q for t in terms) ** (1 / q)


def op_rate_time(r, flop, nbytes, items, span, peak_flops, bandwidth):
    tc = flop / (r["flop_frac"] * peak_flops)
    tm = nbytes / (r["byte_frac"] * bandwidth)
    ti = r["t_item"] * items
    if span <= 0:
        return r["t0"] + ti + _blend([tc, tm], r["blend"])
    serial = nbytes / items / (r["item_frac"] * bandwidth) if r["item_frac"] > 0 and items > 0 else 0.0
    if span <= SHORT_SPAN:
        return r["t0"] + serial + _blend([ti, tc, tm], r["blend"])
    return r["t0"] + serial + r["t_long"] + ti + _blend([tc, tm], r["blend"])


def link_rate_time(link, nbytes):
    l1, b1, l2, b2 = link
    return min(l1 + nbytes / b1, l2 + nbytes / b2)


def price_compute(cal, cls, flop, nbytes, items, span, peak_flops, bandwidth, share):
    r = dict(cal["ops"][cls])
    r["t0"] *= share
    r["t_long"] *= share
    r["item_frac"] = r["item_frac"] / share if share > 0 else 0.0
    return op_rate_time(r, flop, nbytes, items, span, peak_flops, bandwidth)


def price_allreduce(cal, g, tp, nbytes):
    if tp > 1 and tp in cal["allreduce"]:
        return link_rate_time(cal["allreduce"][tp], nbytes)
    return roofline.allreduce_time(g, tp, nbytes)


def price_allgather(cal, g, tp, nbytes):
    if tp > 1 and tp in cal["allreduce"]:
        return link_rate_time(cal["allreduce"][tp], nbytes / 2)
    return roofline.allgather_time(g, tp, nbytes)


def price_alltoall(cal, g, op):
    """One dispatch or combine: the engine's measured line (latency + per
    token x tokens + merged bytes / bandwidth) for a group inside one node
    no larger than the one measured, else the bound (lib/roofline.py)."""
    line = cal["alltoall"].get(op["a2a_kernel"]) if cal else None
    if line and op["intra_share"] >= 1 and 1 < op["ranks"] <= line["ep"]:
        return line["latency"] + line["per_token"] * op["tokens"] + \
            (op["comm"] / line["bandwidth"] if line["bandwidth"] > 0 else 0.0)
    return roofline.alltoall_time(g, op["comm"], op["intra_share"], op["net_bw"])
