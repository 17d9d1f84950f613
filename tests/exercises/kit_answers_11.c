/* The kit's answers to chapter 11's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=11 SEED=4711` without ANSWERS grades your kit. */
#include "kit_answers_11.h"

int main(void)
{
    return kit_answers_main(11, kit_answers_11);
}
