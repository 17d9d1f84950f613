"""Expert parallelism (chapter 13; serving/expert_parallel.h states it): a
mixture's routed experts spread over `ep` GPUs, the attention run in
data-parallel replicas of tp GPUs (tp = 1: each GPU its own sequences),
and two all-to-alls per MoE layer, dispatch and combine.

- A GPU holding `tokens` tokens makes tokens*k*(ep-1)/ep (token, expert)
  pairs that leave it (alltoall_bytes: the copies unmerged, an exercise's
  hand count), but sends each token once to each other GPU its top-k
  reaches (merged_bytes): a GPU of E/ep experts is missed by a uniform top-k
  with probability C(E - E/ep, k)/C(E, k), counted here by enumerating the
  top-k's overlap with one GPU's experts (a hypergeometric law), so a token
  reaches ep(1 - P(miss)) GPUs, (ep-1)/ep of them others; times the busiest
  GPU's imbalance, a hidden vector each, at the dispatch's or the combine's
  bytes per value.  Of the ep-1 other GPUs those in its node are reached over
  NVLink, the rest over the network at net_bw per GPU: the intra-node share
  of the bytes is (min(ep, gpus_per_node) - 1)/(ep - 1); the all-to-all
  takes the longer path plus the collective latency (lib/roofline.py).
- Its time: on a calibrated row inside one node, the engine's measured line
  for decode (one new token a sequence) or prefill, dispatch or combine
  (lib/calibrated.py price_alltoall); otherwise the bound.
- The busiest GPU: under uniform routing the layout's imbalance and
  (E/ep)(1 - (1 - k/E)^T) experts of its own touched by the group's T
  tokens; under a Zipf(s) router the hottest GPU's load (the larger of the
  two) and experts (lib/moe.py).
- One step on one GPU: the tp replica's decoder step, but each GPU runs its
  T/tp tokens through its experts whole (k*imbalance + shared pairs a token,
  its touched experts plus the shared ones read), a dispatch before and a
  combine after in each MoE layer; the MLP's all-reduce stays only in the
  dense layers.
- Memory: one GPU holds everything but the routed experts 1/tp (the shared
  experts whole) and 1/ep of the routed ones; its own sequences' cache."""
import math

from lib import calibrated, memory, model, moe, roofline

LAYOUT = {"ep": 8, "gpus_per_node": 8, "net_bw": 50e9, "imbalance": 1.0, "dispatch": 1.0, "combine": 2.0,
          "skew": 0.0}  # fp8 dispatch, bf16 combine, a 400 Gb/s NIC per GPU


def layout(ep, **kw):
    return dict(LAYOUT, ep=ep, **kw)


def alltoall_bytes(tokens, k, hidden, ep, imbalance, bytes_per_value):
    return tokens * k * (ep - 1) / ep * imbalance * hidden * bytes_per_value


def gpus_reached(E, ep, k):
    """Expected distinct GPUs of ep (E/ep experts each) a uniform top-k reaches:
    ep x P(a given GPU is hit), P(hit) = 1 - P(the k picks hold none of its
    experts), the hypergeometric P(0 of E/ep among k of E)."""
    m = E // ep
    miss = math.comb(E - m, k) / math.comb(E, k) if E - m >= k else 0.0
    return ep * (1 - miss)


def merged_bytes(m, tokens, ep, imbalance, bytes_per_value):
    """Bytes one GPU sends, a token's copies to one GPU merged."""
    reached = gpus_reached(m["experts"], ep, m["experts_active"])
    return tokens * reached * (ep - 1) / ep * imbalance * m["hidden"] * bytes_per_value


def intra_share(lay):
    ep = lay["ep"]
    return (min(ep, lay["gpus_per_node"]) - 1) / (ep - 1) if ep > 1 else 1.0


def _a2a_op(name, reps, nbytes, lay, tokens, prefill):
    kernel = ("prefill_" if prefill else "decode_") + ("combine" if name == "ep_combine" else "dispatch")
    return model._op(name, "alltoall", reps, comm=nbytes) | {"intra_share": intra_share(lay), "net_bw": lay["net_bw"],
                                                              "tokens": tokens, "ranks": lay["ep"],
                                                              "a2a_kernel": kernel}


