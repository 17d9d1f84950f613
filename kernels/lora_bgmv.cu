// The batched gathered adapter operator of a decode step (BGMV, as in
// Punica and S-LoRA): each token t carries one adapter index a = idx[t], and
//     v[t]  = x[t] A[a]^T          shrink: d_in -> rank  (fp32 out)
//     y[t] += scale * v[t] B[a]^T  expand: rank -> d_out (bf16 y, fp32 sums)
// with A[a] rank x d_in and B[a] d_out x rank (linear-layer layout), bf16.
// Timed against D distinct adapters among B tokens (token t takes adapter
// t mod D), at ranks 8, 16, 64, on the q projections of LLaMA-3-8B and -70B,
// beside the one-shared-adapter case (D = 1).  Bytes moved are counted by the
// library (lora_bgmv_ops): each distinct adapter's A and B once, each
// token's activations once.
//
//   v1  two kernels: shrink (a warp per token and rank row, v to global
//       memory), then expand (a thread per token and output)
//   v2  one kernel: tokens grouped by adapter (up to 8 per block, the
//       grouping made on the host before timing, as a server makes it once
//       per step); the block reads its work item once, stages its tokens'
//       x in shared memory, shrinks (a warp per rank row, 4 16-byte loads of
//       A in flight per lane, every token of the group from one load) into
//       shared memory and expands from it: A and B read once per group, v
//       never leaves the SM.  Its arithmetic is emulated on the host by
//       lora_bgmv_fused_emulate (code/napkin/ref/lora_ref.c), which
//       tests/test_bgmv_fused.c holds against the fp64 reference.
//   v3  v2 spread over the SMs: with few adapters v2 has few groups, a
//       block each (batch 64 on one adapter: 8 blocks on 132 SMs), so each
//       group gets several blocks, block c expanding its own slice of the
//       output columns after the group's shrink (each block repeats it:
//       A is small and, after the first of them, read from the L2; B and
//       y are read once in all).  The split is lora_bgmv_column_splits
//       (two blocks per SM where d_out allows, at least 256 columns a
//       block); per output the arithmetic is v2's.
//
//   lora_bgmv [VERSION] [--out DIR] [--bandwidth DIR/bandwidth.tsv] [--quick]   writes DIR/lora_bgmv.tsv
#include "common.cuh"

extern "C" {
#include "lora.h"
#include "lora_ref.h"
}

#include <math.h>

#include <algorithm>

#define SHRINK_WARPS 8
#define EXPAND_THREADS 256
#define MAX_RANK 64

//> bgmv_kernels
// Shrink: one warp per (token, rank row); 16-byte loads along d_in (d_in % 8 == 0).
__global__ void bgmv_shrink(const bf16 *__restrict__ x, const bf16 *__restrict__ a, const int *__restrict__ idx,
                            float *__restrict__ v, int d_in, int rank)
{
    int t = blockIdx.x, j = blockIdx.y * SHRINK_WARPS + threadIdx.x / 32, lane = threadIdx.x % 32;
    int ad = idx[t];
    if (j >= rank)
        return;
    if (ad < 0) {
        if (lane == 0)
            v[(size_t)t * rank + j] = 0.0f;
        return;
    }
    const uint4 *xr = reinterpret_cast<const uint4 *>(x + (size_t)t * d_in);
    const uint4 *ar = reinterpret_cast<const uint4 *>(a + ((size_t)ad * rank + j) * d_in);
    float acc = 0.0f;
    for (int c = lane; c < d_in / 8; c += 32) {
        float xf[8], af[8];
        unpack8(__ldg(xr + c), xf);
        unpack8(__ldg(ar + c), af);
#pragma unroll
        for (int i = 0; i < 8; i++)
            acc += xf[i] * af[i];
    }
    acc = warp_sum(acc);
    if (lane == 0)
        v[(size_t)t * rank + j] = acc;
}

