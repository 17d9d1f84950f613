// Shared by every kernel in kernels/: checked calls, the device gate, event
// timing with warm-up and median, an L2 flush, seeded random inputs, and the
// TSV writer with the device's provenance.  Host code is C-style; the
// arithmetic (roofline, GEMM model, references) comes from libnapkin.
#pragma once

#include <cublas_v2.h>
#include <cuda_bf16.h>
#include <cuda_runtime.h>

#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <vector>

extern "C" {
#include "gemm_model.h"
#include "measure_ref.h"
#include "measured.h"
#include "provenance.h"
#include "roofline.h"
#include "specs.h"
#include "transformer.h"
#include "units.h"
}
#include "counter_rng.h"
#include "kv_layout.h"

typedef __nv_bfloat16 bf16;

// Device helpers the kernels share: a warp's sum by butterfly shuffles;
// 8 bf16 in a 16-byte word unpacked to floats; one m16n8k16 bf16 tensor-core
// multiply-accumulate in fp32 (mma.sync, the PTX fragment layout).
__device__ __forceinline__ float warp_sum(float v)
{
    for (int o = 16; o > 0; o >>= 1)
        v += __shfl_xor_sync(0xffffffffu, v, o);
    return v;
}

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

__device__ __forceinline__ void mma_bf16_16816(float c[4], unsigned a0, unsigned a1, unsigned a2, unsigned a3,
                                               unsigned b0, unsigned b1)
{
    asm volatile("mma.sync.aligned.m16n8k16.row.col.f32.bf16.bf16.f32 {%0, %1, %2, %3}, {%4, %5, %6, %7}, {%8, %9}, "
                 "{%0, %1, %2, %3};\n"
                 : "+f"(c[0]), "+f"(c[1]), "+f"(c[2]), "+f"(c[3])
                 : "r"(a0), "r"(a1), "r"(a2), "r"(a3), "r"(b0), "r"(b1));
}

// ------------------------------------------------------------ checked calls
#define CUDA_CHECK(call)                                                                            \
    do {                                                                                            \
        cudaError_t err_ = (call);                                                                  \
        if (err_ != cudaSuccess) {                                                                  \
            fprintf(stderr, "%s:%d: CUDA error %s: %s\n", __FILE__, __LINE__, cudaGetErrorName(err_), \
                    cudaGetErrorString(err_));                                                      \
            exit(1);                                                                                \
        }                                                                                           \
    } while (0)

#define CUBLAS_CHECK(call)                                                                 \
    do {                                                                                   \
        cublasStatus_t st_ = (call);                                                       \
        if (st_ != CUBLAS_STATUS_SUCCESS) {                                                \
            fprintf(stderr, "%s:%d: cuBLAS error %d (%s)\n", __FILE__, __LINE__, (int)st_, \
                    cublasGetStatusString(st_));                                           \
            exit(1);                                                                       \
        }                                                                                  \
    } while (0)

// A kernel launch: check the launch, and in debug builds its completion.
#define LAUNCH_CHECK() CUDA_CHECK(cudaGetLastError())

// ------------------------------------------------------------ device gate
// No device, no driver, or a stub driver (a CUDA toolkit without a GPU):
// say why and exit 77, the code test harnesses read as "skipped".
static void device_gate(void)
{
    int drv = 0;
    cudaError_t e = cudaDriverGetVersion(&drv);
    if (e != cudaSuccess || drv == 0) {
        printf("SKIP: no CUDA driver (%s)\n", e != cudaSuccess ? cudaGetErrorString(e) : "driver version 0");
        exit(77);
    }
    int n = 0;
    e = cudaGetDeviceCount(&n);
    if (e != cudaSuccess) {
        printf("SKIP: no usable CUDA device (%s)\n", cudaGetErrorString(e));
        exit(77);
    }
    if (n == 0) {
        printf("SKIP: no CUDA device\n");
        exit(77);
    }
    e = cudaSetDevice(0);
    if (e == cudaSuccess)
        e = cudaFree(0); // create the context now, so a broken driver shows here
    if (e != cudaSuccess) {
        printf("SKIP: CUDA device 0 unusable (%s)\n", cudaGetErrorString(e));
        exit(77);
    }
}

