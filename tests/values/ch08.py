"""Chapter 8, CUDA graphs: every value of build/values/ch08/ derived again
from code/specs/gpus.tsv and models.tsv, the published step times the
chapter quotes, and the formulas of lib/graphs.py, lib/step.py and
lib/memory.py (see tests/values/README.md)."""
import data
from lib import graphs, memory
from lib.model import Precision

BF16 = Precision.uniform("bf16")
MiB, GiB, GB = 1024.0 ** 2, 1024.0 ** 3, 1e9
CONTEXT, PAD_CONTEXT, BATCH_MAX = 1024, 512, 512

# The chapter's published step times and launch costs (its sources, as the
# chapter cites them): vLLM's first graphs (LLaMA-2-7B, 100 tokens in 1.2 s
# eager, 1.05 s with graphs), SGLang's (LLaMA-3-8B, triton and flashinfer
# attention), llama.cpp's tokens a second (LLaMA-2-7B Q4_K_M, H100 PCIe).
PUBLISHED = {"vllm": (1.2 / 100, 1.05 / 100), "sglt": (9.28e-3, 7.06e-3), "sglf": (8.23e-3, 7.35e-3)}
LCPP_TOK_S = (143.35, 163.83)
DRIVER, PYTHON, WHATIF, LLAMA_CPP = 4e-6, 9.1e-6, 20e-6, 5e-6  # seconds per eager launch
WHATIF_HOST = 1e-3  # a what-if per-step host work graphs do not remove

ECHOED = {
    # the printed book's exercise variant (seed 0): its drawn inputs
    "ch08_ex1_launch_us", "ch08_ex2_tp", "ch08_ex3_launch_us",   # 8.1-8.3's launch costs and degree
    "ch08_ex4_small", "ch08_ex4_large",                          # 8.4(a)'s batches
    "ch08_ex4_b_batch", "ch08_ex4_b_context",                    # 8.4(b)'s batch and context
    "ch08_ex5_gamma_a", "ch08_ex5_batch_a", "ch08_ex5_gamma_b", "ch08_ex5_batch_b", "ch08_ex5_gamma_c",  # 8.5's
    "ch08_ex6_context", "ch08_ex6_batch",                        # 8.6's context and batch
    "ch08_ex7_launch_us",                                        # 8.7's launch cost
    # the published step times as printed (PUBLISHED above)
    *(f"ch08_{k}_{w}_ms" for k in PUBLISHED for w in ("eager", "graph")),
    "ch08_py_us",          # a Python-side launch, 9.1 us (tritonbench's upper end)
    "ch08_whatif_us",      # the chapter's what-if launch, 20 us
    "ch08_whatif_host_ms",  # and its what-if per-step host work, 1 ms
    "ch08_graph_mib",      # one graph's memory, 26 MiB (vLLM's log)
}

MEASURED = set()  # chapter 8 times nothing

TOL = {}  # every value to its printed precision


def _max_batch(m, g, tp, context, extra):
    """The largest decode batch whose KV at context + 1 (the token the step
    writes) fits the book's policy, `extra` bytes held back."""
    return memory.max_batch(memory.plan(m, g, BF16, tp, extra=extra), context + 1)


def _published(k8):
    out = {}
    for key, (te, tg) in PUBLISHED.items():
        out[f"ch08_{key}_eager_ms"], out[f"ch08_{key}_graph_ms"] = te * 1e3, tg * 1e3
        out[f"ch08_{key}_saved_pct"] = 100 * (1 - tg / te)
        out[f"ch08_{key}_saved_ms"] = (te - tg) * 1e3
        out[f"ch08_{key}_per_kernel_us"] = (te - tg) / k8 * 1e6
        out[f"ch08_{key}_floor_us"] = graphs.implied_launch(te, tg, k8) * 1e6
    te, tg = (1 / r for r in LCPP_TOK_S)
    out["ch08_lcpp_eager_ms"], out["ch08_lcpp_graph_ms"] = te * 1e3, tg * 1e3
    out["ch08_lcpp_saved_pct"] = 100 * (1 - tg / te)
    out["ch08_lcpp_kernels_at_5us"] = te / LLAMA_CPP
    return out


