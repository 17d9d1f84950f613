#include "roofline.h"

#include <math.h>

double arithmetic_intensity(double flop, double bytes)
{
    return bytes > 0 ? flop / bytes : INFINITY;
}

//> ridge
double ridge_intensity(double peak_flops, double bandwidth)
{
    return peak_flops / bandwidth; /* FLOP per byte where both limits meet */
}
//< ridge

double attainable_flops(double intensity, double peak_flops, double bandwidth)
{
    return fmin(peak_flops, intensity * bandwidth);
}

//> roofline_time
double compute_time(double flop, double flop_rate)
{
    return flop / flop_rate;
}

double memory_time(double bytes, double bandwidth)
{
    return bytes / bandwidth;
}

double roofline_time(double flop, double bytes, double peak_flops, double bandwidth, bound_kind *bound)
{
    double t_compute = compute_time(flop, peak_flops);
    double t_memory = memory_time(bytes, bandwidth);
    if (bound)
        *bound = t_compute > t_memory ? BOUND_COMPUTE : BOUND_MEMORY;
    return fmax(t_compute, t_memory);
}
//< roofline_time

const char *bound_name(bound_kind b)
{
    return b == BOUND_COMPUTE ? "compute" : "memory";
}
