// Our own bf16 GEMV / skinny GEMM for batch 1 ... 8, Y[B x N] = X[B x K] W^T
// (W is N x K, row-major; fp32 accumulation; bf16 output), in numbered
// versions, validated against the CPU reference and timed beside cuBLAS at the
// same shapes.  At these batch sizes the weight read is the whole cost, so
// the yardstick is bytes over time against the measured read bandwidth, both
// the 1 GiB stream's (bandwidth.tsv) and a read of this weight's own
// footprint timed here (a short kernel pays a ramp the long stream hides).
//
//   v1  one warp per output row, scalar bf16 loads
//   v2  one warp per row, 16-byte vector loads (8 bf16 per lane per step)
//   v3  several rows per warp (4), 16-byte loads: more loads in flight and
//       each X chunk reused for 4 rows
//   v4  a persistent grid sized by the occupancy API (no partial wave); each
//       warp 2 rows at a time with 4 independent 16-byte streaming loads in
//       flight per row (8 per lane); X staged once per block in shared
//       memory when it fits (B K 2 bytes <= the opt-in limit), read through
//       L1 otherwise.  Split-K is not needed at these shapes: N >= 7168
//       rows keep every warp of the persistent grid busy.
//   v5  tensor cores (mma.sync m16n8k16 bf16, the batch padded to 8): a
//       block per 16 rows, its warps splitting K; two 16-byte weight loads
//       per lane per step, four steps in flight.  Needs K % 32 == 0.
//   v6  v4 with each warp's first 8 weight loads issued before the barrier
//       that stages x in shared memory: the stage and the first loads
//       overlap instead of following one another (the same sums in the
//       same order as v4, so the same results bit for bit).
//
// Every version runs at block sizes 128, 256 and 512 and prints its time as
// it goes (llm.c's habit); `gemv 4` runs version 4 only (and cuBLAS).  gemv.tsv has each
// version at its best block size; gemv_sweep.tsv every block size.  A result
// that fails validation is marked in the `valid` column and the sweep goes
// on; the program exits 1 at the end.
//
//   gemv [VERSION] [--out DIR] [--bandwidth DIR/bandwidth.tsv] [--flush read|memset|rotate] [--quick]
//        writes DIR/gemv.tsv and DIR/gemv_sweep.tsv
#include "common.cuh"

#include <math.h>

#define VERSIONS 6

