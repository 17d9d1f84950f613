/* `napkin prefill` and `napkin serve` as a reader runs them: numbers against
 * hand arithmetic, the memory limit, the rate, the search and calibration,
 * and the exit statuses. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>

#include "cli_run.h"


Test(cli_serve, prefill_logits_where_the_server_samples)
{
    char a[OUT_MAX], b[OUT_MAX];
    cr_assert_eq(run("prefill --model llama3-8b --gpu h100 --prompt 2048 --format tsv", a, sizeof a), 0, "%s", a);
    cr_assert_eq(run("prefill --model llama3-8b --gpu h100 --prompt 2048 --all-logits --format tsv", b, sizeof b), 0,
                 "%s", b);
    /* logits at 2047 more positions: 2 x 2047 x 4096 x 128,256 = 2.1507e12 FLOP */
    double extra = tsv_value(b, "flop") - tsv_value(a, "flop");
    cr_assert(fabs(extra / 2.1507e12 - 1) < 1e-3, "extra %g", extra);
    cr_assert_eq(tsv_value(a, "logit_positions"), 1);
    /* compute-bound: 2 x 7.5e9 x 2048 FLOP against 15 GB of weights */
    cr_assert(strstr(a, "bound\tcompute") != NULL, "%s", a);
}

Test(cli_serve, concurrency_beyond_memory_queues)
{
    char out[OUT_MAX];
    /* 216 sequences of 2048 + 256 tokens fit (test_request.c works the budget): at 217 the engine runs
     * 216 and one waits in its queue, so TPOT is 216's */
    cr_assert_eq(run("serve --model llama3-70b --gpu h100 --tp 4 --concurrency 216 --format tsv", out, sizeof out),
                 0, "%s", out);
    cr_assert_eq(tsv_value(out, "max_concurrency"), 216);
    cr_assert(strstr(out, "\nrunning\t") == NULL, "all 216 run: %s", out);
    double tpot = tsv_value(out, "tpot");
    cr_assert_eq(run("serve --model llama3-70b --gpu h100 --tp 4 --concurrency 217 --format tsv", out, sizeof out),
                 0, "%s", out);
    cr_assert_eq(tsv_value(out, "running"), 216);
    cr_assert_float_eq(tsv_value(out, "tpot"), tpot, 1e-9 * tpot);
    /* not one sequence of 2^24 output tokens fits: exit 1, naming why */
    cr_assert_eq(run("serve --model llama3-70b --gpu h100 --tp 4 --output 16777216", out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "does not fit") != NULL, "%s", out);
}

Test(cli_serve, one_request_alone)
{
    char out[OUT_MAX];
    cr_assert_eq(run("serve --model llama3-8b --gpu h100 --prompt 2048 --output 256 --price 2 --format tsv", out,
                     sizeof out),
                 0, "%s", out);
    /* alone: latency = TTFT + 255 TPOT, 1/TPOT tokens/s for the user */
    double ttft = tsv_value(out, "ttft"), tpot = tsv_value(out, "tpot");
    cr_assert_float_eq(tsv_value(out, "e2e"), ttft + 255 * tpot, 1e-9);
    cr_assert_float_eq(tsv_value(out, "user_tokens_per_s"), 1 / tpot, 1e-6);
    /* memory-bound decode of 15.3 GB at 3.35 TB/s: TPOT about 4.6 ms */
    cr_assert(tpot > 4.5e-3 && tpot < 4.9e-3, "tpot %g", tpot);
    /* $2 an hour for 256 tokens of 4.6 ms each: 2/3600 x 255 x 4.6e-3 / 256 x 1e6 = $2.55 per million */
    double out_cost = tsv_value(out, "cost_per_m_output");
    cr_assert(out_cost > 2.45 && out_cost < 2.7, "output cost %g", out_cost);
}

Test(cli_serve, rate_search_and_errors)
{
    char out[OUT_MAX];
    cr_assert_eq(run("serve --model llama3-70b --gpu h100 --tp 4 --rate 500", out, sizeof out), 1, "%s", out);
    cr_assert(strstr(out, "more than one replica serves") != NULL, "%s", out);
    cr_assert_eq(run("serve --model llama3-70b --gpu h100 --tp 4 --rate 5 --format tsv", out, sizeof out), 0, "%s",
                 out);
    cr_assert(tsv_value(out, "requests_per_s") >= 5.0);
    /* the search: 70B in bf16 (141 GB) fits no single H100, so tp 1 x pp 1 is absent; rows rise
     * in GPU-seconds per request */
    cr_assert_eq(run("serve --model llama3-70b --gpu h100 --search --tpot 0.05 --format tsv", out, sizeof out), 0,
                 "%s", out);
    const char *h = strstr(out, "\ntp\t");
    cr_assert_not_null(h, "%s", out);
    int rows = 0;
    double last = 0;
    /* the roofline's block ends at the empty line before the calibrated search's */
    for (const char *line = strchr(h + 1, '\n') + 1; *line && *line != '\n'; line = strchr(line, '\n') + 1) {
        int tp, pp, ep, replicas, c;
        double ttft, ttft_closed, tpot, tps, gsec;
        cr_assert_eq(sscanf(line, "%d %d %d %d %d %lf %lf %lf %lf %lf", &tp, &pp, &ep, &replicas, &c, &ttft,
                            &ttft_closed, &tpot, &tps, &gsec),
                     10, "%s", line);
        cr_assert(ttft_closed >= ttft, "the benchmark's TTFT holds the prefill: %s", line);
        cr_assert_eq(ep, 1, "a dense model has no expert-parallel layout: %s", line);
        cr_assert(tp * pp > 1, "a 141 GB model on one GPU: %s", line);
        cr_assert(tpot <= 0.05);
        cr_assert(gsec >= last, "not ranked: %s", line);
        last = gsec;
        rows++;
        if (!strchr(line, '\n'))
            break;
    }
    cr_assert_geq(rows, 2);
    cr_assert_eq(run("serve --model llama3-70b --gpu h100 --tp 4 --concurrency 4 --rate 2", out, sizeof out), 2);
    cr_assert_eq(run("serve --model llama3-70b --gpu h100 --tp 3", out, sizeof out), 2, "%s", out);
    cr_assert_eq(run("serve --model llama3-8b --gpu h100 --ttft 0.1", out, sizeof out), 2, "%s", out);
}

