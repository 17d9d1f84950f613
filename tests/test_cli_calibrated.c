/* The calibrated answer beside the roofline in decode, prefill, serve, spec,
 * lora, graphs, image and video, as a reader runs them, in all three
 * formats.  The published
 * calibration is refitted as the data grows, so no calibrated number is
 * written here; what must hold for any sane calibration is: achieved shares
 * of the ceilings below 1 make the same work slower than its roofline; the
 * calibrated keys are there by default on a GPU with a published set (h100,
 * h200) and absent with --roofline or on one without (a100); a bad
 * --calibrate is exit 2 naming the known sets.  The table names each
 * priced section's kind the same way in every command: "Bound: ..." for the
 * roofline on named ceilings, "Estimate: ..." for the calibrated answer or a
 * roofline derated by an efficiency. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_run.h"

#define H100_SET "published:h100_sxm/trtllm"

/* One command: its arguments before --gpu, and the pairs (roofline key,
 * calibrated key) whose calibrated time must exceed the roofline's. */
typedef struct {
    const char *args;
    const char *slower[4][2];
} calibrated_case;

static const calibrated_case CASES[] = {
    {"decode --model llama3-8b --batch 8 --context 1024", {{"step_time", "step_time_calibrated"}}},
    {"decode --model llama3-70b --tp 4 --batch 16", {{"step_time", "step_time_calibrated"}, {"time_comm", "time_comm_calibrated"}}},
    {"prefill --model llama3-8b --prompt 2048", {{"time", "time_calibrated"}}},
    {"ep --model gpt-oss-120b --ep 4 --batch 32", {{"step_time", "step_time_calibrated"}}},
    {"serve --model llama3-8b --prompt 1024 --output 128 --concurrency 8",
     {{"tpot", "tpot_calibrated"}, {"ttft", "ttft_calibrated"}, {"ttft_closed", "ttft_closed_calibrated"},
      {"e2e", "e2e_calibrated"}}},
    {"spec --alpha 0.8 --gamma 4",
     {{"t_target", "t_target_calibrated"}, {"t_verify", "t_verify_calibrated"}, {"t_draft", "t_draft_calibrated"}}},
    {"lora --model llama3-8b --batch 32",
     {{"base_step_time", "base_step_time_calibrated"},
      {"adapter_time_ops", "adapter_time_ops_calibrated"},
      {"step_time", "step_time_calibrated"}}},
    {"graphs --model llama3-8b --batch 8", {{"gpu_time", "gpu_time_calibrated"}}},
    {"image --model qwen2-vl-7b",
     {{"encoder_time_image", "encoder_time_image_calibrated"},
      {"prefill_time", "prefill_time_calibrated"},
      {"ttft", "ttft_calibrated"},
      {"text_ttft", "text_ttft_calibrated"}}},
    /* --efficiency 1: the calibrated answer stands in for it, so the two answers price the same work */
    {"video --efficiency 1", {{"t_step", "t_step_calibrated"}, {"t_request", "t_request_calibrated"}}},
};
#define NCASES (sizeof CASES / sizeof CASES[0])

static int run_fmt(const calibrated_case *c, const char *extra, char *out, size_t n)
{
    char args[1024];
    snprintf(args, sizeof args, "%s %s", c->args, extra);
    return run(args, out, n);
}

Test(cli_calibrated, both_answers_by_default_on_h100_and_calibrated_is_slower)
{
    static char out[OUT_MAX];
    for (size_t i = 0; i < NCASES; i++) {
        const calibrated_case *c = &CASES[i];
        cr_assert_eq(run_fmt(c, "--gpu h100 --format tsv", out, sizeof out), 0, "%s: %s", c->args, out);
        cr_assert(strstr(out, "calibration\t" H100_SET "\t") != NULL, "%s names no calibration:\n%s", c->args, out);
        for (int k = 0; k < 4 && c->slower[k][0]; k++) {
            double roof = tsv_value(out, c->slower[k][0]), cal = tsv_value(out, c->slower[k][1]);
            cr_assert(roof > 0 && isfinite(cal), "%s: %s %g, %s %g", c->args, c->slower[k][0], roof,
                      c->slower[k][1], cal);
            cr_assert(cal > roof, "%s: %s %g is not above the roofline's %g", c->args, c->slower[k][1], cal, roof);
        }
    }
}

