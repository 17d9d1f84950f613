/* The decode step: the sums over its ops; see step.h. */
#include "step.h"

#include "comm.h"
#include "pricing.h"

#include <stdio.h>

//> step_cost
int decoder_step_cost(const model_spec *m, const gpu_spec *g, const step_shape *s, step_cost *out,
                      char *err, size_t errlen)
{
    if (step_shape_check(m, s, err, errlen) != 0)
        return -1;
    const double peak = gpu_peak_flops(g, s->prec.compute);
    if (peak <= 0) {
        snprintf(err, errlen, "%s has no dense %s rate in the GPU table", g->key, dtype_name(s->prec.compute));
        return -1;
    }
    if (s->tp > 1 && !s->skip_comm && !gpu_has_links(g)) {
        snprintf(err, errlen,
                 "%s has no link bandwidth or all-reduce latency in the GPU table, so a tp %d step cannot "
                 "count its communication (add link_gb_s and allreduce_us, or leave communication out)",
                 g->key, s->tp);
        return -1;
    }
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(m, s, ops, DECODER_MAX_OPS);
    return step_cost_of_ops(m, g, s, ops, n, out, err, errlen);
}

int step_cost_of_ops(const model_spec *m, const gpu_spec *g, const step_shape *s, const op_cost *ops, int n,
                     step_cost *out, char *err, size_t errlen)
{
    const double peak = gpu_peak_flops(g, s->prec.compute);
    if (peak <= 0) {
        snprintf(err, errlen, "%s has no dense %s rate in the GPU table", g->key, dtype_name(s->prec.compute));
        return -1;
    }
    step_cost c = {0};
    for (int i = 0; i < n; i++) {
        double reps = op_repeats(m, &ops[i]);
        c.flop += reps * ops[i].flop;
        c.weight_bytes += reps * ops[i].weight_bytes;
        c.kv_bytes += reps * ops[i].kv_bytes;
        c.act_bytes += reps * ops[i].act_bytes;
        c.comm_bytes += reps * ops[i].comm_bytes;
        /* each op is bounded on its own: a memory-bound op cannot borrow
         * the idle FLOPs of a compute-bound one, nor hide a collective */
        double t = reps * price_op(&ops[i], g, peak, s->tp, NULL);
        c.time += t;
        if (op_is_comm(&ops[i]))
            c.time_comm += t;
    }
    c.bytes = c.weight_bytes + c.kv_bytes + c.act_bytes;
    c.time_memory = memory_time(c.bytes, g->mem_bw);
    c.time_compute = compute_time(c.flop, peak);
    c.intensity = arithmetic_intensity(c.flop, c.bytes);
    c.bound = c.time_compute > c.time_memory ? BOUND_COMPUTE : BOUND_MEMORY;
    c.tokens = (double)s->batch * s->new_tokens;
    *out = c;
    return 0;
}
//< step_cost

//> ridge_batch
double ridge_batch(const gpu_spec *g, precision p)
{
    double peak = gpu_peak_flops(g, p.compute);
    if (peak <= 0)
        return 0;
    /* a multiply-add (2 FLOP) per weight per sequence */
    double flop_per_weight_byte_per_sequence = 2.0 / dtype_bytes(p.weights);
    return ridge_intensity(peak, g->mem_bw) / flop_per_weight_byte_per_sequence;
}
//< ridge_batch

//> compute_bound_batch
int compute_bound_batch(const model_spec *m, const gpu_spec *g, const step_shape *s, int batch_max, int *batch,
                        char *err, size_t errlen)
{
    *batch = 0;
    if (batch_max < 1) {
        snprintf(err, errlen, "the batch to search up to must be at least 1 (got %d)", batch_max);
        return -1;
    }
    step_shape t = *s;
    step_cost c;
    t.batch = batch_max;
    if (decoder_step_cost(m, g, &t, &c, err, errlen) != 0)
        return -1;
    if (c.bound != BOUND_COMPUTE)
        return 0; /* the intensity only rises with the batch: none below either */
    /* invariant: lo is memory-bound (or 0), hi is compute-bound */
    int lo = 0, hi = batch_max;
    while (hi - lo > 1) {
        int mid = lo + (hi - lo) / 2;
        t.batch = mid;
        if (decoder_step_cost(m, g, &t, &c, err, errlen) != 0)
            return -1;
        if (c.bound == BOUND_COMPUTE)
            hi = mid;
        else
            lo = mid;
    }
    *batch = hi;
    return 0;
}
//< compute_bound_batch

//> throughput
double step_tokens_per_second(const step_cost *c)
{
    return c->tokens / c->time; /* aggregate: the whole batch */
}

double step_user_tokens_per_second(const step_cost *c, const step_shape *s)
{
    return s->new_tokens / c->time; /* one sequence's pace */
}
//< throughput