// ------------------------------------------------------------ arguments
// How the L2 is emptied before each timed run: by reading a buffer twice its
// size (clean lines: the timed kernel's reads evict nothing dirty), by a
// memset of it (dirty lines the timed kernel must write back: an overcount
// kept only to show the difference), or not at all where the caller rotates
// several copies of its inputs.
enum flush_kind { FLUSH_READ, FLUSH_MEMSET, FLUSH_ROTATE };
static const char *flush_kind_name(flush_kind k)
{
    return k == FLUSH_READ ? "read" : k == FLUSH_MEMSET ? "memset" : "rotate";
}

struct run_args {
    const char *out_dir = ".";       // where TSV goes
    const char *bandwidth = nullptr; // bandwidth.tsv of this device: the measured read ceiling
    const char *launch = nullptr;    // launch.tsv of this device: the per-kernel fixed cost
    int quick = 0;                   // small sizes: a correctness run
    int version = 0;                 // the highest version asked for (0: none named, run all)
    unsigned versions = 0;           // bit v: version v asked for (argv[1] as in llm.c's dev/cuda, or --version LIST)
    flush_kind flush = FLUSH_READ;
};

// Whether version v runs: every version when none was named.  A runner
// starts a version never run on a GPU in a process of its own, so that a
// fault there (after which every CUDA call fails) costs that version alone.
static bool version_wanted(const run_args &a, int v)
{
    return a.versions == 0 || (v >= 1 && v <= 31 && (a.versions >> v & 1u));
}

// "4" or "1,2,4": each 1 to 31; returns 0 on anything else.
static int parse_version_list(const char *s, run_args *a)
{
    if (!*s)
        return 0;
    while (*s) {
        char *end;
        long v = strtol(s, &end, 10);
        if (end == s || v < 1 || v > 31 || (*end && *end != ','))
            return 0;
        a->versions |= 1u << v;
        if (v > a->version)
            a->version = (int)v;
        s = *end ? end + 1 : end;
        if (*end && !*s)
            return 0; // a trailing comma
    }
    return 1;
}

static void usage_exit(const char *prog, const char *bad)
{
    if (bad)
        fprintf(stderr, "%s: unknown or incomplete flag '%s'\n", prog, bad);
    fprintf(stderr,
            "usage: %s [VERSION] [--version N[,N...]] [--out DIR] [--bandwidth DIR/bandwidth.tsv] [--launch DIR/launch.tsv]\n"
            "       [--flush read|memset|rotate] [--quick]\n",
            prog);
    exit(bad ? 2 : 0);
}

static run_args parse_args(int argc, char **argv)
{
    // Line-buffered: a run stopped at its time limit keeps every line printed
    // so far (stdout is a log file there, fully buffered otherwise).
    setvbuf(stdout, nullptr, _IOLBF, 0);
    run_args a;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            a.out_dir = argv[++i];
        else if (strcmp(argv[i], "--bandwidth") == 0 && i + 1 < argc)
            a.bandwidth = argv[++i];
        else if (strcmp(argv[i], "--launch") == 0 && i + 1 < argc)
            a.launch = argv[++i];
        else if (strcmp(argv[i], "--flush") == 0 && i + 1 < argc) {
            const char *f = argv[++i];
            if (strcmp(f, "read") == 0)
                a.flush = FLUSH_READ;
            else if (strcmp(f, "memset") == 0)
                a.flush = FLUSH_MEMSET;
            else if (strcmp(f, "rotate") == 0)
                a.flush = FLUSH_ROTATE;
            else {
                fprintf(stderr, "%s: --flush takes read, memset or rotate, not '%s'\n", argv[0], f);
                exit(2);
            }
        } else if (strcmp(argv[i], "--version") == 0 && i + 1 < argc) {
            if (!parse_version_list(argv[++i], &a)) {
                fprintf(stderr, "%s: --version takes a list of version numbers such as 5 or 1,2,3,4, not '%s'\n",
                        argv[0], argv[i]);
                exit(2);
            }
        } else if (strcmp(argv[i], "--quick") == 0)
            a.quick = 1;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            usage_exit(argv[0], nullptr);
        else if (i == 1 && argv[i][0] >= '1' && argv[i][0] <= '9' && strspn(argv[i], "0123456789") == strlen(argv[i]))
        {
            if (!parse_version_list(argv[i], &a))
                usage_exit(argv[0], argv[i]);
        } else
            usage_exit(argv[0], argv[i]);
    }
    return a;
}