// Expand: one thread per (token, output); the token's v sits in shared memory.
__global__ void bgmv_expand(const float *__restrict__ v, const bf16 *__restrict__ b, const int *__restrict__ idx,
                            bf16 *__restrict__ y, int d_out, int rank, float scale)
{
    __shared__ float vs[MAX_RANK];
    int t = blockIdx.x, o = blockIdx.y * EXPAND_THREADS + threadIdx.x;
    int ad = idx[t];
    if (ad < 0)
        return;
    for (int j = threadIdx.x; j < rank; j += blockDim.x)
        vs[j] = v[(size_t)t * rank + j];
    __syncthreads();
    if (o >= d_out)
        return;
    const bf16 *br = b + ((size_t)ad * d_out + o) * rank;
    float acc = 0.0f;
    if (rank % 8 == 0) {
        const uint4 *b8 = reinterpret_cast<const uint4 *>(br);
        for (int c = 0; c < rank / 8; c++) {
            float bf[8];
            unpack8(__ldg(b8 + c), bf);
#pragma unroll
            for (int i = 0; i < 8; i++)
                acc += vs[8 * c + i] * bf[i];
        }
    } else {
        for (int j = 0; j < rank; j++)
            acc += vs[j] * __bfloat162float(br[j]);
    }
    size_t k = (size_t)t * d_out + o;
    y[k] = __float2bfloat16_rn(__bfloat162float(y[k]) + scale * acc);
}
//< bgmv_kernels

//> bgmv_fused
#define FUSED_TMAX 8
#define FUSED_THREADS 256
#define FUSED_U 4
// Block (c, i) takes work item i (start, count, adapter): tokens
// order[start .. start + count) all use `adapter`; it expands the output
// columns [c cols, (c + 1) cols) (v2: one block per item, cols = d_out).
__global__ void __launch_bounds__(FUSED_THREADS)
    bgmv_fused(const bf16 *__restrict__ x, const bf16 *__restrict__ a, const bf16 *__restrict__ b,
               const int *__restrict__ order, const int4 *__restrict__ work, bf16 *__restrict__ y, int d_in, int d_out,
               int rank, float scale, int cols)
{
    extern __shared__ uint4 xs[]; // count x d_in / 8 chunks
    __shared__ int tok[FUSED_TMAX];
    __shared__ float vs[FUSED_TMAX][MAX_RANK];
    const int4 wk = work[blockIdx.y]; // the index, read once
    const int o_begin = blockIdx.x * cols, o_end = min(d_out, o_begin + cols);
    const int cnt = wk.y, ad = wk.z, k8 = d_in / 8;
    if (threadIdx.x < cnt)
        tok[threadIdx.x] = order[wk.x + threadIdx.x];
    __syncthreads();
    for (int i = threadIdx.x; i < cnt * k8; i += blockDim.x)
        xs[i] = __ldg(reinterpret_cast<const uint4 *>(x + (size_t)tok[i / k8] * d_in) + i % k8);
    __syncthreads();
    // Shrink: warp w takes rank rows w, w + 8, ...; lane l the chunks l,
    // l + 32, ... of the row, FUSED_U loads in flight, each used by every token.
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    for (int j = warp; j < rank; j += FUSED_THREADS / 32) {
        const uint4 *ar = reinterpret_cast<const uint4 *>(a + ((size_t)ad * rank + j) * d_in);
        float acc[FUSED_TMAX];
#pragma unroll
        for (int t = 0; t < FUSED_TMAX; t++)
            acc[t] = 0.0f;
        int c = lane;
        for (; c + 32 * (FUSED_U - 1) < k8; c += 32 * FUSED_U) {
            uint4 av[FUSED_U];
#pragma unroll
            for (int u = 0; u < FUSED_U; u++)
                av[u] = __ldg(ar + c + 32 * u);
#pragma unroll
            for (int u = 0; u < FUSED_U; u++) {
                float af[8];
                unpack8(av[u], af);
#pragma unroll
                for (int t = 0; t < FUSED_TMAX; t++)
                    if (t < cnt) {
                        float xf[8];
                        unpack8(xs[t * k8 + c + 32 * u], xf);
#pragma unroll
                        for (int i = 0; i < 8; i++)
                            acc[t] = __fmaf_rn(af[i], xf[i], acc[t]);
                    }
            }
        }
        for (; c < k8; c += 32) {
            float af[8];
            unpack8(__ldg(ar + c), af);
#pragma unroll
            for (int t = 0; t < FUSED_TMAX; t++)
                if (t < cnt) {
                    float xf[8];
                    unpack8(xs[t * k8 + c], xf);
#pragma unroll
                    for (int i = 0; i < 8; i++)
                        acc[t] = __fmaf_rn(af[i], xf[i], acc[t]);
                }
        }
#pragma unroll
        for (int t = 0; t < FUSED_TMAX; t++) {
            float sum = warp_sum(acc[t]);
            if (lane == 0 && t < cnt)
                vs[t][j] = sum;
        }
    }
    __syncthreads();
    // Expand from shared memory: thread o reads B's row o once for every token.
    for (int o = o_begin + threadIdx.x; o < o_end; o += blockDim.x) {
        const bf16 *br = b + ((size_t)ad * d_out + o) * rank;
        float sum[FUSED_TMAX];
#pragma unroll
        for (int t = 0; t < FUSED_TMAX; t++)
            sum[t] = 0.0f;
        if (rank % 8 == 0) {
            const uint4 *b8 = reinterpret_cast<const uint4 *>(br);
            for (int c = 0; c < rank / 8; c++) {
                float bf[8];
                unpack8(__ldg(b8 + c), bf);
#pragma unroll
                for (int i = 0; i < 8; i++)
#pragma unroll
                    for (int t = 0; t < FUSED_TMAX; t++)
                        sum[t] = __fmaf_rn(vs[t][8 * c + i], bf[i], sum[t]);
            }
        } else {
            for (int j = 0; j < rank; j++) {
                float bj = __bfloat162float(br[j]);
#pragma unroll
                for (int t = 0; t < FUSED_TMAX; t++)
                    sum[t] = __fmaf_rn(vs[t][j], bj, sum[t]);
            }
        }
#pragma unroll
        for (int t = 0; t < FUSED_TMAX; t++)
            if (t < cnt) {
                size_t k = (size_t)tok[t] * d_out + o;
                y[k] = __float2bfloat16_rn(__fmaf_rn(scale, sum[t], __bfloat162float(y[k])));
            }
    }
}
//< bgmv_fused

