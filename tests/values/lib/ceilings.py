"""Published measured ceilings: what code is reported to reach, against the
datasheet.  Inputs quoted with their source (the book's bibliography key
azure-benchmarking-guide): BabelStream on Azure ND H100 v5 reads at
3.18 TB/s and copies at 2.90 TB/s; on ND H200 v5, 4.48 and 4.01 TB/s."""

BABELSTREAM = {"h100": {"read": 3.18e12, "copy": 2.90e12},
               "h200": {"read": 4.48e12, "copy": 4.01e12}}

# Published bf16 GEMM rates (cuBLAS through PyTorch): the H100's 788.72
# TFLOP/s at 4096^3 and 797.51 at 8192^3, taken as 800; the H200 has the
# same datasheet rate, so the H100's measured ~790 is assumed for it.
GEMM_BF16 = {"h100": 800e12, "h200": 790e12}


def at_published_ceilings(g):
    """A copy of the GPU row at its published ceilings: the read-only
    bandwidth (a weight read is a read), every FLOP rate scaled by the bf16
    GEMM's share of the datasheet's bf16 peak; the rest kept."""
    key = g["key"]
    share = GEMM_BF16[key] / g["flops"]["bf16"]
    out = dict(g)
    out["flops"] = {d: f * share for d, f in g["flops"].items()}
    out["mem_bw"] = BABELSTREAM[key]["read"]
    return out


# Chapter 5's name for the same GPU row (one formula: at_published_ceilings).
at_published = at_published_ceilings
