/* Escaped writers (text_formats.h): one walk makes the text valid, one
 * small put per format escapes what the format reserves. */
#include "text_formats.h"

#include "utf8.h"

#include <stdlib.h>
#include <string.h>

static const char replacement[] = "\xEF\xBF\xBD"; /* U+FFFD */

/* A character no file format should carry: C0 but tab and line feed, DEL,
 * C1 (U+0080..U+009F). */
static int is_control(unsigned cp)
{
    return (cp < 0x20 && cp != '\t' && cp != '\n') || (cp >= 0x7f && cp <= 0x9f);
}

/* Walks s as UTF-8, handing put each character (its bytes, its length),
 * with U+FFFD in place of each invalid byte and, unless keep_controls, of
 * each control character. */
typedef void (*put_fn)(void *to, const char *c, int len);
static void walk(void *to, const char *s, int keep_controls, put_fn put)
{
    const unsigned char *p = (const unsigned char *)(s ? s : "");
    while (*p) {
        unsigned cp;
        int n = utf8_sequence(p, &cp);
        if (n == 0 || (!keep_controls && is_control(cp)))
            put(to, replacement, 3);
        else
            put(to, (const char *)p, n);
        p += n ? n : 1;
    }
}

static void put_xml(void *to, const char *c, int len)
{
    FILE *f = to;
    switch (len == 1 ? *c : 0) {
    case '&': fputs("&amp;", f); break;
    case '<': fputs("&lt;", f); break;
    case '>': fputs("&gt;", f); break;
    case '"': fputs("&quot;", f); break;
    case '\'': fputs("&apos;", f); break;
    case '\n': fputs("&#10;", f); break;
    case '\t': fputs("&#9;", f); break;
    default: fwrite(c, 1, (size_t)len, f);
    }
}

void text_xml(FILE *f, const char *s)
{
    walk(f, s, 0, put_xml);
}

static void put_plain(void *to, const char *c, int len)
{
    fwrite(c, 1, (size_t)len, (FILE *)to);
}

static void put_csv_quoted(void *to, const char *c, int len)
{
    if (len == 1 && *c == '"')
        fputc('"', (FILE *)to);
    fwrite(c, 1, (size_t)len, (FILE *)to);
}

void text_csv(FILE *f, const char *s)
{
    s = s ? s : "";
    int formula = s[0] && strchr("=+-@\t\r", s[0]);
    if (!formula && !strpbrk(s, ",\"\n\r")) {
        walk(f, s, 0, put_plain);
        return;
    }
    fputc('"', f);
    if (formula)
        fputc('\'', f);
    walk(f, s, 0, put_csv_quoted);
    fputc('"', f);
}

static void put_md(void *to, const char *c, int len)
{
    FILE *f = to;
    if (len == 1 && (*c == '\n' || *c == '\t'))
        fputc(' ', f);
    else if (len == 1 && strchr("!\"#$%&'()*+,-./:;<=>?@[\\]^_`{|}~", *c))
        fprintf(f, "\\%c", *c);
    else
        fwrite(c, 1, (size_t)len, f);
}

void text_md(FILE *f, const char *s)
{
    walk(f, s, 0, put_md);
}

/* Appends to a buffer sized for the worst case (each byte U+FFFD). */
static void put_mem(void *to, const char *c, int len)
{
    char **o = to;
    memcpy(*o, c, (size_t)len);
    *o += len;
}

char *text_utf8_valid(const char *s)
{
    if (!s)
        return NULL;
    char *out = malloc(3 * strlen(s) + 1), *o = out;
    if (!out)
        return NULL;
    walk(&o, s, 1, put_mem);
    *o = '\0';
    return out;
}
