"""One step priced: each op bounded on its own roofline (a memory-bound op
cannot borrow a compute-bound one's idle FLOPs), collectives added on the
critical path, or each op at the calibrated rates when a calibration is
given (lib/calibrated.py).  The step's bound compares its summed FLOP time
with its summed byte time, communication aside."""
from lib import calibrated, model, roofline

# the class a calibration without a MoE class prices the routed experts in
FALLBACK = {"moe_bf16": "gemm_bf16", "moe_w4a16": "gemm_bf16", "moe_int4": "gemm_bf16", "moe_fp8": "gemm_fp8", "moe_fp8_block": "gemm_fp8"}


def price(op, g, peak_flops, tp, cal=None):
    """(seconds for one occurrence, roofline bound or None for a collective)."""
    if op["kind"] == "allreduce":
        t = calibrated.price_allreduce(cal, g, tp, op["comm"]) if cal else roofline.allreduce_time(g, tp, op["comm"])
        return t, None
    if op["kind"] == "allgather":
        t = calibrated.price_allgather(cal, g, tp, op["comm"]) if cal else roofline.allgather_time(g, tp, op["comm"])
        return t, None
    if op["kind"] == "alltoall":  # the engine's measured kernel where the calibration has it, else the bound
        return calibrated.price_alltoall(cal, g, op), None
    nbytes = op["w"] + op["kv"] + op["act"]
    cls, span = op["cls"], op["span"]
    if cls.startswith("mla_"):
        # latent attention computes in bf16 whatever the weights and cache: the bf16 peak, both answers
        peak_flops = roofline.peak(g, "bf16") or peak_flops  # a row without a bf16 rate keeps the one given
        if cal and cls not in cal["ops"]:  # a calibration without MLA tables: the prefill class, as query tiles
            cls, span = "attn_prefill", 0.0
    t, bound = roofline.roofline_time(op["flop"], nbytes, peak_flops, g["mem_bw"])
    items = op["items"]
    if cal and cls not in cal["ops"] and FALLBACK.get(cls) in cal["ops"]:
        cls, items = FALLBACK[cls], 0.0  # a set without the MoE class: its GEMM class, no items
    if cal and cls in cal["ops"]:
        t = calibrated.price_compute(cal, cls, op["flop"], nbytes, items, span, peak_flops,
                                     g["mem_bw"], op["share"])
    return t, bound


def step_cost(m, g, batch, context, tp, prec, new_tokens=1, comm=True, cal=None, logits_last=False, ops=None):
    """Sums over step_ops (or the given ops of that step): flop,
    weight/kv/act/bytes, time, time_comm, time_memory, time_compute,
    intensity, bound, tokens; and the ops with their time per step ("t")
    and roofline bound.  logits_last: logits at each sequence's last
    position only (a served prefill)."""
    pk = roofline.peak(g, prec.compute)
    if ops is None:
        ops = model.step_ops(m, batch, context, tp, prec, new_tokens, comm, logits_last)
    c = {k: 0.0 for k in ("flop", "weight", "kv", "act", "comm_bytes", "time", "time_comm")}
    for op in ops:
        r = op["reps"]
        t, op["bound"] = price(op, g, pk, tp, cal)
        op["t"] = r * t
        c["flop"] += r * op["flop"]
        c["weight"] += r * op["w"]
        c["kv"] += r * op["kv"]
        c["act"] += r * op["act"]
        c["comm_bytes"] += r * op["comm"]
        c["time"] += op["t"]
        if op["kind"] in model.COMM_KINDS:
            c["time_comm"] += op["t"]
    c["bytes"] = c["weight"] + c["kv"] + c["act"]
    c["time_memory"] = roofline.memory_time(c["bytes"], g["mem_bw"])
    c["time_compute"] = roofline.compute_time(c["flop"], pk)
    c["intensity"] = c["flop"] / c["bytes"]
    c["bound"] = "compute" if c["time_compute"] > c["time_memory"] else "memory"
    c["tokens"] = float(batch * new_tokens)
    c["ops"] = ops
    return c


def compute_bound_batch(m, g, context, tp, prec, batch_max):
    """The smallest decode batch in 1..batch_max whose step is compute-bound,
    or 0.  A decode step's FLOPs are proportional to the batch and its bytes
    are fixed weights plus a share per sequence, F = f*B and Q = q0 + q1*B,
    so B*f/P > (q0 + q1*B)/beta solves in closed form (no search)."""
    s1 = step_cost(m, g, 1, context, tp, prec)
    s2 = step_cost(m, g, 2, context, tp, prec)
    f = s2["flop"] - s1["flop"]
    q1 = s2["bytes"] - s1["bytes"]
    q0 = s1["bytes"] - q1
    P, beta = roofline.peak(g, prec.compute), g["mem_bw"]
    slope = f / P - q1 / beta
    if slope <= 0:
        return 0
    b = int(q0 / beta / slope) + 1  # the first integer strictly past the crossing
    return b if b <= batch_max else 0


def marginal_intensity(m, g, context, tp, prec):
    """FLOPs over bytes of one more sequence: what the step's intensity tends
    to as the batch grows."""
    s1 = step_cost(m, g, 1, context, tp, prec)
    s2 = step_cost(m, g, 2, context, tp, prec)
    return (s2["flop"] - s1["flop"]) / (s2["bytes"] - s1["bytes"])
