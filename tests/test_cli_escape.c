/* Nothing a reader types or a file holds reaches the terminal raw: every
 * C0 control and DEL, every C1 control (U+0080-U+009F) and every
 * bidirectional control (U+061C, U+200E, U+200F, U+202A-U+202E,
 * U+2066-U+2069) in a flag's value, in a config file's path (one that
 * cannot be read and one that can) and in a config's _name_or_path comes
 * out escaped, in the table, tsv and json formats and in error messages.
 * The commands run through one `napkin --batch` process, whose replies
 * carry each command's stdout and stderr; one runs plainly as well. */
#include <criterion/criterion.h>

#include <jansson.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "scratch_dir.h"
#include "shell_run.h"
#include "text_escape.h"

/* The controls, as code points. */
static int controls(unsigned *cp)
{
    int n = 0;
    for (unsigned c = 0x01; c < 0x20; c++)
        cp[n++] = c;
    cp[n++] = 0x7f;
    for (unsigned c = 0x80; c <= 0x9f; c++)
        cp[n++] = c;
    static const unsigned bidi[] = {0x061c, 0x200e, 0x200f, 0x202a, 0x202b, 0x202c,
                                    0x202d, 0x202e, 0x2066, 0x2067, 0x2068, 0x2069};
    for (size_t i = 0; i < sizeof bidi / sizeof bidi[0]; i++)
        cp[n++] = bidi[i];
    return n;
}

/* UTF-8 of cp (RFC 3629), NUL-terminated. */
static void utf8(unsigned cp, char *out)
{
    unsigned char *o = (unsigned char *)out;
    if (cp < 0x80) {
        *o++ = (unsigned char)cp;
    } else if (cp < 0x800) {
        *o++ = (unsigned char)(0xc0 | cp >> 6);
        *o++ = (unsigned char)(0x80 | (cp & 0x3f));
    } else {
        *o++ = (unsigned char)(0xe0 | cp >> 12);
        *o++ = (unsigned char)(0x80 | ((cp >> 6) & 0x3f));
        *o++ = (unsigned char)(0x80 | (cp & 0x3f));
    }
    *o = '\0';
}

/* What the escaping promises for cp: \xHH below U+0080, \uHHHH above. */
static void escaped(unsigned cp, char *out, size_t n)
{
    snprintf(out, n, cp < 0x80 ? "\\x%02x" : "\\u%04x", cp);
}

Test(cli_escape, every_control_is_escaped_once_and_other_text_kept)
{
    unsigned cp[80];
    int n = controls(cp);
    cr_assert_eq(n, 31 + 1 + 32 + 12);
    for (int i = 0; i < n; i++) {
        char in[16], want[32], out[64], raw[8], esc[16];
        utf8(cp[i], raw);
        escaped(cp[i], esc, sizeof esc);
        snprintf(in, sizeof in, "a%sb", raw);
        snprintf(want, sizeof want, "a%sb", esc);
        text_escape(in, out, sizeof out);
        cr_expect_str_eq(out, want, "U+%04X", cp[i]);
        char twice[64];
        text_escape(out, twice, sizeof twice); /* escaped text is left as it is */
        cr_expect_str_eq(twice, want, "U+%04X twice", cp[i]);
    }
    char out[64];
    text_escape("caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82", out, sizeof out); /* é, an arrow, an emoji: kept */
    cr_expect_str_eq(out, "caf\xc3\xa9 \xe2\x86\x92 \xf0\x9f\x99\x82");
    /* bytes that are not UTF-8: a lone CSI byte, an overlong ESC, a cut sequence, a surrogate */
    text_escape("\x9b" "1m|\xc0\x9b|\xe2\x80|\xed\xa0\x80", out, sizeof out);
    cr_expect_str_eq(out, "\\x9b1m|\\xc0\\x9b|\\xe2\\x80|\\xed\\xa0\\x80");
    /* a buffer too short for an escape leaves the escape out whole */
    text_escape("ab\x1b", out, 6);
    cr_expect_str_eq(out, "ab");
}

/* One --batch line: the words as a JSON array. */
static void batch_line(FILE *f, int nwords, const char **words)
{
    json_t *a = json_array();
    for (int i = 0; i < nwords; i++)
        json_array_append_new(a, json_string(words[i]));
    char *text = json_dumps(a, JSON_COMPACT);
    cr_assert_not_null(text);
    fprintf(f, "%s\n", text);
    free(text);
    json_decref(a);
}

static void write_config(const char *path, const char *name_json_escaped)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    /* Llama 3 8B's numbers (its config.json) */
    fprintf(f,
            "{\"model_type\": \"llama\", \"_name_or_path\": \"%s\", \"num_hidden_layers\": 32, \"hidden_size\": 4096, "
            "\"num_attention_heads\": 32, \"num_key_value_heads\": 8, \"intermediate_size\": 14336, "
            "\"vocab_size\": 128256}",
            name_json_escaped);
    fclose(f);
}

/* A reply's stdout and stderr together. */
static char *reply_text(const char *line)
{
    json_error_t jerr;
    json_t *r = json_loads(line, 0, &jerr);
    cr_assert_not_null(r, "not JSON: %s", line);
    const char *out = json_string_value(json_object_get(r, "stdout"));
    const char *err = json_string_value(json_object_get(r, "stderr"));
    cr_assert(out && err, "%s", line);
    size_t n = strlen(out) + strlen(err) + 2;
    char *both = malloc(n);
    snprintf(both, n, "%s\n%s", out, err);
    json_decref(r);
    return both;
}

