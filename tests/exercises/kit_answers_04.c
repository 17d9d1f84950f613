/* The kit's answers to chapter 4's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=04 SEED=4711` without ANSWERS grades your kit. */
#include "kit_answers_04.h"

int main(void)
{
    return kit_answers_main(4, kit_answers_04);
}
