/* Chapter 8's exercise variants: 8.4 (padding waste, the sizes of part a;
 * its shares are left to the worked solution, as fractions like 4/300 are
 * too common a number to keep out of the student kit) and 8.5
 * (speculative tokens on a capture list, parts a and c), on vLLM's default
 * capture list up to 512.  The printed numbers are seed 0; other seeds draw
 * from the lists below: batches off the list's grid (so that every batch
 * pads), one below 256 where the list steps by 8 and one above where it
 * steps by 16, and two batches and three draft lengths that differ (the
 * lists do not overlap), so that no two parts ask the same question. */
#include "practice.h"

#include "graphs.h"
#include "practice_draw.h"

#include <math.h>

#define LIST_MAX 512 /* vLLM's default ceiling */

static int replayed(int tokens)
{
    capture_list c;
    capture_list_vllm(LIST_MAX, &c);
    return capture_padded_tokens(&c, tokens);
}

/* The largest batch whose step of 1 + gamma tokens a sequence replays a graph. */
static int largest_batch(int gamma)
{
    int b = 0;
    while (replayed((b + 1) * (1 + gamma)) > 0)
        b++;
    return b;
}

/* ---- 8.4(a) */

static const double ex4_small[] = {50, 75, 100, 150, 180, 230};
static const double ex4_large[] = {260, 300, 330, 350, 420, 500};

static void padding_part(practice_set *s, const char *id, const char *what, int batch)
{
    int padded = replayed(batch);
    const char *grid = "the list steps by 8 up to 256 and by 16 from 256: the smallest size at or above the batch";
    practice_part *p = practice_add_part(s, id, 4, what, "tokens", JUDGE_EXACT, padded, 0);
    practice_add_slip(p, batch, grid);
    practice_add_slip(p, batch < 256 ? 16 * ceil(batch / 16.0) : 8 * ceil(batch / 8.0), grid);
}

static void exercise_4(practice_set *s, rng_state *r)
{
    double small = practice_pick(r, s->seed, ex4_small, PRACTICE_COUNT(ex4_small), 2);
    double large = practice_pick(r, s->seed, ex4_large, PRACTICE_COUNT(ex4_large), 1);
    practice_add_input(s, "ch08_ex4_small", small, "%.0f", PRACTICE_RANGE_OF(ex4_small));
    practice_add_input(s, "ch08_ex4_large", large, "%.0f", PRACTICE_RANGE_OF(ex4_large));
    padding_part(s, "8.4(a1)", "the size the first batch replays", (int)small);
    padding_part(s, "8.4(a2)", "the size the second batch replays", (int)large);
}

/* ---- 8.5(a) and (c) */

static const double ex5_gamma_a[] = {2, 3, 5};
static const double ex5_batch_a[] = {7, 9, 11};
static const double ex5_gamma_b[] = {4, 6};
static const double ex5_batch_b[] = {13, 15, 17, 21};
static const double ex5_gamma_c[] = {7, 9, 11};

static void replay_part(practice_set *s, const char *id, const char *what, int batch, int gamma)
{
    int padded = replayed(batch * (1 + gamma));
    practice_part *p = practice_add_part(s, id, 5, what, "tokens", JUDGE_EXACT, padded, 0);
    practice_add_slip(p, replayed(batch * gamma), "a verification step carries 1 + gamma tokens a sequence");
    practice_add_slip(p, batch * (1 + gamma), "the step replays the smallest captured size at or above its tokens");
    practice_add_slip(p, replayed(batch), "the list is in tokens, not sequences: 1 + gamma a sequence");
}

static void largest_part(practice_set *s, const char *id, const char *what, int gamma)
{
    int b = largest_batch(gamma);
    practice_part *p = practice_add_part(s, id, 5, what, "sequences", JUDGE_EXACT, b, 0);
    practice_add_slip(p, floor(LIST_MAX / (double)gamma), "a sequence carries 1 + gamma tokens, not gamma");
    practice_add_slip(p, b + 1, "round down: that batch's tokens pass 512 and it runs eagerly");
}

static void exercise_5(practice_set *s, rng_state *r)
{
    double ga = practice_pick(r, s->seed, ex5_gamma_a, PRACTICE_COUNT(ex5_gamma_a), 1);
    double ba = practice_pick(r, s->seed, ex5_batch_a, PRACTICE_COUNT(ex5_batch_a), 1);
    double gb = practice_pick(r, s->seed, ex5_gamma_b, PRACTICE_COUNT(ex5_gamma_b), 0);
    double bb = practice_pick(r, s->seed, ex5_batch_b, PRACTICE_COUNT(ex5_batch_b), 0);
    double gc = practice_pick(r, s->seed, ex5_gamma_c, PRACTICE_COUNT(ex5_gamma_c), 0);
    practice_add_input(s, "ch08_ex5_gamma_a", ga, "%.0f", PRACTICE_RANGE_OF(ex5_gamma_a));
    practice_add_input(s, "ch08_ex5_batch_a", ba, "%.0f", PRACTICE_RANGE_OF(ex5_batch_a));
    practice_add_input(s, "ch08_ex5_gamma_b", gb, "%.0f", PRACTICE_RANGE_OF(ex5_gamma_b));
    practice_add_input(s, "ch08_ex5_batch_b", bb, "%.0f", PRACTICE_RANGE_OF(ex5_batch_b));
    practice_add_input(s, "ch08_ex5_gamma_c", gc, "%.0f", PRACTICE_RANGE_OF(ex5_gamma_c));
    replay_part(s, "8.5(a1)", "tokens the first batch replays at the first gamma", (int)ba, (int)ga);
    replay_part(s, "8.5(a2)", "tokens the first batch replays at the second gamma", (int)ba, (int)gb);
    replay_part(s, "8.5(a3)", "tokens the second batch replays at the second gamma", (int)bb, (int)gb);
    largest_part(s, "8.5(c1)", "the largest batch that replays a graph at the first gamma", (int)ga);
    largest_part(s, "8.5(c2)", "the largest batch that replays a graph at the last gamma", (int)gc);
}

int practice_build_ch08(uint64_t seed, practice_set *out)
{
    /* one stream per exercise, so a change to one leaves the others' draws */
    rng_state r4 = rng_make(seed), r5 = r4;
    rng_jump(&r5);
    exercise_4(out, &r4);
    exercise_5(out, &r5);
    return 0;
}
