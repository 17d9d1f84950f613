/* The kit's answers to chapter 3's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=03 SEED=4711` without ANSWERS grades your kit. */
#include "kit_answers_03.h"

int main(void)
{
    return kit_answers_main(3, kit_answers_03);
}
