/* The kit's answers to chapter 2's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=02 SEED=4711` without ANSWERS grades your kit. */
#include "kit_answers_02.h"

int main(void)
{
    return kit_answers_main(2, kit_answers_02);
}
