/* The kit's answers to chapter 10's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=10 SEED=4711` without ANSWERS grades your kit. */
#include "kit_answers_10.h"

int main(void)
{
    return kit_answers_main(10, kit_answers_10);
}
