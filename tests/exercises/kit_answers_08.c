/* The kit's answers to chapter 8's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=08 SEED=4711` without ANSWERS grades your kit. */
#include "kit_answers_08.h"

int main(void)
{
    return kit_answers_main(8, kit_answers_08);
}