// The work items of v2: tokens sorted by adapter (stable), each adapter's run
// cut into groups of at most FUSED_TMAX; tokens without an adapter dropped.
static int fused_work(const std::vector<int> &idx, std::vector<int> &order, std::vector<int4> &work)
{
    order.clear();
    work.clear();
    for (size_t t = 0; t < idx.size(); t++)
        if (idx[t] >= 0)
            order.push_back((int)t);
    std::stable_sort(order.begin(), order.end(), [&](int p, int q) { return idx[p] < idx[q]; });
    for (size_t i = 0; i < order.size();) {
        size_t j = i;
        while (j < order.size() && idx[order[j]] == idx[order[i]] && j - i < FUSED_TMAX)
            j++;
        work.push_back(make_int4((int)i, (int)(j - i), idx[order[i]], 0));
        i = j;
    }
    return (int)work.size();
}

static void bgmv(const bf16 *x, const bf16 *a, const bf16 *b, const int *idx, float *v, bf16 *y, int tokens, int d_in,
                 int d_out, int rank, float scale)
{
    dim3 g1(tokens, (rank + SHRINK_WARPS - 1) / SHRINK_WARPS), g2(tokens, (d_out + EXPAND_THREADS - 1) / EXPAND_THREADS);
    bgmv_shrink<<<g1, 32 * SHRINK_WARPS>>>(x, a, idx, v, d_in, rank);
    LAUNCH_CHECK();
    bgmv_expand<<<g2, EXPAND_THREADS>>>(v, b, idx, y, d_out, rank, scale);
    LAUNCH_CHECK();
}

static const uint64_t SEED_X = 61, SEED_A = 62, SEED_B = 63, SEED_Y = 64;

