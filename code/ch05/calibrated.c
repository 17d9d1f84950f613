/* Chapter 5's operating point at measured kernel rates, and its TTFT in a
 * busy closed loop: LLaMA-3-70B bf16 on 4 x H100, prompts of 2048 and
 * outputs of 256, 64 in flight, 2.50 per GPU-hour; and the largest
 * concurrency at TP 4 that meets serve --search's limits.  Values ch05_cal_*. */
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
    /* serve --search's answer at TP 4 for the section's limits (0.5 s TTFT,
     * 50 ms TPOT), and with the TPOT limit alone: where the TTFT limit binds */
    const double ttft_max = 0.5, tpot_max = 0.05;
    int cr, cc, tr, tc;
    s.gpu = &roof;
    if ((cr = request_best_concurrency(&s, ttft_max, tpot_max, err, sizeof err)) < 0 ||
        (tr = request_best_concurrency(&s, 0, tpot_max, err, sizeof err)) < 0)
        goto fail;
    s.gpu = &cal;
    if ((cc = request_best_concurrency(&s, ttft_max, tpot_max, err, sizeof err)) < 0 ||
        (tc = request_best_concurrency(&s, 0, tpot_max, err, sizeof err)) < 0)
        goto fail;
    nb_value("ch05_cal_search_ttft_max_ms", "%.0f", ttft_max * 1e3);
    nb_value("ch05_cal_search_c_roof", "%d", cr);
    nb_value("ch05_cal_search_c_cal", "%d", cc);
    nb_value("ch05_cal_search_tpot_only_c_roof", "%d", tr);
    nb_value("ch05_cal_search_tpot_only_c_cal", "%d", tc);
    return 0;
fail:
    fprintf(stderr, "calibrated: %s\n", err);
    return 1;
}
