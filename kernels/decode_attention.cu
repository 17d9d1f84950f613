// One decode step of attention over a KV cache with grouped-query heads
// (LLaMA-3-8B: 32 query heads, 8 KV heads, head dim 128; from
// code/specs/models.tsv), contiguous and paged (block 16) layouts, context
// 1k ... 128k.  Split-KV ("flash-decoding"): each block takes a chunk of
// positions for one KV head and all the query heads that share it, with an
// online softmax; a second kernel merges the chunks.  The K and V bytes read
// over the time, against the measured read ceiling, is the yardstick.
//
//   decode_attention [--out DIR] [--bandwidth DIR/bandwidth.tsv] [--flush read|memset] [--quick]
//                    writes DIR/decode_attention.tsv
#include "common.cuh"

#include <math.h>

#define HEAD_DIM 128
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
            if (t < end) {
                kr[u] = __ldg(reinterpret_cast<const uint2 *>(kc + kv_index(&L, seq, kvh, t, lane * 4)));
                vr[u] = __ldg(reinterpret_cast<const uint2 *>(vc + kv_index(&L, seq, kvh, t, lane * 4)));
            }
        }
#pragma unroll
        for (int u = 0; u < UNROLL; u++) {
            if (t0 + u * WARPS >= end)
                break;
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

struct attn_plan {
    int splits, chunk;
};

// Enough blocks to fill the GPU about four times over.
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

static void attention(int G, const bf16 *q, const bf16 *k, const bf16 *v, const kv_layout &L, int batch,
                      const attn_plan &p, float *part_o, float2 *part_ml, float *out)
{
    dim3 grid(p.splits, L.kv_heads, batch);
    float scale = 1.0f / sqrtf((float)HEAD_DIM);
    if (G == 4)
        attn_split<4><<<grid, WARPS * 32>>>(q, k, v, L, p.chunk, p.splits, scale, part_o, part_ml);
    else if (G == 8)
        attn_split<8><<<grid, WARPS * 32>>>(q, k, v, L, p.chunk, p.splits, scale, part_o, part_ml);
    else {
        fprintf(stderr, "decode_attention: query heads per KV head %d not built (4, 8)\n", G);
        exit(1);
    }
    LAUNCH_CHECK();
    attn_merge<<<dim3(L.kv_heads * G, batch), HEAD_DIM>>>(part_o, part_ml, L.kv_heads * G, p.splits, out);
    LAUNCH_CHECK();
}

static const uint64_t SEED_Q = 31, SEED_K = 32, SEED_V = 33;
// Query values in [-8, 8): scores q.k / sqrt(128) then have std 8/3 (K in
// [-1, 1)), so softmax is peaked as in a trained model, not nearly flat:
// a dropped or misplaced position moves the output well past the bound.
static const float Q_RANGE = 8.0f;

// A layout for `batch` sequences; paged tables are a shuffled permutation of
// the physical blocks, so the indirection is real.
static kv_layout make_layout(int kv_heads, int context, int paged, int batch, rng_state *rng, std::vector<int> &table)
{
    kv_layout L = {kv_heads, HEAD_DIM, context, 0, 0, nullptr};
    if (paged) {
        L.block = 16;
        L.blocks_per_seq = (context + 15) / 16;
        table.resize((size_t)batch * L.blocks_per_seq);
        for (size_t i = 0; i < table.size(); i++)
            table[i] = (int)i;
        for (size_t i = table.size(); i > 1; i--)
            std::swap(table[i - 1], table[rng_below(rng, i)]);
    }
    return L;
}

// Sequence `seq` of the device cache against the CPU reference (all its
// query heads), at atol 1e-5 + rtol 1e-3 |ref|: fp32 arithmetic over the
// split and merge lands far inside that (tests/test_measure.c shows it for
// the same arithmetic at 32k).  Only that sequence's K and V are copied:
// contiguous, its slab; paged, its pages, laid out locally with table 0, 1, ...
// Returns 1 when valid.
static int check_sequence(const char *what, const kv_layout &L, const std::vector<int> &table, int seq, int heads,
                          const bf16 *q, const bf16 *k, const bf16 *v, const float *out)
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
    if (decode_attention_ref(&H, 0, heads, hq.data(), hk.data(), hv.data(), ref.data())) {
        fprintf(stderr, "decode_attention: %s: bad reference shape\n", what);
        return 0;
    }
    long first;
    double excess;
    size_t bad = validate_close(got.data(), ref.data(), got.size(), 1e-5, 1e-3, &first, &excess);
    if (bad)
        fprintf(stderr, "decode_attention: %s: INVALID: %zu of %zu outputs over 1e-5 + 1e-3|ref| (first %ld: %g vs %g)\n",
                what, bad, got.size(), first, got[first], ref[first]);
    return bad == 0;
}

