/* The numbers of chapter 3's exercises 1 to 7 as values, for the seed in
 * $NB_SEED (0, the printed book's version, when unset): the book records
 * seed 0, `make handout N=03 SEED=...` another variant. */
#include "practice.h"

int main(void)
{
    return practice_variant_program(3);
}
