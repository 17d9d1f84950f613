// One decode step of attention over a KV cache with grouped-query heads
// (LLaMA-3-8B: 32 query heads, 8 KV heads, head dim 128; from
// code/specs/models.tsv), contiguous and paged (block 16) layouts, context
// 1k ... 128k, batch 1, 16 and 32.  Split-KV ("flash-decoding"): each block
// takes a chunk of positions for one KV head and all the query heads that
// share it, with an online softmax.  The K and V bytes read over the time,
// against the measured read ceiling and against a read of the run's own
// footprint, is the yardstick.
//
//   v1  a warp per position, lane = 4 dims: shuffles per score, softmax per
//       position; a second kernel merges the splits
//   v2  64-position tiles through a 3-deep cp.async ring in shared memory,
//       a thread per (position, head pair) for scores, softmax once per
//       tile, the split merge by the last block in the same launch
//   v3  v2 with the scores on tensor cores (mma.sync m16n8k16: 16 positions
//       x 16 dims of K from shared memory by ldmatrix, q^T in registers);
//       P V stays in fp32 on the CUDA cores, as the 1e-3 bound needs
//   v4  v3 with a parallel split merge: the last block computes each
//       split's weight once (a thread per split, block-wide max and sum by
//       warp reductions, the weights in the freed ring), then a thread per
//       dim adds the splits with four independent sums; the serial merge of
//       v2 and v3 recomputes exp per split and dim in one dependent chain.
//       Emulated on the host in its order by
//       decode_attention_split_pmerge_f32 (tests/test_measure.c).
//   v5  no block barrier while a split is read: each warp streams its own
//       16 positions of every tile through its own cp.async ring and keeps
//       its softmax state and accumulator in registers; scores and P V on
//       tensor cores, P split into bf16 high and low parts; the warps merge
//       once per split, the splits as in v4; the page size a template
//       parameter.  Emulated on the host in its order by
//       decode_attention_v5_emulate (tests/test_attention_v5.c).
//
// One version at a time: validated (atol 1e-5 + rtol 1e-3 |ref|, peaked
// scores) at 1000 and 4096 positions and at the measured batch 1 x 32k,
// then its sweep timed (every measured run up to 32k checked too) and its
// rows written, before the next version starts; an invalid result is marked
// and the sweep goes on.  A crash in one version so keeps every earlier
// version's rows.  `decode_attention 5` (or --version 5, or 1,2,4) runs the
// versions named.
//
//   decode_attention [VERSION] [--version LIST] [--out DIR] [--bandwidth DIR/bandwidth.tsv]
//                    [--flush read|memset] [--quick]
//                    writes DIR/decode_attention_sweep.tsv (every version, G = 4) and
//                    DIR/decode_attention_g8.tsv (every version, G = 8) as each version finishes,
//                    and at the end DIR/decode_attention.tsv (the fastest valid version per configuration)
#include "common.cuh"
#include "attn_v5_index.h"

#include <math.h>

#include <algorithm>

#define HEAD_DIM 128
#define VERSIONS 5
#define WARPS 4
#define UNROLL 4

// 4 bf16 (8 bytes) to floats.
__device__ __forceinline__ void unpack4(uint2 u, float f[4])
{
    const __nv_bfloat162 *h = reinterpret_cast<const __nv_bfloat162 *>(&u);
    float2 a = __bfloat1622float2(h[0]), b = __bfloat1622float2(h[1]);
    f[0] = a.x, f[1] = a.y, f[2] = b.x, f[3] = b.y;
}

// grid (splits, kv_heads, batch), block WARPS * 32.  Lane l owns dims
// [4l, 4l + 4); warp w takes positions start + w, start + w + WARPS, ...
// Writes the unnormalised output and (max, sum) of its chunk per query head.
template <int G>
__global__ void __launch_bounds__(WARPS * 32)
    attn_split(const bf16 *__restrict__ q, const bf16 *__restrict__ kc, const bf16 *__restrict__ vc, kv_layout L,
               int chunk, int splits, float scale, float *__restrict__ part_o, float2 *__restrict__ part_ml)
{
    const int split = blockIdx.x, kvh = blockIdx.y, seq = blockIdx.z;
    const int warp = threadIdx.x / 32, lane = threadIdx.x % 32;
    const int heads = L.kv_heads * G;
    const int start = split * chunk, end = min(L.context, start + chunk);

    float qf[G][4];
#pragma unroll
    for (int g = 0; g < G; g++) {
        const bf16 *qh = q + ((size_t)seq * heads + kvh * G + g) * HEAD_DIM + lane * 4;
        unpack4(*reinterpret_cast<const uint2 *>(qh), qf[g]);
#pragma unroll
        for (int i = 0; i < 4; i++)
            qf[g][i] *= scale;
    }
    float m[G], l[G], acc[G][4];
#pragma unroll
    for (int g = 0; g < G; g++) {
        m[g] = -INFINITY;
        l[g] = 0;
        for (int i = 0; i < 4; i++)
            acc[g][i] = 0;
    }
    for (int t0 = start + warp; t0 < end; t0 += WARPS * UNROLL) {
        // Issue all loads of UNROLL positions before using any: bytes in flight.
        uint2 kr[UNROLL], vr[UNROLL];
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            int t = t0 + u * WARPS;
            kr[u] = vr[u] = make_uint2(0, 0);
            if (t < end) {
                kr[u] = __ldg(reinterpret_cast<const uint2 *>(kc + kv_index(&L, seq, kvh, t, lane * 4)));
                vr[u] = __ldg(reinterpret_cast<const uint2 *>(vc + kv_index(&L, seq, kvh, t, lane * 4)));
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            if (t0 + u * WARPS >= end)
                continue; // the positions past the end, all in the last step
            float kf[4], vf[4];
            unpack4(kr[u], kf);
            unpack4(vr[u], vf);
#pragma unroll
            for (int g = 0; g < G; g++) {
                float s = qf[g][0] * kf[0] + qf[g][1] * kf[1] + qf[g][2] * kf[2] + qf[g][3] * kf[3];
                for (int o = 16; o > 0; o >>= 1)
                    s += __shfl_xor_sync(0xffffffffu, s, o);
                float mn = fmaxf(m[g], s);
                float corr = __expf(m[g] - mn), p = __expf(s - mn);
                l[g] = l[g] * corr + p;
#pragma unroll
                for (int i = 0; i < 4; i++)
                    acc[g][i] = acc[g][i] * corr + p * vf[i];
                m[g] = mn;
            }
        }
    }
    // Merge the warps of the block.
    __shared__ float sm_m[WARPS][G], sm_l[WARPS][G], sm_acc[WARPS][G][HEAD_DIM];
#pragma unroll
    for (int g = 0; g < G; g++) {
        if (lane == 0) {
            sm_m[warp][g] = m[g];
            sm_l[warp][g] = l[g];
        }
        for (int i = 0; i < 4; i++)
            sm_acc[warp][g][lane * 4 + i] = acc[g][i];
    }
    __syncthreads();
    for (int idx = threadIdx.x; idx < G * HEAD_DIM; idx += blockDim.x) {
        int g = idx / HEAD_DIM, d = idx % HEAD_DIM;
        float mx = -INFINITY;
        for (int w = 0; w < WARPS; w++)
            mx = fmaxf(mx, sm_m[w][g]);
        float o = 0, sum = 0;
        for (int w = 0; w < WARPS; w++) {
            float f = sm_m[w][g] == -INFINITY ? 0.f : __expf(sm_m[w][g] - mx);
            o += sm_acc[w][g][d] * f;
            sum += sm_l[w][g] * f;
        }
        size_t slot = ((size_t)seq * heads + kvh * G + g) * splits + split;
        part_o[slot * HEAD_DIM + d] = o;
        if (d == 0)
            part_ml[slot] = make_float2(mx, sum);
    }
}

// grid (heads, batch), block HEAD_DIM: merge the splits of one query head.
__global__ void attn_merge(const float *__restrict__ part_o, const float2 *__restrict__ part_ml, int heads, int splits,
                           float *__restrict__ out)
{
    int h = blockIdx.x, seq = blockIdx.y, d = threadIdx.x;
    size_t base = ((size_t)seq * heads + h) * splits;
    float mx = -INFINITY;
    for (int s = 0; s < splits; s++)
        mx = fmaxf(mx, part_ml[base + s].x);
    float o = 0, sum = 0;
    for (int s = 0; s < splits; s++) {
        float2 ml = part_ml[base + s];
        float f = ml.x == -INFINITY ? 0.f : __expf(ml.x - mx);
        o += part_o[(base + s) * HEAD_DIM + d] * f;
        sum += ml.y * f;
    }
    out[((size_t)seq * heads + h) * HEAD_DIM + d] = o / sum;
}

