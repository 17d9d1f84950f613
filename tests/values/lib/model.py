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
  E*(1 - (1 - k/E)^T) of them under uniform routing, and its shared
  experts (every token visits them) whole; its dense layers run one MLP
  ffn wide, its routed experts moe_ffn wide.

The later models' shapes (models.tsv's arch column), as transformer.h and
chapter 13 state them:

- multi-head latent attention (mla=q_lora/kv_lora/nope/rope/v): the cache
  holds one latent kv_lora wide and one rope key per token and layer,
  shared by every head, so every GPU of a tp group holds it whole.  The
  query comes through a low-rank q_lora (q_a, its norm, q_b), keys and
  values from the latent (kv_a, its norm, kv_b: kv_lora -> heads*(nope+v)),
  o from heads*v.  Decode absorbs kv_b into the query and the output (each
  head scores against the latent itself and reads it once); a prefill
  expands every attended latent to per-head K and V and attends as
  multi-head attention;
- windowed layers (window=TOKENS/LAYERS) attend to and keep at most the
  last TOKENS positions;
- attention sinks: one learned logit per head (a parameter each), which
  joins every softmax (5 FLOP per query and head);
- experts=mxfp4: the routed experts are stored at 4.25 bits a weight;
- mtp=D: D multi-token-prediction modules released beside the model (not
  in its total): per module two norms, eh_proj (2h -> h), one MoE decoder
  layer, a final norm, and its own copies of the embedding and head.
"""
import math

from data import DTYPE_BYTES

# The step's op kinds and where a chapter groups them.
PROJECTION_KINDS = ("projection", "logits")
COMM_KINDS = ("allreduce", "allgather", "alltoall", "p2p")


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


MXFP4_BYTES = 4.25 / 8  # a routed MXFP4 weight: 4-bit values and an 8-bit scale per 32


def mla(m):
    """The latent attention's widths, or None: q_lora, kv_lora, nope, rope, v."""
    a = m["arch"].get("mla")
    if not a:
        return None
    q, kv, nope, rope, v = (int(x) for x in a.split("/"))
    return {"q_lora": q, "kv_lora": kv, "nope": nope, "rope": rope, "v": v}


def window(m):
    """(tokens a windowed layer keeps, windowed layers), (0, 0) without."""
    a = m["arch"].get("window")
    if not a:
        return 0, 0
    tokens, layers = (int(x) for x in a.split("/"))
    return tokens, layers


def has_sinks(m):
    return "sinks" in m["arch"]


def expert_bytes(m, wdtype):
    """Bytes per stored routed-expert weight."""
    return MXFP4_BYTES if m["arch"].get("experts") == "mxfp4" else DTYPE_BYTES[wdtype]


def shared_experts(m):
    return int(m["arch"].get("shared", 0))


def _attention_params_per_layer(m):
    h, H, hd = m["hidden"], m["heads"], m["head_dim"]
    sinks = H if has_sinks(m) else 0
    a = mla(m)
    if a is None:
        return 2 * h * H * hd + 2 * h * m["kv_heads"] * hd + sinks  # q and o; k and v
    q, kv, rope, v = a["q_lora"], a["kv_lora"], a["rope"], a["v"]
    q_part = h * q + q + q * H * hd if q > 0 else h * H * hd  # q_a, its norm, q_b (or one q_proj)
    kv_part = h * (kv + rope) + kv + kv * H * (a["nope"] + v)  # kv_a, its norm, kv_b
    return q_part + kv_part + H * v * h + sinks  # o

def _expert_ffn(m):
    return int(m["arch"].get("moe_ffn", m["ffn"]))


def moe_layers(m):
    dense = int(m["arch"].get("dense", 0))
    return m["layers"] - dense if m["experts"] > 1 else 0


