/* The kit's answers to chapter 12's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=12 SEED=4711` without ANSWERS grades your kit. */
#include "kit_answers_12.h"

int main(void)
{
    return kit_answers_main(12, kit_answers_12);
}