// ------------------------------------------------------------ v2
// One block of 128 threads per (sequence, KV head, split).  The split's
// positions go through shared memory in tiles of 64 (K and V, 16 KB each),
// brought by cp.async three tiles deep, so the copy engine keeps the bytes
// in flight while the threads compute on the tile that has landed:
//   scores   thread (position p, head pair) dots K[p] with q (fp32 in shared
//            memory, scaled into the log2 domain): no shuffles
//   softmax  once per tile and head, by one warp: tile max, exp2, sum
//   P V      thread (dim pair, head pair) accumulates P[g][p] V[p][d]
// The last block of a (sequence, KV head) to finish, found by an atomic
// counter, merges the splits in the same launch.
#define TILE 64
#define STAGES 3
#define KROW (HEAD_DIM + 8) // 272-byte rows: 8 lanes reading 16 B of 8 rows hit 8 bank groups
#define V2_THREADS 128

__device__ __forceinline__ void cp_async16(void *smem_dst, const void *gsrc)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(smem_dst);
    asm volatile("cp.async.cg.shared.global [%0], [%1], 16;\n" ::"r"(s), "l"(gsrc));
}
__device__ __forceinline__ void cp_async_commit() { asm volatile("cp.async.commit_group;\n" ::); }
template <int N> __device__ __forceinline__ void cp_async_wait() { asm volatile("cp.async.wait_group %0;\n" ::"n"(N)); }

__device__ __forceinline__ float warp_max(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v = fmaxf(v, __shfl_xor_sync(0xffffffffu, v, o));
    return v;
}
// After a block has written its split's partials: true in every thread of
// the last block of its (sequence, KV head) to get here, which then merges.
// Every thread's writes are made visible before thread 0 counts the block
// in (the threadFenceReduction pattern).
__device__ __forceinline__ bool last_block_to_finish(unsigned *counter, int splits)
{
    __shared__ int is_last;
    __threadfence();
    __syncthreads();
    if (threadIdx.x == 0)
        is_last = atomicAdd(counter, 1u) == (unsigned)splits - 1;
    __syncthreads();
    if (is_last)
        __threadfence();
    return is_last;
}

// v4's and v5's merge of the splits of the G heads from head0 on, by the
// last block (128 threads, one per dim), into out: each split's weight
// exp2(m_sp - m_all) once (a thread per split, block-wide max and sum by
// warp reductions, the weights in w: the block's freed shared memory, a
// float per split), then a thread per dim adds the splits with four
// independent sums.  Emulated on the host in this order by
// decode_attention_split_pmerge_f32 and decode_attention_v5_emulate.
__device__ void merge_splits_parallel(const float *__restrict__ part_o, const float2 *__restrict__ part_ml,
                                      float *__restrict__ out, size_t head0, int G, int splits, float *w)
{
    //> parallel_merge
    static_assert(V2_THREADS == 128 && HEAD_DIM == V2_THREADS, "four warps, a thread per dim");
    const int tid = threadIdx.x, warp = tid / 32, lane = tid % 32;
    __shared__ float red[V2_THREADS / 32];
    for (int g = 0; g < G; g++) {
        const size_t base = (head0 + g) * splits;
        float mx = -INFINITY;
        for (int sp = tid; sp < splits; sp += V2_THREADS)
            mx = fmaxf(mx, __ldcg(&part_ml[base + sp]).x);
        for (int o = 16; o > 0; o >>= 1)
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, o));
        if (lane == 0)
            red[warp] = mx;
        __syncthreads();
        mx = fmaxf(fmaxf(red[0], red[1]), fmaxf(red[2], red[3]));
        __syncthreads();
        float sum = 0;
        for (int sp = tid; sp < splits; sp += V2_THREADS) {
            float2 ml = __ldcg(&part_ml[base + sp]);
            float f = exp2f(ml.x - mx);
            w[sp] = f;
            sum += ml.y * f;
        }
        sum = warp_sum(sum);
        if (lane == 0)
            red[warp] = sum;
        __syncthreads();
        sum = ((red[0] + red[1]) + red[2]) + red[3];
        // Thread tid: dim tid, four independent sums over the splits.
        const float *po = part_o + base * HEAD_DIM + tid;
        float o0 = 0, o1 = 0, o2 = 0, o3 = 0;
        int sp = 0;
        for (; sp + 3 < splits; sp += 4) {
            o0 += __ldcg(po + (size_t)sp * HEAD_DIM) * w[sp];
            o1 += __ldcg(po + (size_t)(sp + 1) * HEAD_DIM) * w[sp + 1];
            o2 += __ldcg(po + (size_t)(sp + 2) * HEAD_DIM) * w[sp + 2];
            o3 += __ldcg(po + (size_t)(sp + 3) * HEAD_DIM) * w[sp + 3];
        }
        for (; sp < splits; sp++)
            o0 += __ldcg(po + (size_t)sp * HEAD_DIM) * w[sp];
        out[(head0 + g) * HEAD_DIM + tid] = ((o0 + o1) + (o2 + o3)) / sum;
        __syncthreads(); // w and red are the next head's
    }
    //< parallel_merge
}

// Rows of v2/v3's score scratch: 68 floats.  v3's tensor-core score
// writes (head 2 t4 + i % 2, position g; lanes g = 0..7, t4 = 0..3) fall
// in banks (8 t4 + g) % 32, one lane a bank; with rows of TILE = 64 floats
// every head's row starts in bank 0 and they fall in banks g alone: 2-way
// at G = 4, 4-way at G = 8 (tests/test_smem_banks.c).  272-byte rows keep
// the float4 reads of P V aligned.
#define PROW (TILE + 4)
static size_t v2_smem_bytes(int G)
{
    return 2 * (size_t)STAGES * TILE * KROW * sizeof(bf16) + (size_t)G * HEAD_DIM * sizeof(float) +
           (size_t)G * PROW * sizeof(float) + 3 * (size_t)G * sizeof(float);
}

