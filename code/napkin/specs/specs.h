/* GPU and model tables (code/specs/gpus.tsv, models.tsv).  The tables are embedded in the
 * library at build time, so programs need no data files; a reader can load
 * their own file with the *_parse / *_load functions. */
#ifndef NAPKIN_SPECS_H
#define NAPKIN_SPECS_H

#include "units.h"

#include <stddef.h>

#define SPEC_KEY_MAX 32
#define SPEC_NAME_MAX 64
#define SPEC_SOURCE_MAX 320
/* The most layers a model row may have (a reader of a config checks it
 * before any loop over the layers). */
#define MODEL_LAYERS_MAX 10000

typedef struct {
    char key[SPEC_KEY_MAX];
    char name[SPEC_NAME_MAX];
    double flops[DT_COUNT]; /* dense FLOP/s (OP/s for int8) per compute dtype (fp4: fp4_tflops); 0 = none */
    double mem_bw;          /* bytes/s */
    double mem_bytes;       /* bytes the driver reports (what an engine can allocate from) */
    double mem_bytes_datasheet; /* bytes as the datasheet states them (decimal GB), for display */
    double link_bw;         /* GPU-to-GPU bytes/s per direction (NVLink, Infinity Fabric or PCIe); 0 = unknown */
    double allreduce_latency; /* seconds: the fixed cost of one small all-reduce in a TP group; 0 = unknown */
    double host_bw;         /* host-to-GPU bytes/s per direction (PCIe); 0 = unknown */
    int node_gpus;          /* GPUs joined by link_bw, one NVLink domain (node_gpus column); 0 = unknown:
                               gpu_node_gpus gives the default */
    char source[SPEC_SOURCE_MAX];
    char link_source[SPEC_SOURCE_MAX]; /* where the capacity and link figures come from */
    /* Achieved rates that price each op class (pricing.h), or NULL: the
     * roofline.  Never set by the table parsers; a command points it at a
     * calibration for its calibrated answer. */
    const struct rate_model *rates;
} gpu_spec;

typedef struct {
    char key[SPEC_KEY_MAX];
    char name[SPEC_NAME_MAX];
    int layers, hidden, heads, kv_heads, head_dim, ffn, vocab;
    int experts, experts_active; /* 1, 1 for a dense model */
    int tied_embeddings;         /* output head shares the embedding matrix */
    char source[SPEC_SOURCE_MAX];
    int max_position;            /* longest context it was trained for (max_position_embeddings); 0 = unknown */
    /* The shapes of later models (the table's `arch` column); all 0 for a
     * row without one, whose numbers are then exactly a plain model's. */
    int q_lora_rank;    /* MLA: the query's low-rank width (0: a full q projection) */
    int kv_lora_rank;   /* MLA: the cached latent's width; > 0 marks multi-head latent attention */
    int qk_nope_dim, qk_rope_dim, v_head_dim; /* MLA: per-head widths (head_dim = nope + rope) */
    int moe_ffn;        /* a routed expert's width; 0 = ffn (then ffn is the experts' width) */
    int shared_experts; /* experts every token visits, moe_ffn wide */
    int dense_layers;   /* layers with one dense MLP ffn wide instead of experts */
    int window, window_layers; /* sliding or chunked attention: window_layers layers keep the last `window` tokens */
    int sinks;          /* 1: a learned sink logit per head (gpt-oss) */
    int expert_format;  /* EXPERTS_AS_WEIGHTS, EXPERTS_MXFP4 (routed experts released at 4.25 bits) or
                           EXPERTS_INT4_G32 (at 4.5 bits) */
    int mtp_layers;     /* multi-token-prediction modules released beside the model (DeepSeek-V3: 1);
                           counted apart (param_count.mtp), not served */
    /* Linear attention (Gated DeltaNet, Qwen3.5): linear_layers of the layers
     * keep a fixed-size state per sequence instead of a KV cache (model/
     * linear_attention.h); 0: none.  Key heads x key dim are the q and k
     * widths, value heads x value dim the v width; each value head's state
     * is key dim x value dim at state_bytes a value, beside a causal
     * convolution of linear_conv taps over q, k and v. */
    int linear_layers, linear_k_heads, linear_v_heads, linear_k_dim, linear_v_dim;
    int linear_conv;        /* the short convolution's taps (its state keeps linear_conv - 1 positions) */
    int linear_state_bytes; /* bytes of one state value (4: the config's mamba_ssm_dtype float32) */
    int attn_gate;          /* 1: the full-attention layers' q_proj also makes an output gate (attn_output_gate) */
    /* DeepSeek sparse attention (GLM-5, DeepSeek-V3.2; model/sparse_attention.h),
     * beside MLA: an indexer of dsa_heads x dsa_dim scores every cached token
     * and each query attends to the dsa_topk best; 0: dense attention. */
    int dsa_heads, dsa_dim, dsa_topk;
} model_spec;

