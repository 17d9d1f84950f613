/* Text that came from a reader or a file, made fit to print: nothing in it
 * can drive a terminal, break a table row or reorder what is shown.
 *
 * Escaped: the C0 controls and DEL (0x00-0x1f, 0x7f) as \xHH; the C1
 * controls (U+0080-U+009F) and the bidirectional controls (U+061C, U+200E,
 * U+200F, U+202A-U+202E, U+2066-U+2069) as \uHHHH; a byte that is not part
 * of well-formed UTF-8 as \xHH (a terminal in an 8-bit mode reads a lone
 * 0x9b as CSI).  Everything else, other UTF-8 included, passes unchanged.
 * A backslash is kept as it is, so escaping escaped text changes nothing:
 * a string that passes through two printers is still escaped once. */
#ifndef NAPKIN_TEXT_ESCAPE_H
#define NAPKIN_TEXT_ESCAPE_H

#include <stddef.h>
#include <stdio.h>

/* in escaped into out (n bytes, NUL included); an escape that does not fit
 * whole is left out with everything after it.  Returns the length written. */
size_t text_escape(const char *in, char *out, size_t n);

/* The escaped length of in (what text_escape needs, less the NUL). */
size_t text_escaped_length(const char *in);

/* in escaped, in memory to free; NULL when out of memory. */
char *text_escape_dup(const char *in);

/* in escaped, written to f. */
void text_escape_put(const char *in, FILE *f);

#endif
