/* Chapter 5's operating point at measured kernel rates, and its TTFT in a
 * busy closed loop: LLaMA-3-70B bf16 on 4 x H100, prompts of 2048 and
 * outputs of 256, 64 in flight, 2.50 per GPU-hour.  Values ch05_cal_*. */
#include "notebook.h"
#include "rate_table.h"
#include "request.h"

#include <stdio.h>

int main(void)
{
    model_spec m = model_builtin("llama3-70b");
    rate_model r;
    gpu_spec roof = gpu_builtin("h100"), cal = gpu_builtin_calibrated("h100", "published:h100_sxm/trtllm", &r);
    char err[512];
    request_setup s = {&m, &roof, precision_uniform(DT_BF16), 4, 2048, 256, 64, 0, 0, memory_policy_default(), 2.5, 1};
    request_estimate a, b;
    if (request_estimate_compute(&s, &a, err, sizeof err) != 0)
        goto fail;
    s.gpu = &cal;
    if (request_estimate_compute(&s, &b, err, sizeof err) != 0)
        goto fail;
    nb_value("ch05_cal_ttft_closed_roof_ms", "%.0f", a.ttft_closed * 1e3);
    nb_value("ch05_cal_ttft_ms", "%.0f", b.ttft * 1e3);
    nb_value("ch05_cal_ttft_closed_ms", "%.0f", b.ttft_closed * 1e3);
    nb_value("ch05_cal_tpot_ms", "%.1f", b.tpot * 1e3);
    nb_value("ch05_cal_tokens", "%.0f", b.tokens_per_s);
    nb_value("ch05_cal_cost_out", "%.2f", b.cost_per_m_output);
    nb_value("ch05_cal_tpot_gap_pct", "%.0f", (b.tpot / a.tpot - 1) * 100);
    return 0;
fail:
    fprintf(stderr, "calibrated: %s\n", err);
    return 1;
}