def params(m):
    """Parameter counts: total stored, active per token, the input
    embedding, the routed experts, active less the embedding, and the
    multi-token-prediction modules (mtp, not in total; mtp_active: what a
    token uses of them, their embedding and head being the main model's)."""
    h, L = m["hidden"], m["layers"]
    E, k = m["experts"], m["experts_active"]
    S = shared_experts(m)
    Lm, fe = moe_layers(m), _expert_ffn(m)
    embedding = m["vocab"] * h
    head = 0 if m["tied"] else m["vocab"] * h
    attn_layer = _attention_params_per_layer(m)
    attention = L * attn_layer
    mlp_one = 3 * h  # gate, up and down per unit of width
    if E > 1:
        routed = Lm * E * mlp_one * fe
        mlp = (L - Lm) * mlp_one * m["ffn"] + routed + Lm * S * mlp_one * fe
        router = Lm * h * E
    else:
        routed, mlp, router = 0, L * mlp_one * m["ffn"], 0
    norms = 2 * L * h + h  # two per layer and the final one
    total = embedding + head + attention + mlp + router + norms
    active = total - Lm * (E - k) * mlp_one * fe if E > 1 else total
    D = int(m["arch"].get("mtp", 0))
    layer = attn_layer + 2 * h + 2 * h * h + 3 * h  # enorm and hnorm, eh_proj, the layer's two norms and a final one
    if E > 1:
        mlp_all, mlp_used = h * E + (E + S) * mlp_one * fe, h * E + (k + S) * mlp_one * fe
    else:
        mlp_all = mlp_used = mlp_one * m["ffn"]
    return {"total": float(total), "active": float(active), "embedding": float(embedding),
            "routed": float(routed), "active_nonembedding": float(active - embedding),
            "mtp": float(D * (layer + mlp_all + 2 * m["vocab"] * h)), "mtp_active": float(D * (layer + mlp_used))}


def weight_bytes(m, wdtype):
    """Every stored weight: the routed experts as released (MXFP4), the rest
    at wdtype."""
    p = params(m)
    return (p["total"] - p["routed"]) * DTYPE_BYTES[wdtype] + p["routed"] * expert_bytes(m, wdtype)


def kv_heads_per_gpu(m, tp):
    return m["kv_heads"] / tp if m["kv_heads"] >= tp else 1.0


def kv_bytes_per_token(m, kvdtype, tp=1):
    """The cache of one token, every layer (a windowed layer counted as if it
    kept every token), on one GPU of a tp group: K and V of its KV heads,
    or MLA's latent and rope key, whole on every GPU."""
    a = mla(m)
    if a is not None:
        return float(m["layers"] * (a["kv_lora"] + a["rope"])) * DTYPE_BYTES[kvdtype]
    return 2.0 * m["layers"] * kv_heads_per_gpu(m, tp) * m["head_dim"] * DTYPE_BYTES[kvdtype]


def kv_window_bytes_per_token(m, kvdtype, tp=1):
    """The windowed layers' share of kv_bytes_per_token (0 without)."""
    w, wl = window(m)
    return kv_bytes_per_token(m, kvdtype, tp) * wl / m["layers"] if wl else 0.0


def kv_bytes_per_sequence(m, kvdtype, context, tp=1):
    """One sequence of `context` tokens: the windowed layers stop at their window."""
    w, _ = window(m)
    beyond = max(0, context - w)
    return kv_bytes_per_token(m, kvdtype, tp) * context - kv_window_bytes_per_token(m, kvdtype, tp) * beyond


def activation_bytes(m, tokens, sampled, actdtype, tp):
    """The activation reserve of one step of `tokens` tokens on one GPU: per
    token the residual stream and its normed copy, q, k, v (heads times
    head_dim, also for latent attention), the attention output and the
    MLP's gate, up and activated widths for each expert a token visits
    (routed and shared); fp32 logits and fp32 sampler probabilities for the
    `sampled` positions only."""
    q = m["heads"] / tp * m["head_dim"]
    kv = 2 * kv_heads_per_gpu(m, tp) * m["head_dim"]
    k = m["experts_active"]
    per_token = 2 * m["hidden"] + q + kv + q + 3.0 * m["ffn"] / tp * k
    # routed experts narrower than ffn, and the shared ones (nothing for a dense model)
    per_token += 3.0 * (_expert_ffn(m) * (k + shared_experts(m)) - m["ffn"] * k) / tp
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


def _attention_span(ctx, n, win):
    """(query, key) pairs per sequence and head, and the positions whose K
    (or V) the step reads: new token i (of n) sees ctx + i + 1 positions, or
    at most the last `win` (0: no window)."""
    if win <= 0 or ctx + n <= win:
        return ctx * n + n * (n + 1) / 2, ctx + n
    pairs = 0.0
    first = ctx + 1  # positions the first new token sees, uncapped
    uncapped_last = min(ctx + n, win)  # the queries still under the window see first .. that
    if first <= win:
        pairs += (uncapped_last + first) * (uncapped_last - first + 1) / 2
        capped = ctx + n - win
    else:
        capped = n
    pairs += capped * win
    return pairs, min(n + win - 1, ctx + n)  # the union of the queries' windows


