/* Chapter 2 fill-in kit: replace each TODO body, then `make exercise N=02`.
 * The declarations and their contracts are in 02-measure-it.h; the library
 * headers (gemm_model.h, measure_ref.h, memory.h, specs.h) have what you need. */
#include "02-measure-it.h"

#include <math.h>

double ex02_stream_bandwidth(const char *kernel, double elements, double elem_bytes, double seconds)
{
    (void)kernel, (void)elements, (void)elem_bytes, (void)seconds;
    return NAN; /* TODO: bytes read + written per pass, over the time */
}

double ex02_gemm_time(const char *gpu_key, double m, double n, double k)
{
    (void)gpu_key, (void)m, (void)n, (void)k;
    return NAN; /* TODO: max(FLOP / peak, bytes / bandwidth) */
}

double ex02_knee_batch(const char *gpu_key, double n, double k)
{
    (void)gpu_key, (void)n, (void)k;
    return NAN; /* TODO: solve FLOP / peak = bytes / bandwidth for m */
}

double ex02_median_abs_error(const double *predicted, const double *measured, int n)
{
    (void)predicted, (void)measured, (void)n;
    return NAN; /* TODO */
}

double ex02_dram_fraction(double bytes_read, double bytes_written, double seconds, double ceiling)
{
    (void)bytes_read, (void)bytes_written, (void)seconds, (void)ceiling;
    return NAN; /* TODO */
}

double ex02_attention_floor(const char *model_key, int context, int batch, double read_bandwidth)
{
    (void)model_key, (void)context, (void)batch, (void)read_bandwidth;
    return NAN; /* TODO: KV bytes per token (KV heads, not attention heads) */
}

double ex02_launch_idle_share(int kernels, double per_launch, double gpu_busy)
{
    (void)kernels, (void)per_launch, (void)gpu_busy;
    return NAN; /* TODO */
}
