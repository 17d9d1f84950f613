#include "ceilings.h"

#include <string.h>

//> published_ceilings
static const published_ceilings table[] = {
    {"h100", 3.18e12, 2.90e12, 800e12,
     "BabelStream on Azure ND H100 v5 (read-only 3.18 TB/s, copy 2.90 TB/s); bf16 GEMM through PyTorch on an "
     "H100 80GB, 788.72 TFLOP/s at 4096^3 and 797.51 at 8192^3 (torch-performance-test-data issue #79), 800 taken"},
    {"h200", 4.48e12, 4.01e12, 790e12,
     "BabelStream on Azure ND H200 v5 (read-only 4.48 TB/s, copy 4.01 TB/s); the same dense bf16 rate as the "
     "H100 on the datasheet, so the H100's measured ~790 TFLOP/s is assumed until a set measures it"},
};
//< published_ceilings

int published_ceilings_for(const char *gpu_key, published_ceilings *out)
{
    for (size_t i = 0; i < sizeof table / sizeof table[0]; i++)
        if (strcmp(table[i].gpu_key, gpu_key) == 0) {
            *out = table[i];
            return 0;
        }
    return -1;
}

gpu_spec gpu_at_published_ceilings(const gpu_spec *g, const published_ceilings *c)
{
    /* the measured ceilings as shares of the datasheet's */
    double bw_share = c->read_bw / g->mem_bw; /* a share, not a time */
    double flop_share = c->gemm_bf16 / gpu_peak_flops(g, DT_BF16); /* a share, not a time */
    return gpu_derated(g, bw_share, flop_share);
}
