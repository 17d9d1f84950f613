/* divisions outside price/ */
#include "pricing.h"
#include "pricing_internal.h"
double t(double bytes, double mem_bw) { return bytes / mem_bw; }
double u(const gpu *g, double b) { return b / g->link_bw; }
/* in a comment: bytes / mem_bw is not code */
const char *s = "bytes / peak";
double share(double read_bw, double mem_bw) { return read_bw / mem_bw; /* a share, not a time */ }
double v(double flop, double peak) { return flop / (peak * 2); }
double w(double read_bw, double mem_bw) { return read_bw / mem_bw; /* a share */ }
double x(const gpu *g, double flop) { return flop / gpu_peak_flops(g, 0); }
