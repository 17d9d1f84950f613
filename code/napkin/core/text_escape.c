#include "text_escape.h"

#include "utf8.h"

#include <stdlib.h>
#include <string.h>

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
