/* A device below its datasheet; see gpu_derated in specs.h. */
#include "specs.h"

gpu_spec gpu_derated(const gpu_spec *g, double bandwidth_fraction, double flops_fraction)
{
    gpu_spec d = *g;
    d.mem_bw *= bandwidth_fraction;
    for (int i = 0; i < DT_COUNT; i++)
        d.flops[i] *= flops_fraction;
    return d;
}