Test(cli_calibrated, h200_has_its_own_set)
{
    static char out[OUT_MAX];
    for (size_t i = 0; i < NCASES; i++) {
        cr_assert_eq(run_fmt(&CASES[i], "--gpu h200 --format tsv", out, sizeof out), 0, "%s: %s", CASES[i].args, out);
        cr_assert(strstr(out, "calibration\tpublished:h200_sxm/trtllm\t") != NULL, "%s:\n%s", CASES[i].args, out);
        tsv_value(out, CASES[i].slower[0][1]);
    }
}

Test(cli_calibrated, roofline_alone_and_a_gpu_without_a_set)
{
    static char out[OUT_MAX];
    for (size_t i = 0; i < NCASES; i++) {
        const calibrated_case *c = &CASES[i];
        cr_assert_eq(run_fmt(c, "--gpu h100 --roofline --format tsv", out, sizeof out), 0, "%s: %s", c->args, out);
        cr_assert(strstr(out, "_calibrated\t") == NULL, "%s --roofline still gives calibrated values:\n%s", c->args,
                  out);
        cr_assert(strstr(out, "calibration\tnone") != NULL, "%s:\n%s", c->args, out);
        tsv_value(out, c->slower[0][0]); /* the roofline's answer is still there */
        /* no published set for the A100: the roofline alone, unasked */
        cr_assert_eq(run_fmt(c, "--gpu a100 --format tsv", out, sizeof out), 0, "%s: %s", c->args, out);
        cr_assert(strstr(out, "_calibrated\t") == NULL, "%s on a100:\n%s", c->args, out);
        cr_assert(strstr(out, "calibration\tnone") != NULL, "%s on a100:\n%s", c->args, out);
    }
}

Test(cli_calibrated, bad_calibrate_is_exit_2)
{
    static char out[OUT_MAX];
    for (size_t i = 0; i < NCASES; i++) {
        const calibrated_case *c = &CASES[i];
        cr_assert_eq(run_fmt(c, "--gpu h100 --calibrate published:nowhere/none", out, sizeof out), 2, "%s: %s",
                     c->args, out);
        cr_assert(strstr(out, "--calibrate") != NULL && strstr(out, H100_SET) != NULL,
                  "%s: the message names neither the flag nor the known sets:\n%s", c->args, out);
        cr_assert_eq(run_fmt(c, "--gpu h100 --calibrate " H100_SET " --roofline", out, sizeof out), 2, "%s: %s",
                     c->args, out);
        cr_assert(strstr(out, "--roofline") != NULL, "%s:\n%s", c->args, out);
    }
}

Test(cli_calibrated, a_named_set_from_another_gpu_says_so)
{
    static char out[OUT_MAX];
    for (size_t i = 0; i < NCASES; i++) {
        const calibrated_case *c = &CASES[i];
        cr_assert_eq(run_fmt(c, "--gpu h100 --calibrate published:h200_sxm/trtllm --format tsv", out, sizeof out), 0,
                     "%s: %s", c->args, out);
        cr_assert(strstr(out, "calibration\tpublished:h200_sxm/trtllm\t") != NULL, "%s:\n%s", c->args, out);
        cr_assert(strstr(out, "fitted on h200, not h100") != NULL, "%s:\n%s", c->args, out);
    }
}

Test(cli_calibrated, table_and_json_carry_both)
{
    static char out[OUT_MAX];
    for (size_t i = 0; i < NCASES; i++) {
        const calibrated_case *c = &CASES[i];
        cr_assert_eq(run_fmt(c, "--gpu h100", out, sizeof out), 0, "%s: %s", c->args, out);
        cr_assert(strstr(out, "\nEstimate: ") != NULL && strstr(out, " at measured kernel rates (calibrated") != NULL,
                  "%s:\n%s", c->args, out);
        cr_assert(strstr(out, "calibrated answers use") != NULL && strstr(out, H100_SET) != NULL, "%s:\n%s", c->args,
                  out);
        cr_assert_eq(run_fmt(c, "--gpu h100 --format json", out, sizeof out), 0, "%s: %s", c->args, out);
        cr_assert(strstr(out, "\"calibration\": \"" H100_SET "\"") != NULL, "%s:\n%s", c->args, out);
        for (int k = 0; k < 4 && c->slower[k][0]; k++) {
            char key[96];
            for (int j = 0; j < 2; j++) {
                snprintf(key, sizeof key, "\"%s\": ", c->slower[k][j]);
                const char *at = strstr(out, key);
                cr_assert(at != NULL, "%s: no %s in the JSON:\n%s", c->args, key, out);
                double v = strtod(at + strlen(key), NULL);
                cr_assert(v > 0, "%s: %s is %g", c->args, key, v);
            }
        }
    }
}

