"""Low-rank adapters (chapter 6), as the chapter and lora.h state them:

- an adapter on a module W (in -> out) is A (in x r) and B (r x out):
  r (in + out) parameters, with the model's own module shapes (grouped-query
  k and v are hidden -> kv_heads * head_dim);
- under tensor parallelism a column-parallel module (q, k, v, gate, up)
  splits its output over tp (B split, A whole; k and v hold the KV heads
  this GPU keeps, replicated once tp passes their number) and a
  row-parallel one (o, down) its input (A split, B whole);
- serving engines keep `slots` adapter buffers sized for the largest rank,
  taken out of the KV cache's memory;
- a decode step with D distinct adapters among B tokens runs, per targeted
  module and layer, a gathered shrink (x A: 2 B in r FLOP, D A's read once,
  each token's x read and v written) and a gathered expand (y += v B: 2 B r
  out FLOP, D B's read once, v read and y read and written), each at its
  own roofline, plus a fixed cost per kernel launch;
- B requests drawn independently from popularity p hold sum_i 1 - (1 - p_i)^B
  distinct adapters on average; Zipf(s): p_i proportional to i^-s.

Dense models only (a mixture's expert adapters are not written here yet)."""
import math

from data import DTYPE_BYTES
from lib import model, roofline

MODULES = ("q", "k", "v", "o", "gate", "up", "down")
ATTENTION = ("q", "k", "v", "o")
COLUMN_PARALLEL = ("q", "k", "v", "gate", "up")


def module_shape(m, mod):
    """(in, out) of a module of one layer."""
    h, q, kv = m["hidden"], m["heads"] * m["head_dim"], m["kv_heads"] * m["head_dim"]
    if m["experts"] > 1 and mod in ("gate", "up", "down"):
        raise NotImplementedError("expert adapters are not re-derived in lib/lora.py yet")
    return {"q": (h, q), "k": (h, kv), "v": (h, kv), "o": (q, h),
            "gate": (h, m["ffn"]), "up": (h, m["ffn"]), "down": (m["ffn"], h)}[mod]


def module_shape_per_gpu(m, mod, tp):
    i, o = module_shape(m, mod)
    if mod in ("k", "v"):
        return i, model.kv_heads_per_gpu(m, tp) * m["head_dim"]
    if mod in COLUMN_PARALLEL:
        return i, o / tp
    return i / tp, o


def module_params(m, mod, rank, tp=1):
    i, o = module_shape_per_gpu(m, mod, tp) if tp > 1 else module_shape(m, mod)
    return rank * (i + o)


def adapter_params(m, rank, targets, tp=1):
    """Parameters of one adapter over every layer (on one GPU when tp > 1)."""
    return m["layers"] * sum(module_params(m, t, rank, tp) for t in targets)


def adapter_bytes(m, rank, targets, tp=1, dtype="bf16"):
    return adapter_params(m, rank, targets, tp) * DTYPE_BYTES[dtype]


def bgmv_ops(tokens, d_in, d_out, rank, sets, wb=2.0, ab=2.0):
    """(shrink, expand) as dicts flop, w, act."""
    shrink = {"flop": 2 * tokens * d_in * rank, "w": sets * d_in * rank * wb, "act": tokens * (d_in + rank) * ab}
    expand = {"flop": 2 * tokens * rank * d_out, "w": sets * rank * d_out * wb,
              "act": tokens * (rank + 2 * d_out) * ab}
    return shrink, expand


def adapter_step(m, g, rank, targets, tp, batch, distinct, launch_s, peak_flops, wb=2.0, ab=2.0):
    """The adapter ops of one decode step on one GPU: flop, weight, act,
    time_ops, launches, time_launch, time_adapter."""
    r = {"flop": 0.0, "weight": 0.0, "act": 0.0, "time_ops": 0.0, "launches": 0}
    for t in targets:
        i, o = module_shape_per_gpu(m, t, tp)
        for op in bgmv_ops(batch, i, o, rank, distinct, wb, ab):
            tm, _ = roofline.roofline_time(op["flop"], op["w"] + op["act"], peak_flops, g["mem_bw"])
            r["flop"] += m["layers"] * op["flop"]
            r["weight"] += m["layers"] * op["w"]
            r["act"] += m["layers"] * op["act"]
            r["time_ops"] += m["layers"] * tm
            r["launches"] += m["layers"]
    r["time_launch"] = r["launches"] * launch_s
    r["time_adapter"] = r["time_ops"] + r["time_launch"]
    return r


def zipf_probs(n, s):
    w = [i ** -s for i in range(1, n + 1)]
    tot = sum(w)
    return [x / tot for x in w]


def expected_distinct(p, batch):
    return sum(1.0 - (1.0 - x) ** batch for x in p)


def distinct_stddev(p, batch):
    """Standard deviation of the distinct count: the indicators 'adapter i is
    absent' have P = (1 - p_i)^B and pairwise P(both absent) = (1 - p_i - p_j)^B."""
    a = [(1.0 - x) ** batch for x in p]
    var = sum(x * (1 - x) for x in a)
    n = len(p)
    for i in range(n):
        for j in range(i + 1, n):
            var += 2 * ((1.0 - p[i] - p[j]) ** batch - a[i] * a[j])
    return math.sqrt(var)


def admitted_by_slots(p, batch, max_slots, trials, rng):
    """Mean requests admitted of `batch` queued ones, for every slot count
    1..max_slots, by simulation (rng: a random.Random): requests taken in
    order, one whose adapter would be a (slots+1)-th distinct one waits.  A
    request runs with s slots exactly when its adapter was among the first s
    distinct ones of the queue.  Returns (means, standard deviations) by slots."""
    cum = [0.0] * (max_slots + 1)
    cum2 = [0.0] * (max_slots + 1)
    idx, cum_p, acc = range(len(p)), [], 0.0
    for x in p:
        acc += x
        cum_p.append(acc)
    for _ in range(trials):
        draws = rng.choices(idx, cum_weights=cum_p, k=batch)
        rank, count = {}, [0] * (batch + 2)
        for a in draws:
            if a not in rank:
                rank[a] = len(rank) + 1
            count[rank[a]] += 1
        run = 0
        for s in range(1, max_slots + 1):
            run += count[s] if s <= batch else 0
            cum[s] += run
            cum2[s] += run * run
    means = [c / trials for c in cum]
    sds = [math.sqrt(max(0.0, c2 / trials - mu * mu)) for c2, mu in zip(cum2, means)]
    return means, sds
