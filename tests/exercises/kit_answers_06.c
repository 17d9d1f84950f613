/* The kit's answers to chapter 6's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=06 SEED=4711` without ANSWERS grades your kit. */
#include "kit_answers_06.h"

int main(void)
{
    return kit_answers_main(6, kit_answers_06);
}