Test(cli_calibrated, headline_values_follow_from_the_calibrated_step)
{
    static char out[OUT_MAX];
    /* lora: tokens/s = batch / step time, ratio = step / base step */
    cr_assert_eq(run("lora --model llama3-8b --gpu h100 --batch 32 --format tsv", out, sizeof out), 0, "%s", out);
    double step = tsv_value(out, "step_time_calibrated"), base = tsv_value(out, "base_step_time_calibrated");
    cr_assert_float_eq(tsv_value(out, "tokens_per_s_calibrated"), 32 / step, 1e-9 * 32 / step);
    cr_assert_float_eq(tsv_value(out, "step_ratio_calibrated"), step / base, 1e-12);
    /* spec: c = draft step / target step */
    cr_assert_eq(run("spec --gpu h100 --format tsv", out, sizeof out), 0, "%s", out);
    cr_assert_float_eq(tsv_value(out, "c_calibrated"),
                       tsv_value(out, "t_draft_calibrated") / tsv_value(out, "t_target_calibrated"), 1e-12);
    /* video: 2 GPUs held for the whole request; money at 3.6 per GPU-hour is 1e-3 per GPU-second */
    cr_assert_eq(run("video --gpu h100 --gpus 2 --price 3.6 --format tsv", out, sizeof out), 0, "%s", out);
    double req = tsv_value(out, "t_request_calibrated"), gs = tsv_value(out, "gpu_seconds_calibrated");
    cr_assert_float_eq(gs, 2 * req, 1e-9 * gs);
    cr_assert_float_eq(tsv_value(out, "cost_calibrated"), gs * 1e-3, 1e-9 * gs);
    /* graphs: the eager step is max(GPU, host); with 1 ms per launch the host sets it both ways */
    cr_assert_eq(run("graphs --model llama3-8b --gpu h100 --launch-us 1000 --format tsv", out, sizeof out), 0, "%s",
                 out);
    cr_assert_float_eq(tsv_value(out, "step_eager_calibrated"), tsv_value(out, "host_eager"), 1e-15);
    cr_assert(strstr(out, "eager_bound_calibrated\thost\t") != NULL, "%s", out);
}

Test(cli_calibrated, measured_rates_stand_in_for_the_efficiencies)
{
    static char a[OUT_MAX], b[OUT_MAX];
    /* the efficiencies derate the first answer only: the calibrated one is the same at any */
    cr_assert_eq(run("video --gpu h100 --efficiency 0.3 --format tsv", a, sizeof a), 0, "%s", a);
    cr_assert_eq(run("video --gpu h100 --efficiency 0.9 --format tsv", b, sizeof b), 0, "%s", b);
    cr_assert(tsv_value(a, "t_request") > tsv_value(b, "t_request"));
    cr_assert_eq(tsv_value(a, "t_request_calibrated"), tsv_value(b, "t_request_calibrated"));
    cr_assert_eq(run("image --gpu h100 --encoder-efficiency 0.2 --lm-efficiency 0.5 --format tsv", a, sizeof a), 0,
                 "%s", a);
    cr_assert_eq(run("image --gpu h100 --format tsv", b, sizeof b), 0, "%s", b);
    cr_assert(tsv_value(a, "ttft") > tsv_value(b, "ttft"));
    cr_assert_eq(tsv_value(a, "ttft_calibrated"), tsv_value(b, "ttft_calibrated"));
}

