// cuBLAS bf16 GEMM (fp32 accumulation) against batch: Y[M x N] = X[M x K] W^T
// for M = 1 ... 4096 (every power of two, and every 32 between 128 and 512
// where the knee is), over the projections of LLaMA-3-70B per
// tensor-parallel shard (TP 1, 2, 4, 8; shapes from code/specs/models.tsv)
// and an 8192 x 8192 square.  The L2 is flushed before every timed call.
//
// Each point carries the library's roofline prediction from the measured
// ceilings: peak = the best TFLOP/s of the sweep, bandwidth = the read stream
// of bandwidth.cu (--bandwidth FILE; the datasheet figure otherwise), and
// with the fixed per-kernel term of launch.cu (--launch FILE) beside it.
// The peak comes from this same sweep, so a compute-bound point's prediction
// is partly fitted to it: such points say `fitted` = yes, and the error
// targets count the others (memory-bound: both ceilings measured apart from
// them).  cuBLAS runs with reduced-precision reduction disallowed; the square
// is timed again in cuBLAS's default math mode into gemm_default_math.tsv.
// Every point is validated (a block against the CPU reference, every output
// scanned for NaN and Inf), an invalid one is marked in the `valid` column
// and the sweep carries on (exit 1 at the end).
//
//   gemm_sweep [--out DIR] [--bandwidth DIR/bandwidth.tsv] [--launch DIR/launch.tsv]
//              [--flush read|memset] [--quick]   writes DIR/gemm.tsv, DIR/gemm_default_math.tsv
#include "common.cuh"

#include <math.h>

struct shape {
    char name[32];
    int n, k;
};

// The projections of a layer on one GPU of a tp group, as the library's
// cost model splits them: N = out, K = in.
static int projection_shapes(const model_spec *m, int tp, shape *out)
{
    projection_shape w[LAYER_PROJECTIONS];
    int n = layer_projection_shapes(m, tp, w);
    for (int i = 0; i < n; i++) {
        out[i].n = w[i].out;
        out[i].k = w[i].in;
        snprintf(out[i].name, sizeof out[i].name, "%.*s_tp%d", (int)(strlen(w[i].name) - 5), w[i].name, tp);
    }
    return n;
}

static const uint64_t SEED_X = 11, SEED_W = 12;

// Check rows [0, min(m, 32)) and 8 columns against the CPU reference: 1 valid.
static int validate_point(const bf16 *y, int m, int n, int k, int c0)
{
    char who[64];
    snprintf(who, sizeof who, "gemm_sweep: M=%d N=%d K=%d", m, n, k);
    int ok = validate_bf16_gemm_block(who, y, m < 32 ? m : 32, n, k, c0, n - c0 < 8 ? n - c0 : 8, SEED_X, SEED_W);
    unsigned nonfinite = count_nonfinite_bf16(y, (size_t)m * n);
    if (nonfinite)
        printf("%s: INVALID: %u of %zu outputs NaN or Inf\n", who, nonfinite, (size_t)m * n);
    return ok && nonfinite == 0;
}

