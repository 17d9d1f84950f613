#include "comm.h"

#include <math.h>

int gpu_has_links(const gpu_spec *g)
{
    return g->link_bw > 0 && g->allreduce_latency > 0;
}

//> allreduce
double allreduce_time(const gpu_spec *g, int tp, double bytes)
{
    if (tp <= 1)
        return 0;
    if (!gpu_has_links(g))
        return NAN;
    /* reduce-scatter then all-gather: each GPU moves 2(tp-1)/tp of the message */
    return g->allreduce_latency + 2.0 * (tp - 1) / tp * bytes / g->link_bw;
}
//< allreduce

double allgather_time(const gpu_spec *g, int tp, double bytes)
{
    if (tp <= 1)
        return 0;
    if (!gpu_has_links(g))
        return NAN;
    return g->allreduce_latency + (double)(tp - 1) / tp * bytes / g->link_bw;
}
