"""Published measured ceilings: what code is reported to reach, against the
datasheet.  Inputs quoted with their source (the book's bibliography key
azure-benchmarking-guide): BabelStream on Azure ND H100 v5 reads at
3.18 TB/s and copies at 2.90 TB/s; on ND H200 v5, 4.48 and 4.01 TB/s."""

BABELSTREAM = {"h100": {"read": 3.18e12, "copy": 2.90e12},
               "h200": {"read": 4.48e12, "copy": 4.01e12}}

# Measured dense bf16 GEMM rates, FLOP/s: on an H100 80GB, PyTorch reports
# 788.72 TFLOP/s at 4096^3 and 797.51 at 8192^3 (torch-performance-test-data
# issue #79); the book takes 800.  The H200 has the H100's datasheet rate, so
# the H100's measured ~790 is assumed for it until a set measures it.
GEMM_BF16 = {"h100": 800e12, "h200": 790e12}


def at_published(g):
    """A GPU at its published ceilings: the bandwidth is BabelStream's
    read-only figure (a weight read is a read), and every dtype's FLOP rate
    scaled by the measured bf16 GEMM's share of the datasheet's."""
    key = g["key"]
    share = GEMM_BF16[key] / g["flops"]["bf16"]
    out = dict(g)
    out["mem_bw"] = BABELSTREAM[key]["read"]
    out["flops"] = {d: f * share for d, f in g["flops"].items()}
    return out
