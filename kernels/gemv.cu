// Our own bf16 GEMV / skinny GEMM for batch 1 ... 8, Y[B x N] = X[B x K] W^T
// (W is N x K, row-major; fp32 accumulation; bf16 output), in numbered
// versions, validated against the CPU reference and timed beside cuBLAS at the
// same shapes.  At these batch sizes the weight read is the whole cost, so
// the yardstick is bytes over time against the measured read bandwidth.
//
//   v1  one warp per output row, scalar bf16 loads
//   v2  one warp per row, 16-byte vector loads (8 bf16 per lane per step)
//   v3  several rows per warp (4), 16-byte loads: more loads in flight and
//       each X chunk reused for 4 rows
//
//   gemv [--out DIR] [--bandwidth DIR/bandwidth.tsv] [--quick]   writes DIR/gemv.tsv
#include "common.cuh"

#include <math.h>

#define WARPS_PER_BLOCK 8

__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

// v1: lane l reads W[row][l], W[row][l+32], ...
template <int B> __global__ void gemv_v1(const bf16 *__restrict__ x, const bf16 *__restrict__ w, bf16 *__restrict__ y,
                                         int n, int k)
{
    int row = blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / 32, lane = threadIdx.x % 32;
    if (row >= n)
        return;
    float acc[B] = {0};
    const bf16 *wr = w + (size_t)row * k;
    for (int p = lane; p < k; p += 32) {
        float wv = __bfloat162float(wr[p]);
#pragma unroll
        for (int b = 0; b < B; b++)
            acc[b] += wv * __bfloat162float(x[(size_t)b * k + p]);
    }
#pragma unroll
    for (int b = 0; b < B; b++) {
        float s = warp_sum(acc[b]);
        if (lane == 0)
            y[(size_t)b * n + row] = __float2bfloat16_rn(s);
    }
}

// 8 bf16 in a 16-byte word, unpacked to floats.
__device__ __forceinline__ void unpack8(const uint4 &u, float f[8])
{
    const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&u);
#pragma unroll
    for (int i = 0; i < 4; i++) {
        float2 t = __bfloat1622float2(h[i]);
        f[2 * i] = t.x;
        f[2 * i + 1] = t.y;
    }
}

// v2 (ROWS = 1) and v3 (ROWS = 4): a warp owns ROWS consecutive rows; lane l
// reads 16 bytes at column 8*(l + 32 i) of each.  Needs k % 8 == 0.
template <int B, int ROWS>
__global__ void gemv_vec(const bf16 *__restrict__ x, const bf16 *__restrict__ w, bf16 *__restrict__ y, int n, int k)
{
    int row0 = (blockIdx.x * WARPS_PER_BLOCK + threadIdx.x / 32) * ROWS, lane = threadIdx.x % 32;
    if (row0 >= n)
        return;
    float acc[ROWS][B] = {};
    int k8 = k / 8;
    for (int c = lane; c < k8; c += 32) {
        uint4 wv[ROWS];
#pragma unroll
        for (int r = 0; r < ROWS; r++)
            wv[r] = row0 + r < n ? __ldg(reinterpret_cast<const uint4 *>(w + (size_t)(row0 + r) * k) + c)
                                 : make_uint4(0, 0, 0, 0);
#pragma unroll
        for (int b = 0; b < B; b++) {
            float xf[8];
            unpack8(__ldg(reinterpret_cast<const uint4 *>(x + (size_t)b * k) + c), xf);
#pragma unroll
            for (int r = 0; r < ROWS; r++) {
                float wf[8];
                unpack8(wv[r], wf);
#pragma unroll
                for (int i = 0; i < 8; i++)
                    acc[r][b] += wf[i] * xf[i];
            }
        }
    }
#pragma unroll
    for (int r = 0; r < ROWS; r++)
#pragma unroll
        for (int b = 0; b < B; b++) {
            float s = warp_sum(acc[r][b]);
            if (lane == 0 && row0 + r < n)
                y[(size_t)b * n + row0 + r] = __float2bfloat16_rn(s);
        }
}

template <int B> static void launch_version(int v, const bf16 *x, const bf16 *w, bf16 *y, int n, int k)
{
    int rows_per_warp = v == 3 ? 4 : 1;
    int rows_per_block = WARPS_PER_BLOCK * rows_per_warp;
    dim3 grid((n + rows_per_block - 1) / rows_per_block), block(32 * WARPS_PER_BLOCK);
    if (v == 1)
        gemv_v1<B><<<grid, block>>>(x, w, y, n, k);
    else if (v == 2)
        gemv_vec<B, 1><<<grid, block>>>(x, w, y, n, k);
    else
        gemv_vec<B, 4><<<grid, block>>>(x, w, y, n, k);
    LAUNCH_CHECK();
}

static void gemv(int v, int batch, const bf16 *x, const bf16 *w, bf16 *y, int n, int k)
{
    switch (batch) {
    case 1: launch_version<1>(v, x, w, y, n, k); break;
    case 2: launch_version<2>(v, x, w, y, n, k); break;
    case 3: launch_version<3>(v, x, w, y, n, k); break;
    case 4: launch_version<4>(v, x, w, y, n, k); break;
    case 5: launch_version<5>(v, x, w, y, n, k); break;
    case 6: launch_version<6>(v, x, w, y, n, k); break;
    case 7: launch_version<7>(v, x, w, y, n, k); break;
    default: launch_version<8>(v, x, w, y, n, k); break;
    }
}

static const uint64_t SEED_X = 21, SEED_W = 22;

