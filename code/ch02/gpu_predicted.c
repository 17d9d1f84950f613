/* Chapter 2: the GPU side, predictions against a GPU set when one is
 * committed, and against NVIDIA's published H200 tables until then.
 * The knee of a bf16 GEMM against batch on H100 and H200, from the datasheet
 * ceilings and from published measured ones (quoted, with their sources, in
 * the chapter).  Values ch02_gpu_*; data 02-gpu-pred.tsv. */
#include "ceilings.h"
#include "gemm_model.h"
#include "measured.h"
#include "memory.h"
#include "notebook.h"
#include "specs.h"
#include "units.h"

#include <dirent.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first GPU set holding `file`: committed ones (figures/measured/)
 * first, then the reader's own ($NB_BUILD/measured/, from make measure).
 * Returns 0 with the table loaded and the set's folder in dir, or -1. */
static int find_gpu_set(const char *file, measured_table *t, char *dir, size_t dirn)
{
    const char *b = getenv("NB_BUILD");
    char roots[2][512];
    snprintf(roots[0], sizeof roots[0], "figures/measured");
    snprintf(roots[1], sizeof roots[1], "%s/measured", b ? b : "build");
    for (int i = 0; i < 2; i++) {
        DIR *d = opendir(roots[i]);
        struct dirent *e;
        while (d && (e = readdir(d)) != NULL) {
            if (e->d_name[0] == '.')
                continue;
            char path[2048], err[256];
            snprintf(path, sizeof path, "%s/%s/%s", roots[i], e->d_name, file);
            if (measured_table_load(path, t, err, sizeof err) != 0)
                continue;
            const char *kind = measured_meta(t, "kind");
            if (kind && strcmp(kind, "gpu") == 0 &&
                snprintf(dir, dirn, "%s/%s", roots[i], e->d_name) < (int)dirn) {
                closedir(d);
                return 0;
            }
            measured_table_free(t);
        }
        if (d)
            closedir(d);
    }
    return -1;
}

static void set_label(const measured_table *t, char *label, size_t n)
{
    const char *dev = measured_meta(t, "device"), *date = measured_meta(t, "date");
    snprintf(label, n, "%s, %.10s", dev ? dev : "?", date ? date : "?");
}

/* Contiguous-layout rows of a GPU decode_attention.tsv: context, batch, us;
 * the set's folder in dir. */
static int measured_attention(FILE *f, char *label, size_t n, char *dir, size_t dirn)
{
    measured_table t;
    if (find_gpu_set("decode_attention.tsv", &t, dir, dirn) != 0)
        return -1;
    int lc = measured_col(&t, "layout"), bc = measured_col(&t, "batch"), cc = measured_col(&t, "context");
    int tc = measured_col(&t, "time_s");
    int rows = 0;
    for (int r = 0; lc >= 0 && bc >= 0 && cc >= 0 && tc >= 0 && r < t.nrows; r++)
        if (strcmp(measured_cell(&t, r, lc), "contiguous") == 0) {
            fprintf(f, "%.0f\t%.0f\t%.4f\n", measured_num(&t, r, cc), measured_num(&t, r, bc),
                    measured_num(&t, r, tc) * 1e6);
            rows++;
        }
    set_label(&t, label, n);
    measured_table_free(&t);
    return rows > 0 ? 0 : -1;
}

/* square8192 rows of a GPU gemv.tsv: batch, then % of the read ceiling for
 * v1 (the baseline), v4, v5 and v6 (the versions the 90 % target is for) and
 * cuBLAS. */
