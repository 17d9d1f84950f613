#include "utf8.h"

int utf8_sequence(const unsigned char *p, unsigned *cp)
{
    unsigned c = p[0];
    int len;
    unsigned min;
    if (c < 0x80) {
        len = 1, min = 0;
    } else if (c >= 0xc2 && c <= 0xdf) {
        len = 2, min = 0x80, c &= 0x1f;
    } else if (c >= 0xe0 && c <= 0xef) {
        len = 3, min = 0x800, c &= 0x0f;
    } else if (c >= 0xf0 && c <= 0xf4) {
        len = 4, min = 0x10000, c &= 0x07;
    } else {
        return 0;
    }
    for (int i = 1; i < len; i++) {
        if ((p[i] & 0xc0) != 0x80)
            return 0;
        c = (c << 6) | (p[i] & 0x3f);
    }
    if (c < min || c > 0x10ffff || (c >= 0xd800 && c <= 0xdfff))
        return 0;
    if (cp)
        *cp = c;
    return len;
}
