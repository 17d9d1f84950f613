#include "cli_model_on_device.h"

#include <string.h>

int model_on_device_resolve(const char *cmd, const cli_common *common, const precision_flags *pf,
                            const char *model_key, const device_flags *f, model_on_device *out)
{
    memset(out, 0, sizeof *out);
    double peak;
    int rc;
    if ((rc = cli_precision(cmd, pf->dtype, pf->weights, pf->moe_weights, pf->kv, NULL, NULL, &out->prec)) != 0 ||
        (rc = cli_specs_load(cmd, common, &out->specs)) != 0 ||
        (rc = cli_find_model(cmd, &out->specs, "--model", model_key, &out->model)) != 0 ||
        (rc = device_setup_resolve(cmd, &out->specs, f, out->prec.compute, &out->device)) != 0 ||
        (rc = cli_gpu_peak(cmd, &out->device.timed, out->prec.compute, &peak)) != 0 ||
        (rc = cli_precision_check(cmd, out->model, &out->device.timed, &out->prec, pf->moe_weights)) != 0)
        return rc;
    return 0;
}

void model_on_device_free(model_on_device *s)
{
    cli_specs_free(&s->specs);
    s->model = NULL;
}
