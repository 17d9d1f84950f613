"""Memory of one GPU of a serving replica under the book's memory policy
(chapter 1): plan with the capacity the driver reports, use 90 % of it
(vLLM's gpu_memory_utilization), hold back the activations of one step of
8192 batched tokens with logits for 256 sampled positions (vLLM's
max_num_batched_tokens and max_num_seqs), and give the rest to the KV
cache; the largest batch at a context is that budget over context times
the KV bytes per token per GPU, rounded down."""
import math

from lib import model

POLICY = {"usable": 0.90, "activation_tokens": 8192, "sampled_tokens": 256, "capacity": 0.0}


def plan(m, g, prec, tp, policy=None, extra=0.0):
    """One GPU of a tp replica: hbm, usable, weights, activations, kv_budget
    (negative when the model does not fit), kv_per_token, fits."""
    pol = dict(POLICY if policy is None else policy)
    cap = pol["capacity"] or g["mem_bytes"]
    usable = cap * pol["usable"]
    weights = model.weight_bytes(m, prec.weights) / tp
    act = model.activation_bytes(m, pol["activation_tokens"], pol["sampled_tokens"], prec.act, tp)
    budget = usable - weights - act - extra
    return {"hbm": cap, "usable": usable, "weights": weights, "activations": act, "kv_budget": budget,
            "kv_per_token": model.kv_bytes_per_token(m, prec.kv, tp), "fits": budget > 0}


def max_batch(p, context):
    if p["kv_budget"] <= 0 or context <= 0:
        return 0
    return int(math.floor(p["kv_budget"] / (context * p["kv_per_token"])))


def kv_token_capacity(p):
    return math.floor(p["kv_budget"] / p["kv_per_token"]) if p["kv_budget"] > 0 else 0


def fits(p, batch, context):
    return p["kv_budget"] > 0 and batch <= max_batch(p, context)


GIB = 1 << 30


def engine_policy(engine, m, g, prec, tp):
    """A serving engine's own default memory policy for the model on one GPU
    of a tp group (the book's, vLLM's, for an engine not named):
      vLLM: gpu_memory_utilization 0.9 of the GPU for weights, the
        activations of a max_num_batched_tokens step and the KV cache (the
        book's policy);
      SGLang: mem_fraction_static of the GPU for weights and the KV pool,
        the rest (9.5 + tp/2 GiB on a GPU of under 90 GiB, 12 + tp/2 GiB
        under 160 GiB) kept for activations and CUDA graphs, so no
        activation reserve inside it;
      TensorRT-LLM: free_gpu_memory_fraction 0.9 of what is left once the
        weights W and the activations A of a max_num_tokens step are
        allocated, KV = 0.9 (cap - W - A): a usable share of
        0.9 + 0.1 (W + A) / cap (at most 1), the same reserve."""
    pol = dict(POLICY)
    cap = pol["capacity"] or g["mem_bytes"]
    if engine == "sglang":
        reserved = (9.5 if cap < 90 * GIB else 12.0) + tp / 2
        pol.update(usable=1 - reserved * GIB / cap, activation_tokens=0, sampled_tokens=0)
    elif engine == "trtllm":
        held = model.weight_bytes(m, prec.weights) / tp + model.activation_bytes(
            m, pol["activation_tokens"], pol["sampled_tokens"], prec.act, tp)
        pol["usable"] = min(1.0, 0.9 + 0.1 * held / cap)
    return pol


def exercise_policy(usable):
    """The exercises' policy: a share of the driver's figure and a fixed
    reserve in bytes (passed as plan's extra), no activation reserve."""
    return {"usable": usable, "activation_tokens": 0, "sampled_tokens": 0, "capacity": 0.0}



def plan_resident(residents, g, policy=None, extra=0.0):
    """One GPU holding several models that run one after another (a target
    and a draft time-sliced on it): residents is a list of (model, Precision,
    tp).  Their weights and KV bytes per token add up; the activation
    reserve is one step's, sized for the largest of them (the models never
    run at once).  Same keys as plan()."""
    pol = dict(POLICY if policy is None else policy)
    cap = pol["capacity"] or g["mem_bytes"]
    usable = cap * pol["usable"]
    weights = sum(model.weight_bytes(m, p.weights) / tp for m, p, tp in residents)
    act = max(model.activation_bytes(m, pol["activation_tokens"], pol["sampled_tokens"], p.act, tp)
              for m, p, tp in residents)
    kv = sum(model.kv_bytes_per_token(m, p.kv, tp) for m, p, tp in residents)
    budget = usable - weights - act - extra
    return {"hbm": cap, "usable": usable, "weights": weights, "activations": act, "kv_budget": budget,
            "kv_per_token": kv, "fits": budget > 0}
