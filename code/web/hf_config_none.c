/* The page's module has no JSON library: --model-config (a config.json on
 * the reader's disk) is a command-line feature.  These stand in for
 * code/napkin/specs/hf_config.c, which the WebAssembly build leaves out. */
#include "hf_config.h"

#include <stdio.h>

int model_from_hf_config(const char *json_text, const char *origin, const char *key, model_spec *out, char *err,
                         size_t errlen)
{
    (void)json_text, (void)key, (void)out;
    snprintf(err, errlen, "%s: reading a config.json is for the napkin command, not the page's calculator",
             origin ? origin : "config.json");
    return -1;
}

int model_from_hf_config_file(const char *path, const char *key, model_spec *out, char *err, size_t errlen)
{
    return model_from_hf_config(NULL, path, key, out, err, errlen);
}
