"""Images as tokens (chapter 7): the tokens each family's released
preprocessor makes of an image, and the vision encoder's FLOPs, bytes and
time, from code/specs/vision_models.tsv and the conventions of
code/napkin/workloads/vision.h:

- fixed (LLaVA-1.5): one square crop, (image/patch)^2 tokens;
- anyres (LLaVA-NeXT): the pinpoint keeping the most of the image's pixels
  (then the least padding), its feature grid unpadded to the image's aspect,
  a newline per row, plus the base image's tile;
- native (Qwen2-VL): smart_resize to multiples of patch*merge (round half
  to even; scaled by sqrt of the area ratio, floor down or ceil up, when the
  area leaves [min_pixels, max_pixels]), one token per merge^2 patches;
- tiles (InternVL): the tiles grid with the aspect closest to the image's
  (a tie to the later grid when the image has over half its pixels), a
  thumbnail when there is more than one tile;
- cross (Llama 3.2 Vision): the canvas of a x b tiles with the smallest
  upscale, else the mildest downscale, ties to the least area; every tile's
  patches and class token go to cross-attention;
- encoder FLOPs 2 P N over the layers and the patch embedding, 4 N S d per
  attention layer (S the tile, the window or the whole image; the cross
  family's global layers span every tile), and the projector; bytes the
  weights once plus per layer N (12 d + (g + 1) ffn) activations; the
  encoder one lump on the roofline at an efficiency of the peak, and under
  tensor parallelism split tp ways plus two all-reduces of the residual
  stream per layer.
"""
import math

import data
from lib import memory, model, roofline, step


def models():
    out = {}
    for r in data.vision_models():
        v = {"key": r["key"], "family": r["family"], "lm": r["lm"]}
        for c in ("patch", "merge", "cls", "layers", "hidden", "heads", "ffn", "gated", "window", "full_layers",
                  "proj_in", "proj_mid", "proj_out", "cross_layers"):
            v[c] = int(r[c])
        v["image"] = 0 if r["image"] == "-" else int(r["image"])
        t = r["tiling"]
        if v["family"] == "anyres":
            v["pins"] = [tuple(int(x) for x in p.split("x")) for p in t.split(",")]  # (h, w)
        elif v["family"] == "native":
            lo, hi = t.split("-")
            v["min_pixels"], v["max_pixels"] = float(lo), float(hi)
        elif v["family"] in ("tiles", "cross"):
            lo, hi = t.split("-")
            v["min_tiles"], v["max_tiles"] = int(lo), int(hi)
        out[r["key"]] = v
    return out


def smart_resize(h, w, f, lo, hi):
    hb, wb = round(h / f) * f, round(w / f) * f
    if hb * wb > hi:
        beta = math.sqrt(h * w / hi)
        hb, wb = max(f, math.floor(h / beta / f) * f), max(f, math.floor(w / beta / f) * f)
    elif hb * wb < lo:
        beta = math.sqrt(lo / (h * w))
        hb, wb = math.ceil(h * beta / f) * f, math.ceil(w * beta / f) * f
    return int(hb), int(wb)


def _anyres_best(v, oh, ow):
    best, max_eff, min_waste = 0, 0.0, math.inf
    for i, (H, W) in enumerate(v["pins"]):
        s = min(W / ow, H / oh)
        eff = min(math.trunc(ow * s) * math.trunc(oh * s), ow * oh)
        waste = W * H - eff
        if eff > max_eff or (eff == max_eff and waste < min_waste):
            best, max_eff, min_waste = i, eff, waste
    return best


