#include "cli_count.h"

#include "cli_args.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "units.h"

int cli_count_parse(const char *s, double *out)
{
    if (!s || !*s)
        return -1;
    /* the number in the one syntax of flags and tables (units.h), then at
     * most one suffix letter */
    char num[64];
    size_t len = strlen(s);
    double scale = 1.0;
    switch (toupper((unsigned char)s[len - 1])) {
    case 'K': scale = 1e3; break;
    case 'M': scale = 1e6; break;
    case 'B': case 'G': scale = 1e9; break;
    case 'T': scale = 1e12; break;
    case 'P': scale = 1e15; break;
    default: break;
    }
    if (scale != 1.0)
        len--;
    if (len == 0 || len >= sizeof num)
        return -1;
    memcpy(num, s, len);
    num[len] = '\0';
    double v;
    if (parse_plain_number(num, &v) != 0)
        return -1;
    v *= scale;
    if (!isfinite(v) || !(v > 0))
        return -1;
    *out = v;
    return 0;
}

int cli_count_flag(const char *cmd, const char *flag, const char *s, double *out)
{
    if (cli_count_parse(s, out) == 0)
        return 0;
    return cli_fail(cmd, EXIT_USAGE, "%s: '%s' is not a positive count (examples: 1T, 300B, 7e9; suffixes K, M, B, T)",
                    flag, s ? s : "");
}