#define KINDS 6
static const char *const KIND[KINDS] = {"a --gpu value", "an unreadable config path", "a readable config path",
                                        "_name_or_path (table)",
                                        "_name_or_path (tsv)", "_name_or_path (json)"};

Test(cli_escape, controls_in_flags_paths_and_config_strings_come_out_escaped, .timeout = 120)
{
    const char *bin = getenv("NAPKIN_BIN");
    cr_assert(bin && *bin, "NAPKIN_BIN is not set");
    char dir[SCRATCH_DIR_SIZE];
    scratch_dir_make(dir, "esc");
    unsigned cp[80];
    int n = controls(cp);
    char lines_path[SCRATCH_DIR_SIZE + 32], replies_path[SCRATCH_DIR_SIZE + 32];
    snprintf(lines_path, sizeof lines_path, "%s/lines", dir);
    snprintf(replies_path, sizeof replies_path, "%s/replies", dir);
    FILE *lines = fopen(lines_path, "w");
    cr_assert_not_null(lines);
    for (int i = 0; i < n; i++) {
        char raw[8], value[16], missing[SCRATCH_DIR_SIZE + 64], sub[SCRATCH_DIR_SIZE + 64],
            readable[SCRATCH_DIR_SIZE + 96], named[SCRATCH_DIR_SIZE + 64], name_json[16];
        utf8(cp[i], raw);
        snprintf(value, sizeof value, "a%sb", raw);
        snprintf(missing, sizeof missing, "%s/a%sb/none.json", dir, raw);
        /* a directory with the control in its name, holding a config whose numbers are wrong */
        snprintf(sub, sizeof sub, "%s/a%sb", dir, raw);
        cr_assert_eq(mkdir(sub, 0700), 0, "mkdir U+%04X", cp[i]);
        snprintf(readable, sizeof readable, "%s/config.json", sub);
        FILE *bad = fopen(readable, "w");
        cr_assert_not_null(bad);
        fputs("{\"model_type\": \"llama\"}", bad);
        fclose(bad);
        snprintf(named, sizeof named, "%s/named-%04x.json", dir, cp[i]);
        snprintf(name_json, sizeof name_json, "a\\u%04xb", cp[i]);
        write_config(named, name_json);
        const char *w0[] = {"roofline", "--gpu", value};
        const char *w1[] = {"memory", "--gpu", "h100", "--model-config", missing};
        const char *w2[] = {"memory", "--gpu", "h100", "--model-config", readable};
        /* napkin specs --models lists the config's model by its name */
        const char *w3[] = {"specs", "--models", "--model-config", named};
        const char *w4[] = {"specs", "--models", "--model-config", named, "--format", "tsv"};
        const char *w5[] = {"specs", "--models", "--model-config", named, "--format", "json"};
        batch_line(lines, 3, w0);
        batch_line(lines, 5, w1);
        batch_line(lines, 5, w2);
        batch_line(lines, 4, w3);
        batch_line(lines, 6, w4);
        batch_line(lines, 6, w5);
    }
    fclose(lines);
    char cmd[4 * SCRATCH_DIR_SIZE], out[256];
    snprintf(cmd, sizeof cmd, "'%s' --batch < '%s' > '%s'", bin, lines_path, replies_path);
    cr_assert_eq(shell_run(cmd, out, sizeof out), 0, "%s", out);

    FILE *replies = fopen(replies_path, "r");
    cr_assert_not_null(replies);
    char *line = NULL;
    size_t cap = 0;
    for (int i = 0; i < n; i++) {
        char raw[8], esc[16], raw_ab[16], esc_ab[32], json_ab[32];
        utf8(cp[i], raw);
        escaped(cp[i], esc, sizeof esc);
        snprintf(raw_ab, sizeof raw_ab, "a%sb", raw);
        snprintf(esc_ab, sizeof esc_ab, "a%sb", esc);
        snprintf(json_ab, sizeof json_ab, "a\\\\%sb", esc + 1); /* in a json string the backslash is doubled */
        for (int k = 0; k < KINDS; k++) {
            cr_assert(getline(&line, &cap, replies) > 0, "no reply for U+%04X in %s", cp[i], KIND[k]);
            char *text = reply_text(line);
            const char *want = k == 5 ? json_ab : esc_ab;
            cr_expect(strstr(text, want) != NULL, "U+%04X in %s: no %s in\n%s", cp[i], KIND[k], want, text);
            cr_expect(strstr(text, raw_ab) == NULL, "U+%04X in %s came out raw:\n%s", cp[i], KIND[k], text);
            free(text);
        }
    }
    free(line);
    fclose(replies);
    scratch_dir_remove(dir);
}

/* The same through the terminal's own path: stderr, no --batch. */
Test(cli_escape, a_flag_value_on_stderr_is_escaped)
{
    const char *bin = getenv("NAPKIN_BIN");
    cr_assert(bin && *bin, "NAPKIN_BIN is not set");
    char cmd[1024], out[4096];
    snprintf(cmd, sizeof cmd, "'%s' roofline --gpu \"$(printf 'a\\033[31mX\\342\\200\\256\\302\\205\\nb')\"", bin);
    cr_expect_eq(shell_run(cmd, out, sizeof out), 2);
    cr_expect(strstr(out, "'a\\x1b[31mX\\u202e\\u0085\\x0ab'") != NULL, "%s", out);
    cr_expect(strchr(out, '\x1b') == NULL, "%s", out);
    snprintf(cmd, sizeof cmd, "'%s' \"$(printf 'x\\033]0;title\\007')\"", bin);
    cr_expect_eq(shell_run(cmd, out, sizeof out), 2);
    cr_expect(strstr(out, "unknown command 'x\\x1b]0;title\\x07'") != NULL, "%s", out);
}
