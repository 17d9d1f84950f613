/* The kit's answers to chapter 13's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=13 SEED=4711` without ANSWERS grades your kit. */
#include "kit_answers_13.h"

int main(void)
{
    return kit_answers_main(13, kit_answers_13);
}