Test(cli_serve, calibrate_from_a_set)
{
    char out[OUT_MAX];
    /* the CPU fixture: 1e11 B/s, so a 1B decode step reads 2.47 GB in about 25 ms */
    cr_assert_eq(run("serve --model llama3.2-1b --calibrate tests/calib/cpu-toy --prompt 128 --output 16 "
                     "--format tsv",
                     out, sizeof out),
                 0, "%s", out);
    double d = tsv_value(out, "decode_step");
    cr_assert(d > 24.7e-3 && d < 26.5e-3, "decode step %g", d);
    /* a GPU set needs its GPU row, and shows the datasheet's prediction beside it */
    cr_assert_eq(run("serve --model llama3-8b --calibrate tests/calib/gpu-toy", out, sizeof out), 2, "%s", out);
    cr_assert_eq(run("serve --model llama3-8b --gpu h100 --calibrate tests/calib/gpu-toy --format tsv", out,
                     sizeof out),
                 0, "%s", out);
    /* 3.0 TB/s measured against 3.35: the decode-bound TPOT is 3.35 / 3.0 = 1.117x the datasheet's */
    double ratio = tsv_value(out, "tpot") / tsv_value(out, "datasheet_tpot");
    cr_assert(ratio > 1.10 && ratio < 1.12, "ratio %g", ratio);
    cr_assert_eq(run("serve --model llama3-8b --gpu h100 --calibrate tests/calib/gpu-toy --efficiency 0.8", out,
                     sizeof out),
                 2, "%s", out);
    cr_assert_eq(run("prefill --model llama3-8b --gpu h100 --calibrate /nonexistent", out, sizeof out), 2, "%s", out);
}

Test(cli_serve, pipeline_stages)
{
    char out[OUT_MAX];
    /* 620 in flight fit at TP 4 x PP 2 (test_pipeline.c works it); of 621, 620 run and one queues */
    cr_assert_eq(run("serve --model llama3-70b --gpu h100 --tp 4 --pp 2 --concurrency 621 --format tsv", out,
                     sizeof out),
                 0, "%s", out);
    cr_assert_eq(tsv_value(out, "running"), 620);
    cr_assert_eq(run("serve --model llama3-70b --gpu h100 --tp 4 --pp 3", out, sizeof out), 2, "%s", out);
    cr_assert_eq(run("serve --model llama3-70b --gpu h100 --tp 4 --pp 2 --chunked-prefill 512", out, sizeof out), 2,
                 "%s", out);
    /* decode and memory take the same flag: a stage's memory, the pipeline's cycle */
    cr_assert_eq(run("decode --model llama3-70b --gpu h100 --tp 4 --pp 2 --batch 64 --format tsv", out, sizeof out),
                 0, "%s", out);
    cr_assert_float_eq(tsv_value(out, "p2p_bytes"), 524288.0, 1e-6); /* 32 x 8192 x 2 B */
    cr_assert_eq(tsv_value(out, "microbatches"), 2);
    cr_assert_eq(run("decode --model llama3-70b --gpu h100 --tp 4 --batch 64 --microbatches 2", out, sizeof out), 2,
                 "%s", out);
    cr_assert_eq(run("memory --model llama3-70b --gpu h100 --tp 2 --pp 4 --format tsv", out, sizeof out), 0, "%s",
                 out);
    /* a stage as the pipeline counts it: 20 of the 80 layers, one vocabulary
     * matrix (the embedding on the first, the head on the last) and a final
     * norm.  A layer: q and o 2*8192*64*128 =
     * 134,217,728, k and v 2*8192*8*128 = 16,777,216, the MLP 3*8192*28672 =
     * 704,643,072, two norms 2*8192 = 16,384: 855,654,400.  The matrix
     * 128256*8192 = 1,050,673,152, the norm 8,192.  20*855,654,400 +
     * 1,050,673,152 + 8,192 = 18,163,769,344 parameters x 2 B / 2 GPUs */
    cr_assert_float_eq(tsv_value(out, "weight_bytes_per_gpu"), 18163769344.0, 1);
}