def derive():
    gp, mt = data.gpus(), data.models()
    h100 = gp["h100"]
    m8, m70, m1 = mt["llama3-8b"], mt["llama3-70b"], mt["llama3.2-1b"]
    sizes = graphs.vllm_capture_list(512)
    gbytes = len(sizes) * graphs.GRAPH_BYTES
    out = {}
    for f, name in enumerate(("none", "nr", "ga", "all")):
        k = graphs.kernels(m8, 1, f)
        out[f"ch08_k8_{name}"], out[f"ch08_k8_{name}_layer"] = k["total"], k["per_layer"]
    k70 = graphs.kernels(m70, 4)
    out.update(ch08_k70=k70["total"], ch08_k70_layer=k70["per_layer"], ch08_k70_once=k70["once"],
               ch08_k70_comm=k70["comm"])
    k8 = graphs.kernels(m8, 1)["total"]  # LLaMA-2-7B has LLaMA-3-8B's layers
    out.update(_published(k8))
    # SGLang's pair on an H100 at the roofline (128 prompt + 8 generated tokens)
    gpu = graphs.step_both_ways(m8, h100, 1, 128 + 8, 1, BF16, DRIVER)["gpu"]
    launch, host = graphs.launch_on_gpu(*PUBLISHED["sglt"], gpu, k8)
    out.update(ch08_sglt_h100_gpu_ms=gpu * 1e3, ch08_sglt_h100_host_ms=host * 1e3,
               ch08_sglt_h100_launch_us=launch * 1e6)
    out.update(ch08_py_us=PYTHON * 1e6, ch08_whatif_us=WHATIF * 1e6, ch08_whatif_host_ms=WHATIF_HOST * 1e3)
    replicas = (("8b", m8, 1), ("70b", m70, 4))
    fit = {name: _max_batch(m, h100, tp, CONTEXT, gbytes) for name, m, tp in replicas}
    for name, m, tp in replicas:
        for b in (1, 256):
            d = graphs.step_both_ways(m, h100, b, CONTEXT, tp, BF16, DRIVER)
            p = graphs.step_both_ways(m, h100, b, CONTEXT, tp, BF16, PYTHON)
            w = graphs.step_both_ways(m, h100, b, CONTEXT, tp, BF16, WHATIF)
            wh = graphs.step_both_ways(m, h100, b, CONTEXT, tp, BF16, WHATIF, step_host=WHATIF_HOST)
            pre = f"ch08_{name}_b{b}_"
            out[pre + "gpu_ms"] = d["gpu"] * 1e3
            out[pre + "eager_host_ms"] = d["host_eager"] * 1e3
            out[pre + "graph_host_ms"] = d["host_graph"] * 1e3
            out[pre + "saved_pct"] = 100 * d["saved"]
            out[pre + "py_host_ms"] = p["host_eager"] * 1e3
            out[pre + "py_saved_pct"] = 100 * p["saved"]
            out[pre + "whatif_host_ms"] = w["host_eager"] * 1e3
            out[pre + "whatif_saved_pct"] = 100 * w["saved"]
            out[pre + "whatif_h_saved_pct"] = 100 * wh["saved"]
        out[f"ch08_{name}_max_batch"] = fit[name]
        for tag, launch in (("py", PYTHON), ("20", WHATIF)):
            out[f"ch08_{name}_stop_{tag}"] = graphs.threshold_batch(m, h100, CONTEXT, tp, BF16, launch, 0.05,
                                                                    fit[name])
        eager = _max_batch(m, h100, tp, CONTEXT, 0.0)
        out[f"ch08_{name}_max_batch_eager"] = eager
        out[f"ch08_{name}_seqs_lost"] = eager - fit[name]
    s1 = graphs.step_both_ways(m1, gp["b200"], 1, CONTEXT, 1, BF16, DRIVER)
    out.update(ch08_1b_kernels=s1["kernels"]["total"], ch08_1b_b200_gpu_ms=s1["gpu"] * 1e3,
               ch08_1b_b200_host_ms=s1["host_eager"] * 1e3, ch08_1b_b200_saved_pct=100 * s1["saved"])
    out["ch08_capture_n"] = len(sizes)
    out["ch08_capture_n_older"] = len([1, 2, 4] + list(range(8, 513, 8)))  # before the list thinned past 256
    out["ch08_graph_mib"] = graphs.GRAPH_BYTES / MiB
    out["ch08_graph_mem_gib"], out["ch08_graph_mem_gb"] = gbytes / GiB, gbytes / GB
    for b, tag, nd in ((257, "pad257", 1), (9, "pad9", 0)):
        p = graphs.step_both_ways(m8, h100, b, PAD_CONTEXT, 1, BF16, DRIVER, sizes=sizes)
        if b == 257:
            out["ch08_pad257_to"] = p["padded_tokens"]
        out[f"ch08_{tag}_rows_pct"] = 100.0 * (p["padded_tokens"] - b) / b
        out[f"ch08_{tag}_time_pct"] = 100 * p["pad_waste"]
    worst, worst_b = 0.0, 0
    for b in range(1, min(BATCH_MAX, _max_batch(m8, h100, 1, PAD_CONTEXT, gbytes)) + 1):
        rows = graphs.padded(sizes, b)
        waste = graphs.padded_gpu_time(m8, h100, b, PAD_CONTEXT, 1, BF16, rows) / \
            graphs.step_both_ways(m8, h100, b, PAD_CONTEXT, 1, BF16, DRIVER)["gpu"] - 1 if rows > b else 0.0
        if waste > worst:
            worst, worst_b = waste, b
    out["ch08_pad_worst_time_pct"], out["ch08_pad_worst_batch"] = 100 * worst, worst_b
    out["ch08_ex4_b_padded"] = graphs.padded(sizes, 9)  # the printed variant's batch 9 (echoed)
    return out