// v3's scores on tensor cores: A = 16 positions x 16 dims of the K tile
// (ldmatrix from the padded rows), B = q^T (16 dims x 8 heads, held in
// registers for the whole split; heads past G are zero), fp32 accumulate:
// bf16 products are exact in fp32, so the scores match v2's up to order.
__device__ __forceinline__ void ldmatrix_x4(unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3, const void *p)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(s));
}
template <int G, bool TC, bool PM = false>
__global__ void __launch_bounds__(V2_THREADS)
    attn_v2(const bf16 *__restrict__ q, const bf16 *__restrict__ kc, const bf16 *__restrict__ vc, kv_layout L,
            int chunk, int splits, float scale_log2, float *__restrict__ part_o, float2 *__restrict__ part_ml,
            unsigned *__restrict__ counters, float *__restrict__ out)
{
    static_assert(G % 2 == 0 && G <= 8, "head pairs");
    constexpr int GH = G / 2; // heads per thread in the scores and P V phases
    constexpr int GW = (G + 3) / 4; // heads per warp in the softmax phase
    extern __shared__ __align__(16) unsigned char smem[];
    bf16 *ks = reinterpret_cast<bf16 *>(smem);       // [STAGES][TILE][KROW]
    bf16 *vs = ks + STAGES * TILE * KROW;            // [STAGES][TILE][KROW]
    float *qs = reinterpret_cast<float *>(vs + STAGES * TILE * KROW); // [G][HEAD_DIM]
    float *ps = qs + G * HEAD_DIM;                   // [G][PROW]: scores, then probabilities
    float *corr_s = ps + G * PROW;                   // [G]: rescale of the running sums
    float *m_s = corr_s + G, *l_s = m_s + G;         // [G]: the block's max and sum at the end

    const int split = blockIdx.x, kvh = blockIdx.y, seq = blockIdx.z, tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32;
    const int heads = L.kv_heads * G;
    const int start = split * chunk, end = min(L.context, start + chunk);
    const int ntiles = (end - start + TILE - 1) / TILE;

    for (int i = tid; i < G * HEAD_DIM; i += V2_THREADS)
        qs[i] = __bfloat162float(q[((size_t)seq * heads + kvh * G) * HEAD_DIM + i]) * scale_log2;
    // TC: the B fragments of q^T for the 8 16-dim steps: lane (g, t) holds
    // q[head g][16 s + 2t, +1] and [16 s + 2t + 8, +9].
    unsigned qb[HEAD_DIM / 16][2];
#pragma unroll
    for (int st = 0; st < HEAD_DIM / 16; st++) {
        const int g = lane >> 2, t4 = lane & 3;
        const bf16 *qh = q + ((size_t)seq * heads + kvh * G + (g < G ? g : 0)) * HEAD_DIM + st * 16 + 2 * t4;
        qb[st][0] = TC && g < G ? *reinterpret_cast<const unsigned *>(qh) : 0u;
        qb[st][1] = TC && g < G ? *reinterpret_cast<const unsigned *>(qh + 8) : 0u;
    }

    // Tile t of this split into ring slot `stage`: 64 rows of 16 chunks of
    // 16 bytes, K and V; rows past the end are zeroed (their scores are
    // set to -inf below, and 0 * V must not meet stale NaNs).
    auto load_tile = [&](int t, int stage) {
        const int p0 = start + t * TILE;
        for (int c = tid; c < TILE * 16; c += V2_THREADS) {
            const int r = c >> 4, col = (c & 15) * 8, pos = p0 + r;
            bf16 *kd = ks + ((size_t)stage * TILE + r) * KROW + col;
            bf16 *vd = vs + ((size_t)stage * TILE + r) * KROW + col;
            if (pos < end) {
                const size_t idx = kv_index(&L, seq, kvh, pos, col);
                cp_async16(kd, kc + idx);
                cp_async16(vd, vc + idx);
            } else {
                *reinterpret_cast<uint4 *>(kd) = make_uint4(0, 0, 0, 0);
                *reinterpret_cast<uint4 *>(vd) = make_uint4(0, 0, 0, 0);
            }
        }
    };
#pragma unroll
    for (int st = 0; st < STAGES - 1; st++) {
        if (st < ntiles)
            load_tile(st, st);
        cp_async_commit();
    }

    float m_run[GW], l_run[GW]; // softmax state of heads warp + 4 j, in every lane of that warp
#pragma unroll
    for (int j = 0; j < GW; j++)
        m_run[j] = -INFINITY, l_run[j] = 0;
    const int p_me = tid & 63, d2 = tid & 63, hh = tid >> 6; // hh: heads hh, hh + 2, ...
    float acc[GH][2];
#pragma unroll
    for (int j = 0; j < GH; j++)
        acc[j][0] = acc[j][1] = 0;

    for (int t = 0; t < ntiles; t++) {
        const int stage = t % STAGES, tn = t + STAGES - 1;
        if (tn < ntiles) // the slot of tile t - 1, released by the barrier that ended it
            load_tile(tn, tn % STAGES);
        cp_async_commit();
        cp_async_wait<STAGES - 1>(); // groups complete in order: tile t has landed
        __syncthreads();
        const bf16 *kt = ks + (size_t)stage * TILE * KROW, *vt = vs + (size_t)stage * TILE * KROW;
        const int p0 = start + t * TILE;

        if (TC) { // warp w: positions 16 w ... 16 w + 15 of the tile, all heads
            const int pos0 = warp * 16, mi = lane >> 3, r = lane & 7;
            const bf16 *arow = kt + (pos0 + r + 8 * (mi & 1)) * KROW + 8 * (mi >> 1);
            float c[4] = {0, 0, 0, 0};
#pragma unroll
            for (int st = 0; st < HEAD_DIM / 16; st++) {
                unsigned a0, a1, a2, a3;
                ldmatrix_x4(a0, a1, a2, a3, arow + st * 16);
                mma_bf16_16816(c, a0, a1, a2, a3, qb[st][0], qb[st][1]);
            }
            // c0, c1: position g, heads 2t, 2t + 1; c2, c3: position g + 8
            const int g = lane >> 2, t4 = lane & 3;
#pragma unroll
            for (int i = 0; i < 4; i++) {
                const int pos = pos0 + g + (i >= 2 ? 8 : 0), head = 2 * t4 + (i & 1);
                if (head < G)
                    ps[head * PROW + pos] = p0 + pos < end ? c[i] * scale_log2 : -INFINITY;
            }
        } else { // scores of position p_me for heads hh + 2 j
            float sc[GH];
#pragma unroll
            for (int j = 0; j < GH; j++)
                sc[j] = 0;
            const uint4 *krow = reinterpret_cast<const uint4 *>(kt + p_me * KROW);
#pragma unroll
            for (int c = 0; c < HEAD_DIM / 8; c++) {
                float kf[8];
                unpack8(krow[c], kf);
#pragma unroll
                for (int j = 0; j < GH; j++) {
                    const float4 *qv = reinterpret_cast<const float4 *>(qs + (hh + 2 * j) * HEAD_DIM + c * 8);
                    float4 a = qv[0], b = qv[1];
                    sc[j] += a.x * kf[0] + a.y * kf[1] + a.z * kf[2] + a.w * kf[3] + b.x * kf[4] + b.y * kf[5] +
                             b.z * kf[6] + b.w * kf[7];
                }
            }
#pragma unroll
            for (int j = 0; j < GH; j++)
                ps[(hh + 2 * j) * PROW + p_me] = p0 + p_me < end ? sc[j] : -INFINITY;
        }
        __syncthreads();
#pragma unroll
        for (int j = 0; j < GW; j++) { // softmax of head g over the tile, by warp g % 4
            const int g = warp + 4 * j;
            if (g < G) {
                float a = ps[g * PROW + lane], b = ps[g * PROW + lane + 32];
                float mn = fmaxf(m_run[j], warp_max(fmaxf(a, b))); // finite: a tile has a valid position
                float pa = exp2f(a - mn), pb = exp2f(b - mn), corr = exp2f(m_run[j] - mn);
                l_run[j] = l_run[j] * corr + warp_sum(pa + pb);
                m_run[j] = mn;
                ps[g * PROW + lane] = pa;
                ps[g * PROW + lane + 32] = pb;
                if (lane == 0)
                    corr_s[g] = corr;
            }
        }
        __syncthreads();
        { // P V for dims 2 d2, 2 d2 + 1 and heads hh + 2 j
#pragma unroll
            for (int j = 0; j < GH; j++) {
                float c = corr_s[hh + 2 * j];
                acc[j][0] *= c;
                acc[j][1] *= c;
            }
#pragma unroll 4
            for (int p = 0; p < TILE; p += 4) {
                float4 pr[GH];
#pragma unroll
                for (int j = 0; j < GH; j++)
                    pr[j] = *reinterpret_cast<const float4 *>(ps + (hh + 2 * j) * PROW + p);
#pragma unroll
                for (int u = 0; u < 4; u++) {
                    float2 vf = __bfloat1622float2(*reinterpret_cast<const __nv_bfloat162 *>(vt + (p + u) * KROW + 2 * d2));
#pragma unroll
                    for (int j = 0; j < GH; j++) {
                        float w = u == 0 ? pr[j].x : u == 1 ? pr[j].y : u == 2 ? pr[j].z : pr[j].w;
                        acc[j][0] = fmaf(w, vf.x, acc[j][0]);
                        acc[j][1] = fmaf(w, vf.y, acc[j][1]);
                    }
                }
            }
        }
        __syncthreads(); // the slot and ps are free for the next tile
    }
    cp_async_wait<0>();

#pragma unroll
    for (int j = 0; j < GW; j++) {
        const int g = warp + 4 * j;
        if (g < G && lane == 0)
            m_s[g] = m_run[j], l_s[g] = l_run[j];
    }
    __syncthreads();
    if (splits == 1) { // nothing to merge
#pragma unroll
        for (int j = 0; j < GH; j++) {
            const int g = hh + 2 * j;
            float *o = out + ((size_t)seq * heads + kvh * G + g) * HEAD_DIM + 2 * d2;
            o[0] = acc[j][0] / l_s[g];
            o[1] = acc[j][1] / l_s[g];
        }
        return;
    }
#pragma unroll
    for (int j = 0; j < GH; j++) {
        const int g = hh + 2 * j;
        const size_t slot = ((size_t)seq * heads + kvh * G + g) * splits + split;
        part_o[slot * HEAD_DIM + 2 * d2] = acc[j][0];
        part_o[slot * HEAD_DIM + 2 * d2 + 1] = acc[j][1];
        if (d2 == 0)
            part_ml[slot] = make_float2(m_s[g], l_s[g]);
    }
    if (!last_block_to_finish(&counters[seq * L.kv_heads + kvh], splits))
        return;
    if (PM) {
        merge_splits_parallel(part_o, part_ml, out, (size_t)seq * heads + kvh * G, G, splits,
                              reinterpret_cast<float *>(smem));
    } else {
        for (int g = 0; g < G; g++) { // thread tid: dim tid of every head
            const size_t base = ((size_t)seq * heads + kvh * G + g) * splits;
            float mx = -INFINITY;
            for (int sp = 0; sp < splits; sp++)
                mx = fmaxf(mx, __ldcg(&part_ml[base + sp]).x);
            float o = 0, sum = 0;
            for (int sp = 0; sp < splits; sp++) {
                float2 ml = __ldcg(&part_ml[base + sp]);
                float f = exp2f(ml.x - mx);
                o += __ldcg(&part_o[(base + sp) * HEAD_DIM + tid]) * f;
                sum += ml.y * f;
            }
            out[((size_t)seq * heads + kvh * G + g) * HEAD_DIM + tid] = o / sum;
        }
    }
    if (tid == 0)
        counters[seq * L.kv_heads + kvh] = 0; // ready for the next launch
}