// A version number given on the command line must exist.
static void check_version(const run_args &a, int versions, const char *prog)
{
    if (a.version > versions) {
        if (versions == 0)
            fprintf(stderr, "%s: takes no version number (got %d)\n", prog, a.version);
        else
            fprintf(stderr, "%s: no version %d (versions 1 to %d)\n", prog, a.version, versions);
        exit(2);
    }
}

// ------------------------------------------------------------ device facts
struct device_facts {
    cudaDeviceProp prop;
    int sm_clock_khz, mem_clock_khz, driver, runtime, cublas_built, cublas_runtime;
    gpu_table table;
    const gpu_spec *datasheet; // the row of code/specs/gpus.tsv, or NULL
};

static device_facts device_facts_get(void)
{
    device_facts f;
    memset(&f, 0, sizeof f);
    CUDA_CHECK(cudaGetDeviceProperties(&f.prop, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&f.sm_clock_khz, cudaDevAttrClockRate, 0));
    CUDA_CHECK(cudaDeviceGetAttribute(&f.mem_clock_khz, cudaDevAttrMemoryClockRate, 0));
    CUDA_CHECK(cudaDriverGetVersion(&f.driver));
    CUDA_CHECK(cudaRuntimeGetVersion(&f.runtime));
    f.cublas_built = CUBLAS_VERSION; // the header compiled against
    int major = 0, minor = 0, patch = 0;  // the library loaded now
    if (cublasGetProperty(MAJOR_VERSION, &major) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(MINOR_VERSION, &minor) == CUBLAS_STATUS_SUCCESS &&
        cublasGetProperty(PATCH_LEVEL, &patch) == CUBLAS_STATUS_SUCCESS)
        f.cublas_runtime = major * 10000 + minor * 100 + patch;
    char err[256];
    if (gpu_table_builtin(&f.table, err, sizeof err) == 0)
        f.datasheet = gpu_match_device_name(&f.table, f.prop.name);
    return f;
}

// ------------------------------------------------------------ TSV with provenance
static void prov_num(FILE *f, const char *key, double v)
{
    char buf[64];
    snprintf(buf, sizeof buf, "%.0f", v);
    provenance_line(f, key, buf);
}