static int measured_gemv(FILE *f, char *label, size_t n)
{
    measured_table t;
    char dir[1024];
    if (find_gpu_set("gemv.tsv", &t, dir, sizeof dir) != 0)
        return -1;
    int sc = measured_col(&t, "shape"), vc = measured_col(&t, "version"), bc = measured_col(&t, "batch");
    int pc = measured_col(&t, "pct_of_read");
    int rows = 0;
    enum { NV = 5 };
    const char *versions[NV] = {"v1", "v4", "v5", "v6", "cublas"};
    for (int batch = 1; sc >= 0 && vc >= 0 && bc >= 0 && pc >= 0 && batch <= 8; batch++) {
        double pct[NV] = {NAN, NAN, NAN, NAN, NAN};
        for (int r = 0; r < t.nrows; r++)
            if (strcmp(measured_cell(&t, r, sc), "square8192") == 0 && measured_num(&t, r, bc) == batch)
                for (int v = 0; v < NV; v++)
                    if (strcmp(measured_cell(&t, r, vc), versions[v]) == 0)
                        pct[v] = measured_num(&t, r, pc);
        fprintf(f, "%d\t%.2f\t%.2f\t%.2f\t%.2f\t%.2f\n", batch, pct[0], pct[1], pct[2], pct[3], pct[4]);
        rows++;
    }
    set_label(&t, label, n);
    measured_table_free(&t);
    return rows > 0 ? 0 : -1;
}

/* Until a GPU set exists, the figures draw NVIDIA's published measurements
 * of the same shapes on an H200 (code/specs/measured/h200_sxm/trtllm,
 * aiconfigurator-core), so a reader sees real kernels beside the line
 * rather than an empty frame.  The points are NVIDIA's machine, not the
 * reader's, and the figure's key and caption say so. */
#define PUB_H200 "code/specs/measured/h200_sxm/trtllm"

static void published_gemv(FILE *f, double read_ceiling)
{
    measured_table t;
    char err[512];
    if (measured_table_load(PUB_H200 "/gemm.tsv", &t, err, sizeof err) != 0) {
        fprintf(stderr, "gpu_predicted: %s\n", err);
        exit(1);
    }
    int cd = measured_col(&t, "dtype"), cm = measured_col(&t, "m"), cn = measured_col(&t, "n"),
        ck = measured_col(&t, "k"), ct = measured_col(&t, "time_s");
    int rows = 0;
    for (int r = 0; r < t.nrows; r++) {
        double m = measured_num(&t, r, cm), n = measured_num(&t, r, cn), k = measured_num(&t, r, ck);
        if (strcmp(measured_cell(&t, r, cd), "bf16") != 0 || n != 8192 || k != 8192 || m > 8)
            continue;
        /* the bytes the roofline counts: the weight, X in and Y out, bf16 */
        double bytes = 2 * (n * k + m * (n + k));
        fprintf(f, "%.0f\t%.2f\n", m, 100 * bytes / measured_num(&t, r, ct) / read_ceiling); /* a share, not a time */
        rows++;
    }
    if (rows == 0) {
        fprintf(stderr, "gpu_predicted: " PUB_H200 "/gemm.tsv has no bf16 8192 x 8192 GEMM at M <= 8\n");
        exit(1);
    }
    measured_table_free(&t);
}

/* LLaMA-3-8B's one-GPU shape (32 query, 8 KV heads of 128, bf16 cache) at
 * batch 1 and 16, from 1k tokens: context, batch, us. */
static void published_attention(FILE *f)
{
    measured_table t;
    char err[512];
    if (measured_table_load(PUB_H200 "/attention_decode.tsv", &t, err, sizeof err) != 0) {
        fprintf(stderr, "gpu_predicted: %s\n", err);
        exit(1);
    }
    int cb = measured_col(&t, "batch"), cc = measured_col(&t, "context"), ch = measured_col(&t, "heads"),
        cv = measured_col(&t, "kv_heads"), cdim = measured_col(&t, "head_dim"), ckv = measured_col(&t, "kv_dtype"),
        ct = measured_col(&t, "time_s");
    for (int r = 0; r < t.nrows; r++) {
        double b = measured_num(&t, r, cb), c = measured_num(&t, r, cc);
        if ((b != 1 && b != 16) || c < 1024 || measured_num(&t, r, ch) != 32 || measured_num(&t, r, cv) != 8 ||
            measured_num(&t, r, cdim) != 128 || strcmp(measured_cell(&t, r, ckv), "bf16") != 0)
            continue;
        fprintf(f, "%.0f\t%.0f\t%.4f\n", c, b, measured_num(&t, r, ct) * 1e6);
    }
    measured_table_free(&t);
}

