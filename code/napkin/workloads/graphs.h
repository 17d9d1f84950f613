/* CUDA graphs: what launching a decode step's kernels costs the host, what a
 * captured graph saves, what padding to a captured size wastes, and what the
 * graphs hold in memory.
 *
 * Conventions (stated once, here):
 *  - Kernels come from the step's own op list (decoder_step_ops): one kernel
 *    per op occurrence, per layer ops once per layer, the TP collectives
 *    (tp > 1) one kernel each.  The two attention ops are one flash-style
 *    kernel (the cost model already assumes the scores never reach HBM).
 *    A fusion setting removes kernels: norm+residual folds each residual add
 *    into the norm that follows it; gate/up+activation folds SiLU(gate)*up
 *    into the gate_up GEMM's epilogue.
 *  - Host cost: eager, every kernel costs the host `launch` seconds to
 *    enqueue (the driver call and whatever the framework does per op); a
 *    graph costs one `graph_launch` plus `node` seconds per captured kernel.
 *  - Queue depth: the stream's launch queue holds a whole step, so the host
 *    enqueues the step ahead of the GPU, host and GPU overlap within it, and
 *    the step takes
 *    max(GPU time, host time).  Steps do not overlap: the next step's inputs
 *    are the tokens this one samples.  Other per-step host work (scheduling,
 *    sampling, detokenising) is left out: it is the same with or without
 *    graphs.
 *  - Graphs change host cost, not kernel time: the GPU time is
 *    decoder_step_cost's, the same both ways.
 *  - A graph is captured per size; a step of T tokens replays the smallest
 *    captured size >= T, its extra rows dummies (they go through every
 *    projection, norm and elementwise op, and attend to nothing).  A step
 *    larger than every captured size runs eagerly. */
#ifndef NAPKIN_GRAPHS_H
#define NAPKIN_GRAPHS_H

#include "specs.h"
#include "transformer.h"

#include <stddef.h>

/* ---- kernels per step ---- */

/* Fusion settings; bits, so FUSE_NORM_RESIDUAL | FUSE_GATE_ACT is both. */
#define FUSE_NONE 0
#define FUSE_NORM_RESIDUAL 1 /* residual add + the following RMSNorm: one kernel */
#define FUSE_GATE_ACT 2      /* gate/up GEMM + SiLU(gate) * up: one kernel */
#define FUSE_ALL 3

/* "none", "norm-residual", "gate-act", "all". */
const char *fusion_name(int fusion);
/* Returns 0 and sets *out, or -1 for an unknown name. */
int fusion_parse(const char *s, int *out);
/* "none, norm-residual, gate-act, all" for messages. */
const char *fusion_choices(void);

/* Kernels one occurrence of the op launches under a fusion setting: 1, or 0
 * when it runs inside another op's kernel. */
int op_kernels(const op_cost *op, int fusion);

typedef struct {
    int per_layer; /* kernels of one layer */
    int once;      /* kernels that run once per step (embedding, final norm, logits, ...) */
    int layers;
    int comm;      /* of the total: TP collectives */
    int total;     /* per_layer * layers + once */
} step_kernels;

/* Count the kernels of one step from its op list.  0, or -1 with a message
 * for a bad shape or fusion setting. */
int step_kernel_count(const model_spec *m, const step_shape *s, int fusion, step_kernels *out, char *err,
                      size_t errlen);

/* One kernel of a step, in launch order. */
typedef struct {
    const char *name; /* the op that launches it ("qkv_proj", ...) */
    int layer;        /* 0 .. layers-1, or -1 for a once-per-step kernel */
    double bytes;     /* HBM bytes it moves: its op's, plus those of the ops folded into it */
    int comm;         /* 1 for a TP collective */
} step_kernel;

/* The kernels of one step in launch order: the embedding (and its
 * all-reduce), every layer's kernels, then the final norm, the logits (and
 * their gather).  A folded op's bytes go to the kernel that runs it: a
 * residual add to the norm after it, attn_value and act_mul to the kernel
 * before them.  The bytes sum to decoder_step_cost's bytes.  Returns how
 * many kernels (at most max), or -1 with a message. */
int step_kernel_sequence(const model_spec *m, const step_shape *s, int fusion, step_kernel *out, int max,
                         char *err, size_t errlen);

/* ---- host cost and the step's wall time ---- */

typedef struct {
    double launch;       /* host seconds to enqueue one kernel eagerly */
    double graph_launch; /* host seconds for one graph launch */
    double node;         /* host seconds per captured kernel when a graph is replayed */
    double step_host;    /* host seconds per step that graphs do not remove (scheduling, input
                          * preparation, sampling): paid before and after the step, both ways */
} launch_costs;

/* 4 us per eager launch and per graph launch, 1 us per replayed node, no
 * per-step host work (so the share saved is an upper bound).
 * Measured elsewhere (CUDA 13.3, ocannl issue #488): 2.6-2.8 us to enqueue a
 * launch, 6.3-7.5 us with its wait, a graph replay 15 us + 0.58 us per node;
 * cuLaunchKernel 3.0 us on a GB200 (tritonbench PR #1017).
 * kernels/step_graph.cu measures your card. */
launch_costs launch_costs_default(void);
/* 0, or -1 with a message when a cost is negative or not finite. */
int launch_costs_check(const launch_costs *lc, char *err, size_t errlen);