// Open DIR/name for writing and write the provenance header.
static FILE *tsv_open(const run_args &a, const device_facts &d, const char *name, const char *measurement)
{
    char path[1024];
    snprintf(path, sizeof path, "%s/%s", a.out_dir, name);
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "cannot write %s\n", path);
        exit(1);
    }
    setvbuf(f, nullptr, _IOLBF, 0); // every row reaches the file as it is measured
    char buf[256], slug[128];
    provenance_line(f, "measurement", measurement);
    provenance_line(f, "kind", "gpu");
    provenance_line(f, "device", d.prop.name);
    device_slug(d.prop.name, slug, sizeof slug);
    provenance_line(f, "device_slug", slug);
    provenance_line(f, "datasheet", d.datasheet ? d.datasheet->key : "none (not in code/specs/gpus.tsv)");
    prov_num(f, "sms", d.prop.multiProcessorCount);
    prov_num(f, "sm_clock_khz_rated", d.sm_clock_khz);
    prov_num(f, "mem_clock_khz_rated", d.mem_clock_khz);
    prov_num(f, "mem_bus_bits", d.prop.memoryBusWidth);
    prov_num(f, "mem_bytes", (double)d.prop.totalGlobalMem);
    prov_num(f, "l2_bytes", d.prop.l2CacheSize);
    snprintf(buf, sizeof buf, "%d.%d", d.driver / 1000, (d.driver % 1000) / 10);
    provenance_line(f, "driver_cuda", buf);
    snprintf(buf, sizeof buf, "%d.%d", d.runtime / 1000, (d.runtime % 1000) / 10);
    provenance_line(f, "runtime", buf);
    snprintf(buf, sizeof buf, "%d.%d.%d", d.cublas_runtime / 10000, d.cublas_runtime / 100 % 100,
             d.cublas_runtime % 100);
    provenance_line(f, "cublas_runtime", d.cublas_runtime ? buf : "unknown");
    prov_num(f, "cublas_built", d.cublas_built);
    snprintf(buf, sizeof buf, "%d.%d", __CUDACC_VER_MAJOR__, __CUDACC_VER_MINOR__);
    provenance_line(f, "nvcc", buf);
    provenance_line(f, "quick", a.quick ? "yes (small sizes: a correctness run, not the book's figures)" : "no");
    provenance_line(f, "l2_flush", flush_kind_name(a.flush));
    snprintf(buf, sizeof buf, "%d.%d", d.prop.major, d.prop.minor);
    provenance_line(f, "compute_capability", buf);
    host_info h;
    host_info_collect(&h);
    provenance_line(f, "host", h.host);
    provenance_line(f, "host_cpu", h.cpu_model);
    provenance_line(f, "date", h.date);
    provenance_line(f, "git", h.git);
    return f;
}

static void tsv_close(FILE *f)
{
    if (fclose(f) != 0) {
        fprintf(stderr, "error writing a TSV file\n");
        exit(1);
    }
}

// The read ceiling (B/s) measured by bandwidth.cu, or the datasheet figure
// when no file was given; *source says which.
static double read_ceiling(const run_args &a, const device_facts &d, const char **source)
{
    if (a.bandwidth) {
        measured_table t;
        char err[256];
        if (measured_table_load(a.bandwidth, &t, err, sizeof err) == 0) {
            double bw = measured_read_bandwidth(&t);
            measured_table_free(&t);
            if (bw > 0) {
                *source = "measured read (bandwidth.tsv)";
                return bw;
            }
        }
        fprintf(stderr, "warning: no read bandwidth in %s; using the datasheet\n", a.bandwidth);
    }
    *source = "datasheet";
    return d.datasheet ? d.datasheet->mem_bw : 0;
}

// ------------------------------------------------------------ timing
// Reads a buffer of twice the L2 (16-byte loads, a sum stored only when it is
// impossible, so nothing is elided): every line of the timed kernel's inputs
// is gone from L2 and no dirty line is left for it to write back.  Ordinary
// loads, not __ldcs: evict-first lines would mostly evict each other and
// leave the previous repeat's data warm in L2.
__global__ void l2_read_flush_kernel(const uint4 *__restrict__ p, size_t n16, unsigned *sink)
{
    unsigned acc = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n16; i += (size_t)gridDim.x * blockDim.x) {
        uint4 v = p[i];
        acc ^= v.x ^ v.y ^ v.z ^ v.w;
    }
    if (acc == 0x9E3779B9u) // the buffer is zero: never true, but the compiler cannot know
        *sink = acc;
}

