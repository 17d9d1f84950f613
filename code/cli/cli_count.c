#include "cli_count.h"

#include "cli_args.h"

#include <math.h>
#include <string.h>

#include "units.h"

int cli_count_parse(const char *s, double *out)
{
    /* SI suffixes; B is a billion here, never a byte */
    static const double scales[] = {1e3, 1e6, 1e9, 1e9, 1e12, 1e15};
    double v;
    if (parse_suffixed_number(s, "KMBGTP", scales, &v) != 0 || !(v > 0))
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
