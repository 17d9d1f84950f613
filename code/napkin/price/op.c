#include "op.h"

op_cost op_lump(const char *name, rate_class c, double flop, double weight_bytes, double kv_bytes,
                double act_bytes)
{
    op_cost op = {.name = name,
                  .kind = OP_PROJECTION,
                  .rate = c,
                  .flop = flop,
                  .weight_bytes = weight_bytes,
                  .kv_bytes = kv_bytes,
                  .act_bytes = act_bytes,
                  .fixed_share = 0};
    return op;
}

double op_bytes(const op_cost *op)
{
    return op->weight_bytes + op->kv_bytes + op->act_bytes;
}

int op_is_comm(const op_cost *op)
{
    return op->kind == OP_ALLREDUCE || op->kind == OP_ALLGATHER || op->kind == OP_ALLTOALL || op->kind == OP_P2P;
}

dtype op_math_dtype(op_math m)
{
    return m == OP_MATH_FP4 ? DT_FP4 : m == OP_MATH_FP8 ? DT_FP8 : DT_BF16;
}
