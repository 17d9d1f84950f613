/* Safe strings per format; see grade_text.h. */
#include "grade_text.h"

#include <stdlib.h>
#include <string.h>

int utf8_sequence(const unsigned char *s)
{
    if (s[0] < 0x80)
        return 1;
    int n;
    unsigned cp;
    if ((s[0] & 0xE0) == 0xC0)
        n = 2, cp = s[0] & 0x1F;
    else if ((s[0] & 0xF0) == 0xE0)
        n = 3, cp = s[0] & 0x0F;
    else if ((s[0] & 0xF8) == 0xF0)
        n = 4, cp = s[0] & 0x07;
    else
        return 0;
    for (int i = 1; i < n; i++) {
        if ((s[i] & 0xC0) != 0x80)
            return 0; /* also stops at the terminating NUL */
        cp = cp << 6 | (s[i] & 0x3F);
    }
    static const unsigned least[] = {0, 0, 0x80, 0x800, 0x10000};
    if (cp < least[n] || cp > 0x10FFFF || (cp >= 0xD800 && cp <= 0xDFFF))
        return 0;
    return n;
}

/* A control character at s (n bytes long): C0 but tab and newline, DEL, C1. */
static int is_control(const unsigned char *s, int n)
{
    if (n == 1)
        return (s[0] < 0x20 && s[0] != '\t' && s[0] != '\n') || s[0] == 0x7F;
    return n == 2 && s[0] == 0xC2 && s[1] < 0xA0; /* U+0080 .. U+009F */
}

char *text_valid(const char *s, int no_controls)
{
    if (!s)
        return NULL;
    size_t len = strlen(s);
    char *out = malloc(3 * len + 1), *o = out;
    if (!out)
        return NULL;
    for (const unsigned char *p = (const unsigned char *)s; *p;) {
        int n = utf8_sequence(p);
        if (n == 0 || (no_controls && is_control(p, n))) {
            memcpy(o, "\xEF\xBF\xBD", 3), o += 3;
            p += n ? n : 1;
        } else {
            memcpy(o, p, (size_t)n), o += n;
            p += n;
        }
    }
    *o = '\0';
    return out;
}

void xml_text(FILE *f, const char *s)
{
    char *v = text_valid(s, 1);
    for (const char *p = v; p && *p; p++)
        switch (*p) {
        case '&': fputs("&amp;", f); break;
        case '<': fputs("&lt;", f); break;
        case '>': fputs("&gt;", f); break;
        case '"': fputs("&quot;", f); break;
        case '\'': fputs("&apos;", f); break;
        case '\n': fputs("&#10;", f); break;
        case '\t': fputs("&#9;", f); break;
        default: fputc(*p, f);
        }
    free(v);
}

void csv_field(FILE *f, const char *s)
{
    char *v = text_valid(s ? s : "", 1);
    fputc('"', f);
    if (v && strchr("=+-@\t\r", v[0]) && v[0])
        fputc('\'', f);
    for (const char *p = v; p && *p; p++) {
        if (*p == '"')
            fputc('"', f);
        fputc(*p, f);
    }
    fputc('"', f);
    free(v);
}

void term_text(FILE *f, const char *s)
{
    for (const unsigned char *p = (const unsigned char *)s; p && *p;) {
        int n = utf8_sequence(p);
        if (n == 0 || is_control(p, n) || *p == '\n') {
            for (int i = 0; i < (n ? n : 1); i++)
                fprintf(f, "\\x%02X", p[i]);
            p += n ? n : 1;
        } else if (*p == '\\') {
            fputs("\\\\", f);
            p++;
        } else {
            fwrite(p, 1, (size_t)n, f);
            p += n;
        }
    }
}