// ------------------------------------------------------------ v5
// The shape of the fastest decode kernels: no block-wide barrier while the
// split is read.  Each of the 4 warps of a block streams its own 16
// positions of every 64-position tile (for a page of 16, one page) through
// its own 3-deep cp.async ring, and keeps its own softmax state in
// registers: lane (g, t) holds the running max and a partial sum of heads
// 2t and 2t + 1, and the accumulator O^T (128 dims x 8 heads) as 8 m16n8
// fragments.  Per tile and warp:
//   scores  S = K q^T on tensor cores (as v3): 16 positions x 8 heads
//   softmax the tile max per head by 3 shuffles; p = exp2(s - m) in fp32
//   P V     O^T += V^T P^T on tensor cores: V^T by ldmatrix.trans from the
//           ring, P^T through 1 KB of the warp's shared memory, split into
//           bf16 hi + lo (P = hi + lo within 2^-16 relative, hi's
//           rounding error rounded again; a single bf16 P, off by up to
//           2^-8, misses the 1e-3 bound at 32k with peaked scores),
//           two mma per 16 dims, fp32 accumulate
// The warps merge once, at the end of the split, and the splits merge as
// in v4.  The page size is a template parameter (0: contiguous), so each
// tile's address is one table read and a multiply, hoisted out of the copy
// loop.  Emulated on the host in its order by decode_attention_v5_emulate.
#define V5_ROWS 16               // positions per warp and tile
// Floats per head row of the P scratch.  The four scalar writes per lane
// are conflict-free at 20 (head 2 t4 + i % 2 starts in bank 8 t4 (+ 20));
// the two float2 reads per lane and tile are 2-way conflicted (a half warp,
// heads g = 0..3, finds banks 0-3 under heads 0 and 3).  No row length
// serves both: conflict-free writes need 2 V5_PSTRIDE = 8 or 24 (mod 32),
// conflict-free reads V5_PSTRIDE = 8 or 24 (mod 32) (tests/test_smem_banks.c);
// the reads, 2 per 16 positions, cost less than the writes would.
#define V5_PSTRIDE 20
// Floats per head row of the warps' merge scratch: lane (g, t4) writes
// dim 16 j + g of head 2 t4 + h, so rows of HEAD_DIM floats put the four
// t4 in one bank (4-way at G = 8, 2-way at G = 4); 132 moves them 8 banks apart.
#define V5_WROW (HEAD_DIM + 4)
static size_t v5_smem_bytes(void)
{
    return (size_t)WARPS * (2 * STAGES * V5_ROWS * KROW * sizeof(bf16) + 8 * V5_PSTRIDE * sizeof(float));
}

__device__ __forceinline__ void ldmatrix_x4_trans(unsigned &r0, unsigned &r1, unsigned &r2, unsigned &r3, const void *p)
{
    unsigned s = (unsigned)__cvta_generic_to_shared(p);
    asm volatile("ldmatrix.sync.aligned.m8n8.x4.trans.shared.b16 {%0, %1, %2, %3}, [%4];\n"
                 : "=r"(r0), "=r"(r1), "=r"(r2), "=r"(r3)
                 : "r"(s));
}

// Two probabilities as bf16 pairs hi and lo with p = hi + lo (lo the
// rounding error of hi, itself rounded): the low half holds the first.
__device__ __forceinline__ void split_hi_lo(float2 p, unsigned &hi, unsigned &lo)
{
    __nv_bfloat162 h = __floats2bfloat162_rn(p.x, p.y);
    float2 hf = __bfloat1622float2(h);
    __nv_bfloat162 l = __floats2bfloat162_rn(p.x - hf.x, p.y - hf.y);
    hi = *reinterpret_cast<unsigned *>(&h);
    lo = *reinterpret_cast<unsigned *>(&l);
}

template <int G, int PAGE>
__global__ void __launch_bounds__(V2_THREADS)
    attn_v5(const bf16 *__restrict__ q, const bf16 *__restrict__ kc, const bf16 *__restrict__ vc, kv_layout L,
            int chunk, int splits, float scale_log2, float *__restrict__ part_o, float2 *__restrict__ part_ml,
            unsigned *__restrict__ counters, float *__restrict__ out)
{
    static_assert(G == 4 || G == 8, "at most 8 heads: the n of one m16n8k16");
    static_assert(PAGE == 0 || PAGE % V5_ROWS == 0, "a warp's 16 positions within one page");
    static_assert(V2_THREADS == WARPS * 32 && TILE == WARPS * V5_ROWS, "4 warps of 16 positions per tile");
    extern __shared__ __align__(16) unsigned char smem[];
    const int split = blockIdx.x, kvh = blockIdx.y, seq = blockIdx.z, tid = threadIdx.x;
    const int warp = tid / 32, lane = tid % 32, g = lane >> 2;
    const int heads = L.kv_heads * G;
    const int start = split * chunk, end = min(L.context, start + chunk);
    const int ntiles = (end - start + TILE - 1) / TILE;
    // This warp's ring ([STAGES][K, V][16][KROW]) and P scratch ([8][V5_PSTRIDE]).
    bf16 *ring = reinterpret_cast<bf16 *>(smem) + (size_t)warp * 2 * STAGES * V5_ROWS * KROW;
    float *pscr = reinterpret_cast<float *>(reinterpret_cast<bf16 *>(smem) + (size_t)WARPS * 2 * STAGES * V5_ROWS * KROW) +
                  warp * 8 * V5_PSTRIDE;

    // q^T as B fragments for the 8 16-dim steps (as v3; heads past G zero).
    unsigned qb[HEAD_DIM / 16][2];
#pragma unroll
    for (int st = 0; st < HEAD_DIM / 16; st++) {
        const bf16 *qh = q + ((size_t)seq * heads + kvh * G + (g < G ? g : 0)) * HEAD_DIM;
        qb[st][0] = g < G ? *reinterpret_cast<const unsigned *>(qh + attn_v5_q_dim(lane, st, 0)) : 0u;
        qb[st][1] = g < G ? *reinterpret_cast<const unsigned *>(qh + attn_v5_q_dim(lane, st, 1)) : 0u;
    }

    // The copy of tile t: lane l moves the 16-byte chunks l, l + 32, ... of
    // the warp's 16 rows (row l / 16 + 2 i, column 8 (l % 16)); the rows are
    // adjacent in both layouts, so one base address per tile serves all 8.
    const int ccol = attn_v5_copy_col(lane);
    const size_t contiguous_base = (((size_t)seq * L.kv_heads + kvh) * L.context + start + warp * V5_ROWS) * HEAD_DIM;
    auto load_tile = [&](int t, int stage) {
        const int pos0 = start + t * TILE + warp * V5_ROWS;
        bf16 *kd = ring + (size_t)stage * 2 * V5_ROWS * KROW, *vd = kd + V5_ROWS * KROW;
        size_t base = 0;
        if (pos0 < end) {
            if constexpr (PAGE == 0)
                base = contiguous_base + (size_t)t * TILE * HEAD_DIM;
            else {
                const int phys = L.block_table[(size_t)seq * L.blocks_per_seq + pos0 / PAGE];
                base = (((size_t)phys * L.kv_heads + kvh) * PAGE + pos0 % PAGE) * HEAD_DIM;
            }
        }
#pragma unroll
        for (int i = 0; i < V5_ROWS / 2; i++) {
            const int r = attn_v5_copy_row(lane, i);
            bf16 *ks_ = kd + r * KROW + ccol, *vs_ = vd + r * KROW + ccol;
            if (pos0 + r < end) {
                cp_async16(ks_, kc + base + r * HEAD_DIM + ccol);
                cp_async16(vs_, vc + base + r * HEAD_DIM + ccol);
            } else { // past the end: zero (its score is -inf; 0 * V must not meet stale NaNs)
                *reinterpret_cast<uint4 *>(ks_) = make_uint4(0, 0, 0, 0);
                *reinterpret_cast<uint4 *>(vs_) = make_uint4(0, 0, 0, 0);
            }
        }
    };
#pragma unroll
    for (int st = 0; st < STAGES - 1; st++) {
        if (st < ntiles)
            load_tile(st, st);
        cp_async_commit();
    }

    float m_run[2] = {-INFINITY, -INFINITY}, l_part[2] = {0, 0}; // heads 2 t4, 2 t4 + 1
    float acc[HEAD_DIM / 16][4];                                   // O^T: dims 16 j + g (+ 8), heads 2 t4 (+ 1)
#pragma unroll
    for (int j = 0; j < HEAD_DIM / 16; j++)
        acc[j][0] = acc[j][1] = acc[j][2] = acc[j][3] = 0;
    for (int t = 0; t < ntiles; t++) {
        const int tn = t + STAGES - 1;
        if (tn < ntiles) // the slot of tile t - 1, released by the __syncwarp that ended it
            load_tile(tn, tn % STAGES);
        cp_async_commit();
        cp_async_wait<STAGES - 1>(); // this lane's copies of tile t have landed
        __syncwarp();                 // and every lane's
        const bf16 *kt = ring + (size_t)(t % STAGES) * 2 * V5_ROWS * KROW, *vt = kt + V5_ROWS * KROW;
        const int pos0 = start + t * TILE + warp * V5_ROWS;

        // Scores: c0, c1 position g, heads 2 t4, 2 t4 + 1; c2, c3 position g + 8.
        float c[4] = {0, 0, 0, 0};
        {
            const bf16 *arow = kt + attn_v5_k_ldsm(lane, KROW);
#pragma unroll
            for (int st = 0; st < HEAD_DIM / 16; st++) {
                unsigned a0, a1, a2, a3;
                ldmatrix_x4(a0, a1, a2, a3, arow + st * 16);
                mma_bf16_16816(c, a0, a1, a2, a3, qb[st][0], qb[st][1]);
            }
        }
        const bool in0 = pos0 + attn_v5_score_pos(lane, 0) < end, in1 = pos0 + attn_v5_score_pos(lane, 2) < end;
        float s[4] = {in0 ? c[0] * scale_log2 : -INFINITY, in0 ? c[1] * scale_log2 : -INFINITY,
                      in1 ? c[2] * scale_log2 : -INFINITY, in1 ? c[3] * scale_log2 : -INFINITY};
        float corr[2];
#pragma unroll
        for (int h = 0; h < 2; h++) { // head 2 t4 + h: max over the 8 lanes of this t4
            float mx = fmaxf(s[h], s[h + 2]);
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 4));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 8));
            mx = fmaxf(mx, __shfl_xor_sync(0xffffffffu, mx, 16));
            const float mn = fmaxf(m_run[h], mx);
            const float mu = mn == -INFINITY ? 0.f : mn; // no valid position yet: nothing to scale
            corr[h] = exp2f(m_run[h] - mu);
            s[h] = exp2f(s[h] - mu);
            s[h + 2] = exp2f(s[h + 2] - mu);
            l_part[h] = l_part[h] * corr[h] + (s[h] + s[h + 2]);
            m_run[h] = mn;
        }
        // P^T as B fragments: lane (g, t4) needs P[head g][positions 2 t4, +1, +8, +9].
