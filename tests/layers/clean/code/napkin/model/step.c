/* a floor above price asks price/ for its times */
#include "pricing.h"
#include "units.h"
/* the time is bytes / mem_bw, asked of the door: */
double step_seconds(double bytes, double mem_bw) { return price_seconds(bytes, mem_bw); }
double step_share(double read_bw, double mem_bw) { return read_bw / mem_bw; /* a share, not a time */ }
