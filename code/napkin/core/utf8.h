/* The one UTF-8 validator: every writer that must not pass on malformed
 * text (the terminal escaping, the file formats) asks it where a
 * character ends. */
#ifndef NAPKIN_UTF8_H
#define NAPKIN_UTF8_H

/* The length of the well-formed UTF-8 sequence at p (1 to 4), its code
 * point in *cp when cp is not NULL; 0 when the bytes there are not one
 * (RFC 3629: a stray continuation byte, an overlong form, a surrogate, a
 * truncated sequence, past U+10FFFF).  A NUL ends the string: it is no
 * continuation byte, so a sequence cut short by the end is refused. */
int utf8_sequence(const unsigned char *p, unsigned *cp);

#endif