int main(int argc, char **argv)
{
    run_args args = parse_args(argc, argv);
    check_version(args, 0, "decode_attention");
    device_gate();
    device_facts dev = device_facts_get();
    model_spec m8 = model_builtin("llama3-8b");
    if (m8.head_dim != HEAD_DIM) {
        fprintf(stderr, "decode_attention: built for head dim %d, model has %d\n", HEAD_DIM, m8.head_dim);
        return 1;
    }
    const int heads = m8.heads, kvh = m8.kv_heads, G = heads / kvh;
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
    CUDA_CHECK(cudaMalloc(&q, (size_t)max_batch * heads * HEAD_DIM * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&k, kv_elems * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&v, kv_elems * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&out, (size_t)max_batch * heads * HEAD_DIM * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&part_o, (size_t)max_batch * heads * max_splits * HEAD_DIM * sizeof(float)));
    CUDA_CHECK(cudaMalloc(&part_ml, (size_t)max_batch * heads * max_splits * sizeof(float2)));
    CUDA_CHECK(cudaMalloc(&dtable, (size_t)max_batch * ((max_ctx + 15) / 16) * sizeof(int)));
    fill_uniform_bf16(q, (size_t)max_batch * heads * HEAD_DIM, SEED_Q, -Q_RANGE, Q_RANGE);
    fill_uniform_bf16(k, kv_elems, SEED_K, -1, 1);
    fill_uniform_bf16(v, kv_elems, SEED_V, -1, 1);
    CUDA_CHECK(cudaDeviceSynchronize());
    rng_state rng = rng_make(9);

    // Validation first: both layouts at a context that is not a multiple of
    // 16 and at one that is (batch 2, every sequence), and the measured
    // configuration batch 1 at 32k with its split merge.
    int invalid = 0;
    struct vcase {
        int ctx, batch;
    } vcases[] = {{1000, 2}, {4096, 2}, {32768, 1}};
    for (int paged = 0; paged <= 1; paged++)
        for (const vcase &vc : vcases) {
            if (args.quick && vc.ctx > max_ctx)
                continue;
            std::vector<int> table;
            kv_layout L = make_layout(kvh, vc.ctx, paged, vc.batch, &rng, table);
            if (paged)
                CUDA_CHECK(cudaMemcpy(dtable, table.data(), table.size() * sizeof(int), cudaMemcpyHostToDevice));
            kv_layout Ld = L;
            Ld.block_table = paged ? dtable : nullptr;
            attn_plan p = plan_for(vc.ctx, vc.batch, kvh, dev.prop.multiProcessorCount);
            CUDA_CHECK(cudaMemset(out, 0xFF, (size_t)vc.batch * heads * HEAD_DIM * sizeof(float))); // NaN
            attention(G, q, k, v, Ld, vc.batch, p, part_o, part_ml, out);
            CUDA_CHECK(cudaDeviceSynchronize());
            for (int sq = 0; sq < vc.batch; sq++) {
                char what[96];
                snprintf(what, sizeof what, "%s ctx %d batch %d seq %d (%d splits)", paged ? "paged" : "contiguous",
                         vc.ctx, vc.batch, sq, p.splits);
                invalid += !check_sequence(what, L, table, sq, heads, q, k, v, out);
            }
        }
    printf("decode_attention: contiguous and paged layouts checked against the CPU reference (%d invalid)\n", invalid);
    fflush(stdout);

    l2_flusher fl;
    fl.init(dev, args.flush == FLUSH_ROTATE ? FLUSH_READ : args.flush);
    int reps = args.quick ? 3 : 10, warmup = 2;
    FILE *tsv = tsv_open(args, dev, "decode_attention.tsv", "decode_attention");
    char buf[160];
    snprintf(buf, sizeof buf, "%s: %d query heads, %d KV heads, head dim %d, bf16 cache", m8.name, heads, kvh,
             HEAD_DIM);
    provenance_line(tsv, "shape", buf);
    snprintf(buf, sizeof buf, "%d (median in time_s, best in best_time_s, %d warm-up runs, L2 flushed by %s before each)",
             reps, warmup, flush_kind_name(fl.kind));
    provenance_line(tsv, "repeats", buf);
    snprintf(buf, sizeof buf, "%.6e", bw);
    provenance_line(tsv, "bandwidth_measured", buf);
    provenance_line(tsv, "bandwidth_source", bw_source);
    provenance_line(tsv, "valid", "yes: sequence 0 of the run checked against the CPU reference; unchecked above 32k");
    fprintf(tsv, "layout\tbatch\tcontext\tsplits\tkv_bytes\ttime_s\tbest_time_s\tgb_s\tpct_of_read"
                 "\tpct_of_footprint_read\tvalid\n");
    double pct_32k[2][2] = {{NAN, NAN}, {NAN, NAN}}; // [paged][batch 1, batch 32]
    for (int paged = 0; paged <= 1; paged++)
        for (int batch : batches)
            for (int ctx = 1024; ctx <= max_ctx; ctx *= 2) {
                std::vector<int> table;
                kv_layout L = make_layout(kvh, ctx, paged, batch, &rng, table);
                if (paged)
                    CUDA_CHECK(cudaMemcpy(dtable, table.data(), table.size() * sizeof(int), cudaMemcpyHostToDevice));
                L.block_table = paged ? dtable : nullptr;
                attn_plan p = plan_for(ctx, batch, kvh, dev.prop.multiProcessorCount);
                CUDA_CHECK(cudaMemset(out, 0xFF, (size_t)batch * heads * HEAD_DIM * sizeof(float)));
                timing t = time_runs([&](int) { attention(G, q, k, v, L, batch, p, part_o, part_ml, out); }, warmup,
                                     reps, &fl);
                CUDA_CHECK(cudaDeviceSynchronize());
                const char *valid = "unchecked";
                if (ctx <= 32768) {
                    char what[96];
                    snprintf(what, sizeof what, "%s ctx %d batch %d seq 0 (measured run)", paged ? "paged" : "contiguous",
                             ctx, batch);
                    kv_layout Lh = L;
                    Lh.block_table = nullptr;
                    int ok = check_sequence(what, Lh, table, 0, heads, q, k, v, out);
                    invalid += !ok;
                    valid = ok ? "yes" : "no";
                }
                // K and V of every cached position: the bytes that matter.
                double kv_bytes = 2.0 * batch * ctx * kvh * HEAD_DIM * sizeof(bf16);
                double pct = 100 * kv_bytes / t.median_s / bw;
                // The read ceiling over this run's footprint (K then V, each a
                // contiguous buffer of the run's size): the pages of the paged
                // layout are a permutation of the same bytes.
                ceiling_at ck = read_ceiling_at(k, (size_t)(kv_bytes / 2), dev.prop.multiProcessorCount, &fl, 3);
                double pct_fp = 100 * kv_bytes / t.median_s / ck.median_bps;
                fprintf(tsv, "%s\t%d\t%d\t%d\t%.0f\t%.6e\t%.6e\t%.1f\t%.1f\t%.1f\t%s\n", paged ? "paged16" : "contiguous",
                        batch, ctx, p.splits, kv_bytes, t.median_s, t.best_s, kv_bytes / t.median_s / GB, pct, pct_fp,
                        valid);
                printf("decode_attention %-10s batch %2d ctx %6d: %9.2f us median (best %9.2f) %5.1f%% of read, %5.1f%% of "
                       "footprint read  %s\n",
                       paged ? "paged16" : "contiguous", batch, ctx, t.median_s * 1e6, t.best_s * 1e6, pct, pct_fp, valid);
                fflush(stdout);
                if (ctx == 32768 && (batch == 1 || batch == 32) && strcmp(valid, "yes") == 0)
                    pct_32k[paged][batch == 32] = pct;
            }
    tsv_close(tsv);
    printf("decode_attention: contexts 1k..%dk, batch 1, 16 and 32, both layouts timed\n", max_ctx / 1024);
    report_target("attention 32k batch 1 contiguous, % of read", pct_32k[0][0], "%", 85, 1, "H200");
    report_target("attention 32k batch 32 contiguous, % of read", pct_32k[0][1], "%", 85, 1, "H200");
    report_target("attention 32k batch 1 paged16, % of read", pct_32k[1][0], "%", 85, 1, "H200");
    report_target("attention 32k batch 32 paged16, % of read", pct_32k[1][1], "%", 85, 1, "H200");
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
