#include "pricing.h"
#include "pricing_internal.h"
double price_part(double bytes, double bw) { return bytes / bw; }
double price_seconds(double bytes) { return price_part(bytes, 3.35e12); }
