/* Turning flag values into library objects: the spec tables (built in, or
 * the reader's own files), a GPU or model by key, a dtype, a precision.
 * Each lookup prints "napkin <cmd>: unknown GPU 'x' for --gpu (choices: ...)"
 * on failure and returns EXIT_USAGE; 0 on success. */
#ifndef NAPKIN_CLI_LOOKUP_H
#define NAPKIN_CLI_LOOKUP_H

#include "cli_args.h"
#include "memory.h"
#include "specs.h"
#include "specs_tsv.h"
#include "transformer.h"

typedef struct {
    gpu_table gpus;
    model_table models;
} cli_specs;

/* Load the tables once: --gpu-table/--model-table, else --specs DIR, else the
 * built-in tables.  Returns 0, or EXIT_USAGE for an unreadable or malformed
 * file (the message names file:line), 1 if the built-in tables fail. */
int cli_specs_load(const char *cmd, const cli_common *c, cli_specs *out);
void cli_specs_free(cli_specs *s);

/* The row of any table whose key is `key` (rows as spec_key_index takes
 * them: SPEC_ROWS(t)): 0 with *index set, or EXIT_USAGE after "unknown <what>
 * 'key' for <flag> (choices: ...)". */
int cli_find_key(const char *cmd, const char *flag, const char *what, const char *key, const char *first_key,
                 size_t stride, int n, int *index);
int cli_find_gpu(const char *cmd, const cli_specs *s, const char *flag, const char *key, const gpu_spec **out);
int cli_find_model(const char *cmd, const cli_specs *s, const char *flag, const char *key,
                   const model_spec **out);
int cli_dtype(const char *cmd, const char *flag, const char *name, dtype *out);

/* Precision from --dtype D (all four; the compute dtype of int4 is bf16)
 * overridden by any of --weights, --moe-weights, --kv, --act, --compute
 * (NULL = not given).  --weights Q: a weight format (weight_format.h) for
 * every weight, the routed experts too unless --moe-weights Q gives theirs;
 * a format sets the compute dtype to its math (fp8 for fp8 and fp8_block,
 * bf16 for bf16 and int4_wo); a plain dtype (int4, int8, ...) sets the
 * weights dtype alone, as before.  Unknown names: EXIT_USAGE naming the flag. */
int cli_precision(const char *cmd, const char *all, const char *weights, const char *moe_weights, const char *kv,
                  const char *act, const char *compute, precision *out);
/* Once the model and the device are known: --moe-weights on a dense model,
 * or experts whose format's math the GPU has no rate for (fp8 on an A100),
 * refused naming the flag (moe_weights: --moe-weights's value, NULL when
 * not given).  0, or EXIT_USAGE after the message. */
int cli_precision_check(const char *cmd, const model_spec *m, const gpu_spec *g, const precision *p,
                        const char *moe_weights);

/* The GPU's dense peak for dtype d, or EXIT_USAGE naming the dtypes it has a
 * rate for when it has none (an A100 has no fp8 tensor cores). */
int cli_gpu_peak(const char *cmd, const gpu_spec *g, dtype d, double *peak);
/* The dtype a flag names and the GPU's dense peak for it: cli_dtype, then
 * cli_gpu_peak.  0, or EXIT_USAGE after the message. */
int cli_dtype_peak(const char *cmd, const gpu_spec *g, const char *flag, const char *name, dtype *d, double *peak);

/* Policy from memory_policy_default(), overridden by --usable F (NAN = not
 * given), --activation-tokens T and --sampled-tokens S (-1 = not given) and
 * --hbm BYTES (0 = not given). */
memory_policy cli_policy(double usable, int activation_tokens, int sampled_tokens, double capacity);
/* --hbm BYTES, when given (> 0), must be a GPU's memory: 1e6 to 1e15 bytes.
 * Returns 0, or EXIT_USAGE after the message. */
int cli_hbm_check(const char *cmd, double hbm);

#endif
