/* Fixture source for the notebook filter tests: snippets in several shapes. */
#include <stdio.h>

//> square
static double square(double x) ///< not a marker: a doc comment
{
    return x * x;
}
//< square

int main(void)
{
    //> indented
    for (int i = 0; i < 3; i++)
        printf("%g\n", square(i));
    //< indented
    //> outer
    int a = 1;
    //> inner
    int b = 2;
    //< inner
    printf("%d\n", a + b);
    //< outer
    return 0;
}

//> twice
int first_copy;
//< twice
//> twice
int second_copy;
//< twice

//> unclosed
int never_closed;
//> shared
int one_copy;
//< shared
