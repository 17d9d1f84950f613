/* Pipeline parallelism: the layers split into pp stages of layers / pp,
 * each stage a tensor-parallel group of its own, activations handed from
 * stage to stage over the links.
 *
 * A stage is costed as the step model of a model with layers / pp layers
 * that also holds one vocabulary matrix: the slowest stage is the last
 * (its layers, the final norm and the logits); the first holds the
 * embedding instead, the same size.  A step of `microbatches` microbatches
 * through pp stages, one after another (GPipe, or one flush of 1F1B):
 *   step = (M + pp - 1) (t_stage + t_p2p),  bubble = (pp - 1) / (M + pp - 1);
 * in steady-state decoding with M >= pp microbatches cycling (each
 * re-enters the first stage as it leaves the last), a cycle in which every
 * sequence advances one token takes M (t_stage + t_p2p), and one token's
 * trip through the pipeline pp (t_stage + t_p2p).  t_p2p: one microbatch's
 * residual stream (tokens x hidden x activation bytes) over one link, with
 * the link's latency, inside one node. */
#ifndef NAPKIN_PIPELINE_H
#define NAPKIN_PIPELINE_H

#include "memory.h"
#include "transformer.h"

#include <stddef.h>

/* The model one stage holds: layers / pp layers and one vocabulary matrix.
 * Returns 0, or -1 with a message when pp does not divide the layers. */
int pipeline_stage_model(const model_spec *m, int pp, model_spec *stage, char *err, size_t errlen);

typedef struct {
    double stage_time;   /* one microbatch through the slowest stage */
    double p2p_time;     /* one microbatch handed to the next stage */
    double p2p_bytes;
    double flush_time;   /* all microbatches through all stages: (M + pp - 1) slots */
    double cycle_time;   /* steady state, M >= pp: M slots, every sequence advanced once */
    double latency;      /* one microbatch through all stages: pp slots less a hand-off */
    double bubble;       /* idle share of a flush, (pp - 1) / (M + pp - 1) */
    step_cost stage;     /* the slowest stage's step cost for one microbatch */
} pipeline_cost;

/* The step of shape s (s->batch sequences in all) split into `microbatches`
 * of equal size (the last may be smaller; the slowest is costed) over pp
 * stages.  pp = 1 is the plain step.  Returns 0, or -1 with a message. */
int pipeline_step_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, int pp, int microbatches,
                       pipeline_cost *out, char *err, size_t errlen);

#endif
