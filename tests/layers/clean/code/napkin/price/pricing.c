#include "pricing.h"
double price_seconds(double bytes, double bw) { return bytes / bw; }