def _unpad(oh, ow, n, gh, gw):
    ch, cw = n * gh, n * gw
    if ow / oh > cw / ch:
        new_h = math.trunc(round(oh * (cw / ow) * 1e7) / 1e7)
        ch -= 2 * ((ch - new_h) // 2)
    else:
        new_w = math.trunc(round(ow * (ch / oh) * 1e7) / 1e7)
        cw -= 2 * ((cw - new_w) // 2)
    return ch, cw


def _intern_grid(w, h, side, lo, hi):
    aspect, area = w / h, w * h
    best, bi, bj = math.inf, 1, 1
    for n in range(1, hi + 1):
        for i in range(1, n + 1):
            if n % i or n < lo:
                continue
            j = n // i
            diff = abs(aspect - i / j)
            if diff < best:
                best, bi, bj = diff, i, j
            elif diff == best and area > 0.5 * side * side * i * j:
                bi, bj = i, j
    return bi, bj


def _mllama_canvas(w, h, tile, mx):
    shapes = [(a, b) for a in range(1, mx + 1) for b in range(1, mx + 1) if a * b <= mx]
    scale = {ab: min(ab[0] * tile / h, ab[1] * tile / w) for ab in shapes}
    up = [s for s in scale.values() if s >= 1]
    chosen = min(up) if up else max(s for s in scale.values() if s < 1)
    return min((ab for ab in shapes if scale[ab] == chosen), key=lambda ab: ab[0] * ab[1])


def delimiters(v):
    return 2 if v["family"] in ("native", "tiles") else 0


def image_tokens(v, width, height):
    fam, out = v["family"], {"width": width, "height": height}
    side = v["image"] // v["patch"] if v["image"] else 0
    tile_tokens = side * side // (v["merge"] ** 2) if side else 0
    out["encoder_seq"] = side * side + v["cls"]
    out["tiles"] = 1
    if fam == "fixed":
        out["tokens"] = tile_tokens
    elif fam == "anyres":
        H, W = v["pins"][_anyres_best(v, height, width)]
        out["grid_h"], out["grid_w"] = H // v["image"], W // v["image"]
        out["tiles"] = out["grid_h"] * out["grid_w"] + 1
        uh, uw = _unpad(height, width, side // v["merge"], out["grid_h"], out["grid_w"])
        out.update(unpadded_h=uh, unpadded_w=uw, newlines=uh)
        out["tokens"] = tile_tokens + uh * uw + uh
    elif fam == "native":
        f = v["patch"] * v["merge"]
        rh, rw = smart_resize(height, width, f, v["min_pixels"], v["max_pixels"])
        out.update(resized_h=rh, resized_w=rw, grid_h=rh // f, grid_w=rw // f)
        out["encoder_seq"] = (rh // v["patch"]) * (rw // v["patch"])
        out["tokens"] = out["grid_h"] * out["grid_w"]
    elif fam == "tiles":
        gi, gj = _intern_grid(width, height, v["image"], v["min_tiles"], v["max_tiles"])
        out.update(grid_w=gi, grid_h=gj)
        out["tiles"] = gi * gj + (1 if gi * gj > 1 else 0)
        out["tokens"] = out["tiles"] * tile_tokens
    else:  # cross
        a, b = _mllama_canvas(width, height, v["image"], v["max_tiles"])
        out.update(grid_h=a, grid_w=b, tiles=a * b)
        out["tokens"] = out["cross_tokens"] = a * b * out["encoder_seq"]
    out["encoder_tokens"] = out["tiles"] * out["encoder_seq"]
    out["projector_tokens"] = out["encoder_tokens"] if fam == "cross" else \
        (out["encoder_tokens"] - out["tiles"] * v["cls"]) // (v["merge"] ** 2)
    out["context_tokens"] = 1 if fam == "cross" else out["tokens"] + delimiters(v)
    return out


def _layer_params(v):
    d = v["hidden"]
    return 4 * d * d + (3 if v["gated"] else 2) * d * v["ffn"]


def _patch_params(v):
    return 3.0 * (2 if v["family"] == "native" else 1) * v["patch"] ** 2 * v["hidden"]  # native embeds 2 frames


def _projector_params(v):
    return v["proj_in"] * v["proj_mid"] + v["proj_mid"] * v["proj_out"] if v["proj_mid"] else v["proj_in"] * v["proj_out"]


def encoder_params(v):
    return v["layers"] * _layer_params(v) + _patch_params(v) + _projector_params(v)


def encoder_cost(v, im, g, efficiency=1.0, tp=1, ab=2.0):
    """flop_linear, flop_attention, flop_projector, flop, bytes; time at
    `efficiency` of the bf16 peak; time_comm and time_sharded over tp GPUs."""
    d, n = v["hidden"], im["encoder_tokens"]
    patches = n - im["tiles"] * v["cls"]
    c = {"flop_linear": 2 * v["layers"] * _layer_params(v) * n + 2 * _patch_params(v) * patches}
    full_span = n if v["family"] == "cross" else im["encoder_seq"]
    windowed = v["layers"] - v["full_layers"] if v["window"] else 0
    c["flop_attention"] = 4 * n * d * ((v["layers"] - windowed) * full_span + windowed * min(v["window"], im["encoder_seq"]))
    c["flop_projector"] = 2 * _projector_params(v) * im["projector_tokens"]
    c["flop"] = c["flop_linear"] + c["flop_attention"] + c["flop_projector"]
    g2 = 2 if v["gated"] else 1
    c["bytes"] = encoder_params(v) * ab + v["layers"] * n * ab * (12 * d + (g2 + 1) * v["ffn"])
    rate = g["flops"]["bf16"] * efficiency
    c["time"] = max(c["flop"] / rate, c["bytes"] / g["mem_bw"])
    c["time_comm"] = 2.0 * v["layers"] * roofline.allreduce_time(g, tp, n * d * ab) if tp > 1 else 0.0
    c["time_sharded"] = max(c["flop"] / tp / rate, c["bytes"] / tp / g["mem_bw"]) + c["time_comm"]
    return c


# ------------------------------------------------------------ requests
#
# A request (chapter 7, "The prefill budget and the batch shape"): `images`
# equal images and `text` text tokens; the prompt is the text plus each
# image's context tokens (one per image for the cross family, whose image
# tokens go to cross-attention KV instead).  Time to first token is the
# preprocessing, the encoder (the request's images spread over the tp GPUs,
# then an all-gather of their embeddings) and the prefill, whose last
# position yields the first token.  The prefill is one step of the LM
# (lib/step.py, logits for each sequence's last position) on the GPU row
# with its FLOP rates at lm_efficiency of the datasheet (memory-bound work
# keeps the full bandwidth), the encoder the roofline lump above at
# encoder_efficiency.  Memory is the book's policy (lib/memory.py) with the
# activation reserve sized for the budget's tokens, the encoder's weights
# resident on every GPU, and the cross layers' weights split like the LM;
# cross-attention KV (cross_layers layers of K and V per image token) is
# held as the self-attention tokens of the same bytes, rounded up.

REQUEST = {"prec": "bf16", "tp": 1, "width": 1920, "height": 1080, "images": 1, "text": 200, "output": 256,
           "budget": 8192, "preprocess": 0.0, "encoder_efficiency": 1.0, "lm_efficiency": 1.0, "ttft_target": 1.0}


def lm(v):
    """The vision row's language model: vision_lms.tsv, else models.tsv."""
    return data.vision_lm_models().get(v["lm"]) or data.models()[v["lm"]]


def request(**kw):
    """The chapter's usual request with the given fields changed."""
    q = dict(REQUEST)
    unknown = set(kw) - set(q)
    if unknown:
        raise KeyError(f"no request field {sorted(unknown)}")
    q.update(kw)
    return q


def _cross_layer_weights(v, m):
    d, kvd = m["hidden"], m["kv_heads"] * m["head_dim"]
    return v["cross_layers"] * (2.0 * d * d + 2.0 * d * kvd + 3.0 * d * m["ffn"])  # q, o; k, v; the MLP


def prefill_time(v, m, g, q, batch, prompt):
    """(FLOPs per GPU, seconds) of one prefill step of `batch` prompts of
    `prompt` tokens at the request's LM efficiency.  The cross family's
    cross layers are not priced here (no value of the chapter needs them)."""
    if v["cross_layers"]:
        raise NotImplementedError("the cross layers' prefill time is not re-derived")
    prec = model.Precision.uniform(q["prec"])
    gd = roofline.derated(g, 1.0, q["lm_efficiency"])
    c = step.step_cost(m, gd, batch, 0, q["tp"], prec, new_tokens=prompt, comm=True, logits_last=True)
    return c["flop"], c["time"]


def _encoder_span(v, m, g, q, im, enc, requests):
    """Seconds to encode `requests` requests' images over the tp GPUs, one
    image per GPU at a time, and gather their embeddings on every GPU."""
    if q["images"] == 0:
        return 0.0
    images = requests * q["images"]
    per_gpu = -(-images // q["tp"])
    gather = images * im["projector_tokens"] * m["hidden"] * data.DTYPE_BYTES[q["prec"]]
    return per_gpu * enc["time"] + roofline.allgather_time(g, q["tp"], gather)


def estimate(v, m, g, q, with_prefill=True):
    """One request shape: image, prompt, context, cross, fit_context, kv_bytes,
    vision_bytes, plan, max_batch, fits, encoder, encoder_time, prefill_flop,
    prefill_time, ttft, budget_requests; for one that fits, the most requests
    of one prefill step (within the budget and memory) whose TTFT meets the
    target, step_requests (0: not even one), step_ttft and requests_per_s."""
    wb = data.DTYPE_BYTES[q["prec"]]
    e = {"image": None, "encoder": None, "encoder_time": 0.0}
    ctx_per_image = cross_per_image = 0
    if q["images"] > 0:
        im = image_tokens(v, q["width"], q["height"])
        e["image"] = im
        e["encoder"] = encoder_cost(v, im, g, efficiency=q["encoder_efficiency"], tp=q["tp"], ab=wb)
        ctx_per_image, cross_per_image = im["context_tokens"], im.get("cross_tokens", 0)
    e["prompt"] = q["text"] + q["images"] * ctx_per_image
    e["context"] = e["prompt"] + q["output"]
    e["cross"] = q["images"] * cross_per_image
    # cross KV: cross_layers layers of K and V per image token, as LM tokens of all the LM's layers
    kv_token = model.kv_bytes_per_token(m, q["prec"])
    e["kv_bytes"] = e["context"] * kv_token + e["cross"] * kv_token * v["cross_layers"] / m["layers"]
    e["vision_bytes"] = encoder_params(v) * wb + _cross_layer_weights(v, m) * wb / q["tp"]
    e["fit_context"] = e["context"] + math.ceil(e["cross"] * v["cross_layers"] / m["layers"])
    policy = dict(memory.POLICY, activation_tokens=q["budget"])
    e["plan"] = memory.plan(m, g, model.Precision.uniform(q["prec"]), q["tp"], policy, extra=e["vision_bytes"])
    e["max_batch"] = memory.max_batch(e["plan"], e["fit_context"])
    e["fits"] = e["max_batch"] >= 1
    e["budget_requests"] = max(1, q["budget"] // e["prompt"])
    e["step_requests"], e["step_ttft"], e["requests_per_s"] = 0, None, 0.0
    if not with_prefill:
        return e
    if q["images"] > 0:
        e["encoder_time"] = _encoder_span(v, m, g, q, e["image"], e["encoder"], 1)
    e["prefill_flop"], e["prefill_time"] = prefill_time(v, m, g, q, 1, e["prompt"])
    e["ttft"] = q["preprocess"] + e["encoder_time"] + e["prefill_time"]
    if not e["fits"]:
        return e
    for r in range(min(e["budget_requests"], e["max_batch"]), 0, -1):
        t_enc = _encoder_span(v, m, g, q, e["image"], e["encoder"], r) if q["images"] else 0.0
        t_pre = prefill_time(v, m, g, q, r, e["prompt"])[1]
        ttft = q["preprocess"] + t_enc + t_pre
        if ttft <= q["ttft_target"]:
            e["step_requests"], e["step_ttft"], e["requests_per_s"] = r, ttft, r / (t_enc + t_pre)
            break
    return e


def _solve_share(parts, peak, bandwidth, target):
    """The share s of the FLOP peak at which sum_i max(f_i / (s peak),
    b_i / bandwidth) equals `target`.  Op i is compute-bound while s is
    below its break-even share e_i = f_i bandwidth / (peak b_i); between two
    break-evens the sum is F / (s peak) + M (F the FLOPs of the ops still
    compute-bound, M the byte time of the others), solved in closed form."""
    def even(f, b):
        return f * bandwidth / (peak * b) if b > 0 else math.inf

    edges = sorted({even(f, b) for f, b in parts if f > 0} - {math.inf})
    bounds = [0.0] + edges + [math.inf]
    for lo, hi in zip(bounds, bounds[1:]):
        inside = (lo + hi) / 2 if hi < math.inf else lo + 1.0
        F = sum(f for f, b in parts if f > 0 and even(f, b) > inside)
        M = sum(b / bandwidth for f, b in parts if not (f > 0 and even(f, b) > inside))
        if F > 0 and target > M:
            s = F / (peak * (target - M))
            if lo <= s <= hi:
                return s
    raise ValueError("no share of the peak gives that time")


def calibrate(v, m, g, q, encoder_s, prefill_s):
    """(encoder efficiency, LM efficiency): the shares of the FLOP peak at
    which the request's own encoder and prefill times equal the measured
    ones (memory-bound work kept at the full bandwidth)."""
    prec = model.Precision.uniform(q["prec"])
    im = image_tokens(v, q["width"], q["height"])
    c = encoder_cost(v, im, g, ab=data.DTYPE_BYTES[q["prec"]])
    peak = roofline.peak(g, prec.compute)
    enc = _solve_share([(c["flop"], c["bytes"])], peak, g["mem_bw"], encoder_s / q["images"])
    prompt = q["text"] + q["images"] * im["context_tokens"]
    ops = model.step_ops(m, 1, 0, q["tp"], prec, new_tokens=prompt, comm=True, logits_last=True)
    if any(op["kind"] in model.COMM_KINDS for op in ops):
        raise NotImplementedError("calibrating a tensor-parallel prefill")
    parts = [(op["reps"] * op["flop"], op["reps"] * (op["w"] + op["kv"] + op["act"])) for op in ops]
    return enc, _solve_share(parts, peak, g["mem_bw"], prefill_s)
