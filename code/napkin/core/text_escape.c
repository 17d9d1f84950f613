#include "text_escape.h"

#include <stdlib.h>
#include <string.h>

/* The length of the well-formed UTF-8 sequence at p (1 to 4) with its code
 * point in *cp, or 0 when the bytes there are not one (RFC 3629: no
 * overlong forms, no surrogates, nothing past U+10FFFF). */
static int utf8_sequence(const unsigned char *p, unsigned *cp)
{
    unsigned c = p[0];
    int len;
    unsigned min;
    if (c < 0x80) {
        *cp = c;
        return 1;
    } else if (c >= 0xc2 && c <= 0xdf) {
        len = 2, min = 0x80, c &= 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, min = 0x800, c &= 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, min = 0x10000, c &= 0x07;
    } else {
        return 0;
    }
    for (int i = 1; i < len; i++) { /* a NUL ends the string: it is no continuation byte */
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    *cp = c;
    return len;
}

/* A code point that moves the cursor, starts a terminal command, or changes
 * the order text is shown in. */
static int is_control(unsigned cp)
{
    return cp < 0x20 || cp == 0x7f || (cp >= 0x80 && cp <= 0x9f) || cp == 0x061c || cp == 0x200e || cp == 0x200f ||
           (cp >= 0x202a && cp <= 0x202e) || (cp >= 0x2066 && cp <= 0x2069);
}

/* The text that stands for the character at *p (escaped or itself) into
 * buf (at least 7 bytes); returns its length and sets *used to the bytes of
 * in it stands for. */
static size_t one(const unsigned char *p, char *buf, size_t *used)
{
    unsigned cp;
    int len = utf8_sequence(p, &cp);
    if (len == 0) { /* not UTF-8: the byte alone */
        *used = 1;
        return (size_t)snprintf(buf, 7, "\\x%02x", p[0]);
    }
    *used = (size_t)len;
    if (!is_control(cp)) {
        memcpy(buf, p, (size_t)len);
        return (size_t)len;
    }
    if (cp < 0x80)
        return (size_t)snprintf(buf, 7, "\\x%02x", cp);
    return (size_t)snprintf(buf, 7, "\\u%04x", cp);
}

size_t text_escape(const char *in, char *out, size_t n)
{
    size_t k = 0, used;
    char buf[8];
    if (n == 0)
        return 0;
    for (const unsigned char *p = (const unsigned char *)in; *p; p += used) {
        size_t w = one(p, buf, &used);
        if (k + w >= n)
            break;
        memcpy(out + k, buf, w);
        k += w;
    }
    out[k] = '\0';
    return k;
}

size_t text_escaped_length(const char *in)
{
    size_t k = 0, used;
    char buf[8];
    for (const unsigned char *p = (const unsigned char *)in; *p; p += used)
        k += one(p, buf, &used);
    return k;
}

char *text_escape_dup(const char *in)
{
    size_t n = text_escaped_length(in) + 1;
    char *out = malloc(n);
    if (out)
        text_escape(in, out, n);
    return out;
}

void text_escape_put(const char *in, FILE *f)
{
    size_t used;
    char buf[8];
    for (const unsigned char *p = (const unsigned char *)in; *p; p += used)
        fwrite(buf, 1, one(p, buf, &used), f);
}
