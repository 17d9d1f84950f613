/* The include flags of a program built against the library, as the Makefile
 * gives them: -I for code/ and for each floor of code/napkin/ (a header is
 * named alone, whichever floor holds it), for suites that compile C
 * themselves (the notebook filter's cells). */
#ifndef TESTS_INCLUDE_FLAGS_H
#define TESTS_INCLUDE_FLAGS_H

#include <dirent.h>
#include <stdio.h>
#include <string.h>

#include "test_text.h"

/* "-I<src>/code -I<src>/code/napkin/calib ..." (kept until text_free_all). */
static inline char *napkin_include_flags(const char *src)
{
    char *flags = fmt("-I%s/code", src);
    char *top = fmt("%s/code/napkin", src);
    DIR *d = opendir(top);
    if (!d)
        return flags;
    struct dirent *e;
    while ((e = readdir(d)) != NULL)
        if (e->d_name[0] != '.' && !strchr(e->d_name, '.')) /* the floors, not README.md */
            flags = fmt("%s -I%s/%s", flags, top, e->d_name);
    closedir(d);
    return flags;
}

#endif
