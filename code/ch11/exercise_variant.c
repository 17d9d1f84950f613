/* The numbers of chapter 11's exercises 3 to 6 as values, for the
 * seed in $NB_SEED (0, the printed book's version, when unset): the book
 * records seed 0, `make handout N=11 SEED=...` another variant. */
#include "practice.h"

int main(void)
{
    return practice_variant_program(11);
}
