// What a kernel launch costs, apart from the kernel: empty kernels launched
// back to back in bursts of a few hundred (the host's enqueue cost: a burst
// small enough that the launch queue never fills, repeated, median), the
// same bursts waited for (the GPU's drain rate, reported separately: a
// burst longer than the queue measures this, not the host), each followed
// by a sync (the launch-to-completion latency), one empty kernel between
// two events (the fixed per-kernel term of the GEMM time model), and
// replayed from a CUDA graph of n nodes, fitted as a fixed cost plus a
// per-node cost.  Then a decode-step skeleton:
// as many empty kernels as one decode step of LLaMA-3-8B and -70B launches
// (the library's op list: one kernel per op of every layer, plus the ops
// that run once), eager and as a graph, for the chapters that put launch
// cost beside the step's memory time at batch 1 and 256.
//
//   launch [--out DIR] [--quick]      writes DIR/launch.tsv
#include "common.cuh"

__global__ void empty_kernel(void) {}

static void enqueue_n(cudaStream_t s, int n)
{
    for (int i = 0; i < n; i++)
        empty_kernel<<<1, 32, 0, s>>>();
    LAUNCH_CHECK();
}

static cudaGraphExec_t graph_of(cudaStream_t s, int nodes)
{
    cudaGraph_t g;
    cudaGraphExec_t exec;
    CUDA_CHECK(cudaStreamBeginCapture(s, cudaStreamCaptureModeGlobal));
    enqueue_n(s, nodes);
    CUDA_CHECK(cudaStreamEndCapture(s, &g));
    CUDA_CHECK(cudaGraphInstantiate(&exec, g, 0));
    CUDA_CHECK(cudaGraphDestroy(g));
    return exec;
}

// Median host time of launch-then-sync of a graph or an eager sequence.
static double time_graph(cudaStream_t s, cudaGraphExec_t exec, int reps)
{
    std::vector<double> t(reps);
    for (int i = -3; i < reps; i++) {
        double t0 = host_now_s();
        CUDA_CHECK(cudaGraphLaunch(exec, s));
        CUDA_CHECK(cudaStreamSynchronize(s));
        if (i >= 0)
            t[i] = host_now_s() - t0;
    }
    return median_of(t.data(), reps);
}

static double time_eager(cudaStream_t s, int n, int reps)
{
    std::vector<double> t(reps);
    for (int i = -3; i < reps; i++) {
        double t0 = host_now_s();
        enqueue_n(s, n);
        CUDA_CHECK(cudaStreamSynchronize(s));
        if (i >= 0)
            t[i] = host_now_s() - t0;
    }
    return median_of(t.data(), reps);
}

// Kernels in one decode step: every per-layer op once per layer, the others once.
static int kernels_per_step(const model_spec *m)
{
    op_cost ops[DECODER_MAX_OPS];
    precision prec = precision_uniform(DT_BF16);
    step_shape shape = decode_shape(1, 1024, 1, prec);
    int n = decoder_step_ops(m, &shape, ops, DECODER_MAX_OPS);
    if (n < 0) {
        fprintf(stderr, "launch: the library rejected the decode shape of %s\n", m->name);
        exit(1);
    }
    int total = 0;
    for (int i = 0; i < n; i++)
        total += op_repeats(m, &ops[i]);
    return total;
}

