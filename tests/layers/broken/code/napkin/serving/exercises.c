/* the library never includes the exercises */
#include "practice.h"
