/* libFuzzer target: the book panels' JSON-to-argv parser (code/web/) on any
 * text.  Accepted or refused, it neither crashes nor leaks; an accepted
 * object yields the command name, then flags that start with "--" (each
 * followed by at most one value), a NULL after the last, and a --format. */
#include "web/json_flags.c"
#include "fuzz_text.h"

#include <stdint.h>
#include <stdlib.h>
#include <string.h>

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    char *text = fuzz_text(data, size);
    if (!text)
        return 0;
    json_argv a;
    char err[256];
    if (json_flags_to_argv("decode", text, &a, err, sizeof err) == 0) {
        if (a.argc < 3 || strcmp(a.argv[0], "decode") != 0 || a.argv[a.argc] != NULL)
            abort();
        int formats = 0;
        for (int i = 1; i < a.argc; i++) {
            if (strncmp(a.argv[i], "--", 2) != 0)
                abort(); /* a flag name */
            formats += strcmp(a.argv[i], "--format") == 0;
            /* a value follows unless the next word is a flag (true gave a bare one) */
            if (i + 1 < a.argc && strncmp(a.argv[i + 1], "--", 2) != 0)
                i++;
        }
        if (formats < 1)
            abort();
        json_argv_free(&a);
    } else if (strncmp(err, "flags: ", 7) != 0) {
        abort();
    }
    free(text);
    return 0;
}
