/* Chapter 4's exercise variants: 4.1 (the flusher decides), 4.2 (a deadline
 * with a carry), 4.3 (the price of not naming the culprit), 4.4 (the
 * window's price, with and without a cap), 4.5 (which trigger fires?) and
 * 4.6 (one flusher, serial batches).  The printed numbers are seed 0; other
 * seeds draw from the lists below, which keep each question in its printed
 * regime: a flusher that sleeps in (a) and has waited out its window in (c),
 * a deadline that carries into the next second, a batch of a power of two
 * with its bad run inside it, a cap of 64 that never binds and one of 4
 * that does, a window that holds between 8 and 32 arrivals.
 *
 * The decision and the deadline are the batcher's (batcher.c), which the
 * page's WebAssembly build leaves out with the threads; their arithmetic
 * here is the exercise's own: the deadline is the oldest arrival plus the
 * window, and a timespec splits whole nanoseconds. */
#include "practice_chapters.h"
#include "practice_set.h"
#include "practice_draw.h"

#include "rng.h"
#include "window.h"

#include <math.h>

static int windowed(double lambda, double w, int cap, window_stats *out)
{
    window_params p = {lambda, w, cap};
    char err[128];
    return window_expected(&p, out, err, sizeof err);
}

static const double ex1_batch[] = {4, 8, 16};
static const double ex1_window_ms[] = {2, 5, 10};

static void exercise_1(practice_set *s, rng_state *r)
{
    double batch = PRACTICE_DRAW(s, r, "ch04_ex1_batch", ex1_batch, 1, "%g");
    double w = PRACTICE_DRAW(s, r, "ch04_ex1_window_ms", ex1_window_ms, 1, "%g");
    /* (a): fewer than a full batch, part of the window gone; (c): the window
     * passed by 1.1 ms */
    double queued = s->seed == 0 ? 3 : 1 + (double)rng_below(r, (uint64_t)(batch - 1));
    double elapsed = s->seed == 0 ? 2 : 0.5 * (double)(1 + rng_below(r, (uint64_t)(2 * w - 1)));
    practice_add_input(s, "ch04_ex1_queued", queued, "%g", 1, practice_greatest(ex1_batch, PRACTICE_COUNT(ex1_batch)) - 1);
    practice_add_input(s, "ch04_ex1_now_a", 1 + elapsed / 1e3, "%g", 1.0005, 1 + 9.5e-3);
    practice_add_input(s, "ch04_ex1_now_c", 1 + (w + 1.1) / 1e3, "%g", 1.0031, 1.0111);
    practice_part *p = practice_add_part(s, "4.1(a)", 1, "ms the flusher sleeps in (a)", "ms", JUDGE_RELATIVE,
                                         w - elapsed, JUDGE_HAND_TOL);
    practice_add_slip(p, w, "that is the whole window; the oldest request has waited part of it already");
    practice_add_slip(p, elapsed, "that is how long the oldest has waited; the sleep is what is left of the window");
    practice_add_slip(p, 1e3 + w, "that is the deadline itself (in ms); the sleep is the deadline less now");
}

/* 4.2: now is a whole second less `early` microseconds; the window is longer
 * than `early`, so the deadline carries into the next second. */
static const double ex2_second[] = {3, 7, 12, 19, 41, 58, 86, 123, 250, 314, 421, 512, 777, 863, 997, 1024};
/* whole 100 us, as now prints them to four decimals */
static const double ex2_early_us[] = {100, 200, 300, 400};
static const double ex2_window_us[] = {500, 600, 750, 800, 900, 1000, 1200, 1250, 1500, 1600, 1750, 2000};

static void exercise_2(practice_set *s, rng_state *r)
{
    double sec = practice_pick(r, s->seed, ex2_second, PRACTICE_COUNT(ex2_second), 4);
    double early = practice_pick(r, s->seed, ex2_early_us, PRACTICE_COUNT(ex2_early_us), 2);
    double w = practice_pick(r, s->seed, ex2_window_us, PRACTICE_COUNT(ex2_window_us), 0);
    practice_add_input(s, "ch04_ex2_now", sec + 1 - early / 1e6, "%.4f", practice_least(ex2_second, PRACTICE_COUNT(ex2_second)) + 0.9996,
                       practice_greatest(ex2_second, PRACTICE_COUNT(ex2_second)) + 0.9999);
    practice_add_input(s, "ch04_ex2_window_ms", w / 1e3, "%g", 0.5, 2);
    /* whole nanoseconds: now's fraction is 10^9 - early x 1000 */
    long long frac = 1000000000LL - (long long)early * 1000, add = (long long)w * 1000;
    long long deadline = frac + add; /* past 10^9: the carry */
    practice_part *p = practice_add_part(s, "4.2(a1)", 2, "tv_sec of the deadline", "s", JUDGE_EXACT, sec + 1, 0);
    practice_add_slip(p, sec, "that keeps the second of now; the deadline carries into the next");
    p = practice_add_part(s, "4.2(a2)", 2, "tv_nsec of the deadline", "ns", JUDGE_EXACT, (double)(deadline - 1000000000LL), 0);
    practice_add_slip(p, (double)deadline, "that has no carry: tv_nsec must stay below 10^9");
    p = practice_add_part(s, "4.2(b)", 2, "tv_nsec the naive version passes", "ns", JUDGE_EXACT, (double)deadline, 0);
    practice_add_slip(p, (double)(deadline - 1000000000LL), "that is the carried value; the naive version does not carry");
}

