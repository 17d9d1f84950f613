/* The numbers of chapter 10's exercises 2 and 3 as values, for the seed in
 * $NB_SEED (0, the printed book's version, when unset): the book records
 * seed 0, `make handout N=10 SEED=...` another variant. */
#include "notebook.h"
#include "practice.h"

#include <stdio.h>
#include <stdlib.h>

int main(void)
{
    uint64_t seed;
    if (practice_parse_seed(getenv("NB_SEED"), &seed) != 0) {
        fprintf(stderr, "exercise_variant: NB_SEED=%s: give a whole number from 0 to %llu\n", getenv("NB_SEED"),
                PRACTICE_MAX_SEED);
        return 2;
    }
    practice_set s;
    if (practice_build(10, seed, &s) != 0) {
        fprintf(stderr, "exercise_variant: chapter 10 has no variants\n");
        return 1;
    }
    practice_record_values(&s);
    printf("chapter 10 exercises, seed %llu: %d inputs, %d parts\n", (unsigned long long)seed, s.n_inputs, s.n_parts);
    return 0;
}