// v1: lane l reads W[row][l], W[row][l+32], ...
template <int B> __global__ void gemv_v1(const bf16 *__restrict__ x, const bf16 *__restrict__ w, bf16 *__restrict__ y,
                                         int n, int k)
{
    int row = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32, lane = threadIdx.x % 32;
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

// v2 (ROWS = 1) and v3 (ROWS = 4): a warp owns ROWS consecutive rows; lane l
// reads 16 bytes at column 8*(l + 32 i) of each.  Needs k % 8 == 0.
template <int B, int ROWS>
__global__ void gemv_vec(const bf16 *__restrict__ x, const bf16 *__restrict__ w, bf16 *__restrict__ y, int n, int k)
{
    int row0 = (blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32) * ROWS, lane = threadIdx.x % 32;
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

// A 16-byte load that is read once: not kept in L1.
// volatile keeps ptxas from sinking it to its first use, so the loads of
// one iteration are all in flight together.
__device__ __forceinline__ uint4 ld_stream16(const uint4 *p)
{
    uint4 v;
    asm volatile("ld.global.nc.L1::no_allocate.v4.u32 {%0, %1, %2, %3}, [%4];"
                 : "=r"(v.x), "=r"(v.y), "=r"(v.z), "=r"(v.w)
                 : "l"(p));
    return v;
}

// v4: see the header.  Rows row0 .. row0 + V4_ROWS - 1 per warp step; lane l
// reads the 16-byte chunks l + 32 u (u < V4_U) of each row per iteration,
// all V4_ROWS * V4_U loads issued before the first is used.
#define V4_ROWS 2
#define V4_U 4
template <int B, bool XS, bool EARLY = false>
__global__ void __launch_bounds__(512, 1) gemv_v4(const bf16 *__restrict__ x, const bf16 *__restrict__ w,
                                               bf16 *__restrict__ y, int n, int k)
{
    extern __shared__ uint4 xs[]; // B * k / 8 chunks when XS
    const int k8 = k / 8, lane = threadIdx.x & 31;
    const uint4 *xg = reinterpret_cast<const uint4 *>(x);
    const int warps_total = gridDim.x * (blockDim.x / 32);
    const int warp_id = blockIdx.x * (blockDim.x / 32) + threadIdx.x / 32;
    // v6: the first step's weight loads of this warp's first rows are in
    // flight while the block stages x (they need nothing from it).
    uint4 wv[V4_ROWS][V4_U];
    bool early = EARLY && XS && warp_id * V4_ROWS < n && lane + 32 * (V4_U - 1) < k8;
    if (early) {
#pragma unroll
        for (int r = 0; r < V4_ROWS; r++) {
            const uint4 *wr0 = reinterpret_cast<const uint4 *>(w + (size_t)min(warp_id * V4_ROWS + r, n - 1) * k);
#pragma unroll
            for (int u = 0; u < V4_U; u++)
                wv[r][u] = ld_stream16(wr0 + lane + 32 * u);
        }
    }
    if (XS) {
        for (int i = threadIdx.x; i < B * k8; i += blockDim.x)
            xs[i] = __ldg(xg + i);
        __syncthreads();
    }
    for (int row0 = warp_id * V4_ROWS; row0 < n; row0 += warps_total * V4_ROWS) {
        const uint4 *wr[V4_ROWS];
#pragma unroll
        for (int r = 0; r < V4_ROWS; r++) // a row past the end reads the last row again; its sum is not stored
            wr[r] = reinterpret_cast<const uint4 *>(w + (size_t)min(row0 + r, n - 1) * k);
        float acc[V4_ROWS][B];
#pragma unroll
        for (int r = 0; r < V4_ROWS; r++)
#pragma unroll
            for (int b = 0; b < B; b++)
                acc[r][b] = 0;
        int c = lane;
        for (; c + 32 * (V4_U - 1) < k8; c += 32 * V4_U) {
            if (!early) {
#pragma unroll
                for (int r = 0; r < V4_ROWS; r++)
#pragma unroll
                    for (int u = 0; u < V4_U; u++)
                        wv[r][u] = ld_stream16(wr[r] + c + 32 * u);
            }
            early = false;
#pragma unroll
            for (int u = 0; u < V4_U; u++) {
                float wf[V4_ROWS][8];
#pragma unroll
                for (int r = 0; r < V4_ROWS; r++)
                    unpack8(wv[r][u], wf[r]);
#pragma unroll
                for (int b = 0; b < B; b++) {
                    float xf[8];
                    unpack8(XS ? xs[b * k8 + c + 32 * u] : __ldg(xg + (size_t)b * k8 + c + 32 * u), xf);
#pragma unroll
                    for (int r = 0; r < V4_ROWS; r++)
#pragma unroll
                        for (int i = 0; i < 8; i++)
                            acc[r][b] = fmaf(wf[r][i], xf[i], acc[r][b]);
                }
            }
        }
        for (; c < k8; c += 32) { // the tail: fewer than 32 * V4_U chunks left
            float wf[V4_ROWS][8];
#pragma unroll
            for (int r = 0; r < V4_ROWS; r++)
                unpack8(ld_stream16(wr[r] + c), wf[r]);
#pragma unroll
            for (int b = 0; b < B; b++) {
                float xf[8];
                unpack8(XS ? xs[b * k8 + c] : __ldg(xg + (size_t)b * k8 + c), xf);
#pragma unroll
                for (int r = 0; r < V4_ROWS; r++)
#pragma unroll
                    for (int i = 0; i < 8; i++)
                        acc[r][b] = fmaf(wf[r][i], xf[i], acc[r][b]);
            }
        }
#pragma unroll
        for (int r = 0; r < V4_ROWS; r++)
#pragma unroll
            for (int b = 0; b < B; b++) {
                float s = warp_sum(acc[r][b]);
                if (lane == 0 && row0 + r < n)
                    y[(size_t)b * n + row0 + r] = __float2bfloat16_rn(s);
            }
    }
}

// v5: tensor cores (mma.sync m16n8k16, bf16 in, fp32 accumulate).  A block
// owns 16 rows of W; its warps split K in 32-wide steps (warp w takes steps
// w, w + warps, ...), and the block adds their partial sums at the end.  In
// a step, lane (g = lane / 4, t = lane % 4) loads 16 bytes of rows g and
// g + 8 at k = 32 s + 8 t (two 16-byte loads; four steps in flight: 8 per
// lane) and 16 bytes of x row g (zero for g >= B, the batch padded to 8).
// A dot product does not care in which order k is summed, so the k an mma
// fragment slot stands for may be any one, as long as A and B agree: slot
// (2t, 2t+1) of A and B carries k = 8t + 0, 1 and slot (2t+8, 2t+9) k = 8t +
// 2, 3 in the first mma, 8t + 4 ... 7 in the second; every k of the step is
// used once.  The accumulator's rows are W's rows, its columns the batch.
#define V5_U 4
#define V5_MAX_WARPS 16
template <int B>
__global__ void __launch_bounds__(512, 1) gemv_v5(const bf16 *__restrict__ x, const bf16 *__restrict__ w,
                                               bf16 *__restrict__ y, int n, int k)
{
    __shared__ float4 part[V5_MAX_WARPS][32];
    const int warp = threadIdx.x / 32, warps = blockDim.x / 32, lane = threadIdx.x % 32, g = lane >> 2, t = lane & 3;
    const int row0 = blockIdx.x * 16, ksteps = k / 32;
    const uint4 *w0 = reinterpret_cast<const uint4 *>(w + (size_t)min(row0 + g, n - 1) * k) + t;
    const uint4 *w1 = reinterpret_cast<const uint4 *>(w + (size_t)min(row0 + g + 8, n - 1) * k) + t;
    const uint4 *xr = reinterpret_cast<const uint4 *>(x + (size_t)min(g, B - 1) * k) + t;
    float c[4] = {0, 0, 0, 0};
    for (int s = warp; s < ksteps; s += warps * V5_U) {
        uint4 a[V5_U], b[V5_U], xv[V5_U];
#pragma unroll
        for (int u = 0; u < V5_U; u++) {
            const int ss = s + u * warps;
            const uint4 z = make_uint4(0, 0, 0, 0);
            a[u] = ss < ksteps ? ld_stream16(w0 + 4 * ss) : z;
            b[u] = ss < ksteps ? ld_stream16(w1 + 4 * ss) : z;
            xv[u] = ss < ksteps && g < B ? __ldg(xr + 4 * ss) : z;
        }
#pragma unroll
        for (int u = 0; u < V5_U; u++) {
            mma_bf16_16816(c, a[u].x, b[u].x, a[u].y, b[u].y, xv[u].x, xv[u].y);
            mma_bf16_16816(c, a[u].z, b[u].z, a[u].w, b[u].w, xv[u].z, xv[u].w);
        }
    }
    part[warp][lane] = make_float4(c[0], c[1], c[2], c[3]);
    __syncthreads();
    if (warp != 0)
        return;
    float4 sum = part[0][lane];
    for (int i = 1; i < warps; i++) {
        float4 p = part[i][lane];
        sum.x += p.x, sum.y += p.y, sum.z += p.z, sum.w += p.w;
    }
    // c0, c1: row g, batch 2t, 2t + 1; c2, c3: row g + 8, the same batch columns
    const int b0 = 2 * t, b1 = 2 * t + 1, r0 = row0 + g, r1 = row0 + g + 8;
    if (b0 < B && r0 < n)
        y[(size_t)b0 * n + r0] = __float2bfloat16_rn(sum.x);
    if (b1 < B && r0 < n)
        y[(size_t)b1 * n + r0] = __float2bfloat16_rn(sum.y);
    if (b0 < B && r1 < n)
        y[(size_t)b0 * n + r1] = __float2bfloat16_rn(sum.z);
    if (b1 < B && r1 < n)
        y[(size_t)b1 * n + r1] = __float2bfloat16_rn(sum.w);
}

struct gemv_ctx {
    int sms;
    size_t smem_optin; // the largest dynamic shared memory a block may ask for
};

template <int B, bool XS, bool EARLY> static int v4_grid(const gemv_ctx &c, int block, size_t smem)
{
    static int raised = 0; // cudaFuncSetAttribute once per instantiation (host-side, per process)
    if (XS && !raised) {
        CUDA_CHECK(cudaFuncSetAttribute(gemv_v4<B, XS, EARLY>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                        (int)c.smem_optin));
        raised = 1;
    }
    return full_grid(gemv_v4<B, XS, EARLY>, block, c.sms, smem);
}

template <int B, bool EARLY>
static void launch_v4(const gemv_ctx &cx, int block, const bf16 *x, const bf16 *w, bf16 *y, int n, int k)
{
    size_t smem = (size_t)B * k * sizeof(bf16);
    if (smem <= cx.smem_optin) {
        int grid = v4_grid<B, true, EARLY>(cx, block, smem);
        gemv_v4<B, true, EARLY><<<grid, block, smem>>>(x, w, y, n, k);
    } else { // x read through L1: no barrier for early loads to overlap, so v6 is v4 here
        int grid = v4_grid<B, false, false>(cx, block, 0);
        gemv_v4<B, false, false><<<grid, block>>>(x, w, y, n, k);
    }
}

template <int B>
static void launch_version(const gemv_ctx &cx, int v, int block, const bf16 *x, const bf16 *w, bf16 *y, int n, int k)
{
    int warps = block / 32;
    if (v == 1)
        gemv_v1<B><<<(n + warps - 1) / warps, block>>>(x, w, y, n, k);
    else if (v == 2)
        gemv_vec<B, 1><<<(n + warps - 1) / warps, block>>>(x, w, y, n, k);
    else if (v == 3)
        gemv_vec<B, 4><<<(n + 4 * warps - 1) / (4 * warps), block>>>(x, w, y, n, k);
    else if (v == 5)
        gemv_v5<B><<<(n + 15) / 16, block>>>(x, w, y, n, k);
    else if (v == 6)
        launch_v4<B, true>(cx, block, x, w, y, n, k);
    else
        launch_v4<B, false>(cx, block, x, w, y, n, k);
    LAUNCH_CHECK();
}

static void gemv(const gemv_ctx &cx, int v, int block, int batch, const bf16 *x, const bf16 *w, bf16 *y, int n, int k)
{
    switch (batch) {
    case 1: launch_version<1>(cx, v, block, x, w, y, n, k); break;
    case 2: launch_version<2>(cx, v, block, x, w, y, n, k); break;
    case 3: launch_version<3>(cx, v, block, x, w, y, n, k); break;
    case 4: launch_version<4>(cx, v, block, x, w, y, n, k); break;
    case 5: launch_version<5>(cx, v, block, x, w, y, n, k); break;
    case 6: launch_version<6>(cx, v, block, x, w, y, n, k); break;
    case 7: launch_version<7>(cx, v, block, x, w, y, n, k); break;
    default: launch_version<8>(cx, v, block, x, w, y, n, k); break;
    }
}

static const uint64_t SEED_X = 21, SEED_W = 22;

// Rows [r0, r0 + 64) of every batch row against the CPU reference: 1 valid.
static int validate(const char *who, const bf16 *y, int batch, int n, int k, int r0)
{
    char what[96];
    snprintf(what, sizeof what, "gemv: %s batch %d %dx%d", who, batch, n, k);
    return validate_bf16_gemm_block(what, y, batch, n, k, r0, n - r0 < 64 ? n - r0 : 64, SEED_X, SEED_W);
}

int main(int argc, char **argv)
{
    run_args args = parse_args(argc, argv);
    check_version(args, VERSIONS, "gemv");
    device_gate();
    device_facts dev = device_facts_get();
    gemv_ctx cx = {dev.prop.multiProcessorCount, dev.prop.sharedMemPerBlockOptin};
    model_spec m70 = model_builtin("llama3-70b");
    struct shape {
        const char *name;
        int n, k;
    } shapes[] = {
        {"square8192", 8192, 8192},
        // 21 MB of weight: inside the L2 (50 MB on an H100 or H200), where
        // the way the L2 is emptied matters most (the flush comparison).
        {"qkv_tp8", (m70.heads + 2 * m70.kv_heads) * m70.head_dim / 8, m70.hidden},
        {"qkv_tp1", (m70.heads + 2 * m70.kv_heads) * m70.head_dim, m70.hidden},
        {"gate_up_tp1", 2 * m70.ffn, m70.hidden},
        {"down_tp1", m70.hidden, m70.ffn},
        {"gate_up_tp8", 2 * m70.ffn / 8, m70.hidden},
        {"down_tp8", m70.hidden, m70.ffn / 8},
    };
    // Quick: the square (above the L2) and qkv_tp8 (inside it).
    int nshapes = args.quick ? 2 : (int)(sizeof shapes / sizeof shapes[0]);
    size_t max_w = 0, max_k = 0, max_n = 0, min_w = SIZE_MAX;
    for (int s = 0; s < nshapes; s++) {
        max_w = std::max(max_w, (size_t)shapes[s].n * shapes[s].k);
        min_w = std::min(min_w, (size_t)shapes[s].n * shapes[s].k);
        max_k = std::max(max_k, (size_t)shapes[s].k);
        max_n = std::max(max_n, (size_t)shapes[s].n);
    }
    // Rotation: enough copies that the smallest weight's copies together
    // are three times the L2, so no copy is resident when its turn comes.
    int copies = 1;
    if (args.flush == FLUSH_ROTATE)
        copies = std::max(2, (int)((3.0 * dev.prop.l2CacheSize) / (2.0 * (double)min_w)) + 1);
    size_t w_stride = max_w; // elements between copies
    bf16 *x, *w, *y;
    CUDA_CHECK(cudaMalloc(&x, 8 * max_k * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&w, copies * max_w * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&y, 8 * max_n * sizeof(bf16)));
    cublasHandle_t h = cublas_handle_make(), hd = cublas_handle_make(true);
    l2_flusher fl;
    fl.init(dev, args.flush);
    const char *bw_source;
    double bw = read_ceiling(args, dev, &bw_source);
    int reps = args.quick ? 3 : 20, warmup = 3;
    rng_state rng = rng_make(7);
    const int blocks[] = {128, 256, 512};

    FILE *out = tsv_open(args, dev, "gemv.tsv", "gemv");
    FILE *sweep = tsv_open(args, dev, "gemv_sweep.tsv", "gemv_sweep");
    char buf[160];
    snprintf(buf, sizeof buf, "%d (median in time_s, best in best_time_s, %d warm-up runs, L2 %s before each)", reps,
             warmup, args.flush == FLUSH_ROTATE ? "avoided by rotating weight copies" : "flushed");
    provenance_line(out, "repeats", buf);
    snprintf(buf, sizeof buf, "%d", copies);
    provenance_line(out, "weight_copies", buf);
    snprintf(buf, sizeof buf, "%.6e", bw);
    provenance_line(out, "bandwidth_measured", buf);
    provenance_line(out, "bandwidth_source", bw_source);
    provenance_line(out, "pct_of_footprint_read", "against the read stream over this shape's own weight, timed here");
    const char *cols = "shape\tversion\tblock\tbatch\tn\tk\ttime_s\tbest_time_s\tgb_s\tpct_of_read\tpct_datasheet"
                       "\tpct_of_footprint_read\tvalid\n";
    fputs(cols, out);
    fputs(cols, sweep);
    double best_b1 = NAN, cublas_b1 = NAN, cublas_default_b1 = NAN, best_b1_pct = NAN, best_b1_fp_pct = NAN;
    double large_worst_pct = NAN; // batch 1, the worst best-version share over shapes >= 100 MB
    int invalid = 0;
    for (int s = 0; s < nshapes; s++) {
        int n = shapes[s].n, k = shapes[s].k;
        if (k % 8) {
            printf("NOT MEASURED: gemv %s: K = %d is not a multiple of 8 (16-byte loads)\n", shapes[s].name, k);
            continue;
        }
        fill_uniform_bf16(x, 8 * (size_t)k, SEED_X, -1, 1);
        for (int c = 0; c < copies; c++)
            fill_uniform_bf16(w + c * w_stride, (size_t)n * k, SEED_W, -1, 1);
        CUDA_CHECK(cudaDeviceSynchronize());
        double wbytes = 2.0 * n * k;
        ceiling_at fpc = read_ceiling_at(w, (size_t)wbytes, cx.sms, args.flush == FLUSH_ROTATE ? nullptr : &fl, reps);
        double best_shape_b1 = NAN;
        for (int batch = 1; batch <= 8; batch++) {
            // 0 = cuBLAS with fp32 reductions only, -1 = cuBLAS in its
            // default math mode (what a serving stack gets).
            for (int v = -1; v <= VERSIONS; v++) {
                if (v > 0 && !version_wanted(args, v))
                    continue;
                if (v == 5 && k % 32) {
                    printf("NOT MEASURED: gemv v5 %s: K = %d is not a multiple of 32\n", shapes[s].name, k);
                    continue;
                }
                char who[16];
                snprintf(who, sizeof who, v > 0 ? "v%d" : v == 0 ? "cublas" : "cublas_default", v);
                timing bestt = {INFINITY, INFINITY, 0};
                int best_block = 0, best_valid = 0;
                for (int block : blocks) {
                    if (v <= 0 && block != blocks[0])
                        continue; // cuBLAS picks its own
                    auto run = [&](int i) {
                        const bf16 *wi = w + (size_t)(i % copies) * w_stride;
                        if (v <= 0)
                            cublas_gemm_bf16(v == 0 ? h : hd, batch, n, k, x, wi, y);
                        else
                            gemv(cx, v, block, batch, x, wi, y, n, k);
                    };
                    poison_bf16(y, 8 * (size_t)n);
                    run(0);
                    CUDA_CHECK(cudaDeviceSynchronize());
                    // 64 rows against the CPU reference; every output scanned
                    // for NaN and Inf on the device.
                    int ok = validate(who, y, batch, n, k, (int)rng_below(&rng, (uint64_t)(n - 64)));
                    unsigned nonfinite = count_nonfinite_bf16(y, (size_t)batch * n);
                    if (nonfinite) {
                        printf("gemv: %s batch %d %dx%d: INVALID: %u of %d outputs NaN or Inf\n", who, batch, n, k,
                               nonfinite, batch * n);
                        ok = 0;
                    }
                    invalid += !ok;
                    timing t = time_runs(run, warmup, reps, args.flush == FLUSH_ROTATE ? nullptr : &fl);
                    double bytes = 2.0 * ((double)n * k + (double)batch * k + (double)batch * n);
                    char row[512];
                    snprintf(row, sizeof row, "%s\t%s\t%d\t%d\t%d\t%d\t%.6e\t%.6e\t%.1f\t%.1f\t%.1f\t%.1f\t%s\n",
                             shapes[s].name, who, v > 0 ? block : 0, batch, n, k, t.median_s, t.best_s,
                             bytes / t.median_s / GB, 100 * bytes / t.median_s / bw,
                             dev.datasheet ? 100 * bytes / t.median_s / dev.datasheet->mem_bw : NAN,
                             100 * bytes / t.median_s / fpc.median_bps, ok ? "yes" : "no");
                    fputs(row, sweep);
                    printf("gemv %-11s %-6s block %3d batch %d: %8.2f us median (best %8.2f) %7.1f GB/s %5.1f%% of read  %s\n",
                           shapes[s].name, who, v > 0 ? block : 0, batch, t.median_s * 1e6, t.best_s * 1e6,
                           bytes / t.median_s / GB, 100 * bytes / t.median_s / bw, ok ? "valid" : "INVALID");
                    fflush(stdout);
                    if ((ok && !best_valid) || (ok == best_valid && t.median_s < bestt.median_s)) {
                        bestt = t;
                        best_block = block;
                        best_valid = ok;
                    }
                }
                double bytes = 2.0 * ((double)n * k + (double)batch * k + (double)batch * n);
                fprintf(out, "%s\t%s\t%d\t%d\t%d\t%d\t%.6e\t%.6e\t%.1f\t%.1f\t%.1f\t%.1f\t%s\n", shapes[s].name, who,
                        v > 0 ? best_block : 0, batch, n, k, bestt.median_s, bestt.best_s, bytes / bestt.median_s / GB,
                        100 * bytes / bestt.median_s / bw,
                        dev.datasheet ? 100 * bytes / bestt.median_s / dev.datasheet->mem_bw : NAN,
                        100 * bytes / bestt.median_s / fpc.median_bps, best_valid ? "yes" : "no");
                if (batch == 1 && best_valid) {
                    double pct = 100 * bytes / bestt.median_s / bw;
                    if (v == 0 && s == 0)
                        cublas_b1 = bestt.median_s;
                    if (v == -1 && s == 0)
                        cublas_default_b1 = bestt.median_s;
                    if (v > 0 && !(best_shape_b1 >= pct))
                        best_shape_b1 = pct;
                    if (v > 0 && s == 0 && !(best_b1 <= bestt.median_s)) {
                        best_b1 = bestt.median_s;
                        best_b1_pct = pct;
                        best_b1_fp_pct = 100 * bytes / bestt.median_s / fpc.median_bps;
                    }
                }
            }
        }
        if (wbytes >= 100e6 && best_shape_b1 == best_shape_b1 && !(large_worst_pct <= best_shape_b1))
            large_worst_pct = best_shape_b1;
        printf("gemv %-12s N=%-6d K=%-6d batch 1..8 timed; read ceiling at this footprint %.1f GB/s (median)\n",
               shapes[s].name, n, k, fpc.median_bps / GB);
    }
    tsv_close(out);
    tsv_close(sweep);
    printf("  square8192 batch 1: best version %.1f%% of the read ceiling (%s), %.1f%% of the footprint's; cuBLAS %.1f "
           "us, ours %.1f us\n",
           best_b1_pct, bw_source, best_b1_fp_pct, cublas_b1 * 1e6, best_b1 * 1e6);
    report_target("GEMV batch 1 square8192, % of read ceiling", best_b1_pct, "%", 90, 1, "H200");
    report_target("GEMV batch 1 square8192, % of footprint read", best_b1_fp_pct, "%", 90, 1, "H200");
    report_target("GEMV batch 1 worst shape >= 100 MB, % of read", large_worst_pct, "%", 90, 1, "H200");
    report_target("GEMV batch 1 speed-up over cuBLAS M=1", cublas_b1 / best_b1, "x", 1.2, 1, "H200");
    report_target("GEMV batch 1 speed-up over cuBLAS M=1, default math", cublas_default_b1 / best_b1, "x", 1.2, 1,
                  "H200");
    fl.release();
    CUBLAS_CHECK(cublasDestroy(h));
    CUBLAS_CHECK(cublasDestroy(hd));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(w));
    CUDA_CHECK(cudaFree(y));
    return finish("gemv", invalid);
}
