// What a CUDA graph saves one decode step.  The step is LLaMA-3-8B's as the
// library lists it (graphs.h: step_kernel_sequence, one kernel per op of
// every layer plus the once-per-step ops, flash attention as one kernel):
// 323 kernels, each reading the HBM bytes its op moves at batch 1 or 64
// (context 1024) from its own region of one pool, so the step streams the
// pool once as the real one streams its weights and KV.  A third variant
// moves no bytes: the same 323 launches with nothing behind them, which is
// the launch and replay overhead alone.  Each variant runs eagerly (323
// launches, one burst) and as one captured graph, repeated; medians with
// their spread.
//
// Before timing: the bookkeeping is checked on the CPU (as many kernels as
// the library counts, bytes summing to decoder_step_cost's, regions
// contiguous inside the pool), and one eager step's results are checked
// against the CPU: every kernel of layer 0 and every once-per-step kernel
// folds its region's words into one, which the CPU recomputes from the
// pool's counter pattern.
//
//   step_graph [--out DIR] [--bandwidth DIR/bandwidth.tsv] [--quick]   writes DIR/step_graph.tsv
#include "common.cuh"

#include <algorithm>

extern "C" {
#include "graphs.h"
}

#define STEP_MAX_KERNELS 4096
#define CONTEXT 1024

// Word i of the pool: a counter hash, never zero.
__host__ __device__ static inline uint32_t pool_word(uint64_t i)
{
    uint64_t z = i + 0x9E3779B97F4A7C15ull;
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    z ^= z >> 31;
    return (uint32_t)z | 1u;
}

__global__ void fill_pool_kernel(uint4 *p, size_t n_vec)
{
    for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v < n_vec; v += (size_t)gridDim.x * blockDim.x) {
        uint64_t w = 4 * (uint64_t)v;
        p[v] = make_uint4(pool_word(w), pool_word(w + 1), pool_word(w + 2), pool_word(w + 3));
    }
}

// One op of the step: stream its bytes (16-byte words) and fold them into
// one word, so no read can be optimised away.
__global__ void step_op_kernel(const uint4 *__restrict__ src, size_t n_vec, uint32_t *out)
{
    uint32_t acc = 0;
    for (size_t v = blockIdx.x * (size_t)blockDim.x + threadIdx.x; v < n_vec; v += (size_t)gridDim.x * blockDim.x) {
        uint4 x = src[v];
        acc ^= x.x ^ x.y ^ x.z ^ x.w;
    }
    for (int o = 16; o > 0; o >>= 1)
        acc ^= __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0 && acc)
        atomicXor(out, acc);
}

// The CPU's fold of words [first, first + n) of the pool.
static uint32_t host_fold(uint64_t first, uint64_t n)
{
    uint32_t acc = 0;
    for (uint64_t i = 0; i < n; i++)
        acc ^= pool_word(first + i);
    return acc;
}

struct launch_plan {
    int n;
    size_t offset_vec[STEP_MAX_KERNELS]; // where each kernel's region starts, in 16-byte words
    size_t n_vec[STEP_MAX_KERNELS];
    int blocks[STEP_MAX_KERNELS];
    int layer[STEP_MAX_KERNELS];
    double bytes; // what the kernels read in all
    size_t pool_vec;
};

// Lay the step's kernels out over the pool; check the bookkeeping against
// the library.  scale < 1 shrinks every region (the --quick run).
static int plan_step(const model_spec *m, int batch, double scale, int sms, launch_plan *p)
{
    static step_kernel seq[STEP_MAX_KERNELS];
    char err[256];
    step_shape s = decode_shape(batch > 0 ? batch : 1, CONTEXT, 1, precision_uniform(DT_BF16));
    int n = step_kernel_sequence(m, &s, FUSE_NONE, seq, STEP_MAX_KERNELS, err, sizeof err);
    step_kernels count;
    step_cost cost;
    gpu_spec any = gpu_builtin("h100"); // decoder_step_cost needs a row; bytes do not depend on it
    if (n < 0 || step_kernel_count(m, &s, FUSE_NONE, &count, err, sizeof err) != 0 ||
        decoder_step_cost(m, &any, &s, &cost, err, sizeof err) != 0) {
        fprintf(stderr, "step_graph: %s\n", err);
        return -1;
    }
    double sum = 0;
    size_t off = 0;
    p->n = n;
    for (int k = 0; k < n; k++) {
        sum += seq[k].bytes;
        double b = batch > 0 ? seq[k].bytes * scale : 0;
        p->offset_vec[k] = off;
        p->n_vec[k] = (size_t)ceil(b / 16);
        p->layer[k] = seq[k].layer;
        size_t want = (p->n_vec[k] + 255) / 256;
        p->blocks[k] = (int)std::max<size_t>(1, std::min<size_t>(want, (size_t)sms * 8));
        off += p->n_vec[k];
    }
    p->pool_vec = off;
    p->bytes = 16.0 * off;
    // bookkeeping: the count, the byte sum, contiguous regions
    int ok = n == count.total && fabs(sum - cost.bytes) <= 1e-9 * cost.bytes;
    for (int k = 1; k < n && ok; k++)
        ok = p->offset_vec[k] == p->offset_vec[k - 1] + p->n_vec[k - 1];
    if (!ok) {
        fprintf(stderr, "step_graph: bookkeeping failed: %d kernels (library %d), %.6g bytes (step %.6g)\n", n,
                count.total, sum, cost.bytes);
        return -1;
    }
    return 0;
}

