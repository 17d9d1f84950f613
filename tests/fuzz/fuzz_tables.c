/* libFuzzer target: the GPU and model table parsers on arbitrary bytes.
 * Whatever the input, a parse either succeeds with rows whose numbers are
 * finite and inside the bounds the parser promises, or fails with a
 * "file:line: ..." message; it never crashes, leaks or reads out of bounds
 * (built with address and undefined-behaviour sanitizers). */
#include "specs.h"
#include "fuzz_text.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static void check_gpus(const gpu_table *t)
{
    for (int i = 0; i < t->n; i++) {
        const gpu_spec *g = &t->rows[i];
        if (!(g->mem_bw > 0 && isfinite(g->mem_bw) && g->mem_bytes > 0 && isfinite(g->mem_bytes) &&
              g->flops[DT_BF16] > 0 && isfinite(g->flops[DT_BF16])))
            abort();
    }
}

static void check_models(const model_table *t)
{
    for (int i = 0; i < t->n; i++) {
        const model_spec *m = &t->rows[i];
        if (m->layers < 1 || m->heads < 1 || m->kv_heads < 1 || m->heads % m->kv_heads != 0 ||
            m->experts_active > m->experts || (long long)m->heads * m->head_dim > 1000000)
            abort();
    }
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    char err[512];
    gpu_table g;
    if (gpu_table_parse(text, "fuzz.tsv", &g, err, sizeof err) == 0)
        check_gpus(&g);
    else if (strncmp(err, "fuzz.tsv:", 9) != 0)
        abort(); /* every message names file:line */
    gpu_table_free(&g);
    model_table m;
    if (model_table_parse(text, "fuzz.tsv", &m, err, sizeof err) == 0)
        check_models(&m);
    else if (strncmp(err, "fuzz.tsv:", 9) != 0)
        abort();
    model_table_free(&m);
    free(text);
    return 0;
}