#pragma unroll
        for (int i = 0; i < 4; i++)
            pscr[attn_v5_p_write(lane, i, V5_PSTRIDE)] = s[i];
        __syncwarp();
        unsigned b_hi[2], b_lo[2];
        split_hi_lo(*reinterpret_cast<const float2 *>(pscr + attn_v5_p_read(lane, 0, V5_PSTRIDE)), b_hi[0], b_lo[0]);
        split_hi_lo(*reinterpret_cast<const float2 *>(pscr + attn_v5_p_read(lane, 1, V5_PSTRIDE)), b_hi[1], b_lo[1]);
        // O^T = O^T corr + V^T P^T: A = V^T (16 dims x 16 positions) by ldmatrix.trans.
        const bf16 *vrow = vt + attn_v5_v_ldsm(lane, KROW);
#pragma unroll
        for (int j = 0; j < HEAD_DIM / 16; j++) {
            acc[j][0] *= corr[0];
            acc[j][1] *= corr[1];
            acc[j][2] *= corr[0];
            acc[j][3] *= corr[1];
            unsigned a0, a1, a2, a3;
            ldmatrix_x4_trans(a0, a1, a2, a3, vrow + j * 16);
            mma_bf16_16816(acc[j], a0, a1, a2, a3, b_hi[0], b_hi[1]);
            mma_bf16_16816(acc[j], a0, a1, a2, a3, b_lo[0], b_lo[1]);
        }
        __syncwarp(); // the ring slot and the scratch are free for the next tile
    }
    cp_async_wait<0>();
#pragma unroll
    for (int h = 0; h < 2; h++) { // the sum over the 8 lanes of this t4
        l_part[h] += __shfl_xor_sync(0xffffffffu, l_part[h], 4);
        l_part[h] += __shfl_xor_sync(0xffffffffu, l_part[h], 8);
        l_part[h] += __shfl_xor_sync(0xffffffffu, l_part[h], 16);
    }

    // The one merge of the 4 warps, through the freed rings: thread tid
    // takes dim tid of every head, the warps in order.
    __syncthreads();
    float *wacc = reinterpret_cast<float *>(smem);      // [WARPS][G][V5_WROW]
    float *wm = wacc + WARPS * G * V5_WROW, *wl = wm + WARPS * G; // [WARPS][G]
#pragma unroll
    for (int h = 0; h < 2; h++) {
        const int head = attn_v5_acc_head(lane, h);
        if (head < G) {
#pragma unroll
            for (int j = 0; j < HEAD_DIM / 16; j++) {
                wacc[attn_v5_wacc(warp, head, G, attn_v5_acc_dim(lane, j, h), V5_WROW)] = acc[j][h];
                wacc[attn_v5_wacc(warp, head, G, attn_v5_acc_dim(lane, j, h + 2), V5_WROW)] = acc[j][h + 2];
            }
            if (g == 0)
                wm[warp * G + head] = m_run[h], wl[warp * G + head] = l_part[h];
        }
    }
    __syncthreads();
    for (int head = 0; head < G; head++) {
        float mx = -INFINITY;
#pragma unroll
        for (int w = 0; w < WARPS; w++)
            mx = fmaxf(mx, wm[w * G + head]); // finite: a split holds a valid position
        float o = 0, sum = 0;
#pragma unroll
        for (int w = 0; w < WARPS; w++) {
            const float mw = wm[w * G + head], f = mw == -INFINITY ? 0.f : exp2f(mw - mx);
            o += wacc[attn_v5_wacc(w, head, G, tid, V5_WROW)] * f;
            sum += wl[w * G + head] * f;
        }
        const size_t h_all = (size_t)seq * heads + kvh * G + head;
        if (splits == 1)
            out[h_all * HEAD_DIM + tid] = o / sum;
        else {
            part_o[(h_all * splits + split) * HEAD_DIM + tid] = o;
            if (tid == 0)
                part_ml[h_all * splits + split] = make_float2(mx, sum);
        }
    }
    if (splits == 1 || !last_block_to_finish(&counters[seq * L.kv_heads + kvh], splits))
        return;
    merge_splits_parallel(part_o, part_ml, out, (size_t)seq * heads + kvh * G, G, splits, wacc + WARPS * G * V5_WROW + 2 * WARPS * G);
    if (tid == 0)
        counters[seq * L.kv_heads + kvh] = 0; // ready for the next launch
}

struct attn_plan {
    int splits, chunk;
};

// v1: enough blocks to fill the GPU about four times over.
static attn_plan plan_for(int context, int batch, int kv_heads, int sms)
{
    int want = (4 * sms + batch * kv_heads - 1) / (batch * kv_heads);
    if (want < 1)
        want = 1;
    int chunk = (context + want - 1) / want;
    chunk = (chunk + 15) / 16 * 16;
    attn_plan p = {(context + chunk - 1) / chunk, chunk};
    return p;
}

// v2: one wave of resident blocks (the occupancy API), whole tiles per split.
static attn_plan plan_v2(int context, int batch, int kv_heads, int resident_blocks)
{
    int want = resident_blocks / (batch * kv_heads); // no partial second wave
    if (want < 1)
        want = 1;
    int chunk = (context + want - 1) / want;
    chunk = (chunk + TILE - 1) / TILE * TILE;
    attn_plan p = {(context + chunk - 1) / chunk, chunk};
    return p;
}

struct attn_bufs {
    float *part_o;
    float2 *part_ml;
    unsigned *counters; // batch * kv_heads, zero between launches
    float *out;
};

template <int G> static void v2_prepare(void)
{
    CUDA_CHECK(cudaFuncSetAttribute(attn_v2<G, false>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)v2_smem_bytes(G)));
    CUDA_CHECK(cudaFuncSetAttribute(attn_v2<G, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)v2_smem_bytes(G)));
    CUDA_CHECK(cudaFuncSetAttribute(attn_v2<G, true, true>, cudaFuncAttributeMaxDynamicSharedMemorySize,
                                    (int)v2_smem_bytes(G)));
}

template <int G> static void v5_prepare(void)
{
    CUDA_CHECK(cudaFuncSetAttribute(attn_v5<G, 0>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v5_smem_bytes()));
    CUDA_CHECK(cudaFuncSetAttribute(attn_v5<G, 16>, cudaFuncAttributeMaxDynamicSharedMemorySize, (int)v5_smem_bytes()));
}

static int v5_resident_blocks(int G, int sms)
{
    int per_sm = 0;
    if (G == 4)
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, attn_v5<4, 0>, V2_THREADS, v5_smem_bytes()));
    else
        CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, attn_v5<8, 0>, V2_THREADS, v5_smem_bytes()));
    return (per_sm > 0 ? per_sm : 1) * sms;
}

