/* napkin: instructor (the student kit leaves it out: it derives the answers)
 *
 * Chapter 5's exercise variants 5.5 to 5.10 (5.1 to 5.4 are in
 * test_practice.c): seed 0 is the printed book (what a pencil gets, worked
 * below, is accepted), the slips are recognised, and for 200 seeds every
 * input stays in range and each question keeps its printed regime. */
#include "practice_seeds.h"
#include "queue.h"
#include "batch_vs_sequential.h"
#include "specs.h"

#include <string.h>

static judge_verdict verdict_of(const practice_set *s, const char *id, double given)
{
    return judge_answer(&practice_find(s, id)->judge, given).verdict;
}

Test(practice_ch05, seed_zero_is_the_printed_book)
{
    practice_set s;
    cr_assert_eq(practice_build(5, 0, &s), 0);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex5_prompt"), 512);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex5_output"), 256);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex5_batch"), 64);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex5_cap"), 16);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex6_rate"), 100);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex6_load_pct"), 80);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex8_price"), 2);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex8_concurrency"), 128);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex9_budget_ms"), 200);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex9_concurrency"), 64);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex9_chunk"), 256);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex10_tpot_ms"), 50);
    cr_expect_eq(seeds_input_of(&s, "ch05_ex10_prompt"), 1024);
    /* 5.5 by pencil (LLaMA-3-8B bf16, H100 989.4 TFLOP/s, 3.35 TB/s; 15.01 GB of
     * streamed weights, 131,072 B of KV a token): a batch of 64 prefills
     * 32,768 tokens x 2 x 7.50e9 FLOP in 0.50 s and runs 255 steps of 15.01 GB
     * + 64 x ~639 x 131,072 B = 5.36 GB, 6.08 ms each: 2.05 s, 31.2 requests/s;
     * capped at 16, 0.124 s + 255 x 4.88 ms = 1.37 s, 11.7/s; alone, 7.8 ms +
     * 255 x (15.01 + 0.084) GB / 3.35 TB/s = 1.157 s, 0.864/s */
    cr_expect_eq(verdict_of(&s, "5.5(a1)", 2.05), VERDICT_RIGHT);
    cr_expect_eq(verdict_of(&s, "5.5(a2)", 31.2), VERDICT_RIGHT);
    cr_expect_eq(verdict_of(&s, "5.5(b)", 11.7), VERDICT_RIGHT);
    cr_expect_eq(verdict_of(&s, "5.5(c)", 0.864), VERDICT_RIGHT);
    /* 5.6 from those: 100 / (0.8 x 31.2) = 4.01 -> 5; 100 / (0.8 x 11.7) =
     * 10.7 -> 11; 100 / (0.8 x 0.864) = 144.7 -> 145 */
    cr_expect_eq(verdict_of(&s, "5.6(a)", 5), VERDICT_RIGHT);
    cr_expect_eq(verdict_of(&s, "5.6(b)", 11), VERDICT_RIGHT);
    cr_expect_eq(verdict_of(&s, "5.6(c)", 145), VERDICT_RIGHT);
    /* 5.8 alone: a step reads 15.01e9 + (1024 + 256) x 131,072 B = 15.18e9 B,
     * 4.531 ms; prefill 1024 x 2 x 7.50e9 / 989.4e12 = 15.5 ms; a request
     * 15.5 ms + 511 x 4.531 ms = 2.331 GPU-s, at $2 / 3600 s for 512 tokens:
     * $2.53 a million (attention and activations aside) */
    expect_rel(seeds_answer_of(&s, "5.8(a)"), 2.53, 0.02);
    cr_expect(seeds_answer_of(&s, "5.8(b)") < seeds_answer_of(&s, "5.8(a)") / 10);
    /* 5.9(a): without attention, 0.2 s x 989.4e12 / (2 x 7.50e9) = 13,192
     * tokens; attention's quadratic FLOPs shorten it, by well under half */
    cr_expect(seeds_answer_of(&s, "5.9(a)") > 8192 && seeds_answer_of(&s, "5.9(a)") < 13192);
    /* 5.10: TP 4 is the cheapest (the chapter's answer) */
    cr_expect_eq(seeds_answer_of(&s, "5.10(c)"), 4);
    cr_expect_eq(s.n_parts, 38);
}

