/* The numbers of chapter 7's exercises 2, 4, 5 and 7 as values, for the seed in
 * $NB_SEED (0, the printed book's version, when unset): the book records
 * seed 0, `make handout N=07 SEED=...` another variant. */
#include "practice.h"

int main(void)
{
    return practice_variant_program(7);
}
