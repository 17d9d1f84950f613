/* The kit's answers to chapter 7's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=07 SEED=4711` without ANSWERS grades your kit. */
#include "kit_answers_07.h"

int main(void)
{
    return kit_answers_main(7, kit_answers_07);
}
