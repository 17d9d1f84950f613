/* --calibrate DIR in the commands that took only a published name before
 * (decode, graphs, lora, spec, image, video): a measured set's ceilings
 * time the first answer, as in serve, prefill and ep, and the flag reads
 * the same in every command's help.  The fixtures' round ceilings give the
 * expected numbers by hand:
 *   tests/calib/cpu-toy  a CPU of its own: 1e12 FLOP/s, 1e11 B/s, 1e11 B;
 *   tests/calib/gpu-toy  an H100 measured at 700e12 FLOP/s and 3.0 TB/s
 *                        (the datasheet row: 989.4e12 dense bf16, 3.35 TB/s).
 * Neither fixture has a GEMM sweep to fit, so neither has a calibrated
 * answer; the committed CPU set (figures/measured/) has one. */
#include <criterion/criterion.h>
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "cli_run.h"

#define CPU_TOY "tests/calib/cpu-toy"
#define GPU_TOY "tests/calib/gpu-toy"
#define CPU_SET "figures/measured/cpu-intel-xeon-processor-2c"

/* One batch-1 decode step of LLaMA-3.2-1B over a 128-token context, as each
 * command names it: the command's flags and the key of the step time. */
typedef struct {
    const char *args, *key;
} step_case;

static const step_case ONE_B_STEP[] = {
    {"decode --model llama3.2-1b --context 128", "step_time"},
    {"graphs --model llama3.2-1b --context 128", "gpu_time"},
    {"lora --model llama3.2-1b --context 128 --batch 1", "base_step_time"},
    {"spec --model llama3.2-1b --tp 1 --c 0.1 --context 128", "t_target"},
};
#define N_ONE_B (sizeof ONE_B_STEP / sizeof ONE_B_STEP[0])

static double value_of(const char *args, const char *extra, const char *key)
{
    static char out[OUT_MAX];
    char line[1024];
    snprintf(line, sizeof line, "%s %s --format tsv", args, extra);
    cr_assert_eq(run(line, out, sizeof out), 0, "napkin %s:\n%s", line, out);
    return tsv_value(out, key);
}

Test(cli_calibrate_dir, a_cpu_set_is_a_device_of_its_own)
{
    static char out[OUT_MAX];
    /* 1,235,814,400 parameters (config.json: 16 layers, hidden 2048, ffn 8192,
     * vocabulary 128256 tied) x 2 B = 2.4716 GB read at 1e11 B/s: 24.716 ms.
     * The 128 tokens of KV (16 x 2 x 8 x 64 x 2 B x 128 = 4.2 MB) and the
     * activations add well under 1 %. */
    const double weights_time = 1235814400.0 * 2 / 1e11;
    for (size_t i = 0; i < N_ONE_B; i++) {
        char line[512];
        snprintf(line, sizeof line, "%s --calibrate " CPU_TOY " --format tsv", ONE_B_STEP[i].args);
        cr_assert_eq(run(line, out, sizeof out), 0, "%s:\n%s", line, out);
        cr_assert(strstr(out, "gpu\tmeasured\t") != NULL, "%s names no measured device:\n%s", line, out);
        cr_assert(strstr(out, "calibrated_from\tToy CPU\t") != NULL, "%s:\n%s", line, out);
        double t = tsv_value(out, ONE_B_STEP[i].key);
        cr_assert(t >= weights_time && t < 1.01 * weights_time, "%s: %s %g s, the weights alone take %g s", line,
                  ONE_B_STEP[i].key, t, weights_time);
    }
    /* decode's own lines: the set's ceilings, and a memory-bound step is its bytes over 1e11 B/s */
    cr_assert_eq(run("decode --model llama3.2-1b --context 128 --calibrate " CPU_TOY " --format tsv", out, sizeof out),
                 0, "%s", out);
    cr_assert_float_eq(tsv_value(out, "peak_flops"), 1e12, 1);
    cr_assert_float_eq(tsv_value(out, "mem_bw"), 1e11, 1);
    cr_assert_float_eq(tsv_value(out, "hbm_bytes"), 1e11, 1); /* the machine's memory holds weights and KV */
    cr_assert_float_eq(tsv_value(out, "step_time"), tsv_value(out, "step_bytes") / 1e11, 1e-15);
}