Test(practice_ch05, part_slips_are_recognised)
{
    practice_set s;
    practice_build(5, 0, &s);
    /* batches per second for 5.5(a2): 1 / 2.13 s; 5.8(a) per thousand tokens; TP 8 as the cheapest */
    const seeds_slip slips[] = {{"5.5(a2)", 1 / seeds_answer_of(&s, "5.5(a1)"), "batches per second"},
                 {"5.8(a)", seeds_answer_of(&s, "5.8(a)") / 1000, "thousand"},
                 {"5.10(c)", 8, "fastest"}};
    seeds_expect_slips(&s, slips, sizeof slips / sizeof slips[0]);
}

Test(practice_ch05, two_hundred_seeds_stay_meaningful)
{
    int named = 0, best4 = 0, best2 = 0;
    for (uint64_t seed = 0; seed <= 200; seed++) {
        practice_set s, again;
        unsigned long long sd = (unsigned long long)seed;
        cr_assert_eq(practice_build(5, seed, &s), 0, "seed %llu", sd);
        practice_build(5, seed, &again);
        seeds_check_set(&s, &again);
        named += seeds_check_slips(&s);
        /* 5.5: the capacities are the best n / s(n) over every batch under the
         * limit (the generator prices the limit's batch alone), a full batch's
         * time times its capacity is the batch, the cap and one at a time carry less */
        if (seed % 20 == 0) {
            model_spec m = model_builtin("llama3-8b");
            gpu_spec g = gpu_builtin("h100");
            int b = (int)seeds_input_of(&s, "ch05_ex5_batch"), k = (int)seeds_input_of(&s, "ch05_ex5_cap");
            serve_workload w = {1, (int)seeds_input_of(&s, "ch05_ex5_prompt"), (int)seeds_input_of(&s, "ch05_ex5_output"),
                                1, precision_uniform(DT_BF16)};
            double times[128];
            char err[256];
            cr_assert_eq(serve_batch_times(&m, &g, &w, b, times, err, sizeof err), 0, "%s", err);
            queue_config qb = {1, b, 0, 0, times, SERVICE_FIXED, 1, 0}, qk = qb;
            qk.kv_cap = k;
            expect_rel(seeds_answer_of(&s, "5.5(a2)"), queue_capacity(&qb), 1e-9);
            expect_rel(seeds_answer_of(&s, "5.5(b)"), queue_capacity(&qk), 1e-9);
            expect_rel(seeds_answer_of(&s, "5.5(c)"), 1 / times[0], 1e-9);
        }
        expect_rel(seeds_answer_of(&s, "5.5(a1)") * seeds_answer_of(&s, "5.5(a2)"), seeds_input_of(&s, "ch05_ex5_batch"),
                   1e-9);
        cr_expect(seeds_answer_of(&s, "5.5(a2)") > seeds_answer_of(&s, "5.5(b)"), "seed %llu", sd);
        cr_expect(seeds_answer_of(&s, "5.5(b)") > seeds_answer_of(&s, "5.5(c)"), "seed %llu", sd);
        /* 5.6: more replicas the less a replica carries */
        cr_expect(seeds_answer_of(&s, "5.6(a)") <= seeds_answer_of(&s, "5.6(b)"), "seed %llu", sd);
        cr_expect(seeds_answer_of(&s, "5.6(b)") < seeds_answer_of(&s, "5.6(c)"), "seed %llu", sd);
        /* 5.8: the concurrency shares the GPU; 5.9: chunks cut the TPOT */
        cr_expect(seeds_answer_of(&s, "5.8(b)") < seeds_answer_of(&s, "5.8(a)") / 5, "seed %llu", sd);
        cr_expect(seeds_answer_of(&s, "5.9(b4)") <= seeds_answer_of(&s, "5.9(b2)"), "seed %llu", sd);
        /* 5.10: every degree meets the target, the fastest is not the cheapest */
        cr_expect(seeds_answer_of(&s, "5.10(a1)") >= 1 && seeds_answer_of(&s, "5.10(c)") != 8, "seed %llu", sd);
        best4 += seeds_answer_of(&s, "5.10(c)") == 4;
        best2 += seeds_answer_of(&s, "5.10(c)") == 2;
    }
    cr_expect(named > 2000, "only %d slips checked", named);
    cr_expect(best4 > 0, "5.10 never cheapest at TP 4 (%d at TP 2)", best2);
}

/* ---- 5.8 to 5.10 against napkin serve's arithmetic, walked apart from the
 * generator: the estimate of request.h for each setup the exercise names
 * (LLaMA-3 on H100s at the datasheet's rates, bf16, the default memory
 * policy), the scans done here step by step. */
#include "request.h"