# ---- the exercises' answers, from a variant's printed inputs ----

def practice(seed, inputs):
    gp, mt = data.gpus(), data.models()
    h100 = gp["h100"]
    m8, m70 = mt["llama3-8b"], mt["llama3-70b"]
    v = {k: data.printed(t) for k, t in inputs.items()}
    sizes = graphs.vllm_capture_list(512)
    out = {}
    # 8.1: batch 1 at 1024 tokens, the driver's launch and the variant's
    lo = graphs.step_both_ways(m8, h100, 1, 1024, 1, BF16, DRIVER)
    hi = graphs.step_both_ways(m8, h100, 1, 1024, 1, BF16, v["ch08_ex1_launch_us"] * 1e-6)
    out["8.1(a)"], out["8.1(b)"] = 100 * lo["saved"], 100 * hi["saved"]
    # 8.2: kernels per step
    tp = int(v["ch08_ex2_tp"])
    out["8.2(a)"] = graphs.kernels(m8, 1)["total"]
    out["8.2(b1)"] = graphs.kernels(m70, tp)["total"]
    out["8.2(b2)"] = graphs.kernels(m70, tp, graphs.NORM_RESIDUAL | graphs.GATE_ACT)["total"]
    out["8.2(c)"] = graphs.kernels(m70, 1)["total"]
    # 8.3: llama.cpp's published pair
    te, tg = (1 / r for r in LCPP_TOK_S)
    out["8.3(a)"] = (te - tg) * 1e3
    out["8.3(b)"] = te / out["8.2(a)"] * 1e6
    out["8.3(c)"] = te / (v["ch08_ex3_launch_us"] * 1e-6)
    # 8.4: the sizes replayed, and the padded step's extra time
    out["8.4(a1)"] = graphs.padded(sizes, int(v["ch08_ex4_small"]))
    out["8.4(a2)"] = graphs.padded(sizes, int(v["ch08_ex4_large"]))
    b, ctx = int(v["ch08_ex4_b_batch"]), int(v["ch08_ex4_b_context"])
    p = graphs.step_both_ways(m8, h100, b, ctx, 1, BF16, DRIVER, sizes=sizes)
    out["8.4(b)"] = (p["gpu_padded"] - p["gpu"]) * 1e6
    # 8.5: a verification step carries 1 + gamma tokens a sequence

    def largest(gamma):
        n = 0
        while graphs.padded(sizes, (n + 1) * (1 + gamma)):
            n += 1
        return n

    ga, gb, gc = (int(v[f"ch08_ex5_gamma_{x}"]) for x in "abc")
    ba, bb = int(v["ch08_ex5_batch_a"]), int(v["ch08_ex5_batch_b"])
    out["8.5(a1)"] = graphs.padded(sizes, ba * (1 + ga))
    out["8.5(a2)"] = graphs.padded(sizes, ba * (1 + gb))
    out["8.5(a3)"] = graphs.padded(sizes, bb * (1 + gb))
    # (b): the least gamma whose every batch of 2 or more below 256 tokens lands on a size
    out["8.5(b)"] = next(k for k in range(1, 33)
                         if all(graphs.padded(sizes, n * (1 + k)) == n * (1 + k) for n in range(2, 256)
                                if n * (1 + k) < 256))
    out["8.5(c1)"], out["8.5(c2)"] = largest(ga), largest(gc)
    # 8.6: graph memory against KV, LLaMA-3-8B on one H100
    ctx6, b6 = int(v["ch08_ex6_context"]), int(v["ch08_ex6_batch"])
    none, s51, s10 = (_max_batch(m8, h100, 1, ctx6, n * graphs.GRAPH_BYTES) for n in (0, 51, 10))
    out["8.6(a)"], out["8.6(b1)"], out["8.6(b2)"] = none - s51, none - s10, s10 - s51
    out["8.6(b3)"] = graphs.padded([2 ** i for i in range(10)], b6)
    out["8.6(b4)"] = graphs.padded(sizes, b6)
    # 8.7: where graphs stop paying, inside memory with the graphs held
    launch = v["ch08_ex7_launch_us"] * 1e-6
    for pid, m, tp7, c7 in (("8.7(a)", m8, 1, 4096), ("8.7(b)", m8, 1, 1024), ("8.7(c)", m70, 4, 4096)):
        fit = _max_batch(m, h100, tp7, c7, len(sizes) * graphs.GRAPH_BYTES)
        out[pid] = graphs.threshold_batch(m, h100, c7, tp7, BF16, launch, 0.05, fit)
    return out
