#include "notebook.h"

#include <errno.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

int nb_valid_name(const char *name)
{
    if (!name || !*name)
        return 0;
    for (const char *p = name; *p; p++)
        if (!((*p >= 'a' && *p <= 'z') || (*p >= '0' && *p <= '9') || *p == '_'))
            return 0;
    return 1;
}

void nb_value(const char *name, const char *fmt, ...)
{
    if (!nb_valid_name(name)) {
        fprintf(stderr, "nb_value: bad value name '%s' (use [a-z0-9_]+)\n", name ? name : "(null)");
        exit(1);
    }
    const char *path = getenv("NB_VALUES");
    if (!path || !*path)
        return;
    FILE *f = fopen(path, "a");
    if (!f) {
        fprintf(stderr, "nb_value: cannot open %s: %s\n", path, strerror(errno));
        exit(1);
    }
    va_list ap;
    va_start(ap, fmt);
    fprintf(f, "%s\t", name);
    vfprintf(f, fmt, ap);
    fputc('\n', f);
    va_end(ap);
    if (fclose(f) != 0) {
        fprintf(stderr, "nb_value: cannot write %s\n", path);
        exit(1);
    }
}

FILE *nb_data_open(const char *filename)
{
    const char *dir = getenv("NB_DATA");
    if (!dir || !*dir)
        dir = "build/data";
    mkdir(dir, 0777); /* exists already in the usual case */
    char path[4096];
    if (snprintf(path, sizeof path, "%s/%s", dir, filename) >= (int)sizeof path) {
        fprintf(stderr, "nb_data_open: path too long\n");
        exit(1);
    }
    FILE *f = fopen(path, "w");
    if (!f) {
        fprintf(stderr, "nb_data_open: cannot open %s: %s\n", path, strerror(errno));
        exit(1);
    }
    return f;
}
