/* libFuzzer target: the config.json importer (hf_config.c) on arbitrary
 * bytes, seeded with the committed fixtures (the JSON files of tests/configs, linked
 * from tests/fuzz/seeds/fuzz_hf_config/).  Whatever the input, a config
 * either gives a model the table's own checks accept, whose parameter
 * count, KV bytes and decode step are finite and positive, or fails with a
 * message that names the file; it never crashes, leaks or reads out of
 * bounds (built with address and undefined-behaviour sanitizers). */
#include "hf_config.h"
#include "memory.h"
#include "transformer.h"
#include "fuzz_text.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int finite_pos(double x)
{
    return isfinite(x) && x > 0;
}

static void check_model(const model_spec *m)
{
    if (m->layers < 1 || m->heads < 1 || m->kv_heads < 1 || m->heads % m->kv_heads != 0 ||
        m->experts_active > m->experts || m->experts_active < 1 || m->dense_layers >= m->layers ||
        m->window_layers > m->layers || m->mtp_layers < 0)
        abort();
    param_count p = model_params(m);
    if (!finite_pos(p.total) || !finite_pos(p.active) || p.active > p.total || !(p.mtp >= 0) || !isfinite(p.mtp))
        abort();
    if (!finite_pos(kv_bytes_per_token(m, DT_BF16)))
        abort();
    step_shape s = decode_shape(4, 1024, 1, precision_uniform(DT_BF16));
    op_cost ops[DECODER_MAX_OPS];
    int n = decoder_step_ops(m, &s, ops, DECODER_MAX_OPS);
    if (n < 1)
        abort();
    for (int i = 0; i < n; i++)
        if (!(ops[i].flop >= 0) || !isfinite(ops[i].flop) || !(op_bytes(&ops[i]) >= 0) || !isfinite(op_bytes(&ops[i])))
            abort();
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    char err[1024];
    model_spec m;
    if (model_from_hf_config(text, "fuzz/config.json", "fuzzed", &m, err, sizeof err) == 0)
        check_model(&m);
    else if (strncmp(err, "fuzz/config.json", 16) != 0)
        abort(); /* every message names the file */
    free(text);
    return 0;
}
