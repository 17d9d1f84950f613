/* A flat JSON object of command-line flags, turned into an argv.
 *
 *     {"model": "llama3-70b", "tp": 4, "no-comm": true, "draft": null}
 *  -> argv {"decode", "--model", "llama3-70b", "--tp", "4", "--no-comm",
 *           "--format", "json", NULL}
 *
 * Keys are flag names without the dashes ([a-z0-9-], not starting with '-');
 * a string value is passed as it is, a number as its JSON text, true as the
 * bare flag; false and null leave the flag out.  "--format json" is added
 * unless the object has "format".  Nested objects and arrays are refused. */
#ifndef NAPKIN_WEB_JSON_FLAGS_H
#define NAPKIN_WEB_JSON_FLAGS_H

#include <stddef.h>

typedef struct {
    int argc;
    char **argv; /* argc entries and a NULL; every string owned */
} json_argv;

/* Returns 0 and fills *out, or -1 with a message in err (nothing to free). */
int json_flags_to_argv(const char *command, const char *json, json_argv *out, char *err, size_t errlen);
void json_argv_free(json_argv *a);

#endif
