/* The numbers of chapter 4's exercises 1 to 6 as values, for the seed in
 * $NB_SEED (0, the printed book's version, when unset): the book records
 * seed 0, `make handout N=04 SEED=...` another variant. */
#include "practice.h"

int main(void)
{
    return practice_variant_program(4);
}