/* kernels * launch. */
double host_time_eager(int kernels, const launch_costs *lc);
/* graph_launch + kernels * node. */
double host_time_graph(int kernels, const launch_costs *lc);
/* max(gpu, host): the host runs a step ahead of the GPU, never further. */
double step_wall_time(double gpu, double host);
/* 1 - t_graph / t_eager. */
double graph_share_saved(double t_eager, double t_graph);
/* The least eager launch cost per kernel consistent with a published pair of
 * step times: graphs saved t_eager - t_graph over `kernels` launches, so
 * kernels x launch >= (t_eager - t_graph) + graph_launch + kernels x node, with
 * equality when the graph step is host-bound.  The per-step host work cancels.
 * NAN when kernels < 1 or t_graph > t_eager. */
double implied_launch_cost(double t_eager, double t_graph, int kernels, const launch_costs *lc);
/* The same pair read on a GPU whose step takes `gpu`: if the graph step is
 * GPU-bound, what is left of it is per-step host work, step_host = t_graph -
 * gpu, and the eager step's launches are t_eager - step_host, so launch =
 * (t_eager - step_host) / kernels.  Returns the launch cost and sets
 * *step_host; NAN when the pair does not fit that GPU (its step alone is
 * longer than t_graph, or the launches it implies would not exceed it). */
double launch_cost_on_gpu(double t_eager, double t_graph, double gpu, int kernels, const launch_costs *lc,
                          double *step_host);

/* llama.cpp issue #6763: LLaMA-2-7B Q4_K_M on an H100 PCIe, tokens a second
 * eagerly and with CUDA graphs (the chapter's and exercise 8.3's figure). */
#define LLAMA_CPP_6763_EAGER_TOK_S 143.35
#define LLAMA_CPP_6763_GRAPH_TOK_S 163.83

/* ---- capture sizes ---- */

#define CAPTURE_MAX_SIZES 512

typedef struct {
    int n;
    int sizes[CAPTURE_MAX_SIZES]; /* ascending, distinct, >= 1 */
} capture_list;

/* vLLM's default capture list up to max_size:
 * [1, 2, 4] + range(8, 256, 8) + range(256, max_size + 1, 16), entries above
 * max_size dropped (vllm/config/vllm.py, _set_cudagraph_sizes; its ceiling
 * is min(2 x max_num_seqs, 512), 512 at the default max_num_seqs).  Returns
 * how many. */
int capture_list_vllm(int max_size, capture_list *out);
/* "1,2,4,8" (any order; repeats merged).  0, or -1 with a message naming the
 * bad entry. */
int capture_list_parse(const char *text, capture_list *out, char *err, size_t errlen);
/* The smallest captured size >= tokens; 0 when tokens exceed every size (the
 * step runs eagerly). */
int capture_padded_tokens(const capture_list *c, int tokens);
/* Bytes the captured graphs hold: one graph per size, each `per_graph` bytes
 * (its private buffers; engines share one pool, so this is an upper bound
 * that the published per-size figures already include). */
double capture_memory_bytes(const capture_list *c, double per_graph);

/* Memory one captured graph holds by default: 26 MiB, vLLM's log for
 * Llama-3.1-8B-Instruct (24-28 MiB per captured size; vLLM PR #22897). */
#define GRAPH_BYTES_DEFAULT (26.0 * 1024 * 1024)

/* ---- one decode step both ways ---- */

typedef struct {
    step_kernels kernels;
    int tokens;        /* batch * new_tokens */
    int padded_tokens; /* the captured size replayed; 0 when the step runs eagerly */
    double gpu;        /* GPU time of the real step (decoder_step_cost) */
    double gpu_padded; /* GPU time of the padded step the graph replays */
    double host_eager; /* kernels * launch */
    double host_graph; /* graph_launch + kernels * node */
    double step_eager; /* step_host + max(gpu, host_eager) */
    double step_graph; /* step_host + max(gpu_padded, host_graph), or step_eager beyond the capture list */
    double saved;      /* 1 - step_graph / step_eager */
    double pad_waste;  /* gpu_padded / gpu - 1 */
} graph_step;

/* One step eagerly and as a graph.  capture NULL: a graph captured at exactly
 * this step's size (no padding).  0, or -1 with a message (bad shape, fusion,
 * costs, or a GPU without the compute rate). */
int graph_step_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, int fusion,
                    const launch_costs *lc, const capture_list *capture, graph_step *out, char *err,
                    size_t errlen);

/* GPU seconds of the step padded to `padded_tokens` rows: every op but
 * attention runs padded_tokens rows; attention runs the real sequences.
 * Equals decoder_step_cost's time when padded_tokens = batch * new_tokens. */
int padded_step_time(const model_spec *m, const gpu_spec *g, const step_shape *s, int padded_tokens,
                     double *out, char *err, size_t errlen);

/* The smallest batch in 1..batch_max whose share saved (graph at exactly that
 * batch) is below `threshold`: where graphs stop paying.  *out = 0 when the
 * saving stays at or above the threshold up to batch_max.  s gives context,
 * tp, precision and new_tokens (its batch is ignored).  0, or -1 with a
 * message. */
int graph_threshold_batch(const model_spec *m, const gpu_spec *g, const step_shape *s, int fusion,
                          const launch_costs *lc, double threshold, int batch_max, int *out, char *err,
                          size_t errlen);

#endif
