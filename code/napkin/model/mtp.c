/* Multi-token prediction's round: see mtp.h. */
#include "mtp.h"

#include "accepted_tokens.h"

#include <math.h>
#include <stdio.h>

int mtp_check(const model_spec *m, int steps, double accept, char *err, size_t errlen)
{
    if (m->mtp_layers < 1) {
        snprintf(err, errlen, "%s ships no multi-token-prediction module (models.tsv arch has no mtp=)", m->key);
        return -1;
    }
    if (steps < 1) {
        snprintf(err, errlen, "multi-token prediction drafts at least one token a step (got %d)", steps);
        return -1;
    }
    if (!(accept >= 0 && accept < 1)) {
        snprintf(err, errlen, "the acceptance per drafted token must be in [0, 1) (got %g)", accept);
        return -1;
    }
    return 0;
}

model_spec mtp_module_model(const model_spec *m, int layers)
{
    model_spec mm = *m;
    mm.layers = layers;
    mm.dense_layers = 0; /* the module's layer is of the MoE kind */
    mm.window_layers = 0;
    mm.window = 0;
    mm.linear_layers = 0; /* Qwen3.5's module layer is full attention */
    mm.mtp_layers = 0;
    return mm;
}

int mtp_glue_ops(const model_spec *m, const step_shape *s, op_cost *out)
{
    const double T = (double)s->batch * s->new_tokens, h = m->hidden;
    out[0] = norm_op_cost("mtp_enorm", T, h, s->prec.act);
    out[1] = norm_op_cost("mtp_hnorm", T, h, s->prec.act);
    out[2] = gemm_op_cost(T, 2 * h, h, s->prec.weights, s->prec.compute, s->prec.act);
    out[2].name = "mtp_eh_proj";
    out[2].per_layer = OP_ONCE;
    return MTP_GLUE_OPS;
}

int mtp_pass_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, step_cost *out, char *err,
                  size_t errlen)
{
    if (s->new_tokens != 1) {
        snprintf(err, errlen, "a module pass drafts one token a sequence (new_tokens %d)", s->new_tokens);
        return -1;
    }
    const model_spec mm = mtp_module_model(m, 1);
    op_cost ops[DECODER_MAX_OPS + MTP_GLUE_OPS];
    int n = decoder_step_ops(&mm, s, ops, DECODER_MAX_OPS);
    if (n < 0) {
        step_shape_check(&mm, s, err, errlen);
        return -1;
    }
    n += mtp_glue_ops(m, s, ops + n);
    return step_cost_of_ops(&mm, g, s, ops, n, out, err, errlen);
}

step_shape mtp_verify_shape(const step_shape *decode, int steps)
{
    step_shape v = *decode;
    v.new_tokens = steps + 1;
    v.logits_last = 0; /* the verifier samples at every drafted position and the bonus one */
    return v;
}

//> mtp_round
mtp_round mtp_round_of(double verify, double pass, int steps, double accept)
{
    mtp_round r;
    r.tokens = spec_expected_tokens(accept, steps);
    r.verify = verify;
    r.pass = pass;
    r.module = steps * pass;
    r.round = verify + r.module;
    r.per_token = r.round / r.tokens;
    return r;
}
//< mtp_round

int mtp_round_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, int steps, double accept,
                   mtp_round *out, char *err, size_t errlen)
{
    if (mtp_check(m, steps, accept, err, errlen) != 0)
        return -1;
    step_shape v = mtp_verify_shape(s, steps);
    step_cost vc, pc;
    if (decoder_step_cost(m, g, &v, &vc, err, errlen) != 0 || mtp_pass_cost(m, g, s, &pc, err, errlen) != 0)
        return -1;
    *out = mtp_round_of(vc.time, pc.time, steps, accept);
    return 0;
}