// Tokens [0, check) against lora_bgmv_ref on the host copies of the inputs.
static int validate(const bf16 *y, const int *idx_host, int check, int d_in, int d_out, int rank, int adapters,
                    float scale, int batch, int distinct)
{
    std::vector<float> x((size_t)check * d_in), a((size_t)adapters * rank * d_in), b((size_t)adapters * d_out * rank),
        ref((size_t)check * d_out), got((size_t)check * d_out);
    for (size_t i = 0; i < x.size(); i++)
        x[i] = host_uniform_bf16(SEED_X, i, -1, 1);
    for (size_t i = 0; i < a.size(); i++)
        a[i] = host_uniform_bf16(SEED_A, i, -1, 1);
    for (size_t i = 0; i < b.size(); i++)
        b[i] = host_uniform_bf16(SEED_B, i, -1, 1);
    for (size_t i = 0; i < ref.size(); i++)
        ref[i] = host_uniform_bf16(SEED_Y, i, -1, 1);
    if (lora_bgmv_ref(check, d_in, d_out, rank, adapters, x.data(), a.data(), b.data(), idx_host, scale, ref.data()))
        return -1;
    download_bf16(y, got.size(), got.data());
    long first;
    // bf16 output: relative rounding <= 2^-8; atol for results near zero.
    size_t bad = validate_close(got.data(), ref.data(), got.size(), 3e-2, 1e-2, &first, NULL);
    if (bad)
        printf("lora_bgmv: batch %d D %d %dx%d rank %d: INVALID: %zu of %zu outputs differ (first: got %g, want %g)\n",
               batch, distinct, d_in, d_out, rank, bad, got.size(), got[first], ref[first]);
    return bad ? -1 : 0;
}

