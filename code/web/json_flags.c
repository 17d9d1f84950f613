#include "json_flags.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *s, *p;
    char **argv;
    int argc, cap;
    char *err;
    size_t errlen;
} parser;

static int fail(parser *ps, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static int fail(parser *ps, const char *fmt, ...)
{
    char what[160];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    snprintf(ps->err, ps->errlen, "flags: %s at byte %d of the JSON", what, (int)(ps->p - ps->s));
    return -1;
}

static void skip_ws(parser *ps)
{
    while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
        ps->p++;
}

static int push(parser *ps, char *arg)
{
    if (!arg)
        return fail(ps, "out of memory");
    if (ps->argc + 2 > ps->cap) {
        int cap = ps->cap ? 2 * ps->cap : 16;
        char **v = realloc(ps->argv, (size_t)cap * sizeof *v);
        if (!v) {
            free(arg);
            return fail(ps, "out of memory");
        }
        ps->argv = v;
        ps->cap = cap;
    }
    ps->argv[ps->argc++] = arg;
    ps->argv[ps->argc] = NULL;
    return 0;
}

static char *copy(const char *s, size_t n)
{
    char *c = malloc(n + 1);
    if (c) {
        memcpy(c, s, n);
        c[n] = '\0';
    }
    return c;
}

static int hex4(const char *p, unsigned *out)
{
    unsigned v = 0;
    for (int i = 0; i < 4; i++) {
        char c = p[i];
        unsigned d = c >= '0' && c <= '9' ? (unsigned)(c - '0')
                     : c >= 'a' && c <= 'f' ? (unsigned)(c - 'a' + 10)
                     : c >= 'A' && c <= 'F' ? (unsigned)(c - 'A' + 10)
                                            : 16u;
        if (d == 16)
            return -1;
        v = v * 16 + d;
    }
    *out = v;
    return 0;
}

/* A JSON string at ps->p (the opening quote), decoded to UTF-8. */
static int parse_string(parser *ps, char **out)
{
    size_t cap = strlen(ps->p) + 1, n = 0; /* decoding never grows the text */
    char *buf = malloc(cap);
    if (!buf)
        return fail(ps, "out of memory");
    ps->p++;
    for (;;) {
        unsigned char c = (unsigned char)*ps->p;
        if (c == '"') {
            ps->p++;
            break;
        }
        if (c == '\0' || c < 0x20) {
            free(buf);
            return fail(ps, c ? "a control character in a string" : "an unterminated string");
        }
        if (c != '\\') {
            buf[n++] = (char)c;
            ps->p++;
            continue;
        }
        char e = ps->p[1];
        const char *simple = strchr("\"\\/bfnrt", e);
        if (e && simple) {
            buf[n++] = "\"\\/\b\f\n\r\t"[simple - "\"\\/bfnrt"];
            ps->p += 2;
            continue;
        }
        unsigned u;
        if (e != 'u' || hex4(ps->p + 2, &u) != 0 || u == 0 || (u >= 0xD800 && u <= 0xDFFF)) {
            free(buf);
            return fail(ps, "an escape this parser does not take (\\u0000 and surrogate pairs are refused)");
        }
        ps->p += 6;
        if (u < 0x80) {
            buf[n++] = (char)u;
        } else if (u < 0x800) {
            buf[n++] = (char)(0xC0 | (u >> 6));
            buf[n++] = (char)(0x80 | (u & 0x3F));
        } else {
            buf[n++] = (char)(0xE0 | (u >> 12));
            buf[n++] = (char)(0x80 | ((u >> 6) & 0x3F));
            buf[n++] = (char)(0x80 | (u & 0x3F));
        }
    }
    buf[n] = '\0';
    *out = buf;
    return 0;
}

/* A JSON number: -?(0|[1-9][0-9]*)(\.[0-9]+)?([eE][+-]?[0-9]+)?; its text. */
static int parse_number(parser *ps, char **out)
{
    const char *q = ps->p;
    if (*q == '-')
        q++;
    if (*q == '0')
        q++;
    else if (*q >= '1' && *q <= '9')
        while (*q >= '0' && *q <= '9')
            q++;
    else
        return fail(ps, "a malformed number");
    if (*q == '.') {
        q++;
        if (!(*q >= '0' && *q <= '9'))
            return fail(ps, "a malformed number");
        while (*q >= '0' && *q <= '9')
            q++;
    }
    if (*q == 'e' || *q == 'E') {
        q++;
        if (*q == '+' || *q == '-')
            q++;
        if (!(*q >= '0' && *q <= '9'))
            return fail(ps, "a malformed number");
        while (*q >= '0' && *q <= '9')
            q++;
    }
    *out = copy(ps->p, (size_t)(q - ps->p));
    ps->p = q;
    return *out ? 0 : fail(ps, "out of memory");
}

static int valid_key(const char *k)
{
    if (!*k || *k == '-')
        return 0;
    for (const char *c = k; *c; c++)
        if (!((*c >= 'a' && *c <= 'z') || (*c >= '0' && *c <= '9') || *c == '-'))
            return 0;
    return 1;
}

static int parse_member(parser *ps, int *has_format)
{
    if (*ps->p != '"')
        return fail(ps, "expected a flag name in quotes");
    char *key;
    if (parse_string(ps, &key) != 0)
        return -1;
    if (!valid_key(key)) {
        free(key);
        return fail(ps, "a flag name must be lower-case letters, digits and '-', without the leading --");
    }
    if (strcmp(key, "format") == 0)
        *has_format = 1;
    skip_ws(ps);
    if (*ps->p != ':') {
        free(key);
        return fail(ps, "expected ':'");
    }
    ps->p++;
    skip_ws(ps);
    char *value = NULL;
    int bare = 0, omit = 0;
    if (*ps->p == '"') {
        if (parse_string(ps, &value) != 0) {
            free(key);
            return -1;
        }
    } else if (strncmp(ps->p, "true", 4) == 0) {
        ps->p += 4;
        bare = 1;
    } else if (strncmp(ps->p, "false", 5) == 0 || strncmp(ps->p, "null", 4) == 0) {
        ps->p += *ps->p == 'f' ? 5 : 4;
        omit = 1;
    } else if (*ps->p == '-' || (*ps->p >= '0' && *ps->p <= '9')) {
        if (parse_number(ps, &value) != 0) {
            free(key);
            return -1;
        }
    } else {
        free(key);
        return fail(ps, "expected a string, number, true, false or null as the value");
    }
    if (omit) {
        free(key);
        return 0;
    }
    size_t kn = strlen(key);
    char *flag = malloc(kn + 3);
    if (flag) {
        memcpy(flag, "--", 2);
        memcpy(flag + 2, key, kn + 1);
    }
    free(key);
    if (push(ps, flag) != 0) {
        free(value);
        return -1;
    }
    return bare ? 0 : push(ps, value);
}

void json_argv_free(json_argv *a)
{
    for (int i = 0; a->argv && i < a->argc; i++)
        free(a->argv[i]);
    free(a->argv);
    a->argv = NULL;
    a->argc = 0;
}

int json_flags_to_argv(const char *command, const char *json, json_argv *out, char *err, size_t errlen)
{
    parser ps = {json ? json : "", json ? json : "", NULL, 0, 0, err, errlen};
    int has_format = 0, rc = -1;
    *out = (json_argv){0, NULL};
    if (push(&ps, copy(command, strlen(command))) != 0)
        goto done;
    skip_ws(&ps);
    if (*ps.p != '{') {
        fail(&ps, "expected a JSON object of flags");
        goto done;
    }
    ps.p++;
    skip_ws(&ps);
    if (*ps.p == '}') {
        ps.p++;
    } else {
        for (;;) {
            skip_ws(&ps);
            if (parse_member(&ps, &has_format) != 0)
                goto done;
            skip_ws(&ps);
            if (*ps.p == ',') {
                ps.p++;
                continue;
            }
            if (*ps.p == '}') {
                ps.p++;
                break;
            }
            fail(&ps, "expected ',' or '}'");
            goto done;
        }
    }
    skip_ws(&ps);
    if (*ps.p) {
        fail(&ps, "text after the object");
        goto done;
    }
    if (!has_format && (push(&ps, copy("--format", 8)) != 0 || push(&ps, copy("json", 4)) != 0))
        goto done;
    rc = 0;
done:
    out->argc = ps.argc;
    out->argv = ps.argv;
    if (rc != 0)
        json_argv_free(out);
    return rc;
}
