/* The kit's answers to chapter 12's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=12 SEED=4711` without ANSWERS grades your kit.
 * Parts the kit has no function for, or leaves NAN or -1, are left out
 * (graded "missing"). */
#include "kit_answers_12.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    const char *env = getenv("NB_SEED");
    char *end = NULL;
    unsigned long long seed = env && *env ? strtoull(env, &end, 10) : 0;
    if (env && *env && (*end || *env == '-' || seed > 2147483647ULL)) {
        fprintf(stderr, "kit_answers_12: SEED=%s: give a whole number from 0 to 2147483647\n", env);
        return 2;
    }
    practice_set s;
    if (practice_build(12, seed, &s) != 0)
        return 1;
    kit_answers a = kit_answers_12(&s, 0);
    printf("{\"chapter\": 12, \"seed\": %llu, \"student\": \"kit\", \"answers\": {", seed);
    int first = 1;
    for (int i = 0; i < a.n; i++) {
        if (!isfinite(a.value[i]) || a.value[i] < 0)
            continue; /* a TODO body's NAN, or the kit's -1 for "no answer" */
        printf("%s\"%s\": %.17g", first ? "" : ", ", a.id[i], a.value[i]);
        first = 0;
    }
    printf("}}\n");
    return 0;
}
