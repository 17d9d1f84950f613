/* Time to first token as a closed-loop benchmark measures it.
 *
 * The benchmark keeps C requests in flight and sends N in all (--requests,
 * default 10 C: ten rounds).  It starts C at once (the start-up burst), then
 * sends the next whenever one completes; its clock for a request starts when
 * it is sent.  A client that makes each request ready right after sending
 * the previous one (departure_wait) starts the clock earlier: each request
 * first waits for the next completion, one departure interval
 * delta = (h + e2e) / C.  The measured runs of the 70B model rule that out
 * as the default (at C = 4, 1024 output tokens, delta is 5 s and the
 * measured TTFT 0.2 s), though the 8B TensorRT-LLM runs at C = 8 follow it.
 *
 * The engine admits requests at iteration boundaries; a step carries one
 * token of every decoding request and prompt tokens of waiting requests,
 * first come first served, up to the engine's token budget B a step
 * (decodes count against it); a prompt longer than what is left is chunked.
 * A request's first token comes at the end of the step holding its prompt's
 * last token.  A fixed overhead h a request (HTTP, tokenisation, scheduling:
 * time outside the GPU) delays its arrival at the engine.
 *
 * A step of n decodes and q prompt tokens costs
 *   t(n, q) = w + n c_dec + q c_tok   (q > 0),
 *   t(n, 0) = w_dec + n c_dec,
 * w the weights' read (paid once a step), c_dec and c_tok what a decoding
 * sequence and a prompt token add; the four come from priced steps (the
 * caller prices them through price_op).  w_dec is the read of a step of
 * decodes alone: a dense model's is w, but a mixture's decode step reads
 * only the experts its C tokens route to (C k of E at most), where a step
 * carrying a prompt of thousands of tokens reads them all; with w in its
 * place a decode step of a mixture costs at least the whole model's read
 * (Qwen3-235B in fp8 at TP 2 on an H200: 24.4 ms, where its priced decode
 * step of 2 to 4 sequences is 13 to 17 ms).  The caller prices w_dec at
 * the batch the loop decodes, C, so t(C, 0) is the priced decode step.
 *
 * TTFT over the benchmark = (C burst + (N - C) steady) / N:
 *   burst:  the C prompts walked step by step through the budget
 *           (closed_loop_burst_ttft), plus h;
 *   steady: h + the engine's TTFT for requests that have drifted apart
 *           (their overheads and output lengths vary), reaching the engine
 *           at random at the rate X that keeps C clients busy: the rest of
 *           the step a request lands in, then its own step with the
 *           decodes, its prompt and the prompts that arrived with it
 *           (closed_loop.c, steady_state; + delta with departure_wait).
 * Alike requests would not drift: a cohort prefilled in one long step ends
 * in one short decode step and returns together (simulate.h, SIM_SPREAD).
 *
 * A prefill-first engine (prefill_first: SGLang, whose scheduler runs a
 * batch of waiting prompts before any decode and does not mix the two by
 * default) keeps its clients in cohorts instead: decodes stop whenever a
 * prompt waits, so a request that arrives while the others prefill loses
 * no ground, and all C finish in the same decode step and come back
 * together.  Every round is then the start-up burst again, prompts in steps
 * of B tokens with no decodes, then O - 1 steps of the C decodes:
 *   steady: h + the burst's engine TTFT;
 *   TPOT:   w_dec + C c_dec + (K - t_i) / (O - 1) averaged, K the round's
 *           prefill time and t_i the request's first token in it (the
 *           prefill steps after a request's first token pause its decode);
 *   cycle:  h + K + (O - 1) (w_dec + C c_dec). */
#ifndef NAPKIN_CLOSED_LOOP_H
#define NAPKIN_CLOSED_LOOP_H

#include <stdint.h>

/* The linear step cost above, seconds. */
typedef struct {
    double weight_read; /* w */
    double per_decode;  /* c_dec */
    double per_token;   /* c_tok: one prompt token */
    double decode_weight_read; /* w_dec: a step without prompt tokens; 0 = w (a dense model) */
} step_costs;

/* t(n, q); 0 for an empty step. */
double step_costs_time(const step_costs *k, int decodes, int prompt_tokens);

/* A benchmark on one replica. */
typedef struct {
    int concurrency; /* C */
    int prompt, output;
    int budget;   /* B: tokens a step; 0 = CLOSED_LOOP_DEFAULT_BUDGET */
    int requests; /* N >= C: requests the benchmark averages over; 0 = 10 C */
    double overhead; /* h, seconds a request */
    int departure_wait; /* 1: the clock starts when the previous request was sent, so a request
                         * first waits for a departure (delta); 0 (default): when it is sent */
    int prefill_first;  /* 1: a step that has prompts to run carries no decodes (SGLang's default);
                         * 0: decodes ride in every step and prompts fill the budget's rest */
} bench_setup;

/* The default token budget: TensorRT-LLM's max_num_tokens (8192), vLLM's
 * max_num_batched_tokens for its API server on GPUs of 70 GiB and more
 * (8192) and SGLang's chunked_prefill_size on 80 to 160 GB GPUs (8192) agree
 * on the GPUs measured here (engine_defaults). */
#define CLOSED_LOOP_DEFAULT_BUDGET 8192
#define CLOSED_LOOP_ROUNDS 10 /* N = 10 C by default */

/* An engine's defaults: its token budget (cited) and the per-request
 * overhead fitted on the fitting half of its measured runs
 * (calib/validate_ttft.c fits it; tests/test_closed_loop.c checks the
 * table against the fit). */
typedef struct {
    const char *name; /* trtllm, vllm, sglang */
    int budget;
    double overhead;
    const char *budget_source;
    int prefill_first; /* its scheduler's default: bench_setup.prefill_first */
} engine_defaults;

/* The engine named, or NULL. */
const engine_defaults *engine_defaults_find(const char *name);
/* "trtllm, vllm, sglang", for messages. */
const char *engine_names(void);

/* The requests a benchmark sends: N, or 10 C when 0. */
int bench_requests(const bench_setup *b);
int bench_budget(const bench_setup *b);

/* Mean engine-side TTFT of the C prompts that arrive together at an idle
 * engine (h not included): steps of the budget, decodes of those already
 * prefilled riding along.  Writes each request's TTFT to ttft[0..C) when
 * ttft is not NULL. */
double closed_loop_burst_ttft(const bench_setup *b, const step_costs *k, double *ttft);

typedef struct {
    double departure; /* delta = cycle / C: the time between completions */
    double burst;     /* mean TTFT of the first C, h included */
    double steady;    /* mean TTFT in the steady state, h (and delta with departure_wait) included */
    double mean;      /* over the N requests */
    /* the steady state (closed_loop.c, steady_state) */
    double rate;      /* X: requests a second */
    double step;      /* T: the mean step, which is the steady state's TPOT */
    double arrivals;  /* m = X T: prompts a step */
    double decodes;   /* n: decodes a step */
    double engine;    /* TTFT at the engine: the rest of the step it lands in and its own step */
    double cycle;     /* h + engine + (O - 1) T: one client's round */
} bench_ttft;

/* The benchmark's TTFT from the priced step costs (w > 0).  Returns 0, or
 * -1 for a setup that means nothing (C < 1, N < C, B < 1). */
int closed_loop_bench_ttft(const bench_setup *b, const step_costs *k, bench_ttft *out);

#endif