int main(int argc, char **argv)
{
    run_args args = parse_args(argc, argv);
    check_version(args, 3, "lora_bgmv");
    device_gate();
    device_facts dev = device_facts_get();
    model_spec m8 = model_builtin("llama3-8b"), m70 = model_builtin("llama3-70b");
    struct shape {
        const char *name;
        int d_in, d_out;
    } shapes[] = {
        {"llama3-8b_q", m8.hidden, m8.heads * m8.head_dim},
        {"llama3-70b_q", m70.hidden, m70.heads * m70.head_dim},
    };
    const int ranks_all[] = {8, 16, 64}, batches_all[] = {1, 4, 16, 64, 256};
    const int ranks_quick[] = {16}, batches_quick[] = {1, 64};
    const int *ranks = args.quick ? ranks_quick : ranks_all, *batches = args.quick ? batches_quick : batches_all;
    int nranks = args.quick ? 1 : 3, nbatches = args.quick ? 2 : 5, nshapes = args.quick ? 1 : 2;
    const int adapters = 64, max_batch = 256;

    size_t max_in = 0, max_out = 0;
    for (int s = 0; s < nshapes; s++) {
        max_in = std::max(max_in, (size_t)shapes[s].d_in);
        max_out = std::max(max_out, (size_t)shapes[s].d_out);
    }
    bf16 *x, *a, *b, *y;
    float *v;
    int *idx;
    CUDA_CHECK(cudaMalloc(&x, max_batch * max_in * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&a, (size_t)adapters * MAX_RANK * max_in * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&b, (size_t)adapters * MAX_RANK * max_out * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&y, max_batch * max_out * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&v, max_batch * MAX_RANK * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&idx, max_batch * sizeof(int)));
    int *order;
    int4 *work;
    CUDA_CHECK(cudaMalloc(&order, max_batch * sizeof(int)));
    CUDA_CHECK(cudaMalloc(&work, max_batch * sizeof(int4)));
    // v2 and v3 stage up to FUSED_TMAX tokens' x in shared memory: a card that
    // cannot give a block that much runs v1 alone, and says so.
    const size_t fused_smem_max = (size_t)FUSED_TMAX * max_in * sizeof(bf16);
    const bool fused_fits = fused_smem_max <= dev.prop.sharedMemPerBlockOptin;
    if (fused_fits)
        CUDA_CHECK(cudaFuncSetAttribute(bgmv_fused, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)fused_smem_max));
    else
        printf("NOT MEASURED: lora_bgmv v2 and v3: %zu bytes of shared memory per block, the card allows %zu\n",
               fused_smem_max, (size_t)dev.prop.sharedMemPerBlockOptin);
    l2_flusher fl;
    fl.init(dev);
    const char *bw_source;
    double bw = read_ceiling(args, dev, &bw_source);
    int reps = args.quick ? 3 : 20, warmup = 3;

    FILE *out = tsv_open(args, dev, "lora_bgmv.tsv", "lora_bgmv");
    char buf[160];
    snprintf(buf, sizeof buf, "%d (median reported, %d warm-up runs, L2 flushed before each)", reps, warmup);
    provenance_line(out, "repeats", buf);
    snprintf(buf, sizeof buf, "%.6e", bw);
    provenance_line(out, "bandwidth_measured", buf);
    provenance_line(out, "bandwidth_source", bw_source);
    provenance_line(out, "assignment", "token t uses adapter t mod D; v1 shrink + expand timed together (2 launches), v2 "
                                       "one fused launch (tokens grouped by adapter on the host, before timing), v3 v2 "
                                       "with each group's output columns split over several blocks "
                                       "(lora_bgmv_column_splits_resident: as many blocks per SM as the occupancy API allows at "
                                       "the launch's shared memory, at most two, where d_out allows; shared memory "
                                       "sized by the launch's largest group)");
    provenance_line(out, "floor_ratio", "time_s over bytes / bandwidth_measured (1 = at the byte floor)");
    fprintf(out, "shape\td_in\td_out\trank\tbatch\tdistinct\ttime_s\tadapter_bytes\tbytes\tgb_s\tpct_of_read\t"
                 "roofline_s\tfloor_ratio\tvalid\tversion\n");
    double punica_b1 = 0, punica_b64_distinct = 0, punica_b64_shared = 0, floor_b64 = NAN;
    int invalid = 0;
    for (int s = 0; s < nshapes; s++) {
        int d_in = shapes[s].d_in, d_out = shapes[s].d_out;
        fill_uniform_bf16(x, max_batch * (size_t)d_in, SEED_X, -1, 1);
        for (int ri = 0; ri < nranks; ri++) {
            int rank = ranks[ri];
            float scale = 1.0f / rank;
            fill_uniform_bf16(a, (size_t)adapters * rank * d_in, SEED_A, -1, 1);
            fill_uniform_bf16(b, (size_t)adapters * d_out * rank, SEED_B, -1, 1);
            for (int bi = 0; bi < nbatches; bi++) {
                int batch = batches[bi];
                for (int distinct = 1; distinct <= std::min(batch, adapters); distinct *= 2) {
                    std::vector<int> ih(batch);
                    for (int t = 0; t < batch; t++)
                        ih[t] = t % distinct;
                    CUDA_CHECK(cudaMemcpy(idx, ih.data(), batch * sizeof(int), cudaMemcpyHostToDevice));
                    std::vector<int> oh;
                    std::vector<int4> wh;
                    int items = fused_work(ih, oh, wh);
                    CUDA_CHECK(cudaMemcpy(order, oh.data(), oh.size() * sizeof(int), cudaMemcpyHostToDevice));
                    CUDA_CHECK(cudaMemcpy(work, wh.data(), wh.size() * sizeof(int4), cudaMemcpyHostToDevice));
                    // Shared memory for the largest group of this launch, and
                    // v3's split plan for as many blocks per SM as that
                    // allows (at most two): never a second wave.
                    int group_max = 1;
                    for (const int4 &w4 : wh)
                        group_max = std::max(group_max, w4.y);
                    const size_t fused_smem = lora_bgmv_fused_smem_bytes(group_max, d_in);
                    int cols = d_out, splits = 1, per_sm = 0;
                    if (fused_fits)
                        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, bgmv_fused, FUSED_THREADS,
                                                                                 fused_smem));
                    if (items > 0)
                        splits = lora_bgmv_column_splits_resident(
                            items, d_out, dev.prop.multiProcessorCount * std::max(1, std::min(2, per_sm)),
                            FUSED_THREADS, &cols);
                    for (int version = 1; version <= 3; version++) {
                        if (!version_wanted(args, version) || (version >= 2 && !fused_fits))
                            continue;
                        auto run = [&]() {
                            if (version == 1)
                                bgmv(x, a, b, idx, v, y, batch, d_in, d_out, rank, scale);
                            else if (items > 0) {
                                dim3 grid(version == 3 ? splits : 1, items);
                                bgmv_fused<<<grid, FUSED_THREADS, fused_smem>>>(
                                    x, a, b, order, work, y, d_in, d_out, rank, scale, version == 3 ? cols : d_out);
                                LAUNCH_CHECK();
                            }
                        };
                        fill_uniform_bf16(y, (size_t)batch * d_out, SEED_Y, -1, 1);
                        run();
                        CUDA_CHECK(cudaDeviceSynchronize());
                        // A failure is reported and the sweep goes on (valid = no).
                        int check = std::min(batch, 8);
                        int ok = validate(y, ih.data(), check, d_in, d_out, rank, std::min(distinct, check), scale,
                                          batch, distinct) == 0;
                        invalid += !ok;
                        double t = median_time_s(run, warmup, reps, &fl);
                        lora_op sh, ex;
                        lora_bgmv_ops(batch, d_in, d_out, rank, distinct, 2, 2, &sh, &ex);
                        double wbytes = sh.weight_bytes + ex.weight_bytes;
                        double bytes = wbytes + sh.act_bytes + ex.act_bytes;
                        double peak = dev.datasheet ? gpu_peak_flops(dev.datasheet, DT_BF16) : 0;
                        double roof =
                            peak > 0 ? roofline_time(sh.flop, sh.weight_bytes + sh.act_bytes, peak, bw, NULL) +
                                           roofline_time(ex.flop, ex.weight_bytes + ex.act_bytes, peak, bw, NULL)
                                     : bytes / bw;
                        double floor_ratio = t / (bytes / bw);
                        fprintf(out, "%s\t%d\t%d\t%d\t%d\t%d\t%.6e\t%.0f\t%.0f\t%.1f\t%.1f\t%.6e\t%.3f\t%s\tv%d\n",
                                shapes[s].name, d_in, d_out, rank, batch, distinct, t, wbytes, bytes, bytes / t / GB,
                                100 * bytes / t / bw, roof, floor_ratio, ok ? "yes" : "no", version);
                        if (s == 0 && rank == 16 && version == 1) {
                            if (batch == 1)
                                punica_b1 = t;
                            if (batch == 64 && distinct == 64)
                                punica_b64_distinct = t;
                            if (batch == 64 && distinct == 1)
                                punica_b64_shared = t;
                        }
                        // The target: the best valid version's time over the floor.
                        if (s == 0 && rank == 16 && batch == 64 && distinct == 64 && ok && !(floor_b64 <= floor_ratio))
                            floor_b64 = floor_ratio;
                    }
                }
            }
            printf("lora_bgmv %-13s rank %-3d batch 1..%d, D 1..min(B,64): validated and timed\n", shapes[s].name,
                   rank, batches[nbatches - 1]);
        }
    }
    tsv_close(out);
    printf("  8B q, rank 16, v1: batch 1 %.1f us; batch 64 all distinct %.1f us, one shared %.1f us "
           "(Punica, A100, rank 16: about 37, 116 and 40 us)\n",
           punica_b1 * 1e6, punica_b64_distinct * 1e6, punica_b64_shared * 1e6);
    // The book's target: within 10 % of the byte floor (time <= 1.1 x bytes / read).
    report_target("BGMV batch 64, 64 adapters, time / byte floor", floor_b64, "x", 1.1, 0, "H200");
    fl.release();
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(a));
    CUDA_CHECK(cudaFree(b));
    CUDA_CHECK(cudaFree(y));
    CUDA_CHECK(cudaFree(v));
    CUDA_CHECK(cudaFree(idx));
    CUDA_CHECK(cudaFree(order));
    CUDA_CHECK(cudaFree(work));
    return finish("lora_bgmv", invalid);
}
