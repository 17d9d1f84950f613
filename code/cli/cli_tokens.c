#include "cli_tokens.h"

#include <math.h>

#include "units.h"

int cli_tokens_parse(const char *s, long long lo, long long max, long long *out)
{
    /* k = 1024 tokens, as context lengths are counted */
    static const double scales[] = {1024.0, 1024.0 * 1024.0};
    double v;
    if (parse_suffixed_number(s, "KM", scales, &v) != 0 || v != floor(v) || v < (double)lo || v > (double)max)
        return -1;
    *out = (long long)v;
    return 0;
}