int main(int argc, char **argv)
{
    run_args args = parse_args(argc, argv);
    check_version(args, 0, "launch");
    device_gate();
    device_facts dev = device_facts_get();
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int reps = args.quick ? 5 : 50;
    FILE *tsv = tsv_open(args, dev, "launch.tsv", "launch");
    provenance_line(tsv, "kernel", "empty, <<<1, 32>>>, one non-blocking stream; host clock");
    provenance_line(tsv, "event_empty", "events around one empty kernel with the L2 read flush in front, as every other "
                                        "program times its kernels (the GEMM model's fixed term); event_empty_no_flush "
                                        "without it");
    fprintf(tsv, "test\tmodel\tkernels\ttime_s\tper_kernel_us\n");

    // Host enqueue cost: bursts of 200 launches (well inside the launch
    // queue, which holds about a thousand), timed on the host without a
    // sync, then waited for; the median of many bursts.
    const int burst = 200, bursts = args.quick ? 10 : 100;
    enqueue_n(s, burst);
    CUDA_CHECK(cudaStreamSynchronize(s));
    std::vector<double> enq(bursts), drain(bursts);
    for (int b = 0; b < bursts; b++) {
        double t0 = host_now_s();
        enqueue_n(s, burst);
        enq[b] = host_now_s() - t0;
        CUDA_CHECK(cudaStreamSynchronize(s));
        drain[b] = host_now_s() - t0;
    }
    double enqueue = median_of(enq.data(), bursts), drained = median_of(drain.data(), bursts);
    fprintf(tsv, "enqueue\t-\t%d\t%.6e\t%.3f\n", burst, enqueue, enqueue / burst * 1e6);
    fprintf(tsv, "enqueue_and_drain\t-\t%d\t%.6e\t%.3f\n", burst, drained, drained / burst * 1e6);
    // A burst far past the queue: the host waits on the GPU, so this is the drain rate.
    int long_burst = args.quick ? 2000 : 20000;
    double t0 = host_now_s();
    enqueue_n(s, long_burst);
    CUDA_CHECK(cudaStreamSynchronize(s));
    double long_drain = host_now_s() - t0;
    fprintf(tsv, "drain_long_burst\t-\t%d\t%.6e\t%.3f\n", long_burst, long_drain, long_drain / long_burst * 1e6);
    // One empty kernel between two events: what every event-timed kernel
    // pays on top of its work (the GEMM model's fixed term).  Timed the way
    // the other programs time their kernels, with the L2 flush in front (the
    // events then open behind a busy GPU, not an idle one); without it too.
    l2_flusher fl;
    fl.init(dev);
    double ev = median_time_s([&]() { empty_kernel<<<1, 32, 0, s>>>(); }, 10, args.quick ? 50 : 500, &fl, s);
    double ev_idle = median_time_s([&]() { empty_kernel<<<1, 32, 0, s>>>(); }, 10, args.quick ? 50 : 500, nullptr, s);
    fl.release();
    fprintf(tsv, "event_empty\t-\t1\t%.6e\t%.3f\n", ev, ev * 1e6);
    fprintf(tsv, "event_empty_no_flush\t-\t1\t%.6e\t%.3f\n", ev_idle, ev_idle * 1e6);
    // Launch latency: one kernel, then wait for it.
    double lat = time_eager(s, 1, args.quick ? 50 : 2000);
    fprintf(tsv, "launch_sync\t-\t1\t%.6e\t%.3f\n", lat, lat * 1e6);
    printf("launch: enqueue %.2f us/kernel (median of %d bursts of %d), drain %.2f us/kernel (%d-launch burst %.2f), "
           "launch + sync %.2f us, event-timed empty kernel %.2f us after a flush (%.2f us without)\n",
           enqueue / burst * 1e6, bursts, burst, drained / burst * 1e6, long_burst, long_drain / long_burst * 1e6,
           lat * 1e6, ev * 1e6, ev_idle * 1e6);
    fflush(stdout);

    // Graph replay against its size: fixed + per-node.
    int sizes[] = {1, 2, 5, 10, 20, 50, 100, 200, 500, 1000};
    std::vector<double> xs, ys;
    for (int n : sizes) {
        cudaGraphExec_t g = graph_of(s, n);
        double tg = time_graph(s, g, reps), te = time_eager(s, n, reps);
        CUDA_CHECK(cudaGraphExecDestroy(g));
        fprintf(tsv, "graph\t-\t%d\t%.6e\t%.3f\n", n, tg, tg / n * 1e6);
        fprintf(tsv, "eager\t-\t%d\t%.6e\t%.3f\n", n, te, te / n * 1e6);
        xs.push_back(n);
        ys.push_back(tg);
    }
    double fixed = 0, per_node = 0;
    if (linear_fit(xs.data(), ys.data(), (int)xs.size(), &fixed, &per_node) == 0) {
        fprintf(tsv, "graph_fit_fixed\t-\t0\t%.6e\t-\n", fixed);
        fprintf(tsv, "graph_fit_per_node\t-\t1\t%.6e\t%.3f\n", per_node, per_node * 1e6);
        printf("launch: graph replay = %.2f us + %.3f us per node (least squares over %zu sizes)\n", fixed * 1e6,
               per_node * 1e6, xs.size());
    } else
        per_node = NAN;

    // Decode-step skeletons.
    for (const char *key : {"llama3-8b", "llama3-70b"}) {
        model_spec m = model_builtin(key);
        int n = kernels_per_step(&m);
        cudaGraphExec_t g = graph_of(s, n);
        double tg = time_graph(s, g, reps), te = time_eager(s, n, reps);
        CUDA_CHECK(cudaGraphExecDestroy(g));
        fprintf(tsv, "step_eager\t%s\t%d\t%.6e\t%.3f\n", key, n, te, te / n * 1e6);
        fprintf(tsv, "step_graph\t%s\t%d\t%.6e\t%.3f\n", key, n, tg, tg / n * 1e6);
        printf("launch: %s decode-step skeleton, %d kernels: eager %.1f us, graph %.1f us\n", key, n, te * 1e6,
               tg * 1e6);
    }
    tsv_close(tsv);
    // Chapter 1 charges a captured step about 1 us per kernel.
    report_target("graph replay per node, us", per_node * 1e6, "us", 1.0, 0, "H200", "fit of medians");
    report_target("event-timed empty kernel, us", ev * 1e6, "us", 5.0, 0, "H200");
    CUDA_CHECK(cudaStreamDestroy(s));
    return 0;
}
