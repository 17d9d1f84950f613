/* The first steps of a command that prices one model on one device, in one
 * order: the precision of --dtype and its overrides, the spec tables, the model (--model), the
 * device (cli_device.h), and a check that the device has a rate for the
 * compute dtype.  prefill, serve and ep begin this way. */
#ifndef NAPKIN_CLI_MODEL_ON_DEVICE_H
#define NAPKIN_CLI_MODEL_ON_DEVICE_H

#include "cli_device.h"
#include "cli_precision.h"

typedef struct {
    precision prec;
    cli_specs specs;
    const model_spec *model; /* a row of specs.models (heap memory the tables own) */
    device_setup device;
} model_on_device;

/* Resolve; pf the precision flags (cli_precision.h), checked against the
 * model and the device (cli_precision_check).  Returns 0, or the exit
 * status after the message.  Either way model_on_device_free releases what
 * was loaded. */
int model_on_device_resolve(const char *cmd, const cli_common *common, const precision_flags *pf,
                            const char *model_key, const device_flags *f, model_on_device *out);
void model_on_device_free(model_on_device *s);

#endif
