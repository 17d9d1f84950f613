/* The kit's answers to chapter 5's variant of $NB_SEED, as the grade's
 * answers file: `make grade N=05 SEED=4711` without ANSWERS grades your kit. */
#include "kit_answers_05.h"

int main(void)
{
    return kit_answers_main(5, kit_answers_05);
}
