/* Criterion, or under ThreadSanitizer a small runner with the same
 * spellings.  Criterion's runner cannot start under ThreadSanitizer on every
 * kernel: it maps a shared arena at random addresses, which TSan's shadow
 * memory occupies.  Under TSan the tests of a file that includes this header
 * therefore run from a runner of their own, one after another in one process,
 * each under an alarm; it prints Criterion's Synthesis line.  Only the cr_
 * checks listed here exist under TSan. */
#ifndef NAPKIN_TEST_CRITERION_OR_SHIM_H
#define NAPKIN_TEST_CRITERION_OR_SHIM_H
#if defined(__SANITIZE_THREAD__)
#define BATCHER_TEST_TSAN 1
#elif defined(__has_feature)
#if __has_feature(thread_sanitizer)
#define BATCHER_TEST_TSAN 1
#endif
#endif

#ifndef BATCHER_TEST_TSAN
#include <criterion/criterion.h>
#else
#include <math.h>
#include <setjmp.h>
#include <stdio.h>
#include <stdlib.h>
typedef struct { const char *suite, *name; void (*fn)(void); } shim_test;
static shim_test shim_tests[64];
static int shim_ntests, shim_failed_checks;
static jmp_buf shim_abort;
#define Test(suite, name, ...)                                                                     \
    static void suite##_##name(void);                                                              \
    __attribute__((constructor)) static void reg_##suite##_##name(void)                            \
    {                                                                                              \
        shim_tests[shim_ntests++] = (shim_test){#suite, #name, suite##_##name};                    \
    }                                                                                              \
    static void suite##_##name(void)
#define TestSuite(...)
#include <unistd.h>
#define SHIM_CHECK(ok, fatal, text)                                                                \
    do {                                                                                           \
        if (!(ok)) {                                                                               \
            fprintf(stderr, "%s:%d: check failed: %s\n", __FILE__, __LINE__, text);                 \
            shim_failed_checks++;                                                                  \
            if (fatal)                                                                             \
                longjmp(shim_abort, 1);                                                            \
        }                                                                                          \
    } while (0)
#define cr_expect(c, ...) SHIM_CHECK((c), 0, #c)
#define cr_assert(c, ...) SHIM_CHECK((c), 1, #c)
#define cr_expect_eq(a, b, ...) SHIM_CHECK((a) == (b), 0, #a " == " #b)
#define cr_assert_eq(a, b, ...) SHIM_CHECK((a) == (b), 1, #a " == " #b)
#define cr_expect_neq(a, b, ...) SHIM_CHECK((a) != (b), 0, #a " != " #b)
#define cr_expect_geq(a, b, ...) SHIM_CHECK((a) >= (b), 0, #a " >= " #b)
#define cr_expect_gt(a, b, ...) SHIM_CHECK((a) > (b), 0, #a " > " #b)
#define cr_assert_geq(a, b, ...) SHIM_CHECK((a) >= (b), 1, #a " >= " #b)
#define cr_expect_lt(a, b, ...) SHIM_CHECK((a) < (b), 0, #a " < " #b)
#define cr_expect_null(a, ...) SHIM_CHECK((a) == NULL, 0, #a " is NULL")
#define cr_assert_not_null(a, ...) SHIM_CHECK((a) != NULL, 1, #a " is not NULL")
#define cr_expect_float_eq(a, b, eps, ...) SHIM_CHECK(fabs((a) - (b)) <= (eps), 0, #a " ~ " #b)
#define cr_assert_fail(...) SHIM_CHECK(0, 1, "cr_assert_fail")
static void shim_run_one(void (*fn)(void))
{
    alarm(60); /* watchdog: a hang kills the run */
    if (setjmp(shim_abort) == 0)
        fn();
    alarm(0);
}
int main(void)
{
    int failing = 0;
    for (int i = 0; i < shim_ntests; i++) {
        int before = shim_failed_checks;
        shim_run_one(shim_tests[i].fn);
        int ok = shim_failed_checks == before;
        failing += !ok;
        printf("[%s] %s::%s\n", ok ? "PASS" : "FAIL", shim_tests[i].suite, shim_tests[i].name);
        fflush(stdout);
    }
    printf("[====] Synthesis: Tested: %d | Passing: %d | Failing: %d | Crashing: 0 \n", shim_ntests,
           shim_ntests - failing, failing);
    return failing ? 1 : 0;
}
#endif
#endif
