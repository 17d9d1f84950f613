#include "cli_lookup.h"

#include "hf_config.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#define CHOICES_MAX 2048

static int load_gpus(const char *cmd, const char *path, gpu_table *out)
{
    char err[512];
    if (gpu_table_load(path, out, err, sizeof err) != 0)
        return cli_fail(cmd, EXIT_USAGE, "GPU table: %s", err);
    if (out->n == 0)
        return cli_fail(cmd, EXIT_USAGE, "GPU table %s has no rows", path);
    return 0;
}

static int load_models(const char *cmd, const char *path, model_table *out)
{
    char err[512];
    if (model_table_load(path, out, err, sizeof err) != 0)
        return cli_fail(cmd, EXIT_USAGE, "model table: %s", err);
    if (out->n == 0)
        return cli_fail(cmd, EXIT_USAGE, "model table %s has no rows", path);
    return 0;
}

/* The model of a config.json, added to the table under CLI_CONFIG_MODEL_KEY
 * (replacing a row of that key, if the reader's table has one). */
static int add_config_model(const char *cmd, const char *path, model_table *t)
{
    char err[1024];
    model_spec m;
    if (model_from_hf_config_file(path, CLI_CONFIG_MODEL_KEY, &m, err, sizeof err) != 0)
        return cli_fail(cmd, EXIT_USAGE, "--model-config: %s", err);
    for (int i = 0; i < t->n; i++)
        if (strcmp(t->rows[i].key, CLI_CONFIG_MODEL_KEY) == 0) {
            t->rows[i] = m;
            return 0;
        }
    model_spec *rows = realloc(t->rows, (size_t)(t->n + 1) * sizeof *rows);
    if (!rows)
        return cli_fail(cmd, 1, "out of memory");
    t->rows = rows;
    t->rows[t->n++] = m;
    return 0;
}

int cli_specs_load(const char *cmd, const cli_common *c, cli_specs *out)
{
    memset(out, 0, sizeof *out);
    char path[4096], err[512];
    int rc = 0;
    if (c->gpu_table)
        rc = load_gpus(cmd, c->gpu_table, &out->gpus);
    else if (c->specs_dir) {
        if (snprintf(path, sizeof path, "%s/gpus.tsv", c->specs_dir) >= (int)sizeof path)
            return cli_fail(cmd, EXIT_USAGE, "--specs: path too long");
        rc = load_gpus(cmd, path, &out->gpus);
    } else if (gpu_table_builtin(&out->gpus, err, sizeof err) != 0)
        rc = cli_fail(cmd, 1, "built-in GPU table: %s", err);
    if (rc)
        return rc;

    if (c->model_table)
        rc = load_models(cmd, c->model_table, &out->models);
    else if (c->specs_dir) {
        if (snprintf(path, sizeof path, "%s/models.tsv", c->specs_dir) >= (int)sizeof path)
            rc = cli_fail(cmd, EXIT_USAGE, "--specs: path too long");
        else
            rc = load_models(cmd, path, &out->models);
    } else if (model_table_builtin(&out->models, err, sizeof err) != 0)
        rc = cli_fail(cmd, 1, "built-in model table: %s", err);
    if (!rc && c->model_config)
        rc = add_config_model(cmd, c->model_config, &out->models);
    if (rc) {
        gpu_table_free(&out->gpus);
        model_table_free(&out->models);
    }
    return rc;
}

void cli_specs_free(cli_specs *s)
{
    gpu_table_free(&s->gpus);
    model_table_free(&s->models);
}

int cli_find_key(const char *cmd, const char *flag, const char *what, const char *key, const char *first_key,
                 size_t stride, int n, int *index)
{
    *index = spec_key_index(first_key, stride, n, key);
    if (*index >= 0)
        return 0;
    char keys[CHOICES_MAX];
    return cli_fail(cmd, EXIT_USAGE, "unknown %s '%s' for %s (choices: %s)", what, key, flag,
                    spec_keys_join(first_key, stride, n, keys, sizeof keys));
}

int cli_find_gpu(const char *cmd, const cli_specs *s, const char *flag, const char *key, const gpu_spec **out)
{
    int i, rc = cli_find_key(cmd, flag, "GPU", key, SPEC_ROWS(&s->gpus), &i);
    *out = rc ? NULL : &s->gpus.rows[i];
    return rc;
}

int cli_find_model(const char *cmd, const cli_specs *s, const char *flag, const char *key,
                   const model_spec **out)
{
    int i, rc = cli_find_key(cmd, flag, "model", key, SPEC_ROWS(&s->models), &i);
    *out = rc ? NULL : &s->models.rows[i];
    return rc;
}

int cli_dtype(const char *cmd, const char *flag, const char *name, dtype *out)
{
    if (dtype_parse(name, out) == 0)
        return 0;
    if (strcasecmp(name, "fp4") == 0) /* a bare fp4 has no scales: the block formats carry them */
        return cli_fail(cmd, EXIT_USAGE, "%s fp4: 4-bit floats are weight formats with their block scales "
                                         "(--weights nvfp4 or mxfp4)", flag);
    return cli_fail(cmd, EXIT_USAGE, "unknown dtype '%s' for %s (choices: %s)", name, flag, dtype_choices());
}

/* The weight format `flag` names into *format; legacy_dtype_ok: a plain
 * dtype is taken too, as WF_AS_DTYPE with out->weights set to it (the
 * weights at its own bytes, as --weights has always taken them).  0, or
 * EXIT_USAGE after the message. */
