/* The napkin subcommands.
 *
 * Adding a subcommand takes one line here: write code/cli/cmd_<name>.c with
 *     int cmd_<name>(int argc, char **argv)
 * (argv[0] is the subcommand's name, the flags follow; return the exit status)
 * and add X(<name>, "one-line summary") to the list below.  main.c builds its
 * dispatch table and `napkin help` from this list. */
#ifndef NAPKIN_CLI_COMMANDS_H
#define NAPKIN_CLI_COMMANDS_H

#define NAPKIN_COMMANDS(X)                                                                                 \
    X(specs, "the GPU and model tables the calculator knows, with their sources")                          \
    X(roofline, "peak, bandwidth and ridge of a GPU; attainable FLOP/s at an intensity")                   \
    X(memory, "weights, KV cache and the largest batch that fits one GPU of a replica")                    \
    X(decode, "one decode step op by op: memory, intensity, step time, tokens per second")                 \
    X(spec, "speculative decoding: tokens per round, speedup in both regimes, break-even batch")           \
    X(train, "training: FLOPs, the cluster for a deadline, memory per GPU with activations")               \
    X(prefill, "one prefill step: FLOPs, bytes, time and bound of a prompt")                               \
    X(serve, "one request end to end: TTFT, TPOT, throughput, cost per million tokens")                    \
    X(image, "images as tokens: tokens per image, encoder and prefill time, TTFT, KV, capacity vs text")   \
    X(video, "a video diffusion request: latent, FLOPs, memory, time, cost, and its queue at a rate")      \
    X(graphs, "CUDA graphs: kernels per step, launch time against GPU time, share saved, padding")         \
    X(lora, "many fine-tunes on one base: adapter bytes, slots against the KV cache, D distinct adapters")  \
    X(calibrate, "achieved rates of each op class fitted to published kernel measurements, with residuals") \
    X(validate, "the calibrated model against published measurements it was not fitted to")               \
    X(practice, "exercise variants: a seed's numbers, and the verdict on your answer to one part")         \
    X(ep, "expert parallelism: a MoE decode step over an EP group, memory, all-to-all, tokens per second")

#define NAPKIN_DECLARE_COMMAND(name, summary) int cmd_##name(int argc, char **argv);
NAPKIN_COMMANDS(NAPKIN_DECLARE_COMMAND)
#undef NAPKIN_DECLARE_COMMAND

#endif