/* How a caption names the points: the set, or the published table. */
static void points_value(const char *name, int have_set, const char *set_label)
{
    if (have_set)
        nb_value(name, "the measured GPU set (%s)", set_label);
    else
        nb_value(name, "published, NVIDIA's H200 table (TensorRT-LLM; no GPU set measured yet, `make measure` on a "
                       "GPU draws yours)");
}

int main(void)
{
    gpu_spec h100 = gpu_builtin("h100"), h200 = gpu_builtin("h200");
    /* Published measured ceilings of one H200 (inputs, not our
     * measurements; ceilings.c cites them). */
    published_ceilings pub;
    if (published_ceilings_for("h200", &pub) != 0)
        return 1;
    const double H200_PUB_READ = pub.read_bw, H200_PUB_COPY = pub.copy_bw, H200_PUB_GEMM = pub.gemm_bf16;
    nb_value("ch02_gpu_h200_read_tbs", "%.2f", H200_PUB_READ / TB);
    nb_value("ch02_gpu_h200_copy_tbs", "%.2f", H200_PUB_COPY / TB);
    nb_value("ch02_gpu_h200_gemm_tflops", "%.0f", H200_PUB_GEMM / TERA);
    nb_value("ch02_gpu_h200_sheet_tbs", "%.1f", h200.mem_bw / TB);
    nb_value("ch02_gpu_bf16_tflops", "%.1f", gpu_peak_flops(&h200, DT_BF16) / TERA);
    double p100 = gpu_peak_flops(&h100, DT_BF16), p200 = gpu_peak_flops(&h200, DT_BF16);
    const double n = 8192, k = 8192;

    nb_value("ch02_gpu_ridge_h100", "%.0f", ridge_intensity(p100, h100.mem_bw));
    nb_value("ch02_gpu_ridge_h200", "%.0f", ridge_intensity(p200, h200.mem_bw));
    nb_value("ch02_gpu_knee_h100", "%.0f", gemm_knee_batch(n, k, 2, 2, p100, h100.mem_bw));
    nb_value("ch02_gpu_knee_h200", "%.0f", gemm_knee_batch(n, k, 2, 2, p200, h200.mem_bw));
    nb_value("ch02_gpu_ridge_h200_pub", "%.0f", ridge_intensity(H200_PUB_GEMM, H200_PUB_READ));
    nb_value("ch02_gpu_knee_h200_pub", "%.0f", gemm_knee_batch(n, k, 2, 2, H200_PUB_GEMM, H200_PUB_READ));
    nb_value("ch02_gpu_h200_read_pct", "%.0f", 100 * H200_PUB_READ / h200.mem_bw);
    nb_value("ch02_gpu_h200_copy_pct", "%.0f", 100 * H200_PUB_COPY / h200.mem_bw);
    nb_value("ch02_gpu_h200_gemm_pct", "%.0f", 100 * H200_PUB_GEMM / p200);

    /* M = 1 and M = 4096 through the square on the H200, both ceilings. */
    double t1_ds = gemm_predicted_time(1, n, k, 2, 2, p200, h200.mem_bw, NULL);
    double t1_pub = gemm_predicted_time(1, n, k, 2, 2, H200_PUB_GEMM, H200_PUB_READ, NULL);
    double tb_ds = gemm_predicted_time(4096, n, k, 2, 2, p200, h200.mem_bw, NULL);
    double tb_pub = gemm_predicted_time(4096, n, k, 2, 2, H200_PUB_GEMM, H200_PUB_READ, NULL);
    nb_value("ch02_gpu_h200_m1_us_ds", "%.1f", t1_ds * 1e6);
    nb_value("ch02_gpu_h200_m1_us_pub", "%.1f", t1_pub * 1e6);
    nb_value("ch02_gpu_h200_m4096_us_ds", "%.0f", tb_ds * 1e6);
    nb_value("ch02_gpu_h200_m4096_us_pub", "%.0f", tb_pub * 1e6);
    nb_value("ch02_gpu_h200_m1_shift", "%.0f", 100 * (t1_pub / t1_ds - 1));
    nb_value("ch02_gpu_h200_m4096_shift", "%.0f", 100 * (tb_pub / tb_ds - 1));

    /* Query heads per KV head: the FLOP per cached element of decode attention scale with it. */
    model_spec m8 = model_builtin("llama3-8b"), m70 = model_builtin("llama3-70b");
    nb_value("ch02_group_8b", "%d", m8.heads / m8.kv_heads);
    nb_value("ch02_group_70b", "%d", m70.heads / m70.kv_heads);

    FILE *f = nb_data_open("02-gpu-pred.tsv");
    fprintf(f, "m\th100_ds_us\th200_ds_us\th200_pub_us\n");
    for (double m = 1; m <= 4096 * 1.0001; m *= 1.05)
        fprintf(f, "%.4f\t%.5f\t%.5f\t%.5f\n", m, gemm_predicted_time(m, n, k, 2, 2, p100, h100.mem_bw, NULL) * 1e6,
                gemm_predicted_time(m, n, k, 2, 2, p200, h200.mem_bw, NULL) * 1e6,
                gemm_predicted_time(m, n, k, 2, 2, H200_PUB_GEMM, H200_PUB_READ, NULL) * 1e6);
    fclose(f);
    f = nb_data_open("02-gpu-knees.tsv");
    fprintf(f, "label\tknee\ttime_us\n");
    fprintf(f, "H100 datasheet\t%.3f\t%.5f\n", gemm_knee_batch(n, k, 2, 2, p100, h100.mem_bw),
            gemm_predicted_time(gemm_knee_batch(n, k, 2, 2, p100, h100.mem_bw), n, k, 2, 2, p100, h100.mem_bw, NULL) * 1e6);
    fprintf(f, "H200 datasheet\t%.3f\t%.5f\n", gemm_knee_batch(n, k, 2, 2, p200, h200.mem_bw),
            gemm_predicted_time(gemm_knee_batch(n, k, 2, 2, p200, h200.mem_bw), n, k, 2, 2, p200, h200.mem_bw, NULL) * 1e6);
    fclose(f);

    /* Decode attention over one layer's KV cache (LLaMA-3-8B, bf16): the
     * bytes of K and V over a read ceiling, as kernels/decode_attention.cu
     * counts them; measured points when a GPU set is committed, and then
     * the lines at that set's own measured read (its bandwidth.tsv), not a
     * figure from another machine.  Without a set, the published read, and
     * the key says so. */
    double per_token_layer = kv_bytes_per_token(&m8, DT_BF16) / m8.layers;
    FILE *f_meas = nb_data_open("02-gpu-attn-meas.tsv");
    char label[256], set_dir[1024];
    fprintf(f_meas, "context\tbatch\ttime_us\n");
    int have_set = measured_attention(f_meas, label, sizeof label, set_dir, sizeof set_dir) == 0;
    if (!have_set) {
        published_attention(f_meas);
        snprintf(label, sizeof label, "none yet");
    }
    fprintf(f_meas, "# points: %s\n", have_set ? "measured" : "published, NVIDIA's H200 table");
    fclose(f_meas);
    nb_value("ch02_gpu_set", "%s", label);
    points_value("ch02_gpu_attn_points", have_set, label);
    double ceiling = H200_PUB_READ;
    char ceiling_name[320];
    snprintf(ceiling_name, sizeof ceiling_name, "published read %.2f TB/s (no measured GPU set)", H200_PUB_READ / TB);
    if (have_set) {
        char path[1200], err[256];
        measured_table bwt;
        snprintf(path, sizeof path, "%s/bandwidth.tsv", set_dir);
        double bw = NAN;
        if (measured_table_load(path, &bwt, err, sizeof err) == 0) {
            bw = measured_read_bandwidth(&bwt);
            measured_table_free(&bwt);
        }
        if (bw > 0) {
            ceiling = bw;
            snprintf(ceiling_name, sizeof ceiling_name, "the set's measured read %.2f TB/s", bw / TB);
        } else
            snprintf(ceiling_name, sizeof ceiling_name, "published read %.2f TB/s (the set has no read measurement)",
                     H200_PUB_READ / TB);
    }
    nb_value("ch02_gpu_attn_ceiling", "%s", ceiling_name);
    f = nb_data_open("02-gpu-attn.tsv");
    /* The kernel times one layer, but a replica holds every layer: mark
     * where the whole model's KV cache of the batch fits one H200.  The
     * header names the ceiling of columns 3 and 5 (the figure's key). */
    fprintf(f, "context\tb1_ds_us\tbatch 1, %s\tb16_ds_us\tbatch 16, %s\tb1_fits\tb16_fits\n", ceiling_name,
            ceiling_name);
    int b16_max_fit = 0;
    for (int ctx = 1024; ctx <= 131072; ctx *= 2) {
        resident_model rm = {&m8, precision_uniform(DT_BF16), 1};
        fit_check f1, f16;
        char err[256];
        if (memory_fit(&h200, memory_policy_default(), &rm, 1, 0, 1, ctx, &f1, err, sizeof err) != 0 ||
            memory_fit(&h200, memory_policy_default(), &rm, 1, 0, 16, ctx, &f16, err, sizeof err) != 0) {
            fprintf(stderr, "gpu_predicted: %s\n", err);
            return 1;
        }
        if (f16.fits)
            b16_max_fit = ctx;
        fprintf(f, "%d\t%.4f\t%.4f\t%.4f\t%.4f\t%d\t%d\n", ctx, per_token_layer * ctx / h200.mem_bw * 1e6,
                per_token_layer * ctx / ceiling * 1e6, 16 * per_token_layer * ctx / h200.mem_bw * 1e6,
                16 * per_token_layer * ctx / ceiling * 1e6, f1.fits, f16.fits);
    }
    fclose(f);
    nb_value("ch02_gpu_attn_b16_max_fit_k", "%d", b16_max_fit / 1024);
    nb_value("ch02_gpu_attn_32k_us_pub", "%.1f", per_token_layer * 32768 / H200_PUB_READ * 1e6);
    nb_value("ch02_gpu_attn_32k_85_us", "%.1f", per_token_layer * 32768 / H200_PUB_READ / 0.85 * 1e6);
    nb_value("ch02_gpu_kv_layer_token_kb", "%.0f", per_token_layer / KB);
    nb_value("ch02_gpu_attn_1k_us", "%.1f", per_token_layer * 1024 / h200.mem_bw * 1e6);

    /* GEMV bandwidth against the read ceiling: the roofline says every
     * batch 1 to 8 is memory-bound on any GPU of the table, so the
     * prediction is the ceiling itself; measured versions when a set exists. */
    for (int batch = 1; batch <= 8; batch *= 8) {
        bound_kind b;
        gemm_predicted_time(batch, n, k, 2, 2, H200_PUB_GEMM, H200_PUB_READ, &b);
        char name[48];
        snprintf(name, sizeof name, "ch02_gpu_gemv_b%d_bound", batch);
        nb_value(name, "%s", bound_name(b));
    }
    f = nb_data_open("02-gpu-gemv-meas.tsv");
    fprintf(f, "batch\tv1\tv4\tv5\tv6\tcublas\n");
    char gemv_label[256];
    int have_gemv = measured_gemv(f, gemv_label, sizeof gemv_label) == 0;
    if (!have_gemv) {
        fprintf(f, "1\tNaN\tNaN\tNaN\tNaN\tNaN\n");
        snprintf(gemv_label, sizeof gemv_label, "none yet");
    }
    fprintf(f, "# set: %s\n", gemv_label);
    fclose(f);
    f = nb_data_open("02-gpu-gemv-pub.tsv");
    fprintf(f, "batch\tpct_of_read\n");
    if (have_gemv)
        fprintf(f, "1\tNaN\n");
    else
        published_gemv(f, H200_PUB_READ);
    fclose(f);
    nb_value("ch02_gpu_gemv_set", "%s", gemv_label);
    points_value("ch02_gpu_gemv_points", have_gemv, gemv_label);
    return 0;
}
