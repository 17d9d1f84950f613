/* Chapter 3's worked example (LLaMA-3-8B on one H100, 32 requests of 512
 * prompt and 256 output tokens) at the kernel rates of NVIDIA's published
 * tables (chapter 2): fixed costs per kernel count most where the batch is
 * one.  Values ch03_cal_*. */
#include "notebook.h"
#include "rate_table.h"
#include "batch_vs_sequential.h"

#include <stdio.h>

int main(void)
{
    model_spec m = model_builtin("llama3-8b");
    rate_model r;
    gpu_spec g = gpu_builtin_calibrated("h100", "published:h100_sxm/trtllm", &r);
    char err[512];
    serve_workload w = {32, 512, 256, 1, precision_uniform(DT_BF16)};
    serve_result seq, one;
    if (serve_sequential(&m, &g, &w, &seq, err, sizeof err) || serve_one_batch(&m, &g, &w, &one, err, sizeof err)) {
        fprintf(stderr, "calibrated: %s\n", err);
        return 1;
    }
    nb_value("ch03_cal_seq_s", "%.0f", seq.total);
    nb_value("ch03_cal_batch_s", "%.1f", one.total);
    nb_value("ch03_cal_ratio", "%.0f", seq.total / one.total);
    return 0;
}
