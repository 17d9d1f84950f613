"""Chapter 9, video diffusion: every value of build/values/ch09/ derived
again from code/specs/video_models.tsv and gpus.tsv through lib/video.py,
and the queue of requests through lib/servers.py: one 8-way job at a time
is M/D/1, exactly; eight independent jobs (M/D/8) and the simulated M/D/1
figures replay the seeded generator (lib/rng.py) through an independent
event loop (see tests/values/README.md)."""
import math

import data
from lib import servers, video
from lib.rng import Rng

PRICE = 2.5           # money per GPU-hour, the chapter's assumption
JOBS = 40000          # arrivals each simulation measures
SEED_SCAN, SEED_REPS, REPS = 9, 100, 10
T9 = 2.262            # Student's t, 9 degrees of freedom, two-sided 95 %
# published wall times the chapter sets the model against
COG_A100_S, COG_H100_S, HY_1GPU_S = 180.0, 90.0, 1904.08

ECHOED = {
    # the printed book's exercise variant (seed 0): its drawn inputs
    "ch09_ex1_frames", "ch09_ex1_target",                 # 9.1's frames and target
    "ch09_ex2_frames", "ch09_ex2_width", "ch09_ex2_height",  # 9.2's video
    "ch09_ex3_width", "ch09_ex3_height",                  # 9.3's resolution
    "ch09_ex4_batch",                                      # 9.4's batch
    "ch09_ex5_frames",                                     # 9.5's frames
    "ch09_ex6_low", "ch09_ex6_high",                       # 9.6's two arrival rates
    "ch09_ex7_steps", "ch09_ex7_payload", "ch09_ex7_gpus",  # 9.7's job queue
    "ch09_reps",          # the chapter's 10 replications of the independent placement
    "ch09_price",         # the chapter's assumed rental price per GPU-hour, $2.50 (PRICE)
}

# ch09/timeline runs the job queue against the clock (Makefile TIMED_SRC):
# its counts depend on how this machine's sleeps line up with the ETAs.
MEASURED = {"ch09_tl_accepted", "ch09_tl_rejected", "ch09_tl_cancel_steps", "ch09_tl_cancel_state",
            "ch09_tl_eta_mean_ms", "ch09_tl_eta_worst_ms", "ch09_tl_step_ms"}

TOL = {}  # every value to its printed precision: the simulations replay the C's seeded streams


