// What a kernel launch costs, apart from the kernel: empty kernels launched
// back to back (the host's enqueue cost), each followed by a sync (the
// launch-to-completion latency), and replayed from a CUDA graph of n nodes,
// fitted as a fixed cost plus a per-node cost.  Then a decode-step skeleton:
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
    device_gate();
    device_facts dev = device_facts_get();
    cudaStream_t s;
    CUDA_CHECK(cudaStreamCreateWithFlags(&s, cudaStreamNonBlocking));
    int reps = args.quick ? 5 : 50;
    FILE *tsv = tsv_open(args, dev, "launch.tsv", "launch");
    provenance_line(tsv, "kernel", "empty, <<<1, 32>>>, one non-blocking stream; host clock");
    fprintf(tsv, "test\tmodel\tkernels\ttime_s\tper_kernel_us\n");

    // Host enqueue cost: launches back to back, timed on the host without a sync.
    int burst = args.quick ? 1000 : 20000;
    enqueue_n(s, 100);
    CUDA_CHECK(cudaStreamSynchronize(s));
    double t0 = host_now_s();
    enqueue_n(s, burst);
    double enqueue = host_now_s() - t0;
    CUDA_CHECK(cudaStreamSynchronize(s));
    double drained = host_now_s() - t0;
    fprintf(tsv, "enqueue\t-\t%d\t%.6e\t%.3f\n", burst, enqueue, enqueue / burst * 1e6);
    fprintf(tsv, "enqueue_and_drain\t-\t%d\t%.6e\t%.3f\n", burst, drained, drained / burst * 1e6);
    // Launch latency: one kernel, then wait for it.
    double lat = time_eager(s, 1, args.quick ? 50 : 2000);
    fprintf(tsv, "launch_sync\t-\t1\t%.6e\t%.3f\n", lat, lat * 1e6);
    printf("launch: enqueue %.2f us/kernel, launch + sync %.2f us\n", enqueue / burst * 1e6, lat * 1e6);

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
    }

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
    CUDA_CHECK(cudaStreamDestroy(s));
    return 0;
}
