#include "pipeline.h"

#include "comm.h"
#include "pricing.h"

#include <math.h>
#include <stdio.h>

int pipeline_stage_model(const model_spec *m, int pp, model_spec *stage, char *err, size_t errlen)
{
    if (pp < 1 || m->layers % pp != 0) {
        snprintf(err, errlen, "pipeline degree %d does not divide the %d layers of %s", pp, m->layers, m->key);
        return -1;
    }
    *stage = *m;
    stage->layers = m->layers / pp;
    /* a stage holds its share of each kind of layer (a mixture's dense ones, the windowed ones) */
    if (pp > 1) {
        int dense = (int)lround((double)m->dense_layers / pp), window = (int)lround((double)m->window_layers / pp);
        stage->dense_layers = dense < stage->layers ? dense : stage->layers - 1;
        stage->window_layers = window < stage->layers ? window : stage->layers;
        int linear = (int)lround((double)m->linear_layers / pp);
        stage->linear_layers = m->linear_layers > 0 && linear < stage->layers ? linear : m->linear_layers > 0 ? stage->layers - 1 : 0;
    }
    /* one vocabulary matrix a stage: the embedding on the first, the head on
     * the last (tied, the step model counts the matrix once) */
    if (pp > 1)
        stage->tied_embeddings = 1;
    return 0;
}

//> pipeline_step
int pipeline_step_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, int pp, int microbatches,
                       pipeline_cost *out, char *err, size_t errlen)
{
    if (microbatches < 1 || microbatches > s->batch) {
        snprintf(err, errlen, "microbatches must be from 1 to the batch (%d), got %d", s->batch, microbatches);
        return -1;
    }
    model_spec stage;
    if (pipeline_stage_model(m, pp, &stage, err, errlen) != 0)
        return -1;
    pipeline_cost c = {0};
    step_shape one = *s;
    one.batch = (s->batch + microbatches - 1) / microbatches; /* the largest microbatch */
    if (decoder_step_cost(&stage, g, &one, &c.stage, err, errlen) != 0)
        return -1;
    c.stage_time = c.stage.time;
    if (pp > 1) {
        c.p2p_bytes = (double)one.batch * one.new_tokens * m->hidden * dtype_bytes(s->prec.act);
        if (!gpu_has_links(g)) {
            snprintf(err, errlen, "%s has no link figures in the GPU table for the pipeline's hand-offs", g->key);
            return -1;
        }
        /* over the GPU row's link: its bandwidth and latency */
        op_cost hand_off = {.name = "pipeline_hand_off", .kind = OP_P2P, .comm_bytes = c.p2p_bytes};
        c.p2p_time = price_op(&hand_off, g, 0, 1, NULL);
    }
    double slot = c.stage_time + c.p2p_time;
    c.flush_time = (microbatches + pp - 1) * slot;
    c.cycle_time = (microbatches >= pp ? microbatches : pp) * slot;
    c.latency = pp * slot - c.p2p_time;
    c.bubble = (double)(pp - 1) / (microbatches + pp - 1);
    *out = c;
    return 0;
}
//< pipeline_step
