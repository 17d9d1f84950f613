/* The inputs that once overflowed, hung or printed inf, each with what it
 * must give now: a refusal naming the flag and its range (exit 2), or an
 * answer within the work limit that says what it measured. */
#include "cli_run.h"

#include <time.h>

static double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

static char out[OUT_MAX];

/* Runs args; asserts the exit status, that `want` is in the output, and
 * that nothing took seconds (the old hangs and scans took 3 s to forever). */
static void expect(const char *args, int status, const char *want)
{
    double t0 = now_s();
    int rc = run(args, out, sizeof out);
    double dt = now_s() - t0;
    cr_expect_eq(rc, status, "napkin %s: exit %d, not %d\n%s", args, rc, status, out);
    cr_expect(strstr(out, want) != NULL, "napkin %s: no '%s' in\n%s", args, want, out);
    cr_expect_lt(dt, 2.0, "napkin %s took %.1f s", args, dt);
}

Test(cli_limits, counts_beyond_what_the_arithmetic_carries_are_refused_by_name, .timeout = 60)
{
    /* 2^24 is the bound of a count (cli_args.h): sums and products of two stay far below 2^31 */
    expect("serve --model llama3-70b --gpu h100 --search --ttft 0.5 --tpot 0.05 --gpus 1073741824", 2,
           "--gpus: 1073741824 is out of range: from 1 to 16777216");
    expect("train --params 7B --tokens 1T --gpu h100 --days 21 --search --gpus 2147483647 --node-size 2147483647", 2,
           "--gpus: 2147483647 is out of range");
    expect("graphs --model llama3-8b --gpu h100 --capture-max 2147483647", 2, "--capture-max: 2147483647 is out of range");
    expect("serve --model llama3-8b --gpu h100 --output 2147483647", 2, "--output: 2147483647 is out of range");
    expect("decode --model llama3-8b --gpu h100 --batch 1e30", 2, "--batch: 1e30 is out of range");
    expect("decode --model llama3-8b --gpu h100 --batch 12x", 2, "--batch: '12x' is not a whole number");
    /* a fraction at least 1e-6, a real at most 1e15: a quotient or a product stays finite */
    expect("image --model qwen2-vl-7b --gpu h100 --lm-efficiency 5e-324", 2, "--lm-efficiency: 5e-324 is out of range");
    expect("graphs --model llama3-8b --gpu h100 --graph-mib 1e308", 2, "--graph-mib: 1e308 is out of range");
    expect("spec --c -0", 2, "--c: '-0' is not a number");
}

Test(cli_limits, the_largest_accepted_counts_answer_quickly, .timeout = 60)
{
    expect("serve --model llama3-70b --gpu h100 --search --ttft 0.5 --tpot 0.05 --gpus 16777216", 0, "tp");
    expect("train --params 7B --tokens 1T --gpu h100 --days 21 --search --gpus 16777216 --node-size 16777216", 1,
           "leave no time to train");
    expect("graphs --model llama3-8b --gpu h100 --capture-max 16777216", 0, "captured");
    expect("serve --model llama3-8b --gpu h100 --output 16777216", 1, "does not fit");
}

Test(cli_limits, the_video_queue_keeps_to_its_work_limit_and_says_what_it_simulated, .timeout = 60)
{
    expect("video --model wan2.1-14b --gpu h100 --rate 2 --jobs 10000000", 2, "--jobs: 10000000 is out of range");
    expect("video --model wan2.1-14b --gpu h100 --rate 2 --gpus 131072 --sp-efficiency 0.5", 2,
           "--gpus: 131072 is out of range");
    /* 65,536 GPUs cannot split the model's 40 heads: refused by name before any simulation (the
     * work limit itself is tested in the library, test_video.c) */
    expect("video --model wan2.1-14b --gpu h100 --rate 2 --gpus 65536 --sp-efficiency 0.5", 2,
           "--gpus 65536: head-splitting sequence parallelism cannot split");
    /* 2,000 jobs an hour of a request that takes minutes: neither queue is stable */
    expect("video --model wan2.1-14b --gpu h100 --rate 2000", 0, "neither queue is stable: nothing was simulated");
    cr_expect(strstr(out, "simulated over") == NULL, "%s", out);
}