Test(cli_calibrate_dir, image_and_video_take_the_sets_peak)
{
    /* the encoder is compute-bound: its FLOPs at 1e12 FLOP/s, at the default encoder efficiency 1 */
    double flop = value_of("image", "--calibrate " CPU_TOY, "encoder_flop");
    double t = value_of("image", "--calibrate " CPU_TOY, "encoder_time_image");
    cr_assert_float_eq(t, flop / 1e12, 1e-9 * t);
    /* a video step: its FLOPs at --efficiency 0.45 of the set's 1e12 FLOP/s, on one GPU (no parallel loss) */
    flop = value_of("video --model cogvideox-5b", "--calibrate " CPU_TOY, "flop_step");
    t = value_of("video --model cogvideox-5b", "--calibrate " CPU_TOY, "t_step");
    cr_assert_float_eq(t, flop / (0.45 * 1e12), 1e-9 * t);
}

Test(cli_calibrate_dir, a_gpu_set_calibrates_the_gpu_row)
{
    /* a batch-1 decode step is memory-bound: 3.35 TB/s on the datasheet, 3.0 measured */
    const step_case cases[] = {
        {"decode --model llama3-8b --gpu h100 --context 128", "step_time"},
        {"graphs --model llama3-8b --gpu h100 --context 128", "gpu_time"},
        {"lora --model llama3-8b --gpu h100 --context 128 --batch 1", "base_step_time"},
        {"spec --model llama3-8b --tp 1 --c 0.1 --context 128", "t_target"}, /* the default GPU, h100 */
        {"image", "decode_time"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        double sheet = value_of(cases[i].args, "", cases[i].key);
        double measured = value_of(cases[i].args, "--calibrate " GPU_TOY, cases[i].key);
        cr_assert_float_eq(measured / sheet, 3.35 / 3.0, 1e-9, "%s: %s %g against %g", cases[i].args, cases[i].key,
                           measured, sheet);
    }
    /* a video step is compute-bound: 989.4e12 dense bf16 on the datasheet, 700e12 measured */
    double sheet = value_of("video", "", "t_step"), measured = value_of("video", "--calibrate " GPU_TOY, "t_step");
    cr_assert_float_eq(measured / sheet, 989.4 / 700, 1e-9);
    /* without a default GPU, a GPU set needs its row */
    static char out[OUT_MAX];
    cr_assert_eq(run("decode --model llama3-8b --calibrate " GPU_TOY, out, sizeof out), 2, "%s", out);
    cr_assert(strstr(out, "--calibrate") && strstr(out, "--gpu"), "%s", out);
}

Test(cli_calibrate_dir, the_committed_cpu_set_gives_both_answers)
{
    static char out[OUT_MAX];
    const char *cases[][3] = {
        {"decode --model llama3.2-1b --context 128", "step_time", "step_time_calibrated"},
        {"graphs --model llama3.2-1b --context 128", "gpu_time", "gpu_time_calibrated"},
        {"lora --model llama3.2-1b --context 128 --batch 1", "base_step_time", "base_step_time_calibrated"},
        {"spec --model llama3.2-1b --tp 1 --c 0.1 --context 128", "t_target", "t_target_calibrated"},
        {"image", "ttft", "ttft_calibrated"},
        {"video --model cogvideox-5b --efficiency 1", "t_step", "t_step_calibrated"},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        char line[512];
        snprintf(line, sizeof line, "%s --calibrate " CPU_SET " --format tsv", cases[i][0]);
        cr_assert_eq(run(line, out, sizeof out), 0, "%s:\n%s", line, out);
        /* the set's own GEMM sweep, fitted: achieved shares below 1 make the same work slower */
        cr_assert(strstr(out, "calibration\t" CPU_SET "\t") != NULL, "%s:\n%s", line, out);
        double roof = tsv_value(out, cases[i][1]), cal = tsv_value(out, cases[i][2]);
        cr_assert(roof > 0 && cal > roof, "%s: %s %g, %s %g", line, cases[i][1], roof, cases[i][2], cal);
        /* --roofline: the set's ceilings alone */
        snprintf(line, sizeof line, "%s --calibrate " CPU_SET " --roofline --format tsv", cases[i][0]);
        cr_assert_eq(run(line, out, sizeof out), 0, "%s:\n%s", line, out);
        cr_assert(strstr(out, "_calibrated\t") == NULL && strstr(out, "calibration\tnone") != NULL, "%s:\n%s", line,
                  out);
        cr_assert_float_eq(tsv_value(out, cases[i][1]), roof, 1e-12 * roof);
    }
}

Test(cli_calibrate_dir, a_bad_value_is_exit_2_naming_the_flag)
{
    static char out[OUT_MAX];
    const char *commands[] = {
        "decode --model llama3-8b --gpu h100", "graphs --model llama3-8b --gpu h100",
        "lora --model llama3-8b --gpu h100",   "spec",
        "image",                               "video",
        "prefill --model llama3-8b --gpu h100", "serve --model llama3-8b --gpu h100",
        "ep --model gpt-oss-120b --gpu h100 --ep 4",
    };
    const char *bad[] = {
        "/nonexistent/set", /* no such directory */
        "tests/calib",      /* a directory with no gemm.tsv */
        "''",               /* empty */
    };
    for (size_t c = 0; c < sizeof commands / sizeof commands[0]; c++)
        for (size_t b = 0; b < sizeof bad / sizeof bad[0]; b++) {
            char line[512];
            snprintf(line, sizeof line, "%s --calibrate %s", commands[c], bad[b]);
            cr_assert_eq(run(line, out, sizeof out), 2, "%s:\n%s", line, out);
            cr_assert(strstr(out, "--calibrate") != NULL, "%s: the message does not name the flag:\n%s", line, out);
        }
}

/* Each device flag's help line, read from `napkin CMD --help`. */
static void help_line(const char *cmd, const char *flag, char *line, size_t n)
{
    static char out[OUT_MAX];
    char args[128];
    snprintf(args, sizeof args, "%s --help", cmd);
    cr_assert_eq(run(args, out, sizeof out), 0, "%s", out);
    char want[64];
    snprintf(want, sizeof want, "\n  %s ", flag);
    const char *at = strstr(out, want);
    cr_assert_not_null(at, "napkin %s --help has no %s:\n%s", cmd, flag, out);
    at++;
    size_t len = strcspn(at, "\n");
    cr_assert_lt(len, n);
    memcpy(line, at, len);
    line[len] = '\0';
}

Test(cli_calibrate_dir, every_pricing_command_describes_the_device_flags_alike)
{
    const char *commands[] = {"decode", "graphs", "lora", "spec", "image", "video", "prefill", "serve", "ep"};
    const char *flags[] = {"--calibrate", "--roofline"};
    for (size_t f = 0; f < sizeof flags / sizeof flags[0]; f++) {
        char first[512], line[512];
        help_line(commands[0], flags[f], first, sizeof first);
        for (size_t c = 1; c < sizeof commands / sizeof commands[0]; c++) {
            help_line(commands[c], flags[f], line, sizeof line);
            cr_assert_str_eq(line, first, "napkin %s and napkin %s describe %s differently", commands[c], commands[0],
                             flags[f]);
        }
    }
    char line[512];
    help_line("decode", "--calibrate", line, sizeof line);
    cr_assert(strstr(line, "DIR|NAME") && strstr(line, "measured set") && strstr(line, "published:SYSTEM/BACKEND"),
              "%s", line);
    /* --usable and --hbm where they are taken */
    const char *memory_flags[] = {"--usable", "--hbm"};
    const char *takers[] = {"memory", "decode", "spec", "image", "serve"};
    for (size_t f = 0; f < 2; f++) {
        char first[512];
        help_line(takers[0], memory_flags[f], first, sizeof first);
        for (size_t c = 1; c < sizeof takers / sizeof takers[0]; c++) {
            help_line(takers[c], memory_flags[f], line, sizeof line);
            cr_assert_str_eq(line, first, "napkin %s and napkin memory describe %s differently", takers[c],
                             memory_flags[f]);
        }
    }
}
