/* Chapter 5, one request end to end: LLaMA-3-70B bf16 on 4 x H100 (the
 * datasheet's ceilings), prompts of 2048 and outputs of 256 tokens, served by
 * a replica that batches continuously (request.h).  Sweeps the concurrency up
 * to the largest that fits memory (TTFT, TPOT, throughput and cost per
 * million output tokens, whole prompts and chunks of 512), and the prompt
 * length at one request in flight (TTFT).  Writes 05-e2e-concurrency.tsv,
 * 05-e2e-prompt.tsv and the values the section quotes. */
#include "notebook.h"
#include "request.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#define PRICE 2.50 /* per GPU-hour: an input the reader changes, not a quote */
#define TP 4
#define PROMPT 2048
#define OUTPUT 256
#define CHUNK 512

static void die(const char *err)
{
    fprintf(stderr, "end_to_end: %s\n", err);
    exit(1);
}

static request_estimate estimate(request_setup s)
{
    request_estimate e;
    char err[256];
    if (request_estimate_compute(&s, &e, err, sizeof err))
        die(err);
    return e;
}

int main(void)
{
    model_spec m = model_builtin("llama3-70b");
    gpu_spec g = gpu_builtin("h100");
    request_setup s = {&m, &g, precision_uniform(DT_BF16), TP, PROMPT, OUTPUT, 1, 0, 0, memory_policy_default(),
                       PRICE, 1};
    request_estimate one = estimate(s);
    int cmax = one.fit.max_batch;
    if (cmax < 64)
        die("the section's operating point (64 in flight) does not fit");
    nb_value("ch05_e2e_cmax", "%d", cmax);
    nb_value("ch05_e2e_price", "%.2f", PRICE);
    nb_value("ch05_e2e_p_ms", "%.0f", one.prefill_time * 1e3);
    nb_value("ch05_e2e_d1_ms", "%.1f", one.decode_step * 1e3);
    nb_value("ch05_e2e_alone_e2e_s", "%.2f", one.e2e);

    /* the operating point: 64 in flight, whole prompts and chunks */
    s.concurrency = 64;
    request_estimate at = estimate(s);
    nb_value("ch05_e2e_c64_d_ms", "%.1f", at.decode_step * 1e3);
    nb_value("ch05_e2e_c64_tpot_ms", "%.1f", at.tpot * 1e3);
    nb_value("ch05_e2e_c64_stall_ms", "%.1f", (at.tpot - at.decode_step) * 1e3);
    nb_value("ch05_e2e_c64_ttft_ms", "%.0f", at.ttft * 1e3);
    nb_value("ch05_e2e_c64_e2e_s", "%.1f", at.e2e);
    nb_value("ch05_e2e_c64_tokens", "%.0f", at.tokens_per_s);
    nb_value("ch05_e2e_c64_rps", "%.2f", at.requests_per_s);
    nb_value("ch05_e2e_c64_cost_in", "%.3f", at.cost_per_m_input);
    nb_value("ch05_e2e_c64_cost_out", "%.2f", at.cost_per_m_output);
    request_setup ch = s;
    ch.chunk = CHUNK;
    request_estimate chunked = estimate(ch);
    nb_value("ch05_e2e_chunk", "%d", CHUNK);
    nb_value("ch05_e2e_chunk_ttft_ms", "%.0f", chunked.ttft * 1e3);
    nb_value("ch05_e2e_chunk_tpot_ms", "%.1f", chunked.tpot * 1e3);
    nb_value("ch05_e2e_chunk_steps", "%d", chunked.prefill_steps);
    nb_value("ch05_e2e_chunk_tokens", "%.0f", chunked.tokens_per_s);

    /* the same 64 scheduled as TensorRT-LLM and vLLM batch in flight: each prompt rides in a step of
     * the running decodes (request_options.mixed_steps), its weights read once with theirs */
    request_options mixed_opt = {.mixed_steps = 1};
    request_estimate mixed;
    char err[256];
    if (request_estimate_with(&s, &mixed_opt, &mixed, err, sizeof err))
        die(err);
    nb_value("ch05_e2e_mixed_tpot_ms", "%.1f", mixed.tpot * 1e3);
    /* its steps carry 1 + 63 x 255 / 256 = 63.75 decodes, 64 rounded: the stall is over the decode step
     * at 64 (at.decode_step) */
    nb_value("ch05_e2e_mixed_stall_ms", "%.1f", (mixed.tpot - at.decode_step) * 1e3);
    nb_value("ch05_e2e_mixed_steps", "%d", mixed.prefill_steps);

    /* at the memory ceiling */
    s.concurrency = cmax;
    request_estimate full = estimate(s);
    nb_value("ch05_e2e_cmax_tpot_ms", "%.0f", full.tpot * 1e3);
    nb_value("ch05_e2e_cmax_tokens", "%.0f", full.tokens_per_s);
    nb_value("ch05_e2e_cmax_cost_out", "%.2f", full.cost_per_m_output);
    nb_value("ch05_e2e_c1_cost_out", "%.1f", one.cost_per_m_output);

    FILE *f = nb_data_open("05-e2e-concurrency.tsv");
    fprintf(f, "# LLaMA-3-70B bf16, 4 x H100 (datasheet), prompt %d, output %d, price %.2f per GPU-hour;"
               " memory holds %d in flight\n",
            PROMPT, OUTPUT, PRICE, cmax);
    fprintf(f, "concurrency\tttft\ttpot\ttokens_per_s\tcost_out\tchunk_ttft\tchunk_tpot\tchunk_cost_out\n");
    double cost_gap = 0; /* the two cost curves of the figure lie on one line: their largest gap */
    for (int c = 1; c <= cmax; c += c < 16 ? 1 : 4) {
        s.concurrency = c;
        ch.concurrency = c;
        request_estimate a = estimate(s), b = estimate(ch);
        fprintf(f, "%d\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\t%.6g\n", c, a.ttft, a.tpot, a.tokens_per_s,
                a.cost_per_m_output, b.ttft, b.tpot, b.cost_per_m_output);
        cost_gap = fmax(cost_gap, fabs(b.cost_per_m_output - a.cost_per_m_output) / a.cost_per_m_output);
    }
    fclose(f);
    nb_value("ch05_e2e_cost_gap_pct", "%.1f", 100 * cost_gap);

    f = nb_data_open("05-e2e-prompt.tsv");
    fprintf(f, "# one request in flight, output %d; TTFT against the prompt\nprompt\tttft\tbound\n", OUTPUT);
    request_setup p = s;
    p.concurrency = 1;
    for (int n = 128; n <= 32768; n *= 2) {
        p.prompt = n;
        request_estimate a = estimate(p);
        if (!a.fit.fits)
            break;
        fprintf(f, "%d\t%.6g\t%s\n", n, a.ttft, bound_name(a.prefill_bound));
    }
    fclose(f);
    p.prompt = 128;
    request_estimate short_prompt = estimate(p);
    p.prompt = 32768;
    request_estimate long_prompt = estimate(p);
    nb_value("ch05_e2e_ttft_128_ms", "%.1f", short_prompt.ttft * 1e3);
    nb_value("ch05_e2e_ttft_32k_s", "%.2f", long_prompt.ttft);
    return 0;
}