/* Handler calls to find every bad request of [lo, hi) by halving: a batch
 * that passes, or fails alone, costs its one call. */
static long bisect_calls(const int *bad, int lo, int hi)
{
    int any = 0;
    for (int i = lo; i < hi; i++)
        any |= bad[i];
    if (!any || hi - lo == 1)
        return 1;
    int mid = lo + (hi - lo) / 2;
    return 1 + bisect_calls(bad, lo, mid) + bisect_calls(bad, mid, hi);
}

static const double ex3_n[] = {16, 32, 64, 128};

static void exercise_3(practice_set *s, rng_state *r)
{
    double n = PRACTICE_DRAW(s, r, "ch04_ex3_n", ex3_n, 2, "%g");
    double one = s->seed == 0 ? 37 : (double)rng_below(r, (uint64_t)n);
    double start = s->seed == 0 ? 8 : (double)rng_below(r, (uint64_t)(n - 3));
    practice_add_input(s, "ch04_ex3_bad", one, "%g", 0, practice_greatest(ex3_n, PRACTICE_COUNT(ex3_n)) - 1);
    practice_add_input(s, "ch04_ex3_run_start", start, "%g", 0, practice_greatest(ex3_n, PRACTICE_COUNT(ex3_n)) - 4);
    practice_add_input(s, "ch04_ex3_run_end", start + 3, "%g", 3, practice_greatest(ex3_n, PRACTICE_COUNT(ex3_n)) - 1);
    int bad[128] = {0}, k = (int)n;
    bad[(int)one] = 1;
    long c1 = bisect_calls(bad, 0, k);
    bad[(int)one] = 0;
    bad[0] = bad[k - 1] = 1;
    long c2 = bisect_calls(bad, 0, k);
    bad[0] = bad[k - 1] = 0;
    for (int i = 0; i < 4; i++)
        bad[(int)start + i] = 1;
    long c4 = bisect_calls(bad, 0, k);
    for (int i = 0; i < k; i++)
        bad[i] = 1;
    long call = bisect_calls(bad, 0, k);
    double levels = log2(n);
    practice_part *p = practice_add_part(s, "4.3(a)", 3, "handler calls, one bad request", "calls", JUDGE_EXACT, c1, 0);
    practice_add_slip(p, levels, "that counts the halvings; each level calls the handler on both halves");
    practice_add_slip(p, levels + 1, "each level calls the handler on both halves, not on one");
    p = practice_add_part(s, "4.3(b)", 3, "handler calls, the first and the last bad", "calls", JUDGE_EXACT, c2, 0);
    practice_add_slip(p, 2.0 * (double)c1, "the two searches share the first call on the whole batch");
    p = practice_add_part(s, "4.3(c)", 3, "handler calls, four adjacent bad", "calls", JUDGE_EXACT, c4, 0);
    practice_add_slip(p, 4.0 * (double)c1, "adjacent culprits share most of their halvings");
    p = practice_add_part(s, "4.3(d)", 3, "handler calls, all bad", "calls", JUDGE_EXACT, call, 0);
    practice_add_slip(p, n, "that counts the leaves alone; every failed half above them was a call too");
}

static const double ex4_rate[] = {1000, 1500, 2000, 2500, 3000, 3500, 4000};
static const double ex4_window_ms[] = {1, 1.5, 2, 2.5, 3, 4, 5};

static void exercise_4(practice_set *s, rng_state *r)
{
    double lambda = PRACTICE_DRAW(s, r, "ch04_ex4_rate", ex4_rate, 2, PRACTICE_GROUPED);
    double w = PRACTICE_DRAW(s, r, "ch04_ex4_window_ms", ex4_window_ms, 2, "%g");
    window_stats big, small;
    if (windowed(lambda, w / 1e3, 64, &big) != 0 || windowed(lambda, w / 1e3, 4, &small) != 0)
        return;
    practice_part *p = practice_add_part(s, "4.4(a)", 4, "mean wait with a cap of 64", "ms", JUDGE_RELATIVE,
                                         big.mean_wait * 1e3, JUDGE_HAND_TOL);
    practice_add_slip(p, w / 2, "half the window is the later arrivals' wait; the first of each batch waits it all");
    p = practice_add_part(s, "4.4(b)", 4, "mean wait with a cap of 4", "ms", JUDGE_RELATIVE, small.mean_wait * 1e3,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, big.mean_wait * 1e3, "that is the uncapped wait; a cap of 4 sends batches before the window ends");
}

/* 4.5: a window that holds 8 to 32 arrivals on average */
static const double ex5_rate[] = {4000, 5000, 6000, 7000, 8000, 10000, 12000, 14000, 16000};
static const double ex5_window_ms[] = {1, 1.25, 1.5, 2, 2.5, 3, 4};

