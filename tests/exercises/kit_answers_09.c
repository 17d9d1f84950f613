/* The kit's answers to chapter 9's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=09 SEED=4711` without ANSWERS grades your kit. */
#include "kit_answers_09.h"

int main(void)
{
    return kit_answers_main(9, kit_answers_09);
}