def busiest(m, lay, group_tokens):
    """(imbalance, routed experts of its own touched) of the busiest GPU."""
    E, k, ep = m["experts"], m["experts_active"], lay["ep"]
    if lay["skew"] > 0:
        load, touched = moe.hot_rank(E, k, lay["skew"], ep, group_tokens)
        return max(load, lay["imbalance"]), touched
    return lay["imbalance"], moe.uniform_touched(E, k, group_tokens) / ep


def layer_cost(m, g, lay, tokens, cal=None, prefill=False):
    """Dispatch and combine bytes and times of one MoE layer, `tokens` a GPU
    (cal: a calibration, whose measured lines price them inside a node)."""
    ep, imb = lay["ep"], lay["imbalance"]
    d = merged_bytes(m, tokens, ep, imb, lay["dispatch"])
    c = merged_bytes(m, tokens, ep, imb, lay["combine"])
    td = calibrated.price_alltoall(cal, g, _a2a_op("ep_dispatch", 1, d, lay, tokens, prefill)) if ep > 1 else 0.0
    tc = calibrated.price_alltoall(cal, g, _a2a_op("ep_combine", 1, c, lay, tokens, prefill)) if ep > 1 else 0.0
    return {"dispatch_bytes": d, "combine_bytes": c, "dispatch_time": td, "combine_time": tc, "layer_time": td + tc}


def step_ops(m, lay, batch, context, tp, prec, new_tokens=1, logits_last=False):
    """One step's ops on one GPU of the group, its tp replica's shape."""
    T = batch * new_tokens / tp  # tokens this GPU dispatches
    imb, touched = busiest(m, lay, T * lay["ep"])
    k, h, S = m["experts_active"], m["hidden"], model.shared_experts(m)
    fe = model._expert_ffn(m)
    ab = model.DTYPE_BYTES[prec.act]
    eb = model.expert_bytes(m, prec.weights)
    dense = m["layers"] - model.moe_layers(m)
    out = []
    for op in model.step_ops(m, batch, context, tp, prec, new_tokens, True, logits_last):
        if op["name"] in ("shared_act_mul", "shared_down_proj"):
            continue
        if op["name"] == "shared_gate_up_proj":  # whole shared experts on the local tokens
            out += model.mlp_ops(T, S, h, fe, S, eb, ab, op["reps"], op["cls"], "shared_")
            continue
        if op["name"] == "routed_experts":
            r = op["reps"]
            pre = new_tokens > 1
            out.append(_a2a_op("ep_dispatch", r, merged_bytes(m, T, lay["ep"], imb, lay["dispatch"]), lay, T, pre))
            out.append(model.experts_op(T * k * imb, touched, h, fe, eb, ab, r, op["cls"]))
            out.append(_a2a_op("ep_combine", r, merged_bytes(m, T, lay["ep"], imb, lay["combine"]), lay, T, pre))
            continue
        if op["name"] == "mlp_allreduce":
            if dense == 0:
                continue
            op = dict(op, reps=dense)
        out.append(op)
    return out


def weight_bytes_per_gpu(m, wdtype, ep, tp=1):
    p = model.params(m)
    routed = p["routed"] * model.expert_bytes(m, wdtype)
    shared = model.moe_layers(m) * model.shared_experts(m) * 3.0 * m["hidden"] * model._expert_ffn(m) * \
        model.DTYPE_BYTES[wdtype]
    return (model.weight_bytes(m, wdtype) - routed - shared) / tp + shared + routed / ep


def adjust_plan(m, prec, plan, ep, tp=1):
    """A memory plan of one GPU of a tp replica (lib/memory.py) made one
    GPU's of the ep group: the experts it does not hold given to the cache."""
    freed = model.weight_bytes(m, prec.weights) / tp - weight_bytes_per_gpu(m, prec.weights, ep, tp)
    return dict(plan, weights=plan["weights"] - freed, kv_budget=plan["kv_budget"] + freed,
                fits=plan["kv_budget"] + freed > 0)


def plan(m, g, prec, ep, policy=None, extra=0.0):
    """One GPU of an ep group with data-parallel attention."""
    return adjust_plan(m, prec, memory.plan(m, g, prec, 1, policy, extra), ep)


def max_batch(m, prec, p, context, tp=1):
    """Sequences of `context` tokens the plan's cache holds (windows counted)."""
    if p["kv_budget"] <= 0:
        return 0
    return int(math.floor(p["kv_budget"] / model.kv_bytes_per_sequence(m, prec.kv, context, tp)))
