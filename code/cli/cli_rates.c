#include "cli_rates.h"

#include "cli_args.h"

#include <stdio.h>
#include <string.h>

int cli_is_published(const char *s)
{
    return s && strncmp(s, CLI_PUBLISHED_PREFIX, strlen(CLI_PUBLISHED_PREFIX)) == 0;
}

int cli_rates_resolve(const char *cmd, const char *gpu_key, const char *name, int roofline, cli_rates *out)
{
    memset(out, 0, sizeof *out);
    if (roofline) {
        if (name)
            return cli_fail(cmd, EXIT_USAGE, "give --calibrate or --roofline, not both");
        return 0;
    }
    char err[1200];
    if (name) {
        if (rate_model_builtin(name, &out->model, err, sizeof err) != 0)
            return cli_fail(cmd, EXIT_USAGE, "--calibrate: %s", err);
        out->asked = 1;
    } else if (rate_model_default(gpu_key, &out->model) != 0) {
        return 0; /* no published set for this GPU: the roofline alone */
    }
    out->have = 1;
    return 0;
}

void cli_rates_report(report *r, const cli_rates *c, const char *gpu_key)
{
    if (c->have) {
        report_text(r, "calibration", "calibrated answers use", c->model.name);
        if (c->model.gpu[0] && strcmp(c->model.gpu, gpu_key) != 0)
            report_note(r, "the calibration %s was fitted on %s, not %s: its achieved shares are applied to %s's "
                           "ceilings", c->model.name, c->model.gpu, gpu_key, gpu_key);
    } else {
        report_text(r, "calibration", "calibrated answers use", "none (the roofline alone)");
    }
}
