"""A decoder's parameters, bytes and the ops of one forward step, from the
model table (code/specs/models.tsv) and the conventions chapter 1 states:

- a multiply-add is 2 FLOP; T tokens through an in x out weight cost
  2*T*in*out FLOP, read the weight once and move T*(in + out) activations;
- tensor parallelism splits query heads, KV heads (replicated once tp passes
  their number), the MLP width and the vocabulary over tp GPUs; norms and
  residual adds run whole on every GPU;
- the KV cache holds K and V of every layer and KV head: 2*layers*kv_heads*
  head_dim bytes-per-value per token;
- attention is flash-style: it reads Q and the K (then V) of every attended
  position and writes the new tokens' K or V; the softmax costs 5 FLOP per
  (query, key) pair;
- RMSNorm is 4 FLOP per element against a read and a write and reads its
  gain; a residual add 1 FLOP against two reads and a write; SiLU-and-
  multiply 5 FLOP per element against two reads and a write;
- logits are fp32; a mixture reads the experts some token touches,
  E*(1 - (1 - k/E)^T) of them under uniform routing.

Multi-head latent attention, windowed layers, attention sinks and MXFP4
experts are not written here yet: a model that has them raises
NotImplementedError, so a chapter that needs them adds them here.
"""
import math

from data import DTYPE_BYTES

# The step's op kinds and where a chapter groups them.
PROJECTION_KINDS = ("projection", "logits")
COMM_KINDS = ("allreduce", "allgather")


class Precision:
    """Dtypes of the stored weights, the KV cache, the activations and the
    tensor cores that do the math (bf16 for weight-only quantization)."""

    def __init__(self, weights, kv=None, act=None, compute=None):
        self.weights = weights
        self.kv = kv or weights
        self.act = act or weights
        self.compute = compute or weights

    @classmethod
    def uniform(cls, d):
        return cls(d, d, d, d)


def _unsupported(m):
    a = m["arch"]
    for feature in ("mla", "window", "sinks", "experts", "mtp"):
        if feature in a:
            raise NotImplementedError(f"{m['key']}: '{feature}' is not re-derived in lib/model.py yet")


def _expert_ffn(m):
    return int(m["arch"].get("moe_ffn", m["ffn"]))


def moe_layers(m):
    dense = int(m["arch"].get("dense", 0))
    return m["layers"] - dense if m["experts"] > 1 else 0


def params(m):
    """Parameter counts: total stored and active per token."""
    _unsupported(m)
    h, L, H, kvh, hd = m["hidden"], m["layers"], m["heads"], m["kv_heads"], m["head_dim"]
    E, k = m["experts"], m["experts_active"]
    S = int(m["arch"].get("shared", 0))
    Lm, fe = moe_layers(m), _expert_ffn(m)
    embedding = m["vocab"] * h
    head = 0 if m["tied"] else m["vocab"] * h
    attention = L * (2 * h * H * hd + 2 * h * kvh * hd)  # q and o; k and v
    mlp_one = 3 * h  # gate, up and down per unit of width
    if E > 1:
        mlp = (L - Lm) * mlp_one * m["ffn"] + Lm * (E + S) * mlp_one * fe
        router = Lm * h * E
    else:
        mlp, router = L * mlp_one * m["ffn"], 0
    norms = 2 * L * h + h  # two per layer and the final one
    total = embedding + head + attention + mlp + router + norms
    active = total - Lm * (E - k) * mlp_one * fe if E > 1 else total
    return {"total": float(total), "active": float(active), "embedding": float(embedding)}


def weight_bytes(m, wdtype):
    return params(m)["total"] * DTYPE_BYTES[wdtype]


def kv_heads_per_gpu(m, tp):
    return m["kv_heads"] / tp if m["kv_heads"] >= tp else 1.0


def kv_bytes_per_token(m, kvdtype, tp=1):
    """K and V of every layer for one token, on one GPU of a tp group."""
    _unsupported(m)
    return 2.0 * m["layers"] * kv_heads_per_gpu(m, tp) * m["head_dim"] * DTYPE_BYTES[kvdtype]


def activation_bytes(m, tokens, sampled, actdtype, tp):
    """The activation reserve of one step of `tokens` tokens on one GPU: per
    token the residual stream and its normed copy, q, k, v, the attention
    output and the MLP's gate, up and activated widths for each expert a
    token visits; fp32 logits and fp32 sampler probabilities for the
    `sampled` positions only."""
    _unsupported(m)
    if m["experts"] > 1 and ("moe_ffn" in m["arch"] or "shared" in m["arch"]):
        raise NotImplementedError("activation reserve of narrow or shared experts")
    q = m["heads"] / tp * m["head_dim"]
    kv = 2 * kv_heads_per_gpu(m, tp) * m["head_dim"]
    per_token = 2 * m["hidden"] + q + kv + q + 3.0 * m["ffn"] / tp * m["experts_active"]
    S = min(sampled, tokens)
    return tokens * per_token * DTYPE_BYTES[actdtype] + 2.0 * S * (m["vocab"] / tp) * 4.0


def experts_touched(m, tokens):
    E, k = m["experts"], m["experts_active"]
    return E * (1 - (1 - k / E) ** tokens) if E > 1 else 1.0


def gemm_class(prec):
    return "gemm_fp8" if prec.weights == "fp8" and prec.compute == "fp8" else "gemm_bf16"