struct l2_flusher {
    void *buf = nullptr;
    unsigned *sink = nullptr;
    size_t bytes = 0;
    int count = 0, sms = 1;
    flush_kind kind = FLUSH_READ;
    void init(const device_facts &d, flush_kind k = FLUSH_READ)
    {
        kind = k;
        sms = d.prop.multiProcessorCount;
        bytes = 2 * (size_t)d.prop.l2CacheSize;
        if (bytes < (64u << 20))
            bytes = 64u << 20;
        if (kind == FLUSH_ROTATE)
            return; // the caller rotates its inputs
        CUDA_CHECK(cudaMalloc(&buf, bytes));
        CUDA_CHECK(cudaMalloc(&sink, sizeof(unsigned)));
        CUDA_CHECK(cudaMemset(buf, 0, bytes));
        CUDA_CHECK(cudaDeviceSynchronize());
    }
    void flush(cudaStream_t s)
    {
        if (!buf)
            return;
        if (kind == FLUSH_MEMSET)
            CUDA_CHECK(cudaMemsetAsync(buf, count++ & 0xff, bytes, s));
        else {
            l2_read_flush_kernel<<<4 * sms, 512, 0, s>>>((const uint4 *)buf, bytes / 16, sink);
            LAUNCH_CHECK();
        }
    }
    void release()
    {
        if (buf)
            CUDA_CHECK(cudaFree(buf));
        if (sink)
            CUDA_CHECK(cudaFree(sink));
        buf = nullptr;
        sink = nullptr;
    }
};

// Best and median of the timed repeats: the median is what a target uses
// unless its line says "best" (public stream figures are best times).
struct timing {
    double median_s, best_s;
    int reps;
};

// `reps` timed runs of launch(i) (i = the repeat, for callers that rotate
// buffers), after `warmup` untimed ones; the L2 is flushed before each run
// when fl is given (outside the events, so the flush is not timed).
template <class F> static timing time_runs(F launch, int warmup, int reps, l2_flusher *fl, cudaStream_t s = 0)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < warmup; i++)
        launch(i);
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<double> t(reps);
    for (int i = 0; i < reps; i++) {
        if (fl)
            fl->flush(s);
        CUDA_CHECK(cudaEventRecord(start, s));
        launch(i);
        CUDA_CHECK(cudaEventRecord(stop, s));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        t[i] = ms * 1e-3;
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    timing r = {median_of(t.data(), reps), t[0], reps};
    for (double x : t)
        r.best_s = x < r.best_s ? x : r.best_s;
    return r;
}

// The median alone, for a launch that takes no argument.
template <class F> static double median_time_s(F launch, int warmup, int reps, l2_flusher *fl, cudaStream_t s = 0)
{
    return time_runs([&](int) { launch(); }, warmup, reps, fl, s).median_s;
}

// ------------------------------------------------------------ read ceiling at a footprint
// The read stream of bandwidth.cu (version 2): U independent 16-byte
// streaming loads in flight per thread before the first is used, summed so
// nothing is elided, one atomic per block.  Shared so that a kernel can
// measure the ceiling over its own buffer: a 30 us kernel pays the launch
// and the ramp that a 1 GiB stream hides.
template <int U, bool STREAMING>
__global__ void stream_read_kernel(const float4 *__restrict__ a, size_t n4, double *sum)
{
    __shared__ float part[32];
    float acc = 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < n4; i += U * stride) {
        float4 x[U];
#pragma unroll
        for (int u = 0; u < U; u++)
            x[u] = STREAMING ? __ldcs(a + i + u * stride) : a[i + u * stride];
#pragma unroll
        for (int u = 0; u < U; u++)
            acc += (x[u].x + x[u].y) + (x[u].z + x[u].w);
    }
    for (; i < n4; i += stride) {
        float4 x = STREAMING ? __ldcs(a + i) : a[i];
        acc += (x.x + x.y) + (x.z + x.w);
    }
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.f;
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_xor_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0)
            atomicAdd(sum, (double)v);
    }
}

// Blocks of `block` threads that fill every SM once (the occupancy API): a
// grid-stride kernel sized so, with no partial wave.
template <class K> static int full_grid(K kernel, int block, int sms, size_t smem = 0)
{
    int per_sm = 0;
    CUDA_CHECK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(&per_sm, kernel, block, smem));
    return (per_sm > 0 ? per_sm : 1) * sms;
}

