/* Multi-token prediction as a server runs it: the model's own MTP module
 * (DeepSeek-V3's num_nextn_predict_layers, models.tsv arch mtp=D) drafts
 * `steps` tokens a step, and the main model verifies them.
 *
 * A round, for every sequence of the batch:
 *  - `steps` module passes, one drafted token each (one position per
 *    sequence).  DeepSeek-V3 releases one module; drafting more tokens
 *    reuses it on its own output, as SGLang's --speculative-num-steps and
 *    TensorRT-LLM's MTP "Eagle" mode with one layer do.  A pass is one
 *    decoder layer of the MoE kind with its own attention and KV cache,
 *    enorm and hnorm, eh_proj (2h -> h over the concatenated embedding of
 *    the last token and the hidden state), and the main model's embedding
 *    row and output head (the logits of the drafted token).
 *  - one verification step of the main model with steps + 1 new tokens a
 *    sequence and logits at each of them.
 * It yields spec_expected_tokens(accept, steps) tokens a sequence
 * (accepted_tokens.h, chapter 10's capped geometric process) with the
 * acceptance `accept` per drafted token, so
 *     time per output token = (verify + steps x pass) / E[N].
 * Left out: the engines' first pass re-reads the accepted tokens (up to
 * steps + 1 positions, not one); the draft's prefill over the prompt.
 * The module stays resident: memory.h counts param_count.mtp_served and
 * the KV of its layers (resident_model.mtp). */
#ifndef NAPKIN_MTP_H
#define NAPKIN_MTP_H

#include "transformer.h"

#include <stddef.h>

/* Is (steps, accept) a round m can run: m ships an MTP module, steps >= 1,
 * accept in [0, 1)?  0, or -1 with a message. */
int mtp_check(const model_spec *m, int steps, double accept, char *err, size_t errlen);

/* The module as a model of its own, for pricing its decoder layer and
 * sizing its KV: `layers` layers, all of the MoE kind (none dense, none
 * windowed), no module of its own. */
model_spec mtp_module_model(const model_spec *m, int layers);

/* The ops a pass adds around that layer for s's tokens: enorm, hnorm and
 * eh_proj (2h -> h, whole on every GPU: the engines' module keeps it a
 * plain replicated linear).  Writes 3 ops, returns 3. */
#define MTP_GLUE_OPS 3
int mtp_glue_ops(const model_spec *m, const step_shape *s, op_cost *out);

/* One module pass on one GPU of the tp group: a decode-shaped step
 * (s->new_tokens must be 1) of mtp_module_model(m, 1) and the glue ops,
 * every op priced by price_op.  0, or -1 with a message. */
int mtp_pass_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, step_cost *out, char *err,
                  size_t errlen);

/* The verification step of a decode shape: steps + 1 new tokens a
 * sequence, logits at every one. */
step_shape mtp_verify_shape(const step_shape *decode, int steps);

typedef struct {
    double tokens;    /* E[N]: tokens a round yields a sequence */
    double verify;    /* the main model's step over steps + 1 tokens a sequence */
    double pass;      /* one module pass */
    double module;    /* steps passes */
    double round;     /* verify + module */
    double per_token; /* round / tokens: the decode time per output token */
} mtp_round;

/* The round from its priced parts. */
mtp_round mtp_round_of(double verify, double pass, int steps, double accept);

/* The whole round on g at the decode shape s: verify and pass priced,
 * then mtp_round_of.  0, or -1 with a message. */
int mtp_round_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, int steps, double accept,
                   mtp_round *out, char *err, size_t errlen);

#endif
