/* Escaped writers (text_out.h). */
#include "text_out.h"

#include <string.h>

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

int text_utf8_len(const unsigned char *s)
{
    unsigned c = s[0];
    if (c < 0x80)
        return 1;
    int n;
    unsigned cp;
    if (c >= 0xC2 && c <= 0xDF)
        n = 2, cp = c & 0x1F;
    else if (c >= 0xE0 && c <= 0xEF)
        n = 3, cp = c & 0x0F;
    else if (c >= 0xF0 && c <= 0xF4)
        n = 4, cp = c & 0x07;
    else
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0;
        cp = cp << 6 | (s[i] & 0x3F);
    }
    if ((n == 3 && cp < 0x800) || (n == 4 && (cp < 0x10000 || cp > 0x10FFFF)) || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* Walks s as UTF-8: calls put for each character that passes (its bytes,
 * its length), with U+FFFD in place of invalid bytes and of control
 * characters other than those keep lets through. */
typedef void (*put_fn)(FILE *f, const char *c, int len);
static void walk(FILE *f, const char *s, const char *keep, put_fn put)
{
    const unsigned char *p = (const unsigned char *)s;
    while (*p) {
        int n = text_utf8_len(p);
        if (n == 0) {
            put(f, replacement, 3);
            p++;
            continue;
        }
        if ((n == 1 && (*p < 0x20 || *p == 0x7F) && !strchr(keep, *p)) ||
            (n == 2 && p[0] == 0xC2 && p[1] < 0xA0)) /* C1 controls, U+0080..U+009F */
            put(f, replacement, 3);
        else
            put(f, (const char *)p, n);
        p += n;
    }
}

static void put_xml(FILE *f, const char *c, int len)
{
    switch (len == 1 ? *c : 0) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    default: fwrite(c, 1, (size_t)len, f);
    }
}

void text_xml(FILE *f, const char *s)
{
    walk(f, s ? s : "", "\t\n", put_xml);
}

static void put_plain(FILE *f, const char *c, int len)
{
    fwrite(c, 1, (size_t)len, f);
}
static void put_csv_quoted(FILE *f, const char *c, int len)
{
    if (len == 1 && *c == '"')
        fputc('"', f);
    fwrite(c, 1, (size_t)len, f);
}

void text_csv(FILE *f, const char *s)
{
    s = s ? s : "";
    int formula = s[0] == '=' || s[0] == '+' || s[0] == '-' || s[0] == '@' || s[0] == '\t' || s[0] == '\r';
    if (!formula && !strpbrk(s, ",\"\n\r")) {
        walk(f, s, "", put_plain);
        return;
    }
    fputc('"', f);
    if (formula)
        fputc('\'', f);
    walk(f, s, "\n", put_csv_quoted);
    fputc('"', f);
}

static void put_md(FILE *f, const char *c, int len)
{
    if (len == 1 && (*c == '\n' || *c == '\t'))
        fputc(' ', f);
    else if (len == 1 && strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", *c))
        fprintf(f, "\\%c", *c);
    else
        fwrite(c, 1, (size_t)len, f);
}

void text_md(FILE *f, const char *s)
{
    walk(f, s ? s : "", "\t\n", put_md);
}
