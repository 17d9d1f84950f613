#include "course_seed.h"

#include "practice_set.h"

#include <stdio.h>

/* Every seed a course hands out is one the page, the CLI and the grade
 * program take. */
_Static_assert(COURSE_SEED_MAX <= PRACTICE_MAX_SEED, "course seeds must lie inside the practice seed range");

/* FNV-1a, 64-bit (offset basis and prime as published by Fowler, Noll and
 * Vo): stable across machines and compilers, which is all a seed needs. */
static uint64_t fnv1a(uint64_t h, const char *s)
{
    for (; *s; s++) {
        h ^= (unsigned char)*s;
        h *= 0x100000001b3ULL;
    }
    return h;
}

uint64_t course_seed(const char *salt, const char *id, int chapter)
{
    if (!id || !*id || chapter < 1 || chapter > 99)
        return 0;
    char ch[3];
    snprintf(ch, sizeof ch, "%02d", chapter);
    uint64_t h = 0xcbf29ce484222325ULL;
    h = fnv1a(h, salt ? salt : "");
    h = fnv1a(h, "\x1f");
    h = fnv1a(h, id);
    h = fnv1a(h, "\x1f");
    h = fnv1a(h, ch);
    return 1 + h % COURSE_SEED_MAX;
}
