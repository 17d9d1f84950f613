/* libFuzzer target: a model table the fuzzer writes, then the cost model and
 * the fit check on every row, at shapes drawn from the input's last bytes.
 * For any row the parser accepts and any shape step_shape_check accepts, the
 * step's FLOP, bytes and time are finite and positive, and memory_fit
 * answers with finite numbers: no overflow, no inf, no nan. */
#include "memory.h"
#include "specs.h"
#include "transformer.h"

#include <math.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

static int finite_pos(double x)
{
    return isfinite(x) && x > 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    if (size < 4)
        return 0;
    /* the last four bytes pick the shape; the rest is the table */
    const uint8_t *k = data + size - 4;
    int batch = 1 + (k[0] | (k[1] << 8)) % 4096;
    int context = (k[2] << 9) | (k[3] << 1);
    int tps[] = {1, 2, 4, 8};
    int tp = tps[k[3] % 4];
    char *text = malloc(size - 3);
    if (!text)
        return 0;
    memcpy(text, data, size - 4);
    text[size - 4] = '\0';
    model_table t;
    char err[512];
    if (model_table_parse(text, "fuzz.tsv", &t, err, sizeof err) == 0) {
        gpu_spec g = gpu_builtin("h100");
        for (int i = 0; i < t.n; i++) {
            const model_spec *m = &t.rows[i];
            step_shape s = decode_shape(batch, context, tp, precision_uniform(DT_BF16));
            step_cost c;
            if (decoder_step_cost(m, &g, &s, &c, err, sizeof err) == 0) {
                if (!(finite_pos(c.flop) && finite_pos(c.bytes) && finite_pos(c.time) && c.time_comm >= 0 &&
                      isfinite(c.time_comm) && finite_pos(c.intensity)))
                    abort();
                resident_model rm = {m, s.prec, tp};
                fit_check f;
                if (memory_fit(&g, memory_policy_default(), &rm, 1, 0, batch, context, &f, err, sizeof err) != 0)
                    abort(); /* the shape was accepted above */
                if (!(isfinite(f.weights) && isfinite(f.kv_budget) && isfinite(f.kv_needed) && f.max_batch >= 0))
                    abort();
            }
        }
    }
    model_table_free(&t);
    free(text);
    return 0;
}
