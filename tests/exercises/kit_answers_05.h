/* Chapter 5's variant parts answered by the kit's functions, in the part's
 * unit (see kit_answers.h). */
#ifndef EXERCISES_KIT_ANSWERS_05_H
#define EXERCISES_KIT_ANSWERS_05_H

#include "05-serving-queue.h"
#include "kit_answers.h"
#include "request.h"
#include "specs.h"

/* Exercises 8 to 10 ask `napkin serve`: its arithmetic (request.h) on the
 * variant's inputs, LLaMA-3 on H100s at the datasheet's rates, bf16, the
 * default memory policy.  NAN fields when the setup does not fit. */
static inline request_estimate kit05_serve(const char *model, int tp, int prompt, int output, int c, int chunk,
                                           double price)
{
    request_estimate e = {0};
    model_spec m;
    gpu_spec g;
    char err[256];
    if (model_lookup(model, &m) != 0 || gpu_lookup("h100", &g) != 0)
        return e;
    request_setup rs = {&m, &g, precision_uniform(DT_BF16), tp, prompt, output, c, chunk, 0, memory_policy_default(),
                        price, 1};
    if (request_estimate_compute(&rs, &e, err, sizeof err) != 0 || !e.fit.fits)
        e.ttft = e.tpot = e.cost_per_m_output = e.gpu_seconds_per_request = NAN;
    return e;
}

