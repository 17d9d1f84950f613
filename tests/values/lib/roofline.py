"""The roofline (chapter 1): t >= max(F/P, Q/beta); the ridge P/beta; the
ring collectives of the tensor-parallel group (a latency, then 2(tp-1)/tp
of the message over the link for an all-reduce, (tp-1)/tp for a gather)."""
from data import DTYPE_BYTES


def peak(g, dtype):
    """Dense FLOP/s of the GPU's tensor cores for a compute dtype (0: none)."""
    return g["flops"].get(dtype, 0.0)


def ridge(peak_flops, bandwidth):
    return peak_flops / bandwidth


def ridge_batch(g, prec):
    """The decode batch where a projection's 2*B / bytes-per-weight FLOP per
    weight byte reaches the ridge of the compute dtype (0: no such rate)."""
    p = peak(g, prec.compute)
    return ridge(p, g["mem_bw"]) / (2.0 / DTYPE_BYTES[prec.weights]) if p > 0 else 0.0


def compute_time(flop, peak_flops):
    return flop / peak_flops


def memory_time(nbytes, bandwidth):
    return nbytes / bandwidth


def roofline_time(flop, nbytes, peak_flops, bandwidth):
    """(time, bound) with bound "compute" or "memory"."""
    tc, tm = compute_time(flop, peak_flops), memory_time(nbytes, bandwidth)
    return max(tc, tm), ("compute" if tc > tm else "memory")


def allreduce_time(g, tp, nbytes):
    if tp <= 1:
        return 0.0
    return g["allreduce_latency"] + 2.0 * (tp - 1) / tp * nbytes / g["link_bw"]


def allgather_time(g, tp, nbytes):
    if tp <= 1:
        return 0.0
    return g["allreduce_latency"] + (tp - 1) / tp * nbytes / g["link_bw"]


def derated(g, bandwidth_fraction, flops_fraction):
    """A copy of the GPU row whose memory bandwidth and every FLOP rate are
    scaled by the given fractions: the device a model is timed on when it
    runs below the datasheet (links and capacity kept)."""
    out = dict(g)
    out["flops"] = {d: f * flops_fraction for d, f in g["flops"].items()}
    out["mem_bw"] = g["mem_bw"] * bandwidth_fraction
    return out


def alltoall_time(g, nbytes, intra_share, net_bw):
    """An expert-parallel all-to-all sending `nbytes` from one GPU:
    intra_share of them over NVLink at the link bandwidth and the rest over
    the network at net_bw, the two at once, after the collective latency."""
    intra = nbytes * intra_share / g["link_bw"]
    inter = nbytes * (1 - intra_share) / net_bw if intra_share < 1 else 0.0
    return g["allreduce_latency"] + max(intra, inter)


def p2p_time(nbytes, bandwidth, latency):
    """A point-to-point transfer over one link."""
    return latency + nbytes / bandwidth
