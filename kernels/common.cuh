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
struct run_args {
    const char *out_dir = ".";      // where TSV goes
    const char *bandwidth = nullptr; // bandwidth.tsv of this device: the measured read ceiling
    int quick = 0;                   // small sizes: a correctness run
};

static void usage_exit(const char *prog, const char *bad)
{
    if (bad)
        fprintf(stderr, "%s: unknown or incomplete flag '%s'\n", prog, bad);
    fprintf(stderr, "usage: %s [--out DIR] [--bandwidth DIR/bandwidth.tsv] [--quick]\n", prog);
    exit(bad ? 2 : 0);
}

static run_args parse_args(int argc, char **argv)
{
    run_args a;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--out") == 0 && i + 1 < argc)
            a.out_dir = argv[++i];
        else if (strcmp(argv[i], "--bandwidth") == 0 && i + 1 < argc)
            a.bandwidth = argv[++i];
        else if (strcmp(argv[i], "--quick") == 0)
            a.quick = 1;
        else if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0)
            usage_exit(argv[0], nullptr);
        else
            usage_exit(argv[0], argv[i]);
    }
    return a;
}

// ------------------------------------------------------------ device facts
struct device_facts {
    cudaDeviceProp prop;
    int sm_clock_khz, mem_clock_khz, driver, runtime, cublas;
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
    f.cublas = CUBLAS_VERSION;
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
    char buf[256], slug[128];
    provenance_line(f, "measurement", measurement);
    provenance_line(f, "kind", "gpu");
    provenance_line(f, "device", d.prop.name);
    device_slug(d.prop.name, slug, sizeof slug);
    provenance_line(f, "device_slug", slug);
    provenance_line(f, "datasheet", d.datasheet ? d.datasheet->key : "none (not in code/specs/gpus.tsv)");
    prov_num(f, "sms", d.prop.multiProcessorCount);
    prov_num(f, "sm_clock_khz", d.sm_clock_khz);
    prov_num(f, "mem_clock_khz", d.mem_clock_khz);
    prov_num(f, "mem_bus_bits", d.prop.memoryBusWidth);
    prov_num(f, "mem_bytes", (double)d.prop.totalGlobalMem);
    prov_num(f, "l2_bytes", d.prop.l2CacheSize);
    snprintf(buf, sizeof buf, "%d.%d", d.driver / 1000, (d.driver % 1000) / 10);
    provenance_line(f, "driver_cuda", buf);
    snprintf(buf, sizeof buf, "%d.%d", d.runtime / 1000, (d.runtime % 1000) / 10);
    provenance_line(f, "runtime", buf);
    prov_num(f, "cublas", d.cublas);
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
            int kc = measured_col(&t, "kernel"), gc = measured_col(&t, "gb_s");
            int row = kc < 0 ? -1 : measured_find_row(&t, kc, "read");
            double bw = row < 0 || gc < 0 ? 0 : measured_num(&t, row, gc) * GB;
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
// Flushes L2 between timed repeats by writing a buffer twice its size.
struct l2_flusher {
    void *buf = nullptr;
    size_t bytes = 0;
    int count = 0;
    void init(const device_facts &d)
    {
        bytes = 2 * (size_t)d.prop.l2CacheSize;
        if (bytes < (64u << 20))
            bytes = 64u << 20;
        CUDA_CHECK(cudaMalloc(&buf, bytes));
    }
    void flush(cudaStream_t s)
    {
        if (buf)
            CUDA_CHECK(cudaMemsetAsync(buf, count++ & 0xff, bytes, s));
    }
    void release()
    {
        if (buf)
            CUDA_CHECK(cudaFree(buf));
        buf = nullptr;
    }
};

// Median time (s) of `reps` timed runs of launch(), after `warmup` untimed
// ones; the L2 is flushed before each run when fl is given (outside the
// events, so the flush is not timed).
template <class F> static double median_time_s(F launch, int warmup, int reps, l2_flusher *fl, cudaStream_t s = 0)
{
    cudaEvent_t start, stop;
    CUDA_CHECK(cudaEventCreate(&start));
    CUDA_CHECK(cudaEventCreate(&stop));
    for (int i = 0; i < warmup; i++)
        launch();
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<double> t(reps);
    for (int i = 0; i < reps; i++) {
        if (fl)
            fl->flush(s);
        CUDA_CHECK(cudaEventRecord(start, s));
        launch();
        CUDA_CHECK(cudaEventRecord(stop, s));
        CUDA_CHECK(cudaEventSynchronize(stop));
        float ms = 0;
        CUDA_CHECK(cudaEventElapsedTime(&ms, start, stop));
        t[i] = ms * 1e-3;
    }
    CUDA_CHECK(cudaEventDestroy(start));
    CUDA_CHECK(cudaEventDestroy(stop));
    return median_of(t.data(), reps);
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
// seed_w (X row-major m x k, W row-major n x k).  0, or -1 with a message
// naming `who`.
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
    long first;
    // bf16 output keeps 8 bits: relative rounding <= 2^-8; fp32 accumulation
    // adds far less; atol covers results near zero.
    size_t bad = validate_close(got.data(), ref.data(), got.size(), 2e-2, 1e-2, &first, NULL);
    if (bad)
        fprintf(stderr, "%s: %zu of %zu checked outputs differ (first: got %g, want %g)\n", who, bad, got.size(),
                got[first], ref[first]);
    return bad ? -1 : 0;
}

// Prints a target line the way every kernel does: "target: ... : met".
static void report_target(const char *what, double value, const char *unit, double target, int higher_is_better,
                          const char *applies)
{
    int met = higher_is_better ? value >= target : value <= target;
    printf("  target %-44s %10.3g %-8s (target %s %g, %s): %s\n", what, value, unit, higher_is_better ? ">=" : "<=",
           target, applies, met ? "met" : "NOT met");
}
