/* Tokens one verification step yields when each of gamma drafted tokens is
 * accepted independently with probability alpha (Leviathan et al. 2023):
 * the longest accepted prefix, plus the verifier's own token (the
 * correction on a rejection, the bonus when all pass), a geometric count
 * capped at gamma + 1.  Chapter 10 derives it; speculative decoding
 * (workloads/specdec.h) and multi-token prediction (mtp.h) both use it, so
 * it lives on the floor they share. */
#ifndef NAPKIN_ACCEPTED_TOKENS_H
#define NAPKIN_ACCEPTED_TOKENS_H

/* E[N] = 1 + alpha + ... + alpha^gamma = (1 - alpha^(gamma+1)) / (1 - alpha)
 * for alpha in [0, 1] (gamma + 1 at alpha = 1); NAN for gamma < 0. */
double spec_expected_tokens(double alpha, int gamma);

#endif