static void exercise_5(practice_set *s, rng_state *r)
{
    double lambda = 8000, w = 2;
    for (int attempt = 0; attempt < 64; attempt++) {
        lambda = practice_pick(r, s->seed, ex5_rate, PRACTICE_COUNT(ex5_rate), 4);
        w = practice_pick(r, s->seed, ex5_window_ms, PRACTICE_COUNT(ex5_window_ms), 3);
        if (lambda * w / 1e3 >= 8 && lambda * w / 1e3 <= 32)
            break;
        lambda = 8000, w = 2;
    }
    practice_add_input(s, "ch04_ex5_rate", lambda, PRACTICE_GROUPED, PRACTICE_RANGE_OF(ex5_rate));
    practice_add_input(s, "ch04_ex5_window_ms", w, "%g", PRACTICE_RANGE_OF(ex5_window_ms));
    static const struct {
        const char *id, *what;
        int cap;
    } parts[2] = {{"4.5(a)", "percent of batches that fill, cap 16", 16},
                  {"4.5(b)", "percent of batches that fill, cap 32", 32}};
    for (int i = 0; i < 2; i++) {
        window_stats st;
        if (windowed(lambda, w / 1e3, parts[i].cap, &st) != 0)
            return;
        /* a share of batches is judged in percentage points: one either way */
        practice_part *p = practice_add_part(s, parts[i].id, 5, parts[i].what, "%", JUDGE_RANGE, 100 * st.full_share, 1);
        practice_add_slip(p, 100 * (1 - st.full_share), "that is the share the window sends; the question asks the full ones");
        if (p)
            p->judge.rule_note = "to a percentage point";
    }
}

static const double ex6_overhead_us[] = {10, 20, 50};
static const double ex6_fixed_ms[] = {4, 8, 10};
static const double ex6_per_item_ms[] = {0.02, 0.025, 0.03, 0.04, 0.05, 0.06, 0.075, 0.08, 0.1, 0.12, 0.125, 0.15, 0.2, 0.25};
static const double ex6_batch[] = {16, 32, 64};

static void exercise_6(practice_set *s, rng_state *r)
{
    double over = practice_pick(r, s->seed, ex6_overhead_us, PRACTICE_COUNT(ex6_overhead_us), 1) * 1e-6;
    double fixed = practice_pick(r, s->seed, ex6_fixed_ms, PRACTICE_COUNT(ex6_fixed_ms), 1) * 1e-3;
    double item = practice_pick(r, s->seed, ex6_per_item_ms, PRACTICE_COUNT(ex6_per_item_ms), 8) * 1e-3;
    double batch = practice_pick(r, s->seed, ex6_batch, PRACTICE_COUNT(ex6_batch), 1);
    practice_add_input(s, "ch04_ex6_overhead_us", over * 1e6, "%g", PRACTICE_RANGE_OF(ex6_overhead_us));
    practice_add_input(s, "ch04_ex6_fixed_ms", fixed * 1e3, "%g", PRACTICE_RANGE_OF(ex6_fixed_ms));
    practice_add_input(s, "ch04_ex6_per_item_ms", item * 1e3, "%g", PRACTICE_RANGE_OF(ex6_per_item_ms));
    practice_add_input(s, "ch04_ex6_batch", batch, "%g", PRACTICE_RANGE_OF(ex6_batch));
    /* one batch at a time: batch requests per overhead + fixed + batch x item */
    practice_part *p = practice_add_part(s, "4.6(a)", 6, "requests/s with batches of 1", "requests/s", JUDGE_RELATIVE,
                                         1 / (over + fixed + item), JUDGE_HAND_TOL);
    practice_add_slip(p, 1 / item, "that is the per-request limit; a batch of one pays the fixed cost each time");
    p = practice_add_part(s, "4.6(b)", 6, "requests/s with the larger batches", "requests/s", JUDGE_RELATIVE,
                          batch / (over + fixed + batch * item), JUDGE_HAND_TOL);
    practice_add_slip(p, batch / (over + fixed + item), "the per-request time is paid for every request of the batch");
    practice_add_slip(p, 1 / (over + fixed + batch * item), "that is batches per second; each carries the batch's requests");
    p = practice_add_part(s, "4.6(c)", 6, "the limit as the batch grows", "requests/s", JUDGE_RELATIVE, 1 / item,
                          JUDGE_HAND_TOL);
    practice_add_slip(p, 1 / fixed, "the fixed cost is shared by the batch; the per-request time is what remains");
}

int practice_build_ch04(uint64_t seed, practice_set *out)
{
    /* one stream per exercise, so a change to one leaves the others' draws */
    rng_state r[6];
    practice_streams(seed, r, 6);
    exercise_1(out, &r[0]);
    exercise_2(out, &r[1]);
    exercise_3(out, &r[2]);
    exercise_4(out, &r[3]);
    exercise_5(out, &r[4]);
    exercise_6(out, &r[5]);
    return 0;
}
