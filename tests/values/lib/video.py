"""A video diffusion request (chapter 9), from the formulas the chapter and
code/napkin/workloads/video.h state:

- latent frames 1 + (F - 1)/stride_t, grid H/stride_s x W/stride_s, tokens
  N = latent frames/patch_t x grid/patch_s^2; the self-attention sequence S
  is N, plus the text tokens T when the text joins it;
- one forward: linear 2 S P_tok with P_tok = L (proj d^2 + 2 d ffn),
  attention 4 L S^2 d, and for cross-attention models 4 L N T d plus the
  text's k and v projections (2 T 2 d^2 L); a step is `forwards` of them;
  a request is the steps, the text encoder (2 P_te T per forward) and the
  VAE decode (FLOP per pixel x frames x W x H);
- a forward moves every weight once and each block's activations in and
  out, S (6 d + 2 ffn) elements per block, twice;
- memory per GPU: DiT and text-encoder weights, one block's activations at
  ceil(S/G) tokens, the VAE decoder's widest tensor (channels x pixels x
  frames, in and out) over its tiles; without offloading weights plus the
  larger of the two activations, with it only the phase that runs; the
  capacity is 90 % of what the driver reports;
- time: each lump on the roofline at `efficiency` of the dense bf16 peak
  (a forward's FLOPs and activations split over G GPUs, its weights read
  whole, over the sequence-parallel efficiency; the VAE by its FLOPs
  alone); G GPUs are held for the whole request;
- sequence-parallel efficiency from HunyuanVideo's published xDiT
  latencies, capped at 1 and interpolated in log2 G.
"""
import math

import data

HY_LATENCY = (1904.08, 934.09, 514.08, 337.58)  # s on 1, 2, 4, 8 GPUs
USABLE = 0.90


def models():
    out = {}
    for r in data.video_models():
        st = [int(x) for x in r["vae_stride"].split("x")]
        pa = [int(x) for x in r["patch"].split("x")]
        fr, w, h = (int(x) for x in r["video"].split("x"))
        out[r["key"]] = {
            "key": r["key"], "layers": int(r["layers"]), "hidden": int(r["hidden"]), "heads": int(r["heads"]),
            "ffn": int(r["ffn"]), "proj": int(r["proj"]), "params": float(r["params_b"]) * 1e9,
            "stride_t": st[0], "stride_s": st[1], "patch_t": pa[0], "patch_s": pa[1],
            "text_tokens": int(r["text_tokens"]), "joint": r["text_mode"] == "joint",
            "text_params": float(r["text_enc_b"]) * 1e9, "vae_ch": int(r["vae_ch"]),
            "vae_flop_px": float(r["vae_mflop"]) * 1e6, "steps": int(r["steps"]), "forwards": int(r["forwards"]),
            "frames": fr, "width": w, "height": h}
    return out