static void enqueue_step(cudaStream_t s, const launch_plan &p, const uint4 *pool, uint32_t *out)
{
    for (int k = 0; k < p.n; k++)
        step_op_kernel<<<p.blocks[k], 256, 0, s>>>(pool + p.offset_vec[k], p.n_vec[k], out + k);
    LAUNCH_CHECK();
}

// One eager step from zeroed outputs, checked against the CPU's folds.
static int validate_step(cudaStream_t s, const launch_plan &p, const uint4 *pool, uint32_t *out)
{
    CUDA_CHECK(cudaMemsetAsync(out, 0, p.n * sizeof(uint32_t), s));
    enqueue_step(s, p, pool, out);
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<uint32_t> got(p.n);
    CUDA_CHECK(cudaMemcpy(got.data(), out, p.n * sizeof(uint32_t), cudaMemcpyDeviceToHost));
    int checked = 0;
    for (int k = 0; k < p.n; k++) {
        if (p.layer[k] > 0)
            continue;
        uint32_t want = host_fold(4 * (uint64_t)p.offset_vec[k], 4 * (uint64_t)p.n_vec[k]);
        if (got[k] != want) {
            fprintf(stderr, "step_graph: kernel %d read wrong data: fold %08x, want %08x\n", k, got[k], want);
            return -1;
        }
        checked++;
    }
    return checked;
}

struct step_timing {
    double wall, wall_min, wall_max, gpu, host;
};

static step_timing summarise(std::vector<double> &wall, std::vector<double> &gpu, std::vector<double> &host)
{
    step_timing t;
    int n = (int)wall.size();
    t.wall = median_of(wall.data(), n);
    t.wall_min = *std::min_element(wall.begin(), wall.end());
    t.wall_max = *std::max_element(wall.begin(), wall.end());
    t.gpu = median_of(gpu.data(), n);
    t.host = median_of(host.data(), n);
    return t;
}

// Time `launch` (one step, eager or a graph launch): host enqueue time,
// wall time to completion (host clock), GPU time (events).
template <class F> static step_timing time_step(cudaStream_t s, F launch, int reps, l2_flusher *fl)
{
    cudaEvent_t e0, e1;
    CUDA_CHECK(cudaEventCreate(&e0));
    CUDA_CHECK(cudaEventCreate(&e1));
    std::vector<double> wall, gpu, host;
    for (int r = -3; r < reps; r++) {
        if (fl)
            fl->flush(s);
        CUDA_CHECK(cudaStreamSynchronize(s));
        double t0 = host_now_s();
        CUDA_CHECK(cudaEventRecord(e0, s));
        launch();
        double t1 = host_now_s();
        CUDA_CHECK(cudaEventRecord(e1, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        double t2 = host_now_s();
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, e0, e1));
        if (r >= 0) {
            host.push_back(t1 - t0);
            wall.push_back(t2 - t0);
            gpu.push_back(ms * 1e-3);
        }
    }
    CUDA_CHECK(cudaEventDestroy(e0));
    CUDA_CHECK(cudaEventDestroy(e1));
    return summarise(wall, gpu, host);
}

static void tsv_row(FILE *f, const char *variant, int batch, const launch_plan &p, const char *mode, int reps,
                    const step_timing &t, double predicted, double saved)
{
    fprintf(f, "%s\t%d\t%d\t%d\t%.6e\t%s\t%d\t%.6e\t%.6e\t%.6e\t%.6e\t%.6e\t%.3f\t", variant, batch, CONTEXT, p.n,
            p.bytes, mode, reps, t.wall, t.wall_min, t.wall_max, t.gpu, t.host, t.host / p.n * 1e6);
    if (predicted > 0)
        fprintf(f, "%.6e\t", predicted);
    else
        fprintf(f, "-\t");
    if (isnan(saved))
        fprintf(f, "-\n");
    else
        fprintf(f, "%.4f\n", saved);
}