static int v2_resident_blocks(int G, int sms)
{
    int per_sm = 0;
    if (G == 4)
        CUDA_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, attn_v2<4, false>, V2_THREADS, v2_smem_bytes(4)));
    else
        CUDA_CHECK(
            cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, attn_v2<8, false>, V2_THREADS, v2_smem_bytes(8)));
    return (per_sm > 0 ? per_sm : 1) * sms;
}

static void attention(int version, int G, const bf16 *q, const bf16 *k, const bf16 *v, const kv_layout &L, int batch,
                      const attn_plan &p, const attn_bufs &b)
{
    dim3 grid(p.splits, L.kv_heads, batch);
    float scale = 1.0f / sqrtf((float)HEAD_DIM);
    if (G != 4 && G != 8) {
        fprintf(stderr, "decode_attention: query heads per KV head %d not built (4, 8)\n", G);
        exit(1);
    }
    if (version >= 4 && (size_t)p.splits * sizeof(float) + (size_t)(HEAD_DIM + 2) * WARPS * G * sizeof(float) >
                            2 * (size_t)STAGES * TILE * KROW * sizeof(bf16)) {
        fprintf(stderr, "decode_attention: %d splits do not fit v%d's merge weights in the ring\n", p.splits, version);
        exit(1);
    }
    if (version == 5) {
        float scale_log2 = scale * 1.4426950408889634f;
        size_t sm = v5_smem_bytes();
        if (L.block != 0 && L.block != 16) {
            fprintf(stderr, "decode_attention: v5 built for contiguous and page 16, not page %d\n", L.block);
            exit(1);
        }
        if (G == 4 && L.block == 0)
            attn_v5<4, 0><<<grid, V2_THREADS, sm>>>(q, k, v, L, p.chunk, p.splits, scale_log2, b.part_o, b.part_ml,
                                                    b.counters, b.out);
        else if (G == 4)
            attn_v5<4, 16><<<grid, V2_THREADS, sm>>>(q, k, v, L, p.chunk, p.splits, scale_log2, b.part_o, b.part_ml,
                                                     b.counters, b.out);
        else if (L.block == 0)
            attn_v5<8, 0><<<grid, V2_THREADS, sm>>>(q, k, v, L, p.chunk, p.splits, scale_log2, b.part_o, b.part_ml,
                                                    b.counters, b.out);
        else
            attn_v5<8, 16><<<grid, V2_THREADS, sm>>>(q, k, v, L, p.chunk, p.splits, scale_log2, b.part_o, b.part_ml,
                                                     b.counters, b.out);
        LAUNCH_CHECK();
        return;
    }
    if (version >= 2) {
        float scale_log2 = scale * 1.4426950408889634f; // exp(x) = exp2(x log2 e)
        size_t sm = v2_smem_bytes(G);
        if (G == 4 && version == 2)
            attn_v2<4, false><<<grid, V2_THREADS, sm>>>(q, k, v, L, p.chunk, p.splits, scale_log2, b.part_o, b.part_ml,
                                                        b.counters, b.out);
        else if (G == 4 && version == 4)
            attn_v2<4, true, true><<<grid, V2_THREADS, sm>>>(q, k, v, L, p.chunk, p.splits, scale_log2, b.part_o,
                                                             b.part_ml, b.counters, b.out);
        else if (G == 8 && version == 4)
            attn_v2<8, true, true><<<grid, V2_THREADS, sm>>>(q, k, v, L, p.chunk, p.splits, scale_log2, b.part_o,
                                                             b.part_ml, b.counters, b.out);
        else if (G == 4)
            attn_v2<4, true><<<grid, V2_THREADS, sm>>>(q, k, v, L, p.chunk, p.splits, scale_log2, b.part_o, b.part_ml,
                                                       b.counters, b.out);
        else if (version == 2)
            attn_v2<8, false><<<grid, V2_THREADS, sm>>>(q, k, v, L, p.chunk, p.splits, scale_log2, b.part_o, b.part_ml,
                                                        b.counters, b.out);
        else
            attn_v2<8, true><<<grid, V2_THREADS, sm>>>(q, k, v, L, p.chunk, p.splits, scale_log2, b.part_o, b.part_ml,
                                                       b.counters, b.out);
        LAUNCH_CHECK();
        return;
    }
    if (G == 4)
        attn_split<4><<<grid, WARPS * 32>>>(q, k, v, L, p.chunk, p.splits, scale, b.part_o, b.part_ml);
    else
        attn_split<8><<<grid, WARPS * 32>>>(q, k, v, L, p.chunk, p.splits, scale, b.part_o, b.part_ml);
    LAUNCH_CHECK();
    attn_merge<<<dim3(L.kv_heads * G, batch), HEAD_DIM>>>(b.part_o, b.part_ml, L.kv_heads * G, p.splits, b.out);
    LAUNCH_CHECK();
}

static const uint64_t SEED_Q = 31, SEED_K = 32, SEED_V = 33;
// Query values in [-8, 8): scores q.k / sqrt(128) then have std 8/3 (K in
// [-1, 1)), so softmax is peaked as in a trained model, not nearly flat:
// a dropped or misplaced position moves the output well past the bound.
static const float Q_RANGE = 8.0f;

// A layout for `batch` sequences; paged tables are a shuffled permutation of
// the physical blocks, so the indirection is real.  The shuffle's seed is
// the configuration's (batch, context): every version, in this process or
// in one of its own, reads the same table.
static kv_layout make_layout(int kv_heads, int context, int paged, int batch, std::vector<int> &table)
{
    kv_layout L = {kv_heads, HEAD_DIM, context, 0, 0, nullptr};
    if (paged) {
        rng_state rng = rng_make(((uint64_t)batch << 32) | (uint64_t)context);
        L.block = 16;
        L.blocks_per_seq = (context + 15) / 16;
        table.resize((size_t)batch * L.blocks_per_seq);
        for (size_t i = 0; i < table.size(); i++)
            table[i] = (int)i;
        for (size_t i = table.size(); i > 1; i--)
            std::swap(table[i - 1], table[rng_below(&rng, i)]);
    }
    return L;
}

// Sequence `seq` of the device cache against the CPU reference, at atol
// 1e-5 + rtol 1e-3 |ref|: fp32 arithmetic over the split and merge lands
// far inside that (tests/test_measure.c shows it for the same arithmetic at
// 32k).  All its query heads, or with `few` the heads of its first and last
// KV head (a measured run's check: the fp64 reference over every head of a
// 32k sequence costs seconds).  Only that sequence's K and V are copied:
// contiguous, its slab; paged, its pages, laid out locally with table 0, 1, ...
// Returns 1 when valid.
static int check_sequence(const char *what, const kv_layout &L, const std::vector<int> &table, int seq, int heads,
                          const bf16 *q, const bf16 *k, const bf16 *v, const float *out, bool few = false)
{
    size_t per_seq = kv_elements_per_seq(&L);
    std::vector<float> hk(per_seq), hv(per_seq), hq((size_t)heads * HEAD_DIM), got(hq.size()), ref(hq.size());
    std::vector<int> local;
    kv_layout H = L;
    if (L.block == 0) {
        download_bf16(k + (size_t)seq * per_seq, per_seq, hk.data());
        download_bf16(v + (size_t)seq * per_seq, per_seq, hv.data());
    } else {
        size_t page = (size_t)L.block * L.kv_heads * HEAD_DIM;
        local.resize(L.blocks_per_seq);
        for (int p = 0; p < L.blocks_per_seq; p++) {
            int phys = table[(size_t)seq * L.blocks_per_seq + p];
            download_bf16(k + (size_t)phys * page, page, hk.data() + (size_t)p * page);
            download_bf16(v + (size_t)phys * page, page, hv.data() + (size_t)p * page);
            local[p] = p;
        }
        H.block_table = local.data();
    }
    download_bf16(q + (size_t)seq * heads * HEAD_DIM, hq.size(), hq.data());
    CUDA_CHECK(cudaMemcpy(got.data(), out + (size_t)seq * heads * HEAD_DIM, got.size() * sizeof(float),
                          cudaMemcpyDeviceToHost));
    // The reference reads sequence 0 of the local copy.
    const int G = heads / L.kv_heads;
    int spans[2][2] = {{0, heads}, {0, 0}};
    if (few && L.kv_heads > 1) {
        spans[0][1] = G;
        spans[1][0] = heads - G;
        spans[1][1] = heads;
    }
    size_t bad = 0, checked = 0;
    for (auto &sp : spans) {
        if (sp[1] <= sp[0])
            continue;
        if (decode_attention_ref_heads(&H, 0, heads, sp[0], sp[1], hq.data(), hk.data(), hv.data(), ref.data())) {
            fprintf(stderr, "decode_attention: %s: bad reference shape\n", what);
            return 0;
        }
        size_t off = (size_t)sp[0] * HEAD_DIM, n = (size_t)(sp[1] - sp[0]) * HEAD_DIM;
        long first;
        double excess;
        size_t b = validate_close(got.data() + off, ref.data() + off, n, 1e-5, 1e-3, &first, &excess);
        if (b)
            fprintf(stderr,
                    "decode_attention: %s: INVALID: %zu of %zu outputs of heads %d-%d over 1e-5 + 1e-3|ref| (first %ld: "
                    "%g vs %g)\n",
                    what, b, n, sp[0], sp[1] - 1, first, got[off + first], ref[off + first]);
        bad += b;
        checked += n;
    }
    return bad == 0 && checked > 0;
}