static int weights_flag(const char *cmd, const char *flag, const char *name, int legacy_dtype_ok, precision *out,
                        weight_format *format)
{
    if (weight_format_parse(name, format) == 0)
        return 0;
    dtype d;
    if (legacy_dtype_ok && dtype_parse(name, &d) == 0) {
        *format = WF_AS_DTYPE;
        out->weights = d;
        return 0;
    }
    return cli_fail(cmd, EXIT_USAGE, "unknown weight format '%s' for %s (choices: %s%s%s)", name, flag,
                    weight_format_choices(), legacy_dtype_ok ? "; or a dtype: " : "",
                    legacy_dtype_ok ? dtype_choices() : "");
}

int cli_precision(const char *cmd, const char *all, const char *weights, const char *moe_weights, const char *kv,
                  const char *act, const char *compute, precision *out)
{
    dtype d = DT_BF16;
    if (all && cli_dtype(cmd, "--dtype", all, &d))
        return EXIT_USAGE;
    *out = precision_uniform(d);
    if (weights) { /* every weight, the experts too unless --moe-weights; a format states its math */
        weight_format f;
        if (weights_flag(cmd, "--weights", weights, 1, out, &f))
            return EXIT_USAGE;
        if (f != WF_AS_DTYPE) {
            out->weights = weight_format_values(f);
            out->compute = weight_format_step_compute(f, out->compute);
        }
        out->weights_format = out->moe_format = f;
    }
    if (moe_weights && weights_flag(cmd, "--moe-weights", moe_weights, 0, out, &out->moe_format))
        return EXIT_USAGE;
    if (kv && cli_dtype(cmd, "--kv", kv, &out->kv))
        return EXIT_USAGE;
    if (act && cli_dtype(cmd, "--act", act, &out->act))
        return EXIT_USAGE;
    if (compute && cli_dtype(cmd, "--compute", compute, &out->compute))
        return EXIT_USAGE;
    return 0;
}

int cli_precision_check(const char *cmd, const model_spec *m, const gpu_spec *g, const precision *p,
                        const char *moe_weights)
{
    if (moe_weights && m->experts <= 1)
        return cli_fail(cmd, EXIT_USAGE, "--moe-weights %s: %s is dense (no routed experts)", moe_weights, m->key);
    /* a format's math needs the GPU's tensor cores for it: nvfp4's fp4 only on a row with an fp4 rate,
     * while the weight-only formats (int4_wo, mxfp4) run in bf16 anywhere */
    const weight_format w = p->weights_format, f = p->moe_format;
    if (w != WF_AS_DTYPE && !(gpu_peak_flops(g, weight_format_math(w)) > 0))
        return cli_fail(cmd, EXIT_USAGE, "--weights %s: %s has no %s tensor-core rate for the GEMMs' math%s",
                        weight_format_name(w), g->key, dtype_name(weight_format_math(w)),
                        weight_format_math(w) == DT_FP4 ? " (mxfp4 is weight-only, into bf16)" : "");
    if (m->experts > 1 && f != WF_AS_DTYPE && !(gpu_peak_flops(g, weight_format_math(f)) > 0))
        return cli_fail(cmd, EXIT_USAGE, "--%s %s: %s has no %s tensor-core rate for the experts' math%s",
                        moe_weights ? "moe-weights" : "weights", weight_format_name(f), g->key,
                        dtype_name(weight_format_math(f)),
                        weight_format_math(f) == DT_FP4 ? " (mxfp4 is weight-only, into bf16)" : "");
    return 0;
}

int cli_gpu_peak(const char *cmd, const gpu_spec *g, dtype d, double *peak)
{
    *peak = gpu_peak_flops(g, d);
    if (*peak > 0)
        return 0;
    char have[256] = "";
    size_t used = 0;
    for (int i = 0; i < DT_COUNT; i++)
        if (gpu_peak_flops(g, (dtype)i) > 0 && used < sizeof have)
            used += (size_t)snprintf(have + used, sizeof have - used, "%s%s", used ? ", " : "",
                                     dtype_name((dtype)i));
    return cli_fail(cmd, EXIT_USAGE, "%s has no %s tensor-core rate in the GPU table (it has: %s)", g->key,
                    dtype_name(d), used ? have : "none");
}

int cli_dtype_peak(const char *cmd, const gpu_spec *g, const char *flag, const char *name, dtype *d, double *peak)
{
    int rc = cli_dtype(cmd, flag, name, d);
    return rc ? rc : cli_gpu_peak(cmd, g, *d, peak);
}

memory_policy cli_policy(double usable, int activation_tokens, int sampled_tokens, double capacity)
{
    memory_policy p = memory_policy_default();
    if (!isnan(usable))
        p.usable_fraction = usable;
    if (activation_tokens >= 0)
        p.activation_tokens = activation_tokens;
    if (sampled_tokens >= 0)
        p.sampled_tokens = sampled_tokens;
    if (capacity > 0)
        p.capacity = capacity;
    return p;
}

int cli_hbm_check(const char *cmd, double hbm)
{
    if (hbm > 0 && !(hbm >= 1e6 && hbm <= 1e15))
        return cli_fail(cmd, EXIT_USAGE, "--hbm: %g bytes is not a GPU's memory (give bytes, e.g. 85.5e9)", hbm);
    return 0;
}