def _attention_items(decode, B, n, kvl, Hl):
    """A fused kernel's work items: a sequence's KV head in decode, a head's
    128-row tile of new tokens in prefill; each half of the kernel gets half."""
    return (B * kvl if decode else B * Hl * math.ceil(n / 128)) / 2


def _attention_class(decode, kb):
    return ("attn_decode_fp8" if kb < 2 else "attn_decode_bf16") if decode else "attn_prefill"


def _gqa_attention(B, n, ctx, Hl, kvl, hd, kb, ab, reps, win, sinks, suffix=""):
    T = B * n
    pairs, positions = _attention_span(ctx, n, win)
    kv_rw = B * positions * kvl * hd * kb + B * n * kvl * hd * kb
    decode = n == 1
    cls, items = _attention_class(decode, kb), _attention_items(decode, B, n, kvl, Hl)
    span = positions if decode else 0.0
    score_flop = 2 * B * Hl * hd * pairs + 5 * B * Hl * pairs + (5 * T * Hl if sinks else 0.0)
    return [_op("attn_score" + suffix, "attention", reps, flop=score_flop, kv=kv_rw, act=T * Hl * hd * ab,
                cls=cls, share=0.5, items=items, span=span),
            _op("attn_value" + suffix, "attention", reps, flop=2 * B * Hl * hd * pairs, kv=kv_rw,
                act=T * Hl * hd * ab, cls=cls, share=0.5, items=items, span=span)]


def _mla_attention(m, B, n, ctx, tp, proj, kb, ab, L, prefill):
    """Latent attention's ops: absorbed in decode, expanded in a prefill.
    The narrow q_a and kv_a run whole on every GPU; q_b, kv_b, o split by head."""
    a = mla(m)
    T, h, Hl = B * n, m["hidden"], m["heads"] / tp
    q, kv, nope, rope, v = a["q_lora"], a["kv_lora"], a["nope"], a["rope"], a["v"]
    latent = kv + rope
    pairs = ctx * n + n * (n + 1) / 2
    ops = []
    if q > 0:
        ops += [proj("q_a_proj", T, h, q, L), proj("q_b_proj", T, q, Hl * (nope + rope), L)]
    else:
        ops.append(proj("q_proj", T, h, Hl * (nope + rope), L))
    kv_a = proj("kv_a_proj", T, h, latent, L)
    kv_a["kv"] = T * latent * kb  # the new tokens' latents written
    ops.append(kv_a)
    if not prefill:
        uk = proj("q_absorb", T, nope, Hl * kv, L)  # each head's nope query into the latent's space
        uk["act"] = T * Hl * (nope + kv) * ab
        ops.append(uk)
        # every head scores against the one latent, read once (FlashMLA): a sequence's heads
        # are the rows of 64-row query tiles, each tile walking the sequence's cached positions
        items = B * math.ceil(n * Hl / 64) / 2
        cls = "mla_decode_fp8" if kb < 2 else "mla_decode_bf16"
        ops.append(_op("attn_score", "attention", L, flop=2 * B * Hl * latent * pairs + 5 * B * Hl * pairs,
                       kv=B * (ctx + n) * latent * kb, act=T * Hl * latent * ab, cls=cls, share=0.5,
                       items=items, span=ctx + n))
        ops.append(_op("attn_value", "attention", L, flop=2 * B * Hl * kv * pairs, act=T * Hl * kv * ab,
                       cls=cls, share=0.5, items=items, span=ctx + n))
        uv = proj("v_absorb", T, kv, Hl * v, L)
        uv["act"] = T * Hl * (kv + v) * ab
        ops.append(uv)
    else:
        P = B * (ctx + n)  # positions expanded to per-head K and V
        kv_b = proj("kv_b_proj", P, kv, Hl * (nope + v), L)
        kv_b["kv"] = P * latent * kb
        ops.append(kv_b)
        cls, items, span = "mla_prefill", B * Hl * math.ceil(n / 128) / 2, 0.0  # a head's 128-row tile
        ops.append(_op("attn_score", "attention", L, flop=2 * B * Hl * (nope + rope) * pairs + 5 * B * Hl * pairs,
                       act=(T + P) * Hl * (nope + rope) * ab, cls=cls, share=0.5, items=items, span=span))
        ops.append(_op("attn_value", "attention", L, flop=2 * B * Hl * v * pairs, act=(P + T) * Hl * v * ab,
                       cls=cls, share=0.5, items=items, span=span))
    ops.append(proj("o_proj", T, Hl * v, h, L))
    return ops


