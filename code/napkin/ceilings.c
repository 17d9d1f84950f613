#include "ceilings.h"

#include "serve.h"

#include <string.h>

//> published_ceilings
static const published_ceilings table[] = {
    {"h100", 3.18e12, 2.90e12, 800e12,
     "BabelStream on Azure ND H100 v5 (read-only 3.18 TB/s, copy 2.90 TB/s); cuBLAS bf16 GEMM on random data, "
     "790-820 TFLOP/s reported, 800 taken"},
    {"h200", 4.48e12, 4.01e12, 790e12,
     "BabelStream on Azure ND H200 v5 (read-only 4.48 TB/s, copy 4.01 TB/s); cuBLAS bf16 GEMM on random data, "
     "790-820 TFLOP/s reported, the low end taken"},
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
    return gpu_derated(g, c->read_bw / g->mem_bw, c->gemm_bf16 / gpu_peak_flops(g, DT_BF16));
}