/* Exercise `exercise` (1 to 6, 8 to 10; 0 for all) of the variant s. */
static inline kit_answers kit_answers_05(const practice_set *s, int exercise)
{
    kit_answers a = {0};
    if (exercise == 0 || exercise == 1) {
        double lambda = kit_input_(s, "ch05_ex1_rate"), w = kit_input_(s, "ch05_ex1_latency");
        kit_answer_(&a, "5.1(a)", ex05_in_system(lambda, w));
        kit_answer_(&a, "5.1(b)", ex05_cache_bytes("llama3-8b", ex05_in_system(lambda, w),
                                                  (int)kit_input_(s, "ch05_ex1_tokens"), "bf16") / 1e9);
        kit_answer_(&a, "5.1(c)", ex05_in_system(lambda, 2 * w));
    }
    if (exercise == 0 || exercise == 2) {
        double sv = kit_input_(s, "ch05_ex2_service"), lambda = kit_input_(s, "ch05_ex2_rate");
        kit_answer_(&a, "5.2(b1)", ex05_mm1_time(lambda, 1 / sv));
        kit_answer_(&a, "5.2(b2)", ex05_md1_time(lambda, 1 / sv));
        kit_answer_(&a, "5.2(c1)", ex05_mg1_wait(lambda, sv, 1));
        kit_answer_(&a, "5.2(c2)", ex05_mg1_wait(lambda, sv, 0));
    }
    if (exercise == 0 || exercise == 3) {
        double sv = kit_input_(s, "ch05_ex3_service"), near = kit_input_(s, "ch05_ex3_near");
        double far = kit_input_(s, "ch05_ex3_far");
        kit_answer_(&a, "5.3(a1)", ex05_max_rate(sv, 0, near));
        kit_answer_(&a, "5.3(a2)", ex05_max_rate(sv, 0, far));
        kit_answer_(&a, "5.3(b1)", ex05_max_rate(sv, 1, near));
        kit_answer_(&a, "5.3(b2)", ex05_max_rate(sv, 1, far));
        kit_answer_(&a, "5.3(c1)", 100 * (1 - ex05_max_rate(sv, 0, near) * sv));
        kit_answer_(&a, "5.3(c2)", 100 * (1 - ex05_max_rate(sv, 1, near) * sv));
    }
    if (exercise == 0 || exercise == 4) {
        double sv = kit_input_(s, "ch05_ex4_service"), cs2 = kit_input_(s, "ch05_ex4_cs2");
        double lambda = kit_input_(s, "ch05_ex4_rate");
        kit_answer_(&a, "5.4(a)", ex05_mg1_wait(lambda, sv, cs2));
        kit_answer_(&a, "5.4(b1)", ex05_mg1_wait(lambda, sv, 0));
        kit_answer_(&a, "5.4(b2)", ex05_mg1_wait(lambda, sv, 1));
    }
    double cap_b = NAN, cap_k = NAN, cap_1 = NAN;
    if (exercise == 0 || exercise == 5 || exercise == 6) {
        int prompt = (int)kit_input_(s, "ch05_ex5_prompt"), output = (int)kit_input_(s, "ch05_ex5_output");
        int batch = (int)kit_input_(s, "ch05_ex5_batch"), cap = (int)kit_input_(s, "ch05_ex5_cap");
        cap_b = ex05_batch_capacity("llama3-8b", "h100", prompt, output, batch, 0);
        cap_k = ex05_batch_capacity("llama3-8b", "h100", prompt, output, batch, cap);
        cap_1 = ex05_batch_capacity("llama3-8b", "h100", prompt, output, 1, 0);
        if (exercise != 6) {
            kit_answer_(&a, "5.5(a1)", batch / cap_b); /* a full batch is the best one */
            kit_answer_(&a, "5.5(a2)", cap_b);
            kit_answer_(&a, "5.5(b)", cap_k);
            kit_answer_(&a, "5.5(c)", cap_1);
        }
    }
    if (exercise == 0 || exercise == 6) {
        double rate = kit_input_(s, "ch05_ex6_rate"), load = kit_input_(s, "ch05_ex6_load_pct") / 100;
        kit_answer_(&a, "5.6(a)", ex05_replicas_needed(rate, cap_b, load));
        kit_answer_(&a, "5.6(b)", ex05_replicas_needed(rate, cap_k, load));
        kit_answer_(&a, "5.6(c)", ex05_replicas_needed(rate, cap_1, load));
    }
    if (exercise == 0 || exercise == 8) {
        double price = kit_input_(s, "ch05_ex8_price");
        int c = (int)kit_input_(s, "ch05_ex8_concurrency");
        kit_answer_(&a, "5.8(a)", kit05_serve("llama3-8b", 1, 1024, 512, 1, 0, price).cost_per_m_output);
        kit_answer_(&a, "5.8(b)", kit05_serve("llama3-8b", 1, 1024, 512, c, 0, price).cost_per_m_output);
    }
    if (exercise == 0 || exercise == 9) {
        double budget = kit_input_(s, "ch05_ex9_budget_ms") * 1e-3;
        int c = (int)kit_input_(s, "ch05_ex9_concurrency"), chunk = (int)kit_input_(s, "ch05_ex9_chunk");
        int longest = 0;
        for (int n = 256; n <= 65536 && kit05_serve("llama3-8b", 1, n, 512, 1, 0, 0).ttft <= budget; n += 256)
            longest = n;
        kit_answer_(&a, "5.9(a)", longest);
        request_estimate whole = kit05_serve("llama3-8b", 1, 1024, 512, c, 0, 0);
        request_estimate chunked = kit05_serve("llama3-8b", 1, 1024, 512, c, chunk, 0);
        kit_answer_(&a, "5.9(b1)", whole.ttft * 1e3);
        kit_answer_(&a, "5.9(b2)", whole.tpot * 1e3);
        kit_answer_(&a, "5.9(b3)", chunked.ttft * 1e3);
        kit_answer_(&a, "5.9(b4)", chunked.tpot * 1e3);
    }
    if (exercise == 0 || exercise == 10) {
        double target = kit_input_(s, "ch05_ex10_tpot_ms") * 1e-3;
        int prompt = (int)kit_input_(s, "ch05_ex10_prompt"), best = 0;
        double best_gs = 0;
        static const char *const cid[3] = {"5.10(a1)", "5.10(a2)", "5.10(a3)"};
        static const char *const gid[3] = {"5.10(b1)", "5.10(b2)", "5.10(b3)"};
        for (int i = 0, tp = 2; i < 3; i++, tp *= 2) {
            /* the largest concurrency whose TPOT meets the target: TPOT grows with it */
            int c = 0;
            while (c < 4096) {
                request_estimate e = kit05_serve("llama3-70b", tp, prompt, 512, c + 1, 0, 2.0);
                if (!(e.tpot <= target))
                    break;
                c++;
            }
            double gs = c > 0 ? kit05_serve("llama3-70b", tp, prompt, 512, c, 0, 2.0).gpu_seconds_per_request : NAN;
            kit_answer_(&a, cid[i], c);
            kit_answer_(&a, gid[i], gs);
            if (c > 0 && (best == 0 || gs < best_gs))
                best = tp, best_gs = gs;
        }
        kit_answer_(&a, "5.10(c)", best);
    }
    return a;
}

#endif
