/* The capped geometric process's mean (accepted_tokens.h). */
#include "accepted_tokens.h"

#include <math.h>

//> expected_tokens
double spec_expected_tokens(double alpha, int gamma)
{
    if (gamma < 0)
        return NAN;
    if (alpha >= 1.0) /* every draft accepted: gamma drafts plus the bonus */
        return gamma + 1.0;
    /* 1 + alpha + ... + alpha^gamma: the k-th token arrives when the first
     * k-1 drafts were all accepted. */
    return (1.0 - pow(alpha, gamma + 1)) / (1.0 - alpha);
}
//< expected_tokens