enum { EXPERTS_AS_WEIGHTS = 0, EXPERTS_MXFP4 = 1, EXPERTS_INT4_G32 = 2 };
/* EXPERTS_MXFP4's bytes a weight are block_format_bytes_per_weight(BF_MXFP4)
 * (core/block_formats.h, the one place the 4-bit formats are counted).
 * int4 weight-only in groups of 32 with one bf16 scale each, symmetric (no
 * zero point): compressed-tensors' "pack-quantized" int4 group 32, the
 * routed experts of Kimi-K2.5 as released. */
#define INT4_G32_BYTES_PER_WEIGHT ((4.0 + 16.0 / 32) / 8)

typedef struct {
    gpu_spec *rows;
    int n;
} gpu_table;

typedef struct {
    model_spec *rows;
    int n;
} model_table;

/* Parse TSV text.  `filename` is used in messages only.  On error returns -1
 * and writes "file:line: field 'x': reason" into err; the table is left empty. */
int gpu_table_parse(const char *text, const char *filename, gpu_table *out, char *err, size_t errlen);
int model_table_parse(const char *text, const char *filename, model_table *out, char *err, size_t errlen);
/* Read and parse a file. */
int gpu_table_load(const char *path, gpu_table *out, char *err, size_t errlen);
int model_table_load(const char *path, model_table *out, char *err, size_t errlen);
/* The tables shipped with the workbook (code/specs/gpus.tsv, models.tsv). */
int gpu_table_builtin(gpu_table *out, char *err, size_t errlen);
int model_table_builtin(model_table *out, char *err, size_t errlen);
void gpu_table_free(gpu_table *t);
void model_table_free(model_table *t);

/* Look up by key (case-insensitive); NULL when absent. */
const gpu_spec *gpu_find(const gpu_table *t, const char *key);
const model_spec *model_find(const model_table *t, const char *key);
/* "h100, h200, ..." into buf, for error messages. */
char *gpu_keys(const gpu_table *t, char *buf, size_t n);
char *model_keys(const model_table *t, char *buf, size_t n);

/* The built-in row for key copied into *out: 0, or -1 (nothing printed)
 * when the key is NULL or unknown. */
int gpu_lookup(const char *key, gpu_spec *out);
int model_lookup(const char *key, model_spec *out);

/* Convenience for programs: the built-in row or exit(1) with a message. */
gpu_spec gpu_builtin(const char *key);
model_spec model_builtin(const char *key);

/* GPUs a node holds when its row leaves node_gpus out: one HGX board. */
#define GPU_NODE_GPUS_DEFAULT 8
/* The GPUs that reach each other over the row's link (its NVLink domain):
 * the row's node_gpus, or GPU_NODE_GPUS_DEFAULT.  Expert parallelism and
 * disaggregated pools stay on the link inside it, the network beyond. */
int gpu_node_gpus(const gpu_spec *g);

/* Dense peak FLOP/s of a GPU for a compute dtype; 0 when it has none. */
double gpu_peak_flops(const gpu_spec *g, dtype compute);

/* The GPU table row whose key appears in a device name (case-insensitive):
 * "NVIDIA H200" -> h200.  NULL when none does. */
const gpu_spec *gpu_match_device_name(const gpu_table *t, const char *device_name);

/* A copy of g whose bandwidth and every FLOP rate are scaled by the given
 * fractions (e.g. measured ceiling / datasheet): the device a model is
 * timed on when it runs below the datasheet (derate.c). */
gpu_spec gpu_derated(const gpu_spec *g, double bandwidth_fraction, double flops_fraction);

#endif
