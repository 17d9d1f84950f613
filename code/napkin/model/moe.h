/* Which experts a batch touches.  A MoE decode reads the weights of every
 * expert some token of the step routes to, so the bytes per step grow with
 * the batch until every expert is touched; how fast depends on how evenly
 * the router spreads tokens.
 *
 * Routing is described by each expert's inclusion probability pi_i: the
 * chance that one token's top-k includes expert i (sum pi_i = k, each at
 * most 1).  Tokens route independently, so expert i stays untouched by T
 * tokens with probability (1 - pi_i)^T and the expected number touched is
 *     sum_i 1 - (1 - pi_i)^T,
 * which under uniform routing (pi_i = k/E) is E (1 - (1 - k/E)^T), the
 * formula of moe_experts_touched.  moe_route_token draws a top-k with
 * exactly these inclusion probabilities (systematic sampling, Madow 1949),
 * so a seeded simulation checks the formula. */
#ifndef NAPKIN_MOE_H
#define NAPKIN_MOE_H

#include "rng.h"

/* Inclusion probabilities of a Zipf-skewed router: expert i's share of the
 * routing proportional to 1/(i+1)^s (s = 0: uniform), scaled to sum k and
 * capped at 1 (the excess spread over the rest in proportion).  Returns 0,
 * or -1 when k is not in 1..E or s < 0. */
int moe_zipf_inclusion(int experts, int k, double s, double *pi);

/* Expected distinct experts touched by `tokens` tokens: sum 1 - (1-pi_i)^T. */
double moe_expected_touched(const double *pi, int experts, double tokens);

/* Expected distinct experts touched by `tokens` tokens of a Zipf(s)
 * router (moe_zipf_inclusion then moe_expected_touched); NAN for bad
 * arguments or out of memory. */
double moe_zipf_touched(int experts, int k, double s, double tokens);

/* The hottest GPU of an expert-parallel group under a Zipf(s) router, the
 * experts dealt out round-robin hottest first (expert i on GPU i mod ep, the
 * placement a balancer approaches without replicas): GPU 0.  *load is its
 * share of the routed pairs over the mean, ep x sum_{i = 0 mod ep} pi_i / k
 * (1 when s = 0), *touched the expected experts of its own that `tokens`
 * tokens of the whole group touch.  Returns 0, or -1 for bad arguments
 * (ep not dividing the experts) or out of memory. */
int moe_zipf_hot_rank(int experts, int k, double s, int ep, double tokens, double *load, double *touched);

/* The routing of aiconfigurator-core's MoE tables, distribution
 * "power_law_<alpha>": its collector draws each expert's load from a power
 * law of exponent alpha (density x^-alpha on [1, 0.8 T]), scales the loads
 * to T k pairs and puts the busiest group of experts on the GPU it times.
 * The Zipf skew s whose hottest GPU (moe_zipf_hot_rank) matches that
 * sampler's: found by simulating the sampler for 128 and 256 experts,
 * top-8, EP 2 and 8, 16 to 4096 tokens (its load over the mean is 1.0-2.0;
 * s within 0.85-1.05 matches it at 256 tokens and more).  Returns 0.9 for
 * alpha 1.01, 1.0 for alpha 1.2, NAN for any other alpha. */
double moe_power_law_skew(double alpha);

/* The busiest GPU's work in one MoE layer of an expert-parallel group of ep
 * GPUs that holds `tokens` tokens in all: *pairs token-expert pairs through
 * its experts, *touched of its experts read.
 *  - balanced (the tables' "balanced"): the collector's deterministic
 *    spread, each GPU ceil(T / ep) tokens of min(k, E / ep) local experts
 *    each, spread over distinct experts: pairs = ceil(T / ep) min(k, E / ep),
 *    touched = min(E / ep, pairs);
 *  - else routing by a Zipf(s) router (s = 0: uniform, independent tokens):
 *    pairs = T k / ep x the hottest GPU's load, touched its expected
 *    experts touched (moe_zipf_hot_rank).
 * Returns 0, or -1 for bad arguments. */
int moe_rank_work(int experts, int k, double s, int ep, double tokens, int balanced, double *pairs,
                  double *touched);

/* The fewest tokens that touch at least `share` (0 < share < 1) of the
 * experts in expectation under uniform routing: the smallest T with
 * (1 - k/E)^T <= 1 - share.  -1 for bad arguments. */
int moe_tokens_to_cover(int experts, int k, double share);

/* Expected distinct GPUs one token's top-k reaches when `experts` experts
 * are dealt out evenly over `ep` GPUs (experts / ep each) and the router
 * picks k of them uniformly: GPU j is missed when all k avoid its experts,
 * with probability C(E - E/ep, k) / C(E, k), so the count is
 *     ep (1 - C(E - E/ep, k) / C(E, k)).
 * Copies of a token bound for one GPU travel once (DeepEP and TensorRT-LLM
 * send a token to a GPU once and fan it out to that GPU's experts there),
 * so this, not k, is what a dispatch sends per token; by symmetry a share
 * 1/ep of it is the token's own GPU, which sends nothing.  NAN for bad
 * arguments (ep not dividing the experts, k not in 1..E). */
double moe_expected_gpus_reached(int experts, int ep, int k);

/* Bytes one GPU sends in one all-to-all phase for `tokens` tokens: each
 * token's hidden vector (hidden values of bpv bytes) once to every other
 * GPU its top-k reaches, moe_expected_gpus_reached x (ep-1)/ep of them.
 * NAN for a bad router. */
double moe_alltoall_bytes(double tokens, int experts, int k, int hidden, int ep, double bpv);

/* One token's top-k: writes k distinct expert indices into out, expert i
 * chosen with probability pi[i] exactly (sum pi = k, each <= 1). */
void moe_route_token(const double *pi, int experts, int k, rng_state *r, int *out);

/* Mean distinct experts touched by `tokens` tokens over `trials` seeded
 * simulations; *stderr_out (may be NULL) the standard error of that mean.
 * Returns -1 for bad arguments or out of memory. */
int moe_simulate_touched(const double *pi, int experts, int k, int tokens, int trials, uint64_t seed,
                         double *mean, double *stderr_out);

#endif