def _op(name, kind, reps, flop=0.0, w=0.0, kv=0.0, act=0.0, comm=0.0, cls="elementwise",
        share=1.0, items=0.0, span=0.0):
    return {"name": name, "kind": kind, "reps": reps, "flop": flop, "w": w, "kv": kv, "act": act,
            "comm": comm, "cls": cls, "share": share, "items": items, "span": span}


def step_ops(m, batch, context, tp, prec, new_tokens=1, comm=True, logits_last=False):
    """The ops of one forward step on one GPU: dicts with the FLOPs and the
    weight, KV, activation and collective bytes of one occurrence, `reps`
    occurrences per step, the rate class a calibration prices it in, and
    for attention its share of the fused kernel, work items and span."""
    _unsupported(m)
    B, n, ctx = float(batch), float(new_tokens), float(context)
    T = B * n
    h, hd, L = m["hidden"], m["head_dim"], m["layers"]
    wb, kb, ab = (DTYPE_BYTES[d] for d in (prec.weights, prec.kv, prec.act))
    Hl, kvl = m["heads"] / tp, kv_heads_per_gpu(m, tp)
    gemm = gemm_class(prec)

    def proj(name, tokens, n_in, n_out, reps, kind="projection", wread=None):
        return _op(name, kind, reps, flop=2 * tokens * n_in * n_out,
                   w=(n_in * n_out if wread is None else wread) * wb,
                   act=tokens * (n_in + n_out) * ab, cls=gemm)

    def norm(name, reps):
        return _op(name, "norm", reps, flop=4 * T * h, w=h * ab, act=2 * T * h * ab)

    def residual(name):
        return _op(name, "elementwise", L, flop=T * h, act=3 * T * h * ab)

    def allreduce(name, reps):
        return _op(name, "allreduce", reps, comm=T * h * ab)

    ops = [norm("attn_norm", L),
           proj("qkv_proj", T, h, Hl * hd + 2 * kvl * hd, L)]
    # attention: new token i (of n) sees ctx + i + 1 positions
    pairs, positions = ctx * n + n * (n + 1) / 2, ctx + n
    kv_rw = B * positions * kvl * hd * kb + B * n * kvl * hd * kb
    decode = new_tokens == 1
    cls = ("attn_decode_fp8" if kb < 2 else "attn_decode_bf16") if decode else "attn_prefill"
    items = (B * kvl if decode else B * Hl * math.ceil(n / 128)) / 2  # half the kernel's items each
    span = positions if decode else 0.0
    ops.append(_op("attn_score", "attention", L, flop=2 * B * Hl * hd * pairs + 5 * B * Hl * pairs,
                   kv=kv_rw, act=T * Hl * hd * ab, cls=cls, share=0.5, items=items, span=span))
    ops.append(_op("attn_value", "attention", L, flop=2 * B * Hl * hd * pairs,
                   kv=kv_rw, act=T * Hl * hd * ab, cls=cls, share=0.5, items=items, span=span))
    ops.append(proj("o_proj", T, Hl * hd, h, L))
    with_comm = tp > 1 and comm
    if with_comm:
        ops.append(allreduce("attn_allreduce", L))
    ops += [residual("attn_residual"), norm("mlp_norm", L)]
    E, k = m["experts"], m["experts_active"]
    f = _expert_ffn(m) / tp
    Lm = moe_layers(m) if E > 1 else L
    if E > 1:
        if "dense" in m["arch"] or "shared" in m["arch"]:
            raise NotImplementedError("dense layers or shared experts of a mixture in step_ops")
        ops.append(proj("router", T, h, E, Lm))
    read = experts_touched(m, T)
    ops.append(proj("gate_up_proj", T * k, h, 2 * f, Lm, wread=read * h * 2 * f))
    ops.append(_op("act_mul", "elementwise", Lm, flop=5 * T * k * f, act=3 * T * k * f * ab))
    ops.append(proj("down_proj", T * k, f, h, Lm, wread=read * f * h))
    if with_comm:
        ops.append(allreduce("mlp_allreduce", L))
    ops.append(residual("mlp_residual"))
    # once per step
    ops.append(_op("embedding", "embedding", 1, w=T * h * wb, act=T * h * ab))
    if with_comm:
        ops.append(allreduce("embed_allreduce", 1))
    ops.append(norm("final_norm", 1))
    P = B if logits_last else T  # positions that get logits
    vl = m["vocab"] / tp
    lg = proj("logits", P, h, vl, 1, kind="logits")
    lg["act"] = P * h * ab + P * vl * 4  # fp32 logits out
    ops.append(lg)
    if with_comm:
        ops.append(_op("logits_gather", "allgather", 1, comm=P * m["vocab"] * 4.0))
    return ops


def attention_ops(batch, context, new_tokens, heads, kv_heads, head_dim, prec):
    """The two halves of one layer's attention (scores, values) for a bare
    attention shape, as step_ops prices them: a kernel table's row without
    a model around it (no tensor parallelism)."""
    shell = {"key": "attention", "hidden": heads * head_dim, "heads": heads, "kv_heads": kv_heads,
             "head_dim": head_dim, "layers": 1, "ffn": 1, "vocab": 1, "experts": 1, "experts_active": 1,
             "tied": False, "arch": {}}
    return [op for op in step_ops(shell, batch, context, 1, prec, new_tokens) if op["kind"] == "attention"]