int main(int argc, char **argv)
{
    run_args args = parse_args(argc, argv);
    check_version(args, VERSIONS, "decode_attention");
    device_gate();
    device_facts dev = device_facts_get();
    // Two group sizes over one cache: LLaMA-3-8B (32 query heads on 8 KV
    // heads, G = 4) and LLaMA-3-70B (64 on 8, G = 8); both head dim 128.
    model_spec m8 = model_builtin("llama3-8b"), m70 = model_builtin("llama3-70b");
    if (m8.head_dim != HEAD_DIM || m70.head_dim != HEAD_DIM || m70.kv_heads != m8.kv_heads) {
        fprintf(stderr, "decode_attention: built for head dim %d and one KV-head count; models have %d/%d, %d/%d\n",
                HEAD_DIM, m8.head_dim, m8.kv_heads, m70.head_dim, m70.kv_heads);
        return 1;
    }
    const int heads = m8.heads, kvh = m8.kv_heads, G = heads / kvh;
    const int heads70 = m70.heads, G70 = heads70 / kvh, max_heads = std::max(heads, heads70);
    const char *bw_source;
    double bw = read_ceiling(args, dev, &bw_source);
    int max_ctx = args.quick ? 8192 : 131072, batches[] = {1, 16, 32};
    int max_batch = 32;
    size_t kv_elems = (size_t)max_batch * kvh * ((max_ctx + 15) / 16 * 16) * HEAD_DIM;
    bf16 *q, *k, *v;
    float *out, *part_o;
    float2 *part_ml;
    int *dtable;
    int max_splits = 4 * dev.prop.multiProcessorCount + 1;
    CUDA_CHECK(cudaMalloc(&q, (size_t)max_batch * max_heads * HEAD_DIM * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&k, kv_elems * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&v, kv_elems * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&out, (size_t)max_batch * max_heads * HEAD_DIM * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&part_o, (size_t)max_batch * max_heads * max_splits * HEAD_DIM * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&part_ml, (size_t)max_batch * max_heads * max_splits * sizeof(float2)));
    CUDA_CHECK(cudaMalloc(&dtable, (size_t)max_batch * ((max_ctx + 15) / 16) * sizeof(int)));
    fill_uniform_bf16(q, (size_t)max_batch * max_heads * HEAD_DIM, SEED_Q, -Q_RANGE, Q_RANGE);
    fill_uniform_bf16(k, kv_elems, SEED_K, -1, 1);
    fill_uniform_bf16(v, kv_elems, SEED_V, -1, 1);
    CUDA_CHECK(cudaDeviceSynchronize());

    unsigned *counters;
    CUDA_CHECK(cudaMalloc(&counters, (size_t)max_batch * kvh * sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(counters, 0, (size_t)max_batch * kvh * sizeof(unsigned)));
    attn_bufs bufs = {part_o, part_ml, counters, out};
    const int sms = dev.prop.multiProcessorCount;
    // Each version's kernels are set up when its turn comes, so a fault in
    // one version's setup costs no earlier version's rows.
    int resident4 = 0, resident8 = 0, resident5_4 = 0, resident5_8 = 0;
    auto prepare = [&](int version) {
        if (version >= 2 && version <= 4 && resident4 == 0) {
            v2_prepare<4>();
            v2_prepare<8>();
            resident4 = v2_resident_blocks(4, sms);
            resident8 = v2_resident_blocks(8, sms);
        }
        if (version == 5 && resident5_4 == 0) {
            v5_prepare<4>();
            v5_prepare<8>();
            resident5_4 = v5_resident_blocks(4, sms);
            resident5_8 = v5_resident_blocks(8, sms);
        }
    };
    auto plan = [&](int version, int g, int ctx, int batch) {
        attn_plan p = version == 5  ? plan_v2(ctx, batch, kvh, g == 8 ? resident5_8 : resident5_4)
                      : version >= 2 ? plan_v2(ctx, batch, kvh, g == 8 ? resident8 : resident4)
                                     : plan_for(ctx, batch, kvh, sms);
        if (p.splits > max_splits) { // cannot happen with these plans; say so if it does
            fprintf(stderr, "decode_attention: %d splits over the %d allocated\n", p.splits, max_splits);
            exit(1);
        }
        return p;
    };

    // Validation of one version: G = 4 on both layouts at a context that is
    // not a multiple of 16 and at one that is (batch 2, every sequence and
    // head), and the measured configuration batch 1 at 32k with its split
    // merge; G = 8 at 1000 (both layouts, batch 2) and at 32k (contiguous,
    // batch 1).  At 32k the heads of the first and last KV head are checked
    // (the fp64 reference over all of them costs seconds).  Returns the
    // number of sequences found invalid.
    struct vcase {
        int g, ctx, batch, paged;
    } vcases[] = {{4, 1000, 2, 0}, {4, 4096, 2, 0}, {4, 32768, 1, 0}, {4, 1000, 2, 1}, {4, 4096, 2, 1},
                  {4, 32768, 1, 1}, {8, 1000, 2, 0}, {8, 1000, 2, 1}, {8, 32768, 1, 0}};
    auto validate_version = [&](int version) {
        int bad = 0;
        for (const vcase &vc : vcases) {
            if (args.quick && vc.ctx > max_ctx)
                continue;
            const int hx = vc.g == 8 ? heads70 : heads;
            std::vector<int> table;
            kv_layout L = make_layout(kvh, vc.ctx, vc.paged, vc.batch, table);
            if (vc.paged)
                CUDA_CHECK(cudaMemcpy(dtable, table.data(), table.size() * sizeof(int), cudaMemcpyHostToDevice));
            kv_layout Ld = L;
            Ld.block_table = vc.paged ? dtable : nullptr;
            attn_plan p = plan(version, vc.g, vc.ctx, vc.batch);
            CUDA_CHECK(cudaMemset(out, 0xFF, (size_t)vc.batch * hx * HEAD_DIM * sizeof(float))); // NaN
            attention(version, vc.g, q, k, v, Ld, vc.batch, p, bufs);
            CUDA_CHECK(cudaDeviceSynchronize());
            for (int sq = 0; sq < vc.batch; sq++) {
                char what[112];
                snprintf(what, sizeof what, "v%d G=%d %s ctx %d batch %d seq %d (%d splits)", version, vc.g,
                         vc.paged ? "paged" : "contiguous", vc.ctx, vc.batch, sq, p.splits);
                bad += !check_sequence(what, L, table, sq, hx, q, k, v, out, vc.ctx > 4096);
            }
        }
        return bad;
    };

    // The timed configurations.  G = 4: both layouts, batch 1, 16, 32,
    // contexts 1k up; a few heads of sequence 0 checked: contiguous up to
    // 32k, the paged layout at 32k only (its index is checked in full by
    // each version's validation).  G = 8 (LLaMA-3-70B's grouping):
    // contiguous, batch 1 and 32, at 8k and 32k (8k alone when quick),
    // every run checked.
    struct sweep_cfg {
        int g, paged, batch, ctx;
        bool check;
    };
    std::vector<sweep_cfg> cfgs;
    for (int paged = 0; paged <= 1; paged++)
        for (int batch : batches)
            for (int ctx = 1024; ctx <= max_ctx; ctx *= 2)
                cfgs.push_back({G, paged, batch, ctx, paged ? ctx == 32768 : ctx <= 32768});
    for (int batch : {1, 32})
        for (int ctx : {8192, 32768})
            if (ctx <= max_ctx)
                cfgs.push_back({G70, 0, batch, ctx, true});
    // The read ceiling over each configuration's footprint, timed once (by
    // the first version to reach it) and shared by every version's row.
    std::vector<ceiling_at> ceilings(cfgs.size(), ceiling_at{NAN, NAN});

    l2_flusher fl;
    fl.init(dev, args.flush == FLUSH_ROTATE ? FLUSH_READ : args.flush);
    int reps = args.quick ? 3 : 10, warmup = 2;
    // The sweep files are open from the start: each version's rows reach
    // them (line-buffered) as they are timed, so a run stopped or crashed
    // later keeps every finished version's rows.  decode_attention.tsv, the
    // fastest valid version per configuration, is written at the end.
    FILE *sweep = tsv_open(args, dev, "decode_attention_sweep.tsv", "decode_attention_sweep");
    FILE *g8 = tsv_open(args, dev, "decode_attention_g8.tsv", "decode_attention_g8");
    char buf[160], repeats[160], bw_text[32];
    snprintf(buf, sizeof buf, "%s: %d query heads, %d KV heads (G = %d), head dim %d, bf16 cache; every version",
             m70.name, heads70, kvh, G70, HEAD_DIM);
    provenance_line(g8, "shape", buf);
    snprintf(repeats, sizeof repeats,
             "%d (median in time_s, best in best_time_s, %d warm-up runs, L2 flushed by %s before each)", reps, warmup,
             flush_kind_name(fl.kind));
    provenance_line(g8, "repeats", repeats);
    snprintf(bw_text, sizeof bw_text, "%.6e", bw);
    provenance_line(g8, "bandwidth_measured", bw_text);
    provenance_line(g8, "bandwidth_source", bw_source);
    provenance_line(g8, "valid", "yes: sequence 0, the query heads of its first and last KV head, checked");
    const char *cols = "layout\tbatch\tcontext\tsplits\tkv_bytes\ttime_s\tbest_time_s\tgb_s\tpct_of_read"
                       "\tpct_of_footprint_read\tvalid\tversion\n";
    fputs(cols, sweep);
    fputs(cols, g8);

    // Every row kept for the per-configuration table and the targets.
    struct attn_row {
        size_t cfg;
        int ok;          // 1: checked valid or unchecked
        bool valid_yes;  // checked and valid
        double median_s, pct;
        char text[256];
    };
    std::vector<attn_row> rows;
    int invalid = 0;

    // One configuration, one version: a row to the configuration's file.
    auto time_row = [&](int version, size_t ci) {
        const sweep_cfg &c = cfgs[ci];
        const int hx = c.g == 8 ? heads70 : heads;
        std::vector<int> table;
        kv_layout L = make_layout(kvh, c.ctx, c.paged, c.batch, table);
        if (c.paged)
            CUDA_CHECK(cudaMemcpy(dtable, table.data(), table.size() * sizeof(int), cudaMemcpyHostToDevice));
        L.block_table = c.paged ? dtable : nullptr;
        // K and V of every cached position: the bytes that matter.
        double kv_bytes = 2.0 * c.batch * c.ctx * kvh * HEAD_DIM * sizeof(bf16);
        // The read ceiling over this run's footprint: K's and V's bytes of
        // the run in one launch, timed as often as the kernel (the pages of
        // the paged layout are a permutation of the same bytes).
        if (!(ceilings[ci].median_bps > 0))
            ceilings[ci] = read_ceiling_at(k, (size_t)(kv_bytes / 2), sms, &fl, reps, v);
        attn_plan p = plan(version, c.g, c.ctx, c.batch);
        CUDA_CHECK(cudaMemset(out, 0xFF, (size_t)c.batch * hx * HEAD_DIM * sizeof(float)));
        timing t = time_runs([&](int) { attention(version, c.g, q, k, v, L, c.batch, p, bufs); }, warmup, reps, &fl);
        CUDA_CHECK(cudaDeviceSynchronize());
        const char *valid = "unchecked";
        int ok = 1;
        if (c.check) {
            char what[112];
            snprintf(what, sizeof what, "v%d G=%d %s ctx %d batch %d seq 0 (measured run)", version, c.g,
                     c.paged ? "paged" : "contiguous", c.ctx, c.batch);
            kv_layout Lh = L;
            Lh.block_table = nullptr;
            ok = check_sequence(what, Lh, table, 0, hx, q, k, v, out, true);
            invalid += !ok;
            valid = ok ? "yes" : "no";
        }
        double pct = 100 * kv_bytes / t.median_s / bw, pct_fp = 100 * kv_bytes / t.median_s / ceilings[ci].median_bps;
        attn_row r = {ci, ok, c.check && ok, t.median_s, pct, ""};
        snprintf(r.text, sizeof r.text, "%s\t%d\t%d\t%d\t%.0f\t%.6e\t%.6e\t%.1f\t%.1f\t%.1f\t%s\tv%d\n",
                 c.paged ? "paged16" : "contiguous", c.batch, c.ctx, p.splits, kv_bytes, t.median_s, t.best_s,
                 kv_bytes / t.median_s / GB, pct, pct_fp, valid, version);
        fputs(r.text, c.g == G70 ? g8 : sweep);
        rows.push_back(r);
        printf("decode_attention v%d G=%d %-10s batch %2d ctx %6d (%3d splits): %9.2f us median (best %9.2f) "
               "%5.1f%% of read, %5.1f%% of footprint read  %s\n",
               version, c.g, c.paged ? "paged16" : "contiguous", c.batch, c.ctx, p.splits, t.median_s * 1e6,
               t.best_s * 1e6, pct, pct_fp, valid);
    };

    // One version at a time: set up, validated, then its whole sweep timed
    // and written, before the next version starts.  A fault in a version
    // (after which every CUDA call fails) costs that version and the ones
    // after it, never a finished one's rows.
    for (int version = 1; version <= VERSIONS; version++) {
        if (!version_wanted(args, version))
            continue;
        prepare(version);
        int bad = validate_version(version);
        invalid += bad;
        printf("decode_attention v%d: G = 4 and 8, contiguous and paged layouts checked against the CPU reference "
               "(%d invalid)\n",
               version, bad);
        for (size_t ci = 0; ci < cfgs.size(); ci++)
            time_row(version, ci);
        printf("decode_attention v%d: G = 4, contexts 1k..%dk, batch 1, 16 and 32, both layouts, and G = 8 timed\n",
               version, max_ctx / 1024);
    }
    tsv_close(sweep);
    tsv_close(g8);

    // Per configuration the fastest valid version (a checked-invalid row
    // only where no version is valid); the best checked-valid share of the
    // read ceiling (NaN when none is valid or the configuration unchecked).
    std::vector<const attn_row *> best(cfgs.size(), nullptr);
    std::vector<double> best_pct(cfgs.size(), NAN);
    for (const attn_row &r : rows) {
        const attn_row *b = best[r.cfg];
        if (!b || r.ok > b->ok || (r.ok == b->ok && r.median_s < b->median_s))
            best[r.cfg] = &r;
        if (r.valid_yes && !(best_pct[r.cfg] >= r.pct))
            best_pct[r.cfg] = r.pct;
    }
    FILE *tsv = tsv_open(args, dev, "decode_attention.tsv", "decode_attention");
    snprintf(buf, sizeof buf, "%s: %d query heads, %d KV heads, head dim %d, bf16 cache", m8.name, heads, kvh,
             HEAD_DIM);
    provenance_line(tsv, "shape", buf);
    provenance_line(tsv, "repeats", repeats);
    provenance_line(tsv, "bandwidth_measured", bw_text);
    provenance_line(tsv, "bandwidth_source", bw_source);
    provenance_line(tsv, "valid",
                    "yes: sequence 0 of the run, the query heads of its first and last KV head, checked against the CPU "
                    "reference: contiguous up to 32k, paged at 32k (every paged case is checked in full before the "
                    "sweep); unchecked elsewhere");
    provenance_line(tsv, "rows", "per configuration the fastest valid version; every version in decode_attention_sweep.tsv");
    provenance_line(tsv, "pct_of_footprint_read", "against one launch reading this run's K and V bytes, timed here");
    fputs(cols, tsv);
    for (size_t ci = 0; ci < cfgs.size(); ci++)
        if (cfgs[ci].g == G && best[ci])
            fputs(best[ci]->text, tsv);
    tsv_close(tsv);

    // The targets: the best valid version at 32k.
    auto pct_at = [&](int g, int paged, int batch) {
        for (size_t ci = 0; ci < cfgs.size(); ci++)
            if (cfgs[ci].g == g && cfgs[ci].paged == paged && cfgs[ci].batch == batch && cfgs[ci].ctx == 32768)
                return best_pct[ci];
        return (double)NAN;
    };
    for (int paged = 0; paged <= 1; paged++)
        for (int batch : {1, 32}) {
            char what[80];
            snprintf(what, sizeof what, "attention 32k batch %d %s, %% of read", batch,
                     paged ? "paged16" : "contiguous");
            report_target(what, pct_at(G, paged, batch), "%", 85, 1, "H200");
        }
    for (int batch : {1, 32}) {
        char what[80];
        snprintf(what, sizeof what, "attention G=8 32k batch %d contiguous, %% of read", batch);
        report_target(what, pct_at(G70, 0, batch), "%", 85, 1, "H200");
    }
    CUDA_CHECK(cudaFree(counters));
    fl.release();
    CUDA_CHECK(cudaFree(q));
    CUDA_CHECK(cudaFree(k));
    CUDA_CHECK(cudaFree(v));
    CUDA_CHECK(cudaFree(out));
    CUDA_CHECK(cudaFree(part_o));
    CUDA_CHECK(cudaFree(part_ml));
    CUDA_CHECK(cudaFree(dtable));
    return finish("decode_attention", invalid);
}
