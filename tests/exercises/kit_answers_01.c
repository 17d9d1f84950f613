/* The kit's answers to chapter 1's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=01 SEED=4711` without ANSWERS grades your kit. */
#include "kit_answers_01.h"

int main(void)
{
    return kit_answers_main(1, kit_answers_01);
}