Test(cli_calibrated, serve_search_ranks_both_ways)
{
    static char out[OUT_MAX];
    cr_assert_eq(run("serve --model llama3-70b --gpu h100 --search --ttft 0.5 --tpot 0.05 --gpus 8 --format json", out,
                     sizeof out),
                 0, "%s", out);
    cr_assert(strstr(out, "\"search\": [") != NULL && strstr(out, "\"search_calibrated\": [") != NULL, "%s", out);
    cr_assert_eq(run("serve --model llama3-70b --gpu h100 --search --ttft 0.5 --tpot 0.05 --gpus 8 --roofline "
                     "--format json",
                     out, sizeof out),
                 0, "%s", out);
    cr_assert(strstr(out, "search_calibrated") == NULL, "%s", out);
}

Test(cli_calibrated, decode_ops_carry_their_calibrated_time)
{
    /* the ops block of --format tsv: each op's calibrated time times its count, summed,
     * is the calibrated step (nothing is priced outside the ops) */
    static char out[OUT_MAX];
    cr_assert_eq(run("decode --model llama3-70b --gpu h100 --tp 4 --batch 16 --format tsv", out, sizeof out), 0, "%s",
                 out);
    const char *h = strstr(out, "\nop\tcount\t");
    cr_assert_not_null(h, "%s", out);
    h++;
    int col_count = -1, col_cal = -1, col = 0;
    for (const char *p = h; *p && *p != '\n'; col++) {
        const char *e = p + strcspn(p, "\t\n");
        if ((size_t)(e - p) == 5 && strncmp(p, "count", 5) == 0)
            col_count = col;
        if ((size_t)(e - p) == 15 && strncmp(p, "time_calibrated", 15) == 0)
            col_cal = col;
        p = *e == '\t' ? e + 1 : e;
    }
    cr_assert(col_count >= 0 && col_cal >= 0, "%s", h);
    double sum = 0;
    int rows = 0;
    for (const char *line = strchr(h, '\n') + 1; *line && *line != '\n'; line = strchr(line, '\n') + 1, rows++) {
        double count = 0, t = 0;
        const char *p = line;
        for (int c = 0; c <= col_cal; c++) {
            if (c == col_count)
                count = strtod(p, NULL);
            if (c == col_cal)
                t = strtod(p, NULL);
            p += strcspn(p, "\t\n");
            if (*p == '\t')
                p++;
        }
        sum += count * t;
    }
    cr_assert(rows > 10, "%d ops", rows);
    double step = tsv_value(out, "step_time_calibrated");
    cr_assert_float_eq(sum, step, 1e-6 * step, "ops sum %g, step %g", sum, step);
}

Test(cli_calibrated, train_says_it_prices_no_steps)
{
    static char out[OUT_MAX];
    cr_assert_eq(run("train --help", out, sizeof out), 0, "%s", out);
    cr_assert(strstr(out, "no\ncalibrated answer") != NULL || strstr(out, "no calibrated answer") != NULL, "%s", out);
    cr_assert_eq(run("train --model llama3-8b --calibrate " H100_SET, out, sizeof out), 2, "%s", out);
}

/* The line of out that starts with prefix, copied into line (empty if none). */
static void line_starting(const char *out, const char *prefix, char *line, size_t n)
{
    line[0] = 0;
    for (const char *p = out; p && *p; p = strchr(p, '\n') ? strchr(p, '\n') + 1 : NULL) {
        if (strncmp(p, prefix, strlen(prefix)) == 0) {
            size_t len = strcspn(p, "\n");
            snprintf(line, n, "%.*s", (int)(len < n ? len : n - 1), p);
            return;
        }
    }
}