// The same stream over two buffers of n4 float4 each, as one index space
// (element i of a, then element i - n4 of b): one launch reads both, as a
// kernel that reads K and V does.
template <int U>
__global__ void stream_read2_kernel(const float4 *__restrict__ a, const float4 *__restrict__ b, size_t n4,
                                    double *sum)
{
    __shared__ float part[32];
    float acc = 0;
    const size_t stride = (size_t)gridDim.x * blockDim.x, total = 2 * n4;
    size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x;
    for (; i + (U - 1) * stride < total; i += U * stride) {
        float4 x[U];
#pragma unroll
        for (int u = 0; u < U; u++) {
            size_t j = i + u * stride;
            x[u] = __ldcs(j < n4 ? a + j : b + (j - n4));
        }
#pragma unroll
        for (int u = 0; u < U; u++)
            acc += (x[u].x + x[u].y) + (x[u].z + x[u].w);
    }
    for (; i < total; i += stride) {
        float4 x = __ldcs(i < n4 ? a + i : b + (i - n4));
        acc += (x.x + x.y) + (x.z + x.w);
    }
    for (int o = 16; o > 0; o >>= 1)
        acc += __shfl_xor_sync(0xffffffffu, acc, o);
    if ((threadIdx.x & 31) == 0)
        part[threadIdx.x >> 5] = acc;
    __syncthreads();
    if (threadIdx.x < 32) {
        float v = threadIdx.x < blockDim.x / 32 ? part[threadIdx.x] : 0.f;
        for (int o = 16; o > 0; o >>= 1)
            v += __shfl_xor_sync(0xffffffffu, v, o);
        if (threadIdx.x == 0)
            atomicAdd(sum, (double)v);
    }
}

// Read bandwidth (B/s, median and best) over `bytes` at p (a multiple of
// 16), or, when p2 is given, over `bytes` at p and as many at p2 in one
// launch; the L2 flushed before each run as fl says.
struct ceiling_at {
    double median_bps, best_bps;
};
static ceiling_at read_ceiling_at(const void *p, size_t bytes, int sms, l2_flusher *fl, int reps,
                                  const void *p2 = nullptr)
{
    double *sum;
    CUDA_CHECK(cudaMalloc(&sum, sizeof(double)));
    const int block = 512;
    int grid = p2 ? full_grid(stream_read2_kernel<4>, block, sms) : full_grid(stream_read_kernel<4, true>, block, sms);
    timing t = time_runs(
        [&](int) {
            if (p2)
                stream_read2_kernel<4><<<grid, block>>>((const float4 *)p, (const float4 *)p2, bytes / 16, sum);
            else
                stream_read_kernel<4, true><<<grid, block>>>((const float4 *)p, bytes / 16, sum);
            LAUNCH_CHECK();
        },
        2, reps, fl);
    CUDA_CHECK(cudaFree(sum));
    double total = p2 ? 2.0 * bytes : (double)bytes;
    ceiling_at c = {total / t.median_s, total / t.best_s};
    return c;
}

static double host_now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

// ------------------------------------------------------------ random inputs
// Element i = counter_uniform(seed, i, lo, hi), rounded to the buffer's type:
// never zero data (zeros make tensor cores run faster than real inputs).
__global__ void fill_uniform_bf16_kernel(bf16 *x, size_t n, uint64_t seed, float lo, float hi)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = __float2bfloat16_rn(counter_uniform(seed, i, lo, hi));
}

__global__ void fill_uniform_f32_kernel(float *x, size_t n, uint64_t seed, float lo, float hi)
{
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        x[i] = counter_uniform(seed, i, lo, hi);
}

static void fill_uniform_bf16(bf16 *x, size_t n, uint64_t seed, float lo, float hi)
{
    fill_uniform_bf16_kernel<<<1024, 256>>>(x, n, seed, lo, hi);
    LAUNCH_CHECK();
}

static void fill_uniform_f32(float *x, size_t n, uint64_t seed, float lo, float hi)
{
    fill_uniform_f32_kernel<<<1024, 256>>>(x, n, seed, lo, hi);
    LAUNCH_CHECK();
}

