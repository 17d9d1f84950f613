/* A libFuzzer input as the text parsers take it: the bytes copied with a
 * NUL after them (a NUL among them ends the text early, as it would for
 * any caller holding a C string). */
#ifndef NAPKIN_FUZZ_TEXT_H
#define NAPKIN_FUZZ_TEXT_H

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

/* The copy, to free; NULL when out of memory. */
static inline char *fuzz_text(const uint8_t *data, size_t size)
{
    char *text = malloc(size + 1);
    if (!text)
        return NULL;
    memcpy(text, data, size);
    text[size] = '\0';
    return text;
}

#endif
