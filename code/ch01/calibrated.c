/* Chapter 1's chain at measured kernel rates: LLaMA-3-70B on 4 x H100 at
 * batch 64 and a 4k context, on the roofline and at the published
 * TensorRT-LLM calibration (chapter 2).  Values ch01_cal_*. */
#include "notebook.h"
#include "rate_table.h"
#include "transformer.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    model_spec m = model_builtin("llama3-70b");
    rate_model r;
    gpu_spec roof = gpu_builtin("h100"), cal = gpu_builtin_calibrated("h100", "published:h100_sxm/trtllm", &r);
    char err[512];
    step_shape s = decode_shape(64, 4096, 4, precision_uniform(DT_BF16));
    step_cost a, b;
    if (decoder_step_cost(&m, &roof, &s, &a, err, sizeof err) || decoder_step_cost(&m, &cal, &s, &b, err, sizeof err)) {
        fprintf(stderr, "calibrated: %s\n", err);
        return 1;
    }
    nb_value("ch01_cal_step_roof_ms", "%.1f", a.time * 1e3);
    nb_value("ch01_cal_step_ms", "%.1f", b.time * 1e3);
    nb_value("ch01_cal_step_gap_pct", "%.0f", (b.time / a.time - 1) * 100);
    nb_value("ch01_cal_user_tps", "%.1f", step_user_tokens_per_second(&b, &s));
    nb_value("ch01_cal_total_tps", "%.0f", step_tokens_per_second(&b));
    nb_value("ch01_cal_comm_ms", "%.2f", b.time_comm * 1e3);
    nb_value("ch01_cal_comm_roof_ms", "%.2f", a.time_comm * 1e3);
    return 0;
}