// Rows [r0, r0 + 64) of every batch row against the CPU reference.
static int validate(const char *who, const bf16 *y, int batch, int n, int k, int r0)
{
    char what[96];
    snprintf(what, sizeof what, "gemv: %s batch %d %dx%d", who, batch, n, k);
    return validate_bf16_gemm_block(what, y, batch, n, k, r0, n - r0 < 64 ? n - r0 : 64, SEED_X, SEED_W);
}

int main(int argc, char **argv)
{
    run_args args = parse_args(argc, argv);
    device_gate();
    device_facts dev = device_facts_get();
    model_spec m70 = model_builtin("llama3-70b");
    struct shape {
        const char *name;
        int n, k;
    } shapes[] = {
        {"square8192", 8192, 8192},
        {"qkv_tp1", (m70.heads + 2 * m70.kv_heads) * m70.head_dim, m70.hidden},
        {"gate_up_tp1", 2 * m70.ffn, m70.hidden},
        {"down_tp1", m70.hidden, m70.ffn},
        {"gate_up_tp8", 2 * m70.ffn / 8, m70.hidden},
        {"down_tp8", m70.hidden, m70.ffn / 8},
    };
    int nshapes = args.quick ? 1 : (int)(sizeof shapes / sizeof shapes[0]);
    size_t max_w = 0, max_k = 0, max_n = 0;
    for (int s = 0; s < nshapes; s++) {
        max_w = std::max(max_w, (size_t)shapes[s].n * shapes[s].k);
        max_k = std::max(max_k, (size_t)shapes[s].k);
        max_n = std::max(max_n, (size_t)shapes[s].n);
    }
    bf16 *x, *w, *y;
    CUDA_CHECK(cudaMalloc(&x, 8 * max_k * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&w, max_w * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&y, 8 * max_n * sizeof(bf16)));
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    l2_flusher fl;
    fl.init(dev);
    const char *bw_source;
    double bw = read_ceiling(args, dev, &bw_source);
    int reps = args.quick ? 3 : 20, warmup = 3;
    rng_state rng = rng_make(7);

    FILE *out = tsv_open(args, dev, "gemv.tsv", "gemv");
    char buf[128];
    snprintf(buf, sizeof buf, "%d (median reported, %d warm-up runs, L2 flushed before each)", reps, warmup);
    provenance_line(out, "repeats", buf);
    snprintf(buf, sizeof buf, "%.6e", bw);
    provenance_line(out, "bandwidth_measured", buf);
    provenance_line(out, "bandwidth_source", bw_source);
    fprintf(out, "shape\tversion\tbatch\tn\tk\ttime_s\tgb_s\tpct_of_read\tpct_datasheet\n");
    double best_b1 = 0, cublas_b1 = 0, best_b1_gbs = 0;
    for (int s = 0; s < nshapes; s++) {
        int n = shapes[s].n, k = shapes[s].k;
        if (k % 8) {
            fprintf(stderr, "gemv: K = %d is not a multiple of 8 (16-byte loads)\n", k);
            return 1;
        }
        fill_uniform_bf16(x, 8 * (size_t)k, SEED_X, -1, 1);
        fill_uniform_bf16(w, (size_t)n * k, SEED_W, -1, 1);
        for (int batch = 1; batch <= 8; batch++) {
            for (int v = 0; v <= 3; v++) { // 0 = cuBLAS
                auto run = [&]() {
                    if (v == 0)
                        cublas_gemm_bf16(h, batch, n, k, x, w, y);
                    else
                        gemv(v, batch, x, w, y, n, k);
                };
                CUDA_CHECK(cudaMemset(y, 0, 8 * (size_t)n * sizeof(bf16)));
                run();
                CUDA_CHECK(cudaDeviceSynchronize());
                char who[16];
                snprintf(who, sizeof who, v ? "v%d" : "cublas", v);
                if (validate(who, y, batch, n, k, (int)rng_below(&rng, (uint64_t)(n - 64))))
                    return 1;
                double t = median_time_s(run, warmup, reps, &fl);
                double bytes = 2.0 * ((double)n * k + (double)batch * k + (double)batch * n);
                double gbs = bytes / t / GB;
                fprintf(out, "%s\t%s\t%d\t%d\t%d\t%.6e\t%.1f\t%.1f\t%.1f\n", shapes[s].name, who, batch, n, k, t, gbs,
                        100 * bytes / t / bw, dev.datasheet ? 100 * bytes / t / dev.datasheet->mem_bw : NAN);
                if (s == 0 && batch == 1) {
                    if (v == 0)
                        cublas_b1 = t;
                    else if (best_b1 == 0 || t < best_b1)
                        best_b1 = t, best_b1_gbs = gbs;
                }
            }
        }
        printf("gemv %-12s N=%-6d K=%-6d batch 1..8, v1 v2 v3 and cuBLAS validated and timed\n", shapes[s].name, n, k);
    }
    tsv_close(out);
    printf("  square8192 batch 1: best version %.1f GB/s = %.0f%% of the read ceiling (%s); cuBLAS %.1f us, ours %.1f us\n",
           best_b1_gbs, 100 * best_b1_gbs * GB / bw, bw_source, cublas_b1 * 1e6, best_b1 * 1e6);
    report_target("GEMV batch 1, % of measured read bandwidth", 100 * best_b1_gbs * GB / bw, "%", 90, 1, "H200");
    report_target("GEMV batch 1 speed-up over cuBLAS M=1", cublas_b1 / best_b1, "x", 1.0, 1, "H200");
    fl.release();
    CUBLAS_CHECK(cublasDestroy(h));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(w));
    CUDA_CHECK(cudaFree(y));
    return 0;
}
