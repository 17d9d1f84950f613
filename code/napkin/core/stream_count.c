/* STREAM byte counts; see stream_count.h. */
#include "stream_count.h"

#include <math.h>

const char *stream_kind_name(stream_kind k)
{
    static const char *const names[] = {"copy", "read", "write", "triad"};
    return (unsigned)k < STREAM_KIND_COUNT ? names[k] : "?";
}

//> stream_bytes
double stream_bytes(stream_kind k, double n, double elem_bytes)
{
    /* arrays touched per pass: copy reads a and writes b; read reads a;
     * write writes c; triad reads two arrays and writes a third */
    static const double arrays[] = {2, 1, 1, 3};
    return (unsigned)k < STREAM_KIND_COUNT ? arrays[k] * n * elem_bytes : NAN;
}
//< stream_bytes
