/* Published kernel measurements (code/specs/measured/<system>/<backend>/,
 * imported by tools/import_measured.py) turned into the points a rate fit
 * takes: each measured kernel's FLOPs and bytes counted by the cost model's
 * own op records (transformer.h: gemm_op_cost, attention_op_costs), with the
 * ceilings of the GPU row it ran on.
 *
 * Tables, each a measured TSV (measured.h) whose provenance says
 * "kind: published":
 *   gemm.tsv              dtype m n k time_s           (bf16, fp8, fp8_block)
 *   attention_decode.tsv  batch context heads kv_heads head_dim kv_dtype time_s
 *   attention_prefill.tsv batch prompt heads kv_heads head_dim kv_dtype time_s
 *   allreduce.tsv         implementation tp bytes time_s
 *   mla_decode.tsv        batch context heads kv_dtype time_s   (optional: latent attention,
 *   mla_prefill.tsv       batch prompt heads kv_dtype time_s     DeepSeek-V3's widths)
 *   gdn_decode.tsv        batch k_heads v_heads k_dim v_dim time_s   (optional: Gated DeltaNet,
 *   gdn_prefill.tsv       batch prompt k_heads v_heads k_dim v_dim time_s   heads per GPU)
 *   alltoall.tsv          implementation phase dtype ep nodes hidden topk experts tokens time_s
 *                         (published_alltoall.h; optional: a set without it has no all-to-all lines)
 * (context: the KV length a decode step attends, the new token included.) */
#ifndef NAPKIN_PUBLISHED_H
#define NAPKIN_PUBLISHED_H

#include "fit.h"
#include "specs.h"

#include <stddef.h>

/* The points of class c in the set at dir, on GPU row g (the rates of g
 * must be NULL: the points carry its ceilings).  *pts is malloc'd (free it);
 * *n may be 0 when the set has none of that class.  Returns 0, or -1 with
 * "file: reason" (a missing table, column or bad number). */
int published_rate_points(const char *dir, rate_class c, const gpu_spec *g, rate_point **pts, int *n, char *err,
                          size_t errlen);

/* The same, each fp8 GEMM point's extra (fit.h) the time `quantize` (NULL:
 * none) takes to cast its M x K activation from bf16 to fp8 on g. */
int published_rate_points_apart(const char *dir, rate_class c, const gpu_spec *g, const op_rate *quantize,
                                rate_point **pts, int *n, char *err, size_t errlen);

/* TensorRT-LLM's fp8 (per-tensor) GEMM table times the activation's cast to
 * fp8 with each GEMM: its rows sit a fixed 6-7 us above its own fp8_block
 * rows and above vLLM's and SGLang's per-tensor rows, at the same
 * bandwidth.  Its serving graph casts inside the op that feeds each GEMM
 * (the fused all-reduce and norm, the attention kernel's output, the
 * SwiGLU), so the cast is no part of the GEMM it runs: its calibration
 * fits the table less that streaming kernel, priced at the set's own
 * elementwise rate.  Returns m's elementwise rate for backend "trtllm"
 * (NULL before m has one, and for the other engines, whose fp8 linear layers
 * cast apart in serving as in their tables). */
const op_rate *published_quantize_apart(const char *backend, const rate_model *m);

/* The all-reduce points of one implementation at one TP degree. */
int published_link_points(const char *dir, const char *implementation, int tp, link_point **pts, int *n, char *err,
                          size_t errlen);

/* The all-reduce a serving engine of that backend uses inside a CUDA graph:
 * trtllm -> trtllm, vllm -> vllm_graph, sglang -> sglang_graph; else nccl. */
const char *published_allreduce_implementation(const char *backend);

/* Fit every class the set has, and the engine's all-to-all lines where it has
 * alltoall.tsv (published_alltoall_fit; elementwise takes the fixed cost and byte
 * share of the bf16 GEMMs, the tables measuring no norm or add), and each
 * TP degree's all-reduce of the backend's implementation.  sums (may be
 * NULL) get each class's residuals, link_sums each TP degree's.
 * `every_other` 0 fits on every point; 1 or 2 fits on the odd or the even
 * points only (a held-out half).  Returns 0, or -1 with a message. */
int published_fit(const char *dir, const char *backend, const gpu_spec *g, int every_other, rate_model *out,
                  fit_summary sums[RC_COUNT], fit_summary link_sums[RATE_TP_SLOTS], char *err, size_t errlen);

/* Keep points i with i % 2 == half - 1 (half 1 or 2); half 0 keeps all. */
int published_half(rate_point *pts, int n, int half);

#endif