def latent(m, frames, width, height):
    lt = 1 + (frames - 1) // m["stride_t"]
    lh, lw = height // m["stride_s"], width // m["stride_s"]
    n = (lt // m["patch_t"]) * (lh // m["patch_s"]) * (lw // m["patch_s"])
    return {"lat_t": lt, "lat_h": lh, "lat_w": lw, "tokens": n,
            "sequence": n + (m["text_tokens"] if m["joint"] else 0), "frames": frames, "width": width,
            "height": height}


def params_per_token(m):
    d = m["hidden"]
    return m["layers"] * (m["proj"] * d * d + 2.0 * d * m["ffn"])


def forward_flop(m, lat):
    S, N, d, L, T = lat["sequence"], lat["tokens"], m["hidden"], m["layers"], m["text_tokens"]
    lin = 2.0 * S * params_per_token(m)
    att = 4.0 * L * S * S * d
    cross = 0.0 if m["joint"] else 4.0 * L * N * T * d + 2.0 * T * 2.0 * d * d * L
    tot = lin + att + cross
    return {"linear": lin, "attention": att, "cross": cross, "total": tot, "attention_share": (att + cross) / tot}


def block_act(m):
    return 6.0 * m["hidden"] + 2.0 * m["ffn"]


def forward_bytes(m, lat, bpe=2.0):
    return (m["params"] + m["layers"] * lat["sequence"] * block_act(m) * 2.0) * bpe


def sp_efficiency(gpus):
    eff = [min(1.0, HY_LATENCY[0] / HY_LATENCY[i] / 2 ** i) for i in range(4)]
    x = math.log2(gpus)
    i = int(math.floor(x))
    return eff[3] if i >= 3 else eff[i] + (eff[i + 1] - eff[i]) * (x - i)


def _roof(flop, nbytes, rate, bw):
    return max(flop / rate, nbytes / bw)


def request(m, g, frames=None, width=None, height=None, gpus=1, efficiency=0.45, price=0.0, offload=False,
            vae_tiles=8, steps=None, bpe=2.0):
    """Everything of one request: the latent, the FLOPs, the roofline of a
    forward, memory per GPU, the times and the shares of the time."""
    frames, width, height = frames or m["frames"], width or m["width"], height or m["height"]
    steps = steps or m["steps"]
    lat = latent(m, frames, width, height)
    fw = forward_flop(m, lat)
    F = m["forwards"]
    e = {"latent": lat, "forward": fw, "forwards": F, "steps": steps}
    e["flop_step"] = F * fw["total"]
    e["flop_text"] = 2.0 * m["text_params"] * m["text_tokens"] * F
    e["flop_vae"] = m["vae_flop_px"] * frames * width * height
    e["flop_request"] = steps * e["flop_step"] + e["flop_text"] + e["flop_vae"]
    peak, bw = g["flops"]["bf16"], g["mem_bw"]
    e["bytes_forward"] = forward_bytes(m, lat, bpe)
    e["intensity"] = fw["total"] / e["bytes_forward"]
    e["ridge"] = peak / bw
    w_dit, w_text = m["params"] * bpe, m["text_params"] * bpe
    act = math.ceil(lat["sequence"] / gpus) * block_act(m) * bpe
    vae = frames * width * height * m["vae_ch"] * 2.0 * bpe / vae_tiles
    e.update(mem_dit=w_dit, mem_text=w_text, mem_act=act, mem_vae=vae)
    e["mem_peak"] = max(w_text, w_dit + act, vae) if offload else w_text + w_dit + max(act, vae)
    e["mem_capacity"] = g["mem_bytes"] * USABLE
    e["fits"] = e["mem_peak"] <= e["mem_capacity"]
    rate = peak * efficiency
    e["sp_eff"] = sp_efficiency(gpus)
    t_fwd = _roof(fw["total"] / gpus, w_dit + (e["bytes_forward"] - w_dit) / gpus, rate, bw) / e["sp_eff"]
    e["t_step"] = F * t_fwd
    t_den = steps * e["t_step"]
    e["t_text"] = _roof(e["flop_text"], w_text, rate, bw)
    e["t_vae"] = e["flop_vae"] / rate
    e["t_request"] = e["t_text"] + t_den + e["t_vae"]
    e["gpu_seconds"] = gpus * e["t_request"]
    e["cost"] = e["gpu_seconds"] / 3600 * price
    one = t_den / F
    e["share_attention"] = one * fw["attention_share"] / e["t_request"]
    e["share_linear"] = one * (1 - fw["attention_share"]) / e["t_request"]
    e["share_guidance"] = one * (F - 1) / e["t_request"]
    e["share_vae"] = e["t_vae"] / e["t_request"]
    return e


def batch_step_time(m, g, batch, efficiency=0.45, bpe=2.0):
    """One denoising step of `batch` identical default requests on one GPU:
    the weights read once, FLOPs and activations times the batch."""
    lat = latent(m, m["frames"], m["width"], m["height"])
    fw = forward_flop(m, lat)
    w = m["params"] * bpe
    act = forward_bytes(m, lat, bpe) - w
    return m["forwards"] * _roof(batch * fw["total"], w + batch * act, g["flops"]["bf16"] * efficiency, g["mem_bw"])


def max_frames_that_fit(m, g, frames, **kw):
    """The largest valid frame count (1 + k stride_t) <= frames that fits."""
    f = frames - (frames - 1) % m["stride_t"]
    while f >= 1:
        if request(m, g, frames=f, **kw)["fits"]:
            return f
        f -= m["stride_t"]
    return 0