int main(int argc, char **argv)
{
    run_args args = parse_args(argc, argv);
    device_gate();
    device_facts dev = device_facts_get();
    model_spec m = model_builtin("llama3-8b");
    const double scale = args.quick ? 1.0 / 16 : 1.0;
    const int reps = args.quick ? 5 : 30;
    const char *ceiling_source = "";
    double ceiling = read_ceiling(args, dev, &ceiling_source);

    struct variant {
        const char *name;
        int batch;
    } variants[] = {{"empty", 0}, {"batch1", 1}, {"batch64", 64}};
    static launch_plan plans[3];
    size_t pool_vec = 0;
    for (int v = 0; v < 3; v++) {
        if (plan_step(&m, variants[v].batch, scale, dev.prop.multiProcessorCount, &plans[v]) != 0)
            return 1;
        pool_vec = std::max(pool_vec, plans[v].pool_vec);
    }
    printf("step_graph: bookkeeping ok: %d kernels a step, %.2f GB (batch 1) and %.2f GB (batch 64) read\n",
           plans[1].n, plans[1].bytes / GB, plans[2].bytes / GB);

    size_t free_b = 0, total_b = 0;
    CUDA_CHECK(cudaMemGetInfo(&free_b, &total_b));
    if ((double)pool_vec * 16 > 0.9 * (double)free_b) {
        printf("SKIP: the batch-64 step reads %.1f GB; %.1f GB of device memory are free\n", pool_vec * 16.0 / GB,
               free_b / GB);
        return 77;
    }
    uint4 *pool = nullptr;
    uint32_t *out = nullptr;
    CUDA_CHECK(cudaMalloc(&pool, std::max<size_t>(pool_vec, 1) * sizeof(uint4)));
    CUDA_CHECK(cudaMalloc(&out, STEP_MAX_KERNELS * sizeof(uint32_t)));
    fill_pool_kernel<<<4 * dev.prop.multiProcessorCount, 256>>>(pool, pool_vec);
    LAUNCH_CHECK();
    CUDA_CHECK(cudaDeviceSynchronize());
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    l2_flusher fl;
    fl.init(dev);

    FILE *tsv = tsv_open(args, dev, "step_graph.tsv", "step_graph");
    provenance_line(tsv, "kernel",
                    "one streaming read kernel per op of LLaMA-3-8B's decode step (library op list, flash attention "
                    "one kernel, no fusion), <<<min(words/256, 8 x SMs), 256>>>, one non-blocking stream");
    char buf[160];
    snprintf(buf, sizeof buf, "%d (context); bytes x %g%s", CONTEXT, scale, args.quick ? " (--quick)" : "");
    provenance_line(tsv, "shape", buf);
    provenance_line(tsv, "timing",
                    "per step: host enqueue (host clock), wall to completion (host clock), GPU (events); median of "
                    "reps after 3 warm-ups, L2 flushed before each; min and max of wall");
    provenance_line(tsv, "predicted_gpu", ceiling_source);
    fprintf(tsv, "variant\tbatch\tcontext\tkernels\tbytes\tmode\treps\twall_s\twall_min_s\twall_max_s\tgpu_s\thost_s\t"
                 "host_per_kernel_us\tpredicted_gpu_s\tsaved\n");

    for (int v = 0; v < 3; v++) {
        const launch_plan &p = plans[v];
        int checked = validate_step(s, p, pool, out);
        if (checked < 0)
            return 1;
        cudaGraph_t graph;
        cudaGraphExec_t exec;
        CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
        enqueue_step(s, p, pool, out);
        CUDA_CHECK(cudaStreamEndCapture(s, &graph));
        CUDA_CHECK(cudaGraphInstantiate(&exec, graph, 0));
        CUDA_CHECK(cudaGraphDestroy(graph));
        l2_flusher *flush = p.bytes > 0 ? &fl : nullptr;
        step_timing eager = time_step(s, [&] { enqueue_step(s, p, pool, out); }, reps, flush);
        step_timing g = time_step(s, [&] { CUDA_CHECK(cudaGraphLaunch(exec, s)); }, reps, flush);
        CUDA_CHECK(cudaGraphExecDestroy(exec));
        double predicted = p.bytes > 0 && ceiling > 0 ? p.bytes / ceiling : 0;
        double saved = 1 - g.wall / eager.wall;
        tsv_row(tsv, variants[v].name, variants[v].batch, p, "eager", reps, eager, predicted, NAN);
        tsv_row(tsv, variants[v].name, variants[v].batch, p, "graph", reps, g, predicted, saved);
        printf("step_graph: %-7s %d kernels, %d checked: eager %.1f us (%.1f-%.1f; host %.1f), graph %.1f us "
               "(%.1f-%.1f; host %.1f): saved %.1f%%\n",
               variants[v].name, p.n, checked, eager.wall * 1e6, eager.wall_min * 1e6, eager.wall_max * 1e6,
               eager.host * 1e6, g.wall * 1e6, g.wall_min * 1e6, g.wall_max * 1e6, g.host * 1e6, 100 * saved);
        if (p.bytes == 0)
            printf("step_graph: overhead alone: %.2f us per eager launch (host), %.2f us per kernel eager, "
                   "%.2f us per replayed node\n",
                   eager.host / p.n * 1e6, eager.wall / p.n * 1e6, g.wall / p.n * 1e6);
    }
    tsv_close(tsv);
    fl.release();
    CUDA_CHECK(cudaStreamDestroy(s));
    CUDA_CHECK(cudaFree(pool));
    CUDA_CHECK(cudaFree(out));
    return 0;
}
