#include "cli_count.h"

#include "cli_args.h"

#include <ctype.h>
#include <errno.h>
#include <math.h>
#include <stdlib.h>

int cli_count_parse(const char *s, double *out)
{
    if (!s || !*s || !(isdigit((unsigned char)*s) || *s == '.'))
        return -1;
    errno = 0;
    char *end;
    double v = strtod(s, &end);
    if (errno || end == s)
        return -1;
    double scale = 1.0;
    switch (toupper((unsigned char)*end)) {
    case '\0': break;
    case 'K': scale = 1e3; break;
    case 'M': scale = 1e6; break;
    case 'B': case 'G': scale = 1e9; break;
    case 'T': scale = 1e12; break;
    case 'P': scale = 1e15; break;
    default: return -1;
    }
    if (*end && end[1])
        return -1; /* one suffix letter, nothing after it */
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
