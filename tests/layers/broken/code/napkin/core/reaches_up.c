/* core includes its own floor only */
#include "units.h"
#include "step.h"
#include "nowhere.h"
#include <math.h>
