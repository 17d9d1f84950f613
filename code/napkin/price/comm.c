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

//> alltoall_time
double alltoall_time(const gpu_spec *g, double bytes, double intra_share, double net_bw)
{
    double intra = bytes * intra_share / g->link_bw;
    double inter = intra_share < 1 ? bytes * (1 - intra_share) / net_bw : 0;
    return g->allreduce_latency + (intra > inter ? intra : inter); /* the two paths run at once */
}
//< alltoall_time

double p2p_time(double bytes, double bandwidth, double latency)
{
    return latency + bytes / bandwidth;
}