def _request_values(mt, gp):
    wan, h100, l40s = mt["wan2.1-14b"], gp["h100"], gp["l40s"]
    e = video.request(wan, h100)
    lat, fw = e["latent"], e["forward"]
    out = {"ch09_lat_t": lat["lat_t"], "ch09_lat_h": lat["lat_h"], "ch09_lat_w": lat["lat_w"],
           "ch09_tokens": lat["tokens"],
           # the slip the chapter warns of: 81 frames / 4 without the kept first frame
           "ch09_tokens_wrong": 81.0 / 4 * (lat["lat_h"] // 2) * (lat["lat_w"] // 2),
           "ch09_ptok_b": video.params_per_token(wan) / 1e9}
    out.update(ch09_fwd_pflop=fw["total"] / 1e15, ch09_lin_pflop=fw["linear"] / 1e15,
               ch09_att_pflop=(fw["attention"] + fw["cross"]) / 1e15, ch09_att_share_pct=100 * fw["attention_share"],
               ch09_step_pflop=e["flop_step"] / 1e15, ch09_req_pflop=e["flop_request"] / 1e15,
               ch09_vae_pflop=e["flop_vae"] / 1e15, ch09_text_tflop=e["flop_text"] / 1e12)
    # where attention equals the linear layers: 4 L S^2 d = 2 S P_tok
    out["ch09_cross_tokens"] = video.params_per_token(wan) / (2.0 * wan["layers"] * wan["hidden"])
    out.update(ch09_intensity=e["intensity"], ch09_ridge=e["ridge"], ch09_intensity_x_ridge=e["intensity"] / e["ridge"])
    t1, t2 = video.batch_step_time(wan, h100, 1), video.batch_step_time(wan, h100, 2)
    out.update(ch09_batch2_step_s=t2, ch09_batch1_step_s=t1, ch09_batch2_gain=2 * t1 / t2,
               ch09_batch2_gain_pct=100 * (2 * t1 / t2 - 1))
    out.update(ch09_mem_dit_gb=e["mem_dit"] / 1e9, ch09_mem_text_gb=e["mem_text"] / 1e9,
               ch09_mem_act_gb=e["mem_act"] / 1e9, ch09_mem_vae_gb=e["mem_vae"] / 1e9,
               ch09_mem_peak_gb=e["mem_peak"] / 1e9, ch09_h100_gb=e["mem_capacity"] / 1e9)
    # the S^2 x heads score matrix of one layer that flash attention never stores, bf16
    out["ch09_scores_gb"] = lat["sequence"] ** 2 * wan["heads"] * 2.0 / 1e9
    el = video.request(wan, l40s)
    out.update(ch09_l40s_peak_gb=el["mem_peak"] / 1e9, ch09_l40s_gb=el["mem_capacity"] / 1e9,
               ch09_l40s_fits="fits" if el["fits"] else "does not fit",
               ch09_l40s_max_frames=video.max_frames_that_fit(wan, l40s, wan["frames"]),
               ch09_l40s_offload_gb=video.request(wan, l40s, offload=True)["mem_peak"] / 1e9)
    out.update(ch09_t_step_1=e["t_step"], ch09_t_req_1_min=e["t_request"] / 60,
               ch09_t_req_1_min_say=round(e["t_request"] / 60), ch09_t_vae_1=e["t_vae"],
               ch09_share_guidance_pct=100 * e["share_guidance"], ch09_share_att_pct=100 * e["share_attention"],
               ch09_share_lin_pct=100 * e["share_linear"], ch09_share_vae_pct=100 * e["share_vae"])
    e1 = video.request(wan, h100, price=PRICE)
    e8 = video.request(wan, h100, gpus=8, price=PRICE)
    out.update(ch09_cost_1=e1["cost"], ch09_t_step_8=e8["t_step"], ch09_t_req_8_s=e8["t_request"],
               ch09_t_req_8_min=e8["t_request"] / 60, ch09_t_req_8_min_say=round(e8["t_request"] / 60),
               ch09_sp8_eff=e8["sp_eff"], ch09_sp4_eff=video.sp_efficiency(4),
               ch09_sp8_speedup=e1["t_request"] / e8["t_request"], ch09_cost_8=e8["cost"],
               ch09_gpus_8_gpu_s=e8["gpu_seconds"], ch09_gpus_1_gpu_s=e1["gpu_seconds"])
    cog, hy = mt["cogvideox-5b"], mt["hunyuanvideo"]
    ca = video.request(cog, gp["a100"], efficiency=1.0)
    ch = video.request(cog, h100, efficiency=1.0)
    out.update(ch09_cog_pflop=ca["flop_request"] / 1e15, ch09_cog_a100_eff_pct=100 * ca["t_request"] / COG_A100_S,
               ch09_cog_h100_eff_pct=100 * ch["t_request"] / COG_H100_S)
    ehy = video.request(hy, h100, efficiency=1.0)
    out.update(ch09_hy_tokens=ehy["latent"]["tokens"], ch09_hy_pflop=ehy["flop_request"] / 1e15,
               ch09_hy_att_share_pct=100 * ehy["forward"]["attention_share"], ch09_hy_peak_gb=ehy["mem_peak"] / 1e9,
               ch09_hy_eff_1904_pct=100 * ehy["t_request"] / HY_1GPU_S)
    return out


def _rates(step, below):
    """The C's scan: rate = step, then += step, while rate < below (the
    same floating-point sums)."""
    out, r = [], step
    while r < below:
        out.append(r)
        r += step
    return out


def _first_crossing(rates, crosses):
    """The first rate of an ascending scan where crosses() holds, found by
    bisection (both sides of the comparison grow with the rate, the exact
    one much faster near the crossing) and confirmed at its neighbour."""
    lo, hi = -1, len(rates) - 1
    if not crosses(rates[hi]):
        return 0.0
    while hi - lo > 1:
        mid = (lo + hi) // 2
        lo, hi = (lo, mid) if crosses(rates[mid]) else (mid, hi)
    return rates[hi]


def _queue_values(mt, gp):
    wan, h100 = mt["wan2.1-14b"], gp["h100"]
    d_sp = video.request(wan, h100, gpus=8)["t_request"]  # one 8-way job at a time
    d_one = video.request(wan, h100)["t_request"]        # each of eight GPUs alone
    G = 8
    cap_sp, cap_ind = 3600 / d_sp, G * 3600 / d_one
    out = {"ch09_cap_sp": cap_sp, "ch09_cap_ind": cap_ind,
           # exercise 9.6 gives the two service times, seconds
           "ch09_ex6_service_sp": d_sp, "ch09_ex6_service_one": d_one}

    def ind(rate, seed):
        return servers.simulate(rate / 3600, d_one, G, JOBS, Rng(seed))

    rates = _rates(0.1, cap_sp)
    out["ch09_cross_rate"] = _first_crossing(
        rates, lambda r: ind(r, SEED_SCAN)["mean"] < servers.md1_mean_time(r / 3600, d_sp))
    out["ch09_cross_rate_p95"] = _first_crossing(
        rates, lambda r: ind(r, SEED_SCAN)["p95"] < servers.md1_time_quantile(r / 3600, d_sp, 0.95))
    busy = math.floor(cap_sp * 0.95 * 10) / 10
    for name, rate in (("light", 2.0), ("busy", busy)):
        lam = rate / 3600
        pre = f"ch09_{name}_"
        out[pre + "sp_min"] = servers.md1_mean_time(lam, d_sp) / 60
        out[pre + "sp_p95"] = servers.md1_time_quantile(lam, d_sp, 0.95) / 60
        sim = servers.simulate(lam, d_sp, 1, JOBS, Rng(SEED_SCAN))
        out[pre + "sp_sim_min"], out[pre + "sp_sim_p95"] = sim["mean"] / 60, sim["p95"] / 60
        out[pre + "rho_sp"] = lam * d_sp
        reps = [ind(rate, SEED_REPS + i) for i in range(REPS)]
        for key, col in (("ind_min", "mean"), ("ind_p95", "p95")):
            xs = [r[col] for r in reps]
            avg = sum(xs) / REPS
            sd = math.sqrt(sum((x - avg) ** 2 for x in xs) / (REPS - 1))
            out[pre + key] = avg / 60
            out[pre + key + "_ci"] = T9 * sd / math.sqrt(REPS) / 60
        if name == "busy":
            out["ch09_busy_sp_l"] = sim["in_system"]
            out["ch09_busy_sp_lw"] = lam * sim["mean"]  # Little's law: L = lambda W
    out["ch09_busy_rate"] = busy
    out["ch09_reps"] = REPS
    return out


def derive():
    mt, gp = video.models(), data.gpus()
    out = _request_values(mt, gp)
    out.update(_queue_values(mt, gp))
    return out


# ---- the exercises' answers, from a variant's printed inputs ----

JOURNAL_RECORD = 32  # bytes of a journal record's header: a job leaves SUBMIT + payload, a STEP per step, DONE


def practice(seed, inputs):
    mt, gp = video.models(), data.gpus()
    v = {k: data.printed(t) for k, t in inputs.items()}
    wan, small, hy = mt["wan2.1-14b"], mt["wan2.1-1.3b"], mt["hunyuanvideo"]
    h100, l40s = gp["h100"], gp["l40s"]
    out = {}
    # 9.1: Wan 1.3B at 832 x 480
    f1 = int(v["ch09_ex1_frames"])
    lat = video.latent(small, f1, 832, 480)
    per_frame = lat["lat_h"] * lat["lat_w"] / small["patch_s"] ** 2
    out["9.1(a1)"], out["9.1(a2)"] = lat["lat_t"], lat["tokens"]
    out["9.1(b)"] = f1 / small["stride_t"] * per_frame  # the estimate without the kept first frame
    target, st = int(v["ch09_ex1_target"]), small["stride_t"]
    below = target - (target - 1) % st
    out["9.1(c1)"], out["9.1(c2)"] = below, below + st if below != target else target
    # 9.2: Wan 14B on one H100, with guidance and distilled
    f2, w2, h2 = (int(v[f"ch09_ex2_{k}"]) for k in ("frames", "width", "height"))
    e2 = video.request(wan, h100, frames=f2, width=w2, height=h2)
    out["9.2(a)"] = 2 * e2["forward"]["total"] / 1e15
    out["9.2(c1)"] = e2["t_request"] / 60
    out["9.2(c2)"] = video.request(dict(wan, forwards=1), h100, frames=f2, width=w2, height=h2)["t_request"] / 60
    # 9.3: where attention takes over
    cw = video.params_per_token(wan) / (2.0 * wan["layers"] * wan["hidden"])
    out["9.3(a1)"] = cw
    out["9.3(a2)"] = video.params_per_token(hy) / (2.0 * hy["layers"] * hy["hidden"])
    w3, h3 = v["ch09_ex3_width"], v["ch09_ex3_height"]
    side = wan["stride_s"] * wan["patch_s"]
    out["9.3(b)"] = 1 + wan["stride_t"] * (math.ceil(cw / ((h3 / side) * (w3 / side))) - 1)
    # 9.4: batching videos
    b = int(v["ch09_ex4_batch"])
    for pid, m, g in (("9.4(a1)", wan, h100), ("9.4(a2)", small, l40s)):
        out[pid] = b * video.batch_step_time(m, g, 1) / video.batch_step_time(m, g, b)
    # 9.5: Wan 14B at 720p on L40S
    f5 = int(v["ch09_ex5_frames"])
    out["9.5(a)"] = video.request(wan, l40s, frames=f5, width=1280, height=720)["mem_peak"] / 1e9
    out["9.5(c)"] = video.request(wan, l40s, frames=f5, width=1280, height=720, gpus=2)["mem_peak"] / 1e9
    # 9.6: the exercise's service times, to the second
    sp, solo = v["ch09_ex6_service_sp"], v["ch09_ex6_service_one"]
    for ids, rate in ((("9.6(a1)", "9.6(a2)"), v["ch09_ex6_low"]), (("9.6(b1)", "9.6(b2)"), v["ch09_ex6_high"])):
        lam = rate / 3600
        out[ids[0]] = (servers.mdc_wait_approx(lam, sp, 1) + sp) / 60
        out[ids[1]] = (servers.mdc_wait_approx(lam, solo, 8) + solo) / 60
    out["9.6(c1)"], out["9.6(c2)"] = 3600 / sp, 8 * 3600 / solo
    # 9.7: the journal of one job, and a STEP record's fsync every step on each GPU
    out["9.7(a)"] = int((v["ch09_ex7_steps"] + 2) * JOURNAL_RECORD + v["ch09_ex7_payload"])
    out["9.7(b)"] = v["ch09_ex7_gpus"] / video.request(wan, h100)["t_step"]
    return out
