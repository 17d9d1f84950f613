/* The config reader on what a careless or hostile file system and file give
 * it: a path longer than the source column, control bytes in the file name
 * and in _name_or_path, a hidden size the heads do not divide, numbers out
 * of range; and --format json with no room for a temporary file. */
#include <criterion/criterion.h>

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "hf_config.h"
#include "specs.h"
#include "scratch_dir.h"
#include "shell_run.h"

/* Llama 3 8B's numbers, with a name and a head count to vary. */
static const char *llama(char *buf, size_t n, const char *name_json, int hidden, int heads, const char *extra)
{
    snprintf(buf, n,
             "{\"model_type\": \"llama\", \"_name_or_path\": %s, \"num_hidden_layers\": 32, \"hidden_size\": %d, "
             "\"num_attention_heads\": %d, \"num_key_value_heads\": 8, \"intermediate_size\": 14336, "
             "\"vocab_size\": 128256%s}",
             name_json, hidden, heads, extra);
    return buf;
}

static int no_control_bytes(const char *s)
{
    for (; *s; s++)
        if ((unsigned char)*s < 0x20 || *s == 0x7f)
            return 0;
    return 1;
}


static void write_file(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    cr_assert_not_null(f, "%s", path);
    fputs(text, f);
    fclose(f);
}

Test(hf_config_hardening, a_long_path_is_read_and_its_tail_kept_as_the_source)
{
    char dir[SCRATCH_DIR_SIZE];
    scratch_dir_make(dir, "hfc");
    /* 40 directories of 12 bytes: a path of about 540 bytes, past the 319-byte source column */
    char path[1024];
    int k = snprintf(path, sizeof path, "%s", dir);
    for (int i = 0; i < 40; i++) {
        k += snprintf(path + k, sizeof path - (size_t)k, "/directory%02d", i);
        mkdir(path, 0700);
    }
    snprintf(path + k, sizeof path - (size_t)k, "/config.json");
    cr_assert_gt(strlen(path), (size_t)SPEC_SOURCE_MAX);
    char json[1024];
    write_file(path, llama(json, sizeof json, "\"long\"", 4096, 32, ""));
    model_spec m;
    char err[1024];
    cr_assert_eq(model_from_hf_config_file(path, "x", &m, err, sizeof err), 0, "%s", err);
    cr_expect_eq(m.layers, 32);
    cr_expect_eq(strncmp(m.source, "...", 3), 0, "%s", m.source);
    cr_expect(strstr(m.source, "directory39/config.json") != NULL, "%s", m.source);
    cr_expect_lt(strlen(m.source), (size_t)SPEC_SOURCE_MAX);
    scratch_dir_remove(dir);
}

Test(hf_config_hardening, control_bytes_in_names_are_escaped)
{
    char json[1024];
    model_spec m;
    char err[1024];
    /* a terminal escape (ESC [ 3 1 m: red) and a tab in _name_or_path */
    int rc = model_from_hf_config(llama(json, sizeof json, "\"\\u001b[31mred\\tmodel\"", 4096, 32, ""), "config.json",
                                  "x", &m, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect_str_eq(m.name, "\\x1b[31mred\\x09model");
    /* a tab and a newline in the file's own name: the row still parses, and nothing raw is kept */
    rc = model_from_hf_config(llama(json, sizeof json, "null", 4096, 32, ""), "my\tdir/odd\nname.json", "x", &m, err,
                              sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect_str_eq(m.name, "odd\\x0aname");
    cr_expect_str_eq(m.source, "my\\x09dir/odd\\x0aname.json");
    /* and in a message: an unknown architecture named with an escape in it */
    rc = model_from_hf_config("{\"model_type\": \"\\u001b]0;title\\u0007\"}", "c.json", "x", &m, err, sizeof err);
    cr_assert_neq(rc, 0);
    cr_expect(no_control_bytes(err), "%s", err);
    cr_expect(strstr(err, "\\x1b]0;title\\x07") != NULL, "%s", err);
}

Test(hf_config_hardening, a_hidden_size_the_heads_do_not_divide_is_refused)
{
    char json[1024];
    model_spec m;
    char err[1024];
    /* 4095 / 32 = 127.97: the old reader truncated head_dim to 127 */
    int rc = model_from_hf_config(llama(json, sizeof json, "\"odd\"", 4095, 32, ""), "config.json", "x", &m, err,
                                  sizeof err);
    cr_assert_neq(rc, 0, "head_dim %d accepted", m.head_dim);
    cr_expect(strstr(err, "hidden_size 4095 is not a multiple of num_attention_heads 32") != NULL, "%s", err);
    /* with head_dim given, the config says what it means */
    rc = model_from_hf_config(llama(json, sizeof json, "\"odd\"", 4095, 32, ", \"head_dim\": 128"), "config.json",
                              "x", &m, err, sizeof err);
    cr_assert_eq(rc, 0, "%s", err);
    cr_expect_eq(m.head_dim, 128);
}

Test(hf_config_hardening, numbers_out_of_range_are_called_that)
{
    char json[1024];
    model_spec m;
    char err[1024];
    cr_assert_neq(model_from_hf_config(llama(json, sizeof json, "\"x\"", 4096, 0, ""), "c.json", "x", &m, err,
                                       sizeof err),
                  0);
    cr_expect(strstr(err, "'num_attention_heads' is 0, out of range: from 1 to") != NULL, "%s", err);
    cr_assert_neq(model_from_hf_config(llama(json, sizeof json, "\"x\"", 4096, 32, ", \"head_dim\": 4000000000000"),
                                       "c.json", "x", &m, err, sizeof err),
                  0);
    cr_expect(strstr(err, "'head_dim' is 4000000000000, out of range") != NULL, "%s", err);
    cr_assert_neq(model_from_hf_config(llama(json, sizeof json, "\"x\"", 4096, 32, ", \"head_dim\": 128.5"), "c.json",
                                       "x", &m, err, sizeof err),
                  0);
    cr_expect(strstr(err, "'head_dim' is 128.5, not a whole number") != NULL, "%s", err);
}

/* --format json holds the output back in memory: with no room for any file
 * (a file size limit of 0 blocks, as a full /tmp does; SIGXFSZ ignored so a
 * write fails instead), the answer and the error still arrive whole. */
Test(hf_config_hardening, json_output_needs_no_temporary_file)
{
    const char *bin = getenv("NAPKIN_BIN");
    cr_assert(bin && *bin, "NAPKIN_BIN is not set");
    char cmd[2048], out[65536];
    snprintf(cmd, sizeof cmd,
             "trap '' XFSZ; ulimit -f 0; '%s' decode --model no-such-model --gpu h100 --format json 2>/dev/null | cat",
             bin);
    shell_run(cmd, out, sizeof out);
    cr_expect(strstr(out, "\"status\": 2") != NULL, "%s", out);
    cr_expect(strstr(out, "no-such-model") != NULL, "the error's message is empty:\n%s", out);
    snprintf(cmd, sizeof cmd,
             "trap '' XFSZ; ulimit -f 0; '%s' decode --model llama3-8b --gpu h100 --format json 2>&1 | cat", bin);
    cr_expect_eq(shell_run(cmd, out, sizeof out), 0);
    cr_expect(strstr(out, "\"command\": \"decode\"") != NULL, "%s", out);
}
