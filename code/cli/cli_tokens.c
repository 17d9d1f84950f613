#include "cli_tokens.h"

#include <ctype.h>
#include <math.h>
#include <string.h>

#include "units.h"

int cli_tokens_parse(const char *s, long long lo, long long max, long long *out)
{
    if (!s || !*s)
        return -1;
    size_t len = strlen(s);
    double scale = 1.0;
    switch (toupper((unsigned char)s[len - 1])) {
    case 'K': scale = 1024.0; break;
    case 'M': scale = 1024.0 * 1024.0; break;
    default: break;
    }
    if (scale != 1.0)
        len--;
    char num[64];
    if (len == 0 || len >= sizeof num)
        return -1;
    memcpy(num, s, len);
    num[len] = '\0';
    double v;
    if (parse_plain_number(num, &v) != 0)
        return -1;
    v *= scale;
    if (!isfinite(v) || v != floor(v) || v < (double)lo || v > (double)max)
        return -1;
    *out = (long long)v;
    return 0;
}