static request_estimate serve_estimate(const char *model, int tp, int prompt, int output, int c, int chunk, double price)
{
    request_estimate e = {0};
    model_spec m;
    gpu_spec g;
    char err[256];
    cr_assert(model_lookup(model, &m) == 0 && gpu_lookup("h100", &g) == 0);
    request_setup rs = {&m, &g, precision_uniform(DT_BF16), tp, prompt, output, c, chunk, 0, memory_policy_default(),
                        price, 1};
    if (request_estimate_compute(&rs, &e, err, sizeof err) != 0 || !e.fit.fits)
        e.ttft = e.tpot = e.cost_per_m_output = e.gpu_seconds_per_request = NAN;
    return e;
}

Test(practice_ch05, the_serve_parts_are_napkin_serves_answers)
{
    for (uint64_t sd = 0; sd < 24; sd++) {
        practice_set s;
        cr_assert_eq(practice_build(5, sd, &s), 0);
        double price = seeds_input_of(&s, "ch05_ex8_price");
        int c8 = (int)seeds_input_of(&s, "ch05_ex8_concurrency");
        expect_rel(seeds_answer_of(&s, "5.8(a)"), serve_estimate("llama3-8b", 1, 1024, 512, 1, 0, price).cost_per_m_output,
                   1e-9);
        expect_rel(seeds_answer_of(&s, "5.8(b)"), serve_estimate("llama3-8b", 1, 1024, 512, c8, 0, price).cost_per_m_output,
                   1e-9);

        double budget = seeds_input_of(&s, "ch05_ex9_budget_ms") * 1e-3;
        int c9 = (int)seeds_input_of(&s, "ch05_ex9_concurrency"), chunk = (int)seeds_input_of(&s, "ch05_ex9_chunk");
        int longest = 0; /* the longest prompt, in steps of 256, whose TTFT alone meets the budget */
        for (int n = 256; n <= 65536 && serve_estimate("llama3-8b", 1, n, 512, 1, 0, 0).ttft <= budget; n += 256)
            longest = n;
        /* judged as a range: the 256 tokens from the longest that fits up to the next, which does not */
        cr_expect_eq(verdict_of(&s, "5.9(a)", longest), VERDICT_RIGHT, "seed %llu: %d tokens", (unsigned long long)sd,
                     longest);
        cr_expect_neq(verdict_of(&s, "5.9(a)", longest + 256), VERDICT_RIGHT, "seed %llu", (unsigned long long)sd);
        request_estimate whole = serve_estimate("llama3-8b", 1, 1024, 512, c9, 0, 0);
        request_estimate chunked = serve_estimate("llama3-8b", 1, 1024, 512, c9, chunk, 0);
        expect_rel(seeds_answer_of(&s, "5.9(b1)"), whole.ttft * 1e3, 1e-9);
        expect_rel(seeds_answer_of(&s, "5.9(b2)"), whole.tpot * 1e3, 1e-9);
        expect_rel(seeds_answer_of(&s, "5.9(b3)"), chunked.ttft * 1e3, 1e-9);
        expect_rel(seeds_answer_of(&s, "5.9(b4)"), chunked.tpot * 1e3, 1e-9);

        double target = seeds_input_of(&s, "ch05_ex10_tpot_ms") * 1e-3;
        int prompt = (int)seeds_input_of(&s, "ch05_ex10_prompt"), best = 0;
        double best_gs = 0;
        static const char *const cid[3] = {"5.10(a1)", "5.10(a2)", "5.10(a3)"};
        static const char *const gid[3] = {"5.10(b1)", "5.10(b2)", "5.10(b3)"};
        for (int i = 0, tp = 2; i < 3; i++, tp *= 2) {
            int c = 0; /* the largest concurrency whose TPOT meets the target: TPOT grows with it */
            while (c < 4096 && serve_estimate("llama3-70b", tp, prompt, 512, c + 1, 0, 2.0).tpot <= target)
                c++;
            cr_expect_eq(seeds_answer_of(&s, cid[i]), c, "seed %llu %s", (unsigned long long)sd, cid[i]);
            double gs = serve_estimate("llama3-70b", tp, prompt, 512, c, 0, 2.0).gpu_seconds_per_request;
            expect_rel(seeds_answer_of(&s, gid[i]), gs, 1e-9);
            if (c > 0 && (best == 0 || gs < best_gs))
                best = tp, best_gs = gs;
        }
        cr_expect_eq(seeds_answer_of(&s, "5.10(c)"), best, "seed %llu", (unsigned long long)sd);
    }
}