// The host's copy of element i of a bf16 buffer filled as above.
static float host_uniform_bf16(uint64_t seed, size_t i, float lo, float hi)
{
    return bf16_to_f32(bf16_from_f32(counter_uniform(seed, i, lo, hi)));
}

// bf16 device values to host floats.
static void download_bf16(const bf16 *d, size_t n, float *out)
{
    std::vector<uint16_t> tmp(n);
    CUDA_CHECK(cudaMemcpy(tmp.data(), d, n * sizeof(uint16_t), cudaMemcpyDeviceToHost));
    for (size_t i = 0; i < n; i++)
        out[i] = bf16_to_f32(tmp[i]);
}

// A cuBLAS handle whose GEMMs reduce over K in fp32 only: the default math
// mode lets cuBLAS split K and add bf16 partials, which the validation
// below would accept but the book's error figures should not depend on.
// default_math = true gives the library's default mode, which is what a
// serving stack gets: timed beside the other, never instead of it.
static cublasHandle_t cublas_handle_make(bool default_math = false)
{
    cublasHandle_t h;
    CUBLAS_CHECK(cublasCreate(&h));
    if (!default_math)
        CUBLAS_CHECK(cublasSetMathMode(
            h, (cublasMath_t)(CUBLAS_DEFAULT_MATH | CUBLAS_MATH_DISALLOW_REDUCED_PRECISION_REDUCTION)));
    return h;
}

// Every element of a bf16 output scanned on the device for NaN or Inf (all
// exponent bits set): the host check reads a sample, this reads the rest.
__global__ void count_nonfinite_bf16_kernel(const uint16_t *__restrict__ y, size_t n, unsigned *count)
{
    unsigned c = 0;
    for (size_t i = blockIdx.x * (size_t)blockDim.x + threadIdx.x; i < n; i += (size_t)gridDim.x * blockDim.x)
        c += (y[i] & 0x7F80u) == 0x7F80u;
    c = __reduce_add_sync(0xffffffffu, c);
    if ((threadIdx.x & 31) == 0 && c)
        atomicAdd(count, c);
}

static unsigned count_nonfinite_bf16(const bf16 *y, size_t n)
{
    unsigned *d, h = 0;
    CUDA_CHECK(cudaMalloc(&d, sizeof(unsigned)));
    CUDA_CHECK(cudaMemset(d, 0, sizeof(unsigned)));
    count_nonfinite_bf16_kernel<<<256, 256>>>(reinterpret_cast<const uint16_t *>(y), n, d);
    LAUNCH_CHECK();
    CUDA_CHECK(cudaMemcpy(&h, d, sizeof(unsigned), cudaMemcpyDeviceToHost));
    CUDA_CHECK(cudaFree(d));
    return h;
}

// Row-major Y[m x n] = X[m x k] W^T (W is n x k) in bf16 with fp32
// accumulation.  Row-major Y = X W^T is column-major Y^T = W X^T: cuBLAS
// "TN", the layout its fastest kernels take.
static void cublas_gemm_bf16(cublasHandle_t h, int m, int n, int k, const bf16 *x, const bf16 *w, bf16 *y)
{
    const float alpha = 1.0f, beta = 0.0f;
    CUBLAS_CHECK(cublasGemmEx(h, CUBLAS_OP_T, CUBLAS_OP_N, n, m, k, &alpha, w, CUDA_R_16BF, k, x, CUDA_R_16BF, k,
                              &beta, y, CUDA_R_16BF, n, CUBLAS_COMPUTE_32F, CUBLAS_GEMM_DEFAULT));
}