Test(cli_calibrated, every_priced_section_says_bound_or_estimate)
{
    static char out[OUT_MAX];
    char line[256];
    for (size_t i = 0; i < NCASES; i++) {
        const calibrated_case *c = &CASES[i];
        /* nothing derated in these cases: the first answer is the roofline on the datasheet's rates */
        cr_assert_eq(run_fmt(c, "--gpu h100", out, sizeof out), 0, "%s: %s", c->args, out);
        line_starting(out, "Bound: ", line, sizeof line);
        cr_assert(strstr(line, " (datasheet rates)") != NULL, "%s: no \"Bound: ... (datasheet rates)\":\n%s", c->args,
                  out);
        line_starting(out, "Estimate: ", line, sizeof line);
        cr_assert(strstr(line, " at measured kernel rates (calibrated") != NULL, "%s:\n%s", c->args, out);
        cr_assert(strstr(out, "\nThe same") == NULL, "%s: an unlabelled section:\n%s", c->args, out);
        /* the bound alone: no estimate */
        cr_assert_eq(run_fmt(c, "--gpu h100 --roofline", out, sizeof out), 0, "%s: %s", c->args, out);
        cr_assert(strstr(out, "\nEstimate: ") == NULL, "%s --roofline:\n%s", c->args, out);
        cr_assert(strstr(out, "\nBound: ") != NULL, "%s --roofline:\n%s", c->args, out);
    }
}

Test(cli_calibrated, an_efficiency_makes_the_first_answer_an_estimate)
{
    static char out[OUT_MAX];
    char line[256];
    static const char *derated[] = {
        "serve --model llama3-8b --gpu h100 --concurrency 8 --efficiency 0.5",
        "serve --model llama3-8b --gpu h100 --concurrency 8 --flops-efficiency 0.8",
        "image --model qwen2-vl-7b --gpu h100 --lm-efficiency 0.3",
        "video --gpu h100", /* --efficiency 0.45 by default */
    };
    for (size_t i = 0; i < sizeof derated / sizeof derated[0]; i++) {
        cr_assert_eq(run(derated[i], out, sizeof out), 0, "%s: %s", derated[i], out);
        cr_assert(strstr(out, "\nBound: ") == NULL, "%s: a derated answer called a bound:\n%s", derated[i], out);
        line_starting(out, "Estimate: ", line, sizeof line);
        cr_assert(strstr(line, " (datasheet rates at the given efficiencies)") != NULL, "%s:\n%s", derated[i], out);
    }
    /* a measured set's ceilings are named as such */
    cr_assert_eq(run("decode --model llama3.2-1b --calibrate figures/measured/cpu-intel-xeon-processor-2c", out,
                     sizeof out), 0, "%s", out);
    line_starting(out, "Bound: ", line, sizeof line);
    cr_assert(strstr(line, "(ceilings measured on ") != NULL, "%s", out);
}

/* A key appears once in a report: JSON keeps one of two equal keys, so a
 * row printed twice (the calibration named in the first section and again
 * over the calibrated answer) would shift every later value against its
 * table line in the panels and in any script that pairs them. */
Test(cli_calibrated, no_key_twice_in_a_calibrated_report)
{
    static const char *const CMDS[] = {
        "prefill --model llama3-70b --gpu h100 --tp 4 --prompt 2048 --format tsv",
        "serve --model llama3-70b --gpu h100 --tp 4 --format tsv",
        "decode --model llama3-70b --gpu h100 --tp 4 --batch 64 --format tsv",
        "ep --model deepseek-v3 --gpu h200 --ep 8 --batch 64 --context 8192 --dtype fp8 --format tsv",
    };
    static char out[OUT_MAX];
    for (size_t i = 0; i < sizeof CMDS / sizeof CMDS[0]; i++) {
        cr_assert_eq(run(CMDS[i], out, sizeof out), 0, "%s: %s", CMDS[i], out);
        cr_assert(strstr(out, "\ncalibration\t") || strncmp(out, "calibration\t", 12) == 0, "%s names no calibration",
                  CMDS[i]);
        for (const char *line = out; *line;) {
            const char *end = strchr(line, '\n');
            size_t len = end ? (size_t)(end - line) : strlen(line);
            const char *tab = memchr(line, '\t', len);
            if (tab && line[0] != '#') {
                char key[128];
                size_t k = (size_t)(tab - line) < sizeof key - 2 ? (size_t)(tab - line) : sizeof key - 2;
                key[0] = '\n';
                memcpy(key + 1, line, k);
                key[k + 1] = '\t';
                key[k + 2] = 0;
                /* the key once more after this line is a duplicate */
                cr_expect(strstr(line + len, key) == NULL, "%s: key %.*s twice", CMDS[i], (int)k, line);
            }
            line = end ? end + 1 : line + len;
        }
    }
}