int main(int argc, char **argv)
{
    run_args args = parse_args(argc, argv);
    check_version(args, 0, "gemm_sweep");
    device_gate();
    device_facts dev = device_facts_get();
    model_spec llama70 = model_builtin("llama3-70b");

    shape shapes[32];
    int ns = 0;
    int tps[] = {1, 2, 4, 8};
    for (int t = 0; t < (args.quick ? 1 : 4); t++)
        ns += projection_shapes(&llama70, tps[t], shapes + ns);
    shapes[ns++] = shape{"square8192", 8192, 8192};

    std::vector<int> ms;
    for (int m = 1; m <= 4096; m *= 2) {
        ms.push_back(m);
        if (m >= 128 && m < 512)
            for (int j = m + 32; j < 2 * m; j += 32)
                ms.push_back(j);
    }
    if (args.quick)
        ms = {1, 64, 256, 1024};
    int max_m = ms.back();
    size_t max_x = 0, max_w = 0, max_y = 0;
    for (int s = 0; s < ns; s++) {
        max_x = std::max(max_x, (size_t)max_m * shapes[s].k);
        max_w = std::max(max_w, (size_t)shapes[s].n * shapes[s].k);
        max_y = std::max(max_y, (size_t)max_m * shapes[s].n);
    }
    bf16 *x, *w, *y;
    CUDA_CHECK(cudaMalloc(&x, max_x * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&w, max_w * sizeof(bf16)));
    CUDA_CHECK(cudaMalloc(&y, max_y * sizeof(bf16)));
    cublasHandle_t h = cublas_handle_make(), hd = cublas_handle_make(true);
    if (args.flush == FLUSH_ROTATE) {
        fprintf(stderr, "gemm_sweep: --flush rotate is not offered here (read or memset)\n");
        return 2;
    }
    l2_flusher fl;
    fl.init(dev, args.flush);
    int reps = args.quick ? 3 : 10, warmup = 3;

    struct point {
        int s, m;
        timing t;
        int valid;
    };
    int invalid = 0;
    std::vector<point> pts;
    rng_state rng = rng_make(5);
    for (int s = 0; s < ns; s++) {
        int n = shapes[s].n, k = shapes[s].k;
        // X and W for this shape: element i is counter_uniform(seed, i), so
        // the host can recompute any of them.
        fill_uniform_bf16(x, (size_t)max_m * k, SEED_X, -1, 1);
        fill_uniform_bf16(w, (size_t)n * k, SEED_W, -1, 1);
        for (size_t mi = 0; mi < ms.size(); mi++) {
            int m = ms[mi];
            poison_bf16(y, (size_t)m * n);
            timing t = time_runs([&](int) { cublas_gemm_bf16(h, m, n, k, x, w, y); }, warmup, reps, &fl);
            CUDA_CHECK(cudaDeviceSynchronize());
            int c0 = (int)rng_below(&rng, (uint64_t)(n - 8));
            int ok = validate_point(y, m, n, k, c0);
            invalid += !ok;
            pts.push_back({s, m, t, ok});
        }
        printf("gemm_sweep %-12s N=%-6d K=%-6d %zu batch sizes timed and validated\n", shapes[s].name, n, k,
               ms.size());
        fflush(stdout);
    }

    // The square again in cuBLAS's default math mode (K may be split and
    // bf16 partials added): what a serving stack gets, beside the strict run.
    {
        const shape &sq = shapes[ns - 1];
        FILE *dm = tsv_open(args, dev, "gemm_default_math.tsv", "gemm_sweep_default_math");
        provenance_line(dm, "math_mode", "CUBLAS_DEFAULT_MATH (reduced-precision reduction allowed)");
        provenance_line(dm, "strict_time_s", "the same point in gemm.tsv (reduced-precision reduction disallowed)");
        fprintf(dm, "shape\tm\tn\tk\ttime_s\tbest_time_s\ttflop_s\tstrict_time_s\tvalid\n");
        fill_uniform_bf16(x, (size_t)max_m * sq.k, SEED_X, -1, 1);
        fill_uniform_bf16(w, (size_t)sq.n * sq.k, SEED_W, -1, 1);
        for (int m : ms) {
            poison_bf16(y, (size_t)m * sq.n);
            timing t = time_runs([&](int) { cublas_gemm_bf16(hd, m, sq.n, sq.k, x, w, y); }, warmup, reps, &fl);
            CUDA_CHECK(cudaDeviceSynchronize());
            int ok = validate_point(y, m, sq.n, sq.k, (int)rng_below(&rng, (uint64_t)(sq.n - 8)));
            invalid += !ok;
            double strict = NAN;
            for (const point &p : pts)
                if (p.s == ns - 1 && p.m == m)
                    strict = p.t.median_s;
            fprintf(dm, "%s\t%d\t%d\t%d\t%.6e\t%.6e\t%.2f\t%.6e\t%s\n", sq.name, m, sq.n, sq.k, t.median_s, t.best_s,
                    gemm_work_of(m, sq.n, sq.k, 2, 2).flop / t.median_s / TERA, strict, ok ? "yes" : "no");
        }
        tsv_close(dm);
        printf("gemm_sweep %-12s default math mode: %zu batch sizes timed and validated\n", sq.name, ms.size());
    }

    // Measured ceilings.
    double peak = 0;
    for (const point &p : pts)
        if (p.valid)
            peak = fmax(peak, gemm_work_of(p.m, shapes[p.s].n, shapes[p.s].k, 2, 2).flop / p.t.median_s);
    const char *lat_source;
    double lat = launch_latency(args, &lat_source);
    const char *bw_source;
    double bw = read_ceiling(args, dev, &bw_source);
    if (!(bw > 0)) {
        fprintf(stderr, "gemm_sweep: no bandwidth ceiling: pass --bandwidth DIR/bandwidth.tsv\n");
        return 1;
    }

    FILE *out = tsv_open(args, dev, "gemm.tsv", "gemm_sweep");
    char buf[128];
    provenance_line(out, "dtype", "bf16 in, fp32 accumulate, bf16 out (cublasGemmEx, CUBLAS_COMPUTE_32F)");
    snprintf(buf, sizeof buf, "%d (median and best reported, %d warm-up calls, L2 flushed by %s before each)", reps,
             warmup, flush_kind_name(args.flush));
    provenance_line(out, "repeats", buf);
    snprintf(buf, sizeof buf, "%.6e", peak);
    provenance_line(out, "peak_flops_measured", buf);
    snprintf(buf, sizeof buf, "%.6e", bw);
    provenance_line(out, "bandwidth_measured", buf);
    provenance_line(out, "bandwidth_source", bw_source);
    snprintf(buf, sizeof buf, "%.6e", lat);
    provenance_line(out, "latency_term_s", buf);
    provenance_line(out, "latency_source", lat_source);
    provenance_line(out, "time_s", "median of the repeats; best_time_s the fastest; predictions compare the median");
    provenance_line(out, "fitted", "yes: compute-bound by the roofline, predicted with the peak taken from this sweep; "
                                    "the error targets count the other points");
    fprintf(out, "shape\tm\tn\tk\ttime_s\tbest_time_s\ttflop_s\tgb_s\tintensity\tpred_time_s\tpred_bound\terror_pct"
                 "\tpred_lat_time_s\terror_lat_pct\tvalid\tfitted\n");
    std::vector<double> pred, pred_lat, meas, pred_lat_free, meas_free;
    for (const point &p : pts) {
        const shape &s = shapes[p.s];
        bound_kind b;
        gemm_work wk = gemm_work_of(p.m, s.n, s.k, 2, 2);
        double tp = gemm_predicted_time(p.m, s.n, s.k, 2, 2, peak, bw, &b);
        double tl = gemm_predicted_time_lat(p.m, s.n, s.k, 2, 2, peak, bw, lat, NULL);
        double t = p.t.median_s;
        bool fitted = b == BOUND_COMPUTE;
        if (p.valid) {
            pred.push_back(tp);
            pred_lat.push_back(tl);
            meas.push_back(t);
            if (!fitted) {
                pred_lat_free.push_back(tl);
                meas_free.push_back(t);
            }
        }
        fprintf(out, "%s\t%d\t%d\t%d\t%.6e\t%.6e\t%.2f\t%.1f\t%.2f\t%.6e\t%s\t%.1f\t%.6e\t%.1f\t%s\t%s\n", s.name,
                p.m, s.n, s.k, t, p.t.best_s, wk.flop / t / TERA, wk.bytes / t / GB, wk.intensity, tp, bound_name(b),
                100 * relative_error(tp, t), tl, 100 * relative_error(tl, t), p.valid ? "yes" : "no",
                fitted ? "yes" : "no");
    }
    tsv_close(out);
    error_summary es = error_summary_of(pred.data(), meas.data(), (int)pred.size());
    error_summary esl = error_summary_of(pred_lat.data(), meas.data(), (int)pred.size());
    error_summary esf = error_summary_of(pred_lat_free.data(), meas_free.data(), (int)pred_lat_free.size());

    // The square's knee: predicted from the ceilings, read off the sweep.
    const shape &sq = shapes[ns - 1];
    double t1 = 0, tbig = 0;
    for (const point &p : pts)
        if (p.s == ns - 1) {
            if (p.m == ms.front())
                t1 = p.t.median_s;
            if (p.m == max_m)
                tbig = p.t.median_s;
        }
    printf("  ceilings: peak %.1f TFLOP/s (best of the sweep), bandwidth %.2f TB/s (%s)\n", peak / TERA, bw / TB,
           bw_source);
    printf("  ridge %.0f FLOP/byte; %s knee predicted at M = %.0f, measured at M = %.0f\n", ridge_intensity(peak, bw),
           sq.name, gemm_knee_batch(sq.n, sq.k, 2, 2, peak, bw), measured_knee_batch(t1, max_m, tbig));
    printf("  latency term %.2f us (%s)\n", lat * 1e6, lat_source);
    printf("  prediction error over %d valid points: roofline median %.1f%% worst %.1f%%; with latency median %.1f%% "
           "worst %.1f%%\n",
           es.n, 100 * es.median_abs, 100 * es.worst_abs, 100 * esl.median_abs, 100 * esl.worst_abs);
    printf("  not fitted (memory-bound, %d valid points), with latency: median %.1f%% worst %.1f%%\n", esf.n,
           100 * esf.median_abs, 100 * esf.worst_abs);
    report_target("cuBLAS bf16 peak TFLOP/s", peak / TERA, "TFLOP/s", 750, 1, "H200");
    report_target("median |prediction error| % (with latency, not fitted)", 100 * esf.median_abs, "%", 10, 0, "H200");
    report_target("worst |prediction error| % (with latency, not fitted)", 100 * esf.worst_abs, "%", 25, 0, "H200");
    fl.release();
    CUBLAS_CHECK(cublasDestroy(h));
    CUBLAS_CHECK(cublasDestroy(hd));
    CUDA_CHECK(cudaFree(x));
    CUDA_CHECK(cudaFree(w));
    CUDA_CHECK(cudaFree(y));
    return finish("gemm_sweep", invalid);
}
