/* The numbers of chapter 8's exercises 4 and 5 as values, for the seed in
 * $NB_SEED (0, the printed book's version, when unset): the book records
 * seed 0, `make handout N=08 SEED=...` another variant. */
#include "practice.h"

int main(void)
{
    return practice_variant_program(8);
}