// Check rows [0, rows) and columns [c0, c0 + cols) of a device Y (row
// stride n) against the CPU reference of X and W as filled from seed_x and
// seed_w (X row-major m x k, W row-major n x k), with the library's
// set-scaled bf16 bound (validate_bf16_output: a reduced-precision
// reduction cannot fail it, a wrong or missing term cannot pass).  Returns
// 1 when valid, 0 with a message naming `who`; never exits.
static int validate_bf16_gemm_block(const char *who, const bf16 *y, int rows, int n, int k, int c0, int cols,
                                    uint64_t seed_x, uint64_t seed_w)
{
    std::vector<uint16_t> bits((size_t)rows * cols);
    CUDA_CHECK(cudaMemcpy2D(bits.data(), cols * sizeof(uint16_t), y + c0, (size_t)n * sizeof(uint16_t),
                            cols * sizeof(uint16_t), rows, cudaMemcpyDeviceToHost));
    std::vector<float> x((size_t)rows * k), w((size_t)cols * k), ref(bits.size()), got(bits.size());
    for (size_t i = 0; i < x.size(); i++)
        x[i] = host_uniform_bf16(seed_x, i, -1, 1);
    for (int j = 0; j < cols; j++)
        for (int p = 0; p < k; p++)
            w[(size_t)j * k + p] = host_uniform_bf16(seed_w, (size_t)(c0 + j) * k + p, -1, 1);
    gemm_ref_f32(rows, cols, k, x.data(), w.data(), ref.data(), 0, cols);
    for (size_t i = 0; i < got.size(); i++)
        got[i] = bf16_to_f32(bits[i]);
    norm_check c = validate_bf16_output(got.data(), ref.data(), got.size());
    if (!c.pass)
        fprintf(stderr, "%s: INVALID: %zu of %zu checked outputs over the bound, |err|/|ref| = %.3g (first: got %g, want %g)\n",
                who, c.bad, got.size(), c.rel_l2, c.first_bad >= 0 ? got[c.first_bad] : NAN,
                c.first_bad >= 0 ? ref[c.first_bad] : NAN);
    return c.pass;
}

// Poison a bf16 output with NaN (0xFFFF) so an unwritten element fails.
static void poison_bf16(bf16 *y, size_t n)
{
    CUDA_CHECK(cudaMemset(y, 0xFF, n * sizeof(bf16)));
}

// The fixed per-kernel cost measured by launch.cu (its event_empty row), or 0.
static double launch_latency(const run_args &a, const char **source)
{
    *source = "none (0: plain roofline)";
    if (!a.launch)
        return 0;
    measured_table t;
    char err[256];
    double lat = 0;
    if (measured_table_load(a.launch, &t, err, sizeof err) == 0) {
        int tc = measured_col(&t, "test"), sc = measured_col(&t, "time_s");
        int row = tc < 0 ? -1 : measured_find_row(&t, tc, "event_empty");
        lat = row < 0 || sc < 0 ? 0 : measured_num(&t, row, sc);
        measured_table_free(&t);
    }
    if (lat > 0)
        *source = "measured: event-timed empty kernel (launch.tsv)";
    else
        fprintf(stderr, "warning: no event_empty row in %s; no latency term\n", a.launch);
    return lat > 0 ? lat : 0;
}

// Prints a target line the way every kernel does: "target: ... : met".
// `which` says whether the value is a median or a best time ("median",
// "best"), so no target silently compares the wrong statistic.
static void report_target(const char *what, double value, const char *unit, double target, int higher_is_better,
                          const char *applies, const char *which = "median")
{
    int met = higher_is_better ? value >= target : value <= target;
    if (!(value == value)) // NaN: nothing measured
        printf("  target %-44s %10s %-8s (target %s %g, %s, %s): NOT MEASURED\n", what, "-", unit,
               higher_is_better ? ">=" : "<=", target, which, applies);
    else
        printf("  target %-44s %10.3g %-8s (target %s %g, %s, %s): %s\n", what, value, unit,
               higher_is_better ? ">=" : "<=", target, which, applies, met ? "met" : "NOT met");
}

// The exit of a kernel program: 0 when every checked result was valid, 1
// after the report otherwise (the sweep itself never stops on a bad result).
static int finish(const char *prog, int invalid)
{
    if (invalid)
        printf("%s: %d results INVALID (see the valid column): exit 1\n", prog, invalid);
    return invalid ? 1 : 0;
}
