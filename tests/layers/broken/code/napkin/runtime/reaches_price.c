/* runtime includes core only */
#include "pricing.h"
