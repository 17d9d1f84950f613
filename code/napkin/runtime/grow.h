/* Room in a realloc'd array, for the job queue's lists and its journal's
 * lists of damaged runs: one doubling rule with its overflow checks. */
#ifndef NAPKIN_GROW_H
#define NAPKIN_GROW_H

#include <stdint.h>
#include <stdlib.h>

/* Room for need elements of elem bytes at *p (capacity *cap), doubling
 * from 64; -1 (nothing changed) when out of memory or when the size would
 * not fit in a size_t. */
static inline int grow(void **p, size_t *cap, size_t need, size_t elem)
{
    if (need <= *cap)
        return 0;
    size_t c = *cap ? *cap : 64;
    while (c < need) {
        if (c > SIZE_MAX / 2)
            return -1;
        c *= 2;
    }
    if (c > SIZE_MAX / elem)
        return -1;
    void *n = realloc(*p, c * elem);
    if (!n)
        return -1;
    *p = n;
    *cap = c;
    return 0;
}

#endif
