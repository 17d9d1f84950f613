/* the door */
#include "units.h"
double price_seconds(double bytes, double bw);
