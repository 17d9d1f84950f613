"""Training arithmetic (chapter 12), from the conventions
code/napkin/model/train.h states: 6 FLOP per multiplying parameter per
token plus the attention products, 12 L s d (QK^T and AV, no causal mask);
selective recomputation re-runs the attention core's forward (4 L s d),
full the whole forward (2 N + 4 L s d).  Goodput: interruptions at a rate
per GPU-day, each costing the job hours_lost, Llama 3's 466 in 54 days on
16,384 GPUs with 90 % left at that size.  Memory of the first pipeline
stage: its layers, the embedding (and alone the head and final norm),
over tp; mixed Adam's 2 + 2 + 12 bytes, ZeRO sharding over dp; the
activations of Korthikanti et al.'s Table 2 or of a flash-attention,
GQA, gated-MLP layer; 1F1B holds min(pp, m) microbatches, GPipe all m."""
import math

from lib import memory, model

LLAMA3_RATE = 466.0 / (54.0 * 16384.0)       # interruptions per GPU-day
LLAMA3_HOURS_LOST = 0.10 * 54.0 * 24.0 / 466.0  # hours each, 90 % goodput at 16,384 GPUs
ADAM_MIXED = (2.0, 2.0, 12.0)               # bytes per parameter: weights, grads, optimizer


def matmul_params(m):
    """Every parameter but the input embedding (a lookup); a tied head counts once."""
    p = model.params(m)
    return p["total"] - p["embedding"] + (p["embedding"] if m["tied"] else 0.0)


def flop_per_token(n, shape=None, seq=0, recompute="none"):
    attn_fwd = 4.0 * shape["layers"] * seq * shape["heads"] * shape["head_dim"] if shape else 0.0
    dense, attention = 6.0 * n, 3.0 * attn_fwd
    extra = {"none": 0.0, "selective": attn_fwd, "full": 2.0 * n + attn_fwd}[recompute]
    return {"dense": dense, "attention": attention, "model": dense + attention,
            "hardware": dense + attention + extra}


def goodput(gpus, rate=LLAMA3_RATE, hours_lost=LLAMA3_HOURS_LOST, other=1.0):
    lost = rate * gpus * hours_lost / 24.0
    return 0.0 if lost >= 1 else other * (1 - lost)


def cluster_for_deadline(gpu_seconds, seconds, node=8, rate=LLAMA3_RATE, hours_lost=LLAMA3_HOURS_LOST,
                         other=1.0):
    """The smallest whole-node cluster G with G goodput(G) >= gpu_seconds /
    seconds: G other (1 - k G) = need is a quadratic in G, k = rate x hours_lost / 24."""
    need, k = gpu_seconds / seconds, rate * hours_lost / 24.0
    exact = need / other if k == 0 else (1 - math.sqrt(1 - 4 * k * need / other)) / (2 * k)
    nodes = max(1, math.ceil(exact / node - 1e-9))
    gpus = nodes * node
    gp = goodput(gpus, rate, hours_lost, other)
    secs = gpu_seconds / (gpus * gp)
    return {"gpus_exact": exact, "gpus": gpus, "nodes": nodes, "goodput": gp, "seconds": secs,
            "gpu_hours": gpus * secs / 3600}


def layer_activation_bytes(m, seq, mb, tp, sp, recompute, act):
    """Bytes one layer keeps for its backward, one microbatch, one GPU of tp."""
    s, b, h = float(seq), float(mb), m["hidden"]
    sbh = s * b * h
    if recompute == "full":  # the layer input alone
        return 2 * sbh / tp if sp else 2 * sbh
    if act == "korthikanti":
        # whole: norms, block inputs, dropout masks (10); split: Q, K, V,
        # projection input, GeLU in and out (24); the scores 5 a s^2 b
        whole = 10 * sbh / tp if sp else 10 * sbh
        out = whole + 24 * sbh / tp
        return out if recompute == "selective" else out + 5 * m["heads"] * s * s * b / tp
    kvh = model.kv_heads_per_gpu(m, tp)
    q, kv, f = m["heads"] / tp * m["head_dim"], kvh * m["head_dim"], m["ffn"] / tp * m["experts_active"]
    whole = s * b * 8 * h  # two norm inputs, the QKV and gate/up inputs
    split = s * b * (2 * q + 4 * kv + 2 * q + 4 * m["heads"] / tp + 6 * f)  # Q, K, V, attn out, lse, gate/up/product
    return (whole / tp if sp else whole) + split


def stage_memory(m, g, seq=8192, mb=1, tp=1, pp=1, dp=1, sp=False, recompute="none", zero=0, act="modern",
                 schedule="1f1b", microbatches=0, state=ADAM_MIXED):
    """The first pipeline stage's GPU: params, weights, grads, optimizer,
    act_per_layer, activations, total, capacity (the book's usable share of
    the driver's figure), fits."""
    p = model.params(m)
    h, L = m["hidden"], m["layers"]
    head = 0.0 if m["tied"] else m["vocab"] * h
    per_layer = (p["total"] - p["embedding"] - head - h) / L
    layers = L // pp
    stage = per_layer * layers + p["embedding"] + (head + h if pp == 1 else 0.0)
    params = stage / tp
    wb, gb, ob = state
    out = {"params": params, "weights": params * wb / (dp if zero >= 3 else 1),
           "grads": params * gb / (dp if zero >= 2 else 1), "optimizer": params * ob / (dp if zero >= 1 else 1)}
    m_count = microbatches or pp
    in_flight = m_count if schedule == "gpipe" else min(pp, m_count)
    apl = layer_activation_bytes(m, seq, mb, tp, sp, recompute, act)
    working = layer_activation_bytes(m, seq, mb, tp, sp, "none", act) if recompute == "full" else 0.0
    logits = 4.0 * seq * mb * m["vocab"] / tp if pp == 1 else 0.0
    out["act_per_layer"] = apl
    out["activations"] = apl * layers * in_flight + working + logits
    out["total"] = out["weights"] + out["grads"] + out["optimizer"] + out["activations"]
    out["capacity"] = g["mem_bytes"] * memory.POLICY["usable"]
    out["fits"] = out["total"] <= out["capacity"]
    return out


def max_micro_batch(m, g, limit, **layout):
    best = 0
    for mb in range(1, limit + 1):
        if not stage_memory(m, g, mb=mb, **layout)["fits"]:
            break
        best = mb
    return best