def mlp_ops(T, k, h, width, weights_read, eb, ab, reps, cls, prefix=""):
    """An MLP of one layer kind: T*k token-expert pairs through `width`-wide
    experts, `weights_read` experts' weights read at eb bytes each."""
    return [_op(prefix + "gate_up_proj", "projection", reps, flop=2 * T * k * h * 2 * width,
                w=weights_read * h * 2 * width * eb, act=T * k * (h + 2 * width) * ab, cls=cls),
            _op(prefix + "act_mul", "elementwise", reps, flop=5 * T * k * width, act=3 * T * k * width * ab),
            _op(prefix + "down_proj", "projection", reps, flop=2 * T * k * width * h,
                w=weights_read * width * h * eb, act=T * k * (width + h) * ab, cls=cls)]


def moe_class(prec, released=None):
    """The routed experts' class: int4 weight-only moe_int4 (a Marlin
    kernel), other 4-bit experts (MXFP4) moe_w4a16; fp8 ones block-scaled
    (the fp8 releases of DeepSeek-V3 and Qwen3's mixtures carry 128 x 128
    block scales); else moe_bf16."""
    if prec.weights == "int4" or released == "int4g32":
        return "moe_int4"
    if released == "mxfp4":
        return "moe_w4a16"
    if prec.weights == "fp8" and prec.compute == "fp8":
        return "moe_fp8_block"
    return "moe_bf16"


def experts_op(pairs, touched, h, width, eb, ab, reps, cls):
    """The routed experts of one layer as one grouped-GEMM kernel: the work
    of mlp_ops' three records for `pairs` pairs and `touched` experts read,
    one work item per expert touched."""
    parts = mlp_ops(pairs, 1, h, width, touched, eb, ab, reps, cls)
    return _op("routed_experts", "projection", reps, flop=sum(o["flop"] for o in parts),
               w=sum(o["w"] for o in parts), act=sum(o["act"] for o in parts), cls=cls, items=touched)


def step_ops(m, batch, context, tp, prec, new_tokens=1, comm=True, logits_last=False):
    """The ops of one forward step on one GPU: dicts with the FLOPs and the
    weight, KV, activation and collective bytes of one occurrence, `reps`
    occurrences per step, the rate class a calibration prices it in, and
    for attention its share of the fused kernel, work items and span."""
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

    ops = [norm("attn_norm", L)]
    if mla(m) is not None:
        ops += _mla_attention(m, B, n, ctx, tp, proj, kb, ab, L, logits_last)
    else:
        ops.append(proj("qkv_proj", T, h, Hl * hd + 2 * kvl * hd, L))
        win, wl = window(m)
        if wl:
            ops += _gqa_attention(B, n, ctx, Hl, kvl, hd, kb, ab, wl, win, has_sinks(m), "_window")
        if wl < L:
            ops += _gqa_attention(B, n, ctx, Hl, kvl, hd, kb, ab, L - wl, 0, has_sinks(m))
        ops.append(proj("o_proj", T, Hl * hd, h, L))
    with_comm = tp > 1 and comm
    if with_comm:
        ops.append(allreduce("attn_allreduce", L))
    ops += [residual("attn_residual"), norm("mlp_norm", L)]
    E, k = m["experts"], m["experts_active"]
    f = _expert_ffn(m) // tp
    Lm = moe_layers(m) if E > 1 else L
    S = shared_experts(m)
    if E > 1:
        ops.append(proj("router", T, h, E, Lm))
    eb = expert_bytes(m, prec.weights) if E > 1 else wb
    if E > 1:  # the shared experts, then the routed ones' grouped GEMM
        if S > 0:
            ops += mlp_ops(T, S, h, f, S, eb, ab, Lm, gemm, "shared_")
        ops.append(experts_op(T * k, experts_touched(m, T), h, f, eb, ab, Lm,
                              moe_class(prec, m["arch"].get("experts"))))
    else:
        ops += mlp_ops(T, 1, h, f, 1, wb, ab, Lm, gemm)
    if L - Lm > 0:  # a mixture's dense layers
        ops += mlp_ops(T, 1, h, m["ffn"] // tp, 1, wb, ab, L - Lm, gemm, "dense_")
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
