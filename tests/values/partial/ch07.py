"""Chapter 7, images as tokens: the values of build/values/ch07/ derived
again from code/specs/vision_models.tsv and gpus.tsv through lib/vision.py
(see tests/values/README.md).

Not re-derived yet (so chapter 7 is not in check.py's REQUIRED): the LM
prefill and its calibration on the published measurement (ch07_m_cal_*,
ch07_m_pre_*, ch07_m_lm_*, ch07_m_*_eff*, ch07_m_ratio_roof, ch07_m_prompt,
ch07_q2_crossover_w, ch07_q25_cal_crossover_w, ch07_tp*_cal_ms), the
capacity against images per request (ch07_cap*) and the cross-attention
model's request (ch07_l_*), which need the request model of vision.h
(prefill time, KV fit, budget steps) written again."""
import data
from lib import vision

ECHOED = {
    # the printed book's exercise variant (seed 0): its drawn inputs
    "ch07_ex1_width", "ch07_ex1_height", "ch07_ex2_width", "ch07_ex2_height", "ch07_ex2_cap", "ch07_ex2_icon_w",
    "ch07_ex2_icon_h", "ch07_ex3_width", "ch07_ex3_height", "ch07_ex3_cap", "ch07_ex3_photo_w", "ch07_ex3_photo_h",
    "ch07_ex4_text_tokens", "ch07_ex4_output_tokens", "ch07_ex5_side", "ch07_ex5_tokens", "ch07_ex5_patches",
    "ch07_ex6_width", "ch07_ex6_height", "ch07_ex7_budget", "ch07_ex7_text_tokens",
    # the published measurement (vLLM, Qwen2.5-VL-7B, one H100, one 1080p image)
    "ch07_m_ratio_measured",   # 0.167 s encoder over 0.126 s prefill, as printed
    # the capacity study's request, as the chapter states it
    "ch07_cap_ttft_target", "ch07_cap_text", "ch07_cap_output", "ch07_cap_budget",
}

MEASURED = set()  # chapter 7 times nothing

TOL = {}

FAMILIES = (("llava15", "llava-1.5-7b"), ("llavanext", "llava-next-7b"), ("qwen2vl", "qwen2-vl-7b"),
            ("internvl", "internvl2.5-8b"), ("llama32", "llama3.2-11b-vision"))


def derive():
    vm, h100 = vision.models(), data.gpus()["h100"]
    tok = vision.image_tokens
    out = {}
    for short, key in FAMILIES:
        v = vm[key]
        out[f"ch07_tok1080_{short}"] = tok(v, 1920, 1080)["tokens"]
        out[f"ch07_tok4k_{short}"] = tok(v, 3840, 2160)["tokens"]
        out[f"ch07_tok336_{short}"] = tok(v, 336, 336)["tokens"]
    nx, l15 = vm["llava-next-7b"], vm["llava-1.5-7b"]
    n672 = tok(nx, 672, 672)
    out["ch07_next672"] = n672["tokens"]
    out["ch07_next672_naive"] = 5 * tok(l15, 336, 336)["tokens"]  # four tiles and the base, 576 each
    out["ch07_next672_grid"] = n672["unpadded_h"] * n672["unpadded_w"]
    out["ch07_next672_newlines"] = n672["newlines"]
    n1080 = tok(nx, 1920, 1080)
    out["ch07_next1080_rows"], out["ch07_next1080_cols"] = n1080["unpadded_h"], n1080["unpadded_w"]
    out["ch07_nexttiny"] = tok(nx, 100, 50)["tokens"]
    q2, q25 = vm["qwen2-vl-7b"], vm["qwen2.5-vl-7b"]
    q = tok(q2, 1920, 1080)
    out.update(ch07_q1080_w=q["resized_w"], ch07_q1080_h=q["resized_h"], ch07_q1080_gw=q["grid_w"],
               ch07_q1080_gh=q["grid_h"], ch07_q1080_patches=q["encoder_tokens"])
    out["ch07_qmin"] = tok(q2, 1, 1)["tokens"]
    out["ch07_qmax"] = q2["max_pixels"] / (28.0 * 28.0)
    out["ch07_q4k_tokens"] = tok(q2, 3840, 2160)["tokens"]
    q8 = tok(q2, 7680, 4320)
    out.update(ch07_q8k_tokens=q8["tokens"], ch07_q8k_w=q8["resized_w"], ch07_q8k_h=q8["resized_h"])
    i1080 = tok(vm["internvl2.5-8b"], 1920, 1080)
    out.update(ch07_i1080_gw=i1080["grid_w"], ch07_i1080_gh=i1080["grid_h"])
    out["ch07_itiny"] = tok(vm["internvl2.5-8b"], 100, 50)["tokens"]
    out["ch07_l1080_tiles"] = tok(vm["llama3.2-11b-vision"], 1920, 1080)["tiles"]
    out["ch07_delims"] = vision.delimiters(q25)
    # the encoders at peak on one H100, 1080p
    im25 = tok(q25, 1920, 1080)
    c25, c2 = vision.encoder_cost(q25, im25, h100), vision.encoder_cost(q2, q, h100)
    out["ch07_m_enc_roof_ms"] = c25["time"] * 1e3
    out["ch07_m_enc_tflop"] = c25["flop"] / 1e12
    out["ch07_m_text"] = 2718 - im25["context_tokens"]  # the measured prompt less the image and its delimiters
    out["ch07_m_ratio_measured"] = 0.167 / 0.126
    out["ch07_q2_enc_tflop"] = c2["flop"] / 1e12
    out["ch07_q2_attn_pct"] = 100 * c2["flop_attention"] / c2["flop"]
    out["ch07_q25_attn_pct"] = 100 * c25["flop_attention"] / c25["flop"]
    out["ch07_q2_enc_ms"] = c2["time"] * 1e3
    for tp in (2, 4):
        t = vision.encoder_cost(q25, im25, h100, tp=tp)
        out[f"ch07_tp{tp}_sharded_ms"] = t["time_sharded"] * 1e3
        out[f"ch07_tp{tp}_comm_ms"] = t["time_comm"] * 1e3
        out[f"ch07_tp{tp}_comm_pct"] = 100 * t["time_comm"] / t["time_sharded"]
        out[f"ch07_tp{tp}_many_repl_ms"] = t["time"] * 1e3
        out[f"ch07_tp{tp}_many_shard_ms"] = tp * t["time_sharded"] * 1e3
    p = vision.encoder_params(q25)
    out["ch07_enc_params_m"], out["ch07_enc_gb"] = p / 1e6, p * 2 / 1e9
    return out
