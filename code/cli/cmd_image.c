/* napkin image: what images do to a request.  The preprocessor's resize,
 * tokens per image and per request, the vision encoder's FLOPs and time, the
 * language model's prefill, the time to first token, KV per request, and the
 * two capacity numbers (concurrent sequences; requests per second within the
 * prefill budget at a TTFT target), beside a text-only request of the same text. */
#include "cli_band.h"
#include "cli_device.h"
#include "commands.h"
#include "vision.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

/* Beside each calibrated row (cli_band.h): why it has no measured error band. */
static const char NO_RUN_LIKE_IT[] = "no measured run like this one (the serving runs carry no images)";

static const cli_doc image_doc = {
    .name = "image",
    .summary = "images as tokens: tokens per image, encoder and prefill time, TTFT, KV, capacity vs text only",
    .usage = "[--model M] [--width W] [--height H] [--images N] [--text-tokens T] [--output-tokens T]\n"
             "                      [--gpu G] [--tp N] [--dtype D] [--budget T] [--ttft-target S]\n"
             "                      [--preprocess S] [--encoder-efficiency F] [--lm-efficiency F]\n"
             "                      [--usable F] [--hbm BYTES] [--vision-table FILE]\n"
             "                      [--calibrate DIR|NAME | --roofline]",
    .details = "Tokens follow each model's released preprocessor (code/specs/vision_models.tsv names it).\n"
               "The encoder is replicated on every GPU of the tensor-parallel group and the request's\n"
               "images are spread over them; 'sharded' shows what splitting the encoder would cost.\n"
               "Times are rooflines at the efficiencies given (fractions of peak; measured encoders run\n"
               "further below peak than LM prefill).  TTFT = preprocessing + encoder + prefill (whose last\n"
               "position yields the first token).  Requests per second: the most requests one prefill step\n"
               "of --budget tokens admits whose TTFT meets --ttft-target, over their encoder and prefill\n"
               "time (a replica doing nothing but prefill).  A request that does not fit exits 1 and names\n"
               "the most images per request that do.\n"
               "Beside it, the encoder, prefill and decode are priced again at the achieved rates fitted to\n"
               "published kernel measurements (napkin calibrate) in place of the two efficiencies: by default\n"
               "the GPU's published set (h100, h200), or --calibrate NAME; --calibrate DIR times both answers\n"
               "on a measured set's ceilings (a CPU set is a device of its own: no --gpu); --roofline gives\n"
               "the first answer alone.",
};

static void report_image(report *r, const vision_spec *v, const vision_estimate *e)
{
    const vision_image *im = &e->image;
    char buf[96];
    report_section(r, "preprocessing");
    report_text(r, "family", "family", vision_family_name(v->family));
    report_int(r, "width", "image width (px)", im->width);
    report_int(r, "height", "image height (px)", im->height);
    report_int(r, "resized_width", "resized width (px)", im->resized_w);
    report_int(r, "resized_height", "resized height (px)", im->resized_h);
    snprintf(buf, sizeof buf, "%d across x %d down", im->grid_w, im->grid_h);
    report_text(r, "grid", v->family == VF_NATIVE ? "token grid" : "tiles", buf);
    report_int(r, "encoder_passes", "encoder tiles (base / thumbnail included)", im->tiles);
    if (v->family == VF_ANYRES) {
        snprintf(buf, sizeof buf, "%d x %d + %d newlines", im->unpadded_h, im->unpadded_w, im->newlines);
        report_text(r, "unpadded", "unpadded features", buf);
    }
    report_num(r, "tokens_per_image", "tokens per image", U_TOKENS, im->tokens);
    report_num(r, "context_tokens_per_image", "in the self-attention context, delimiters included", U_TOKENS,
               im->context_tokens);
    report_num(r, "encoder_tokens_per_image", "tokens through the encoder", U_TOKENS, im->encoder_tokens);
}

static void report_calibrated(report *r, const device_setup *d, const vision_estimate *e, const vision_estimate *t,
                              int images)
{
    if (!device_report_calibrated(r, d, "the same request", "in place of the efficiencies"))
        return;
    if (images > 0) {
        report_num(r, "encoder_time_image_calibrated", "time per image on one GPU, calibrated", U_SECONDS,
                   e->encoder.time);
        cli_band_none(r, "encoder_time_image_calibrated", NO_RUN_LIKE_IT);
        report_num(r, "encoder_time_calibrated", "encoder time per request, calibrated", U_SECONDS, e->encoder_time);
        cli_band_none(r, "encoder_time_calibrated", NO_RUN_LIKE_IT);
    }
    report_num(r, "prefill_time_calibrated", "prefill time, calibrated", U_SECONDS, e->prefill_time);
    cli_band_none(r, "prefill_time_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "ttft_calibrated", "time to first token, calibrated", U_SECONDS, e->ttft);
    cli_band_none(r, "ttft_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "decode_time_calibrated", "next decode step (batch 1), calibrated", U_SECONDS, e->decode_time);
    cli_band_none(r, "decode_time_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "requests_per_s_calibrated", "requests per second within the prefill budget, calibrated", U_REAL,
               e->requests_per_s);
    cli_band_none(r, "requests_per_s_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "text_ttft_calibrated", "text only: time to first token, calibrated", U_SECONDS, t->ttft);
    cli_band_none(r, "text_ttft_calibrated", NO_RUN_LIKE_IT);
    report_num(r, "text_requests_per_s_calibrated", "text only: requests per second, calibrated", U_REAL,
               t->requests_per_s);
    cli_band_none(r, "text_requests_per_s_calibrated", NO_RUN_LIKE_IT);
}

typedef struct {
    device_flags device;
    const char *model_key, *dtype_s, *table, *pre_s, *ttft_s;
    int width, height, images, text, output, tp, budget;
    double enc_eff, lm_eff;
    /* from the strings, by check() */
    double pre, ttft_target;
} image_flags;

static int parse(int argc, char **argv, image_flags *f, cli_common *common)
{
    *f = (image_flags){.device = device_flags_default(DEVICE_PRICING | DEVICE_MEMORY, "h100"),
                       .model_key = "qwen2-vl-7b", .dtype_s = "bf16", .pre_s = "0", .ttft_s = "1", .width = 1920,
                       .height = 1080, .images = 1, .text = 200, .output = 256, .tp = 1, .budget = 8192,
                       .enc_eff = 1.0, .lm_eff = 1.0};
    cli_opt opts[14 + 2 * DEVICE_NOPTS_MAX];
    const cli_opt request[] = {
        {"--model", OPT_STRING, &f->model_key, "M", "vision-language model (default qwen2-vl-7b)", 0, 0},
        {"--width", OPT_POS_INT, &f->width, "W", "image width in px (default 1920)", 0, 0},
        {"--height", OPT_POS_INT, &f->height, "H", "image height in px (default 1080)", 0, 0},
        {"--images", OPT_NONNEG_INT, &f->images, "N", "images per request (default 1)", 0, 0},
        {"--text-tokens", OPT_NONNEG_INT, &f->text, "T", "text tokens of the prompt (default 200)", 0, 0},
        {"--output-tokens", OPT_POS_INT, &f->output, "T", "tokens generated, whose KV is held too (default 256)", 0,
         0},
    };
    const cli_opt serving[] = {
        {"--tp", OPT_POS_INT, &f->tp, "N", "tensor-parallel degree of the LM (default 1)", 0, 0},
        {"--dtype", OPT_STRING, &f->dtype_s, "D", "weights, KV, activations (default bf16)", 0, 0},
        {"--budget", OPT_POS_INT, &f->budget, "T", "prefill tokens per scheduler step (default 8192)", 0, 0},
        {"--ttft-target", OPT_STRING, &f->ttft_s, "S", "time-to-first-token target in seconds (default 1)", 0, 0},
        {"--preprocess", OPT_STRING, &f->pre_s, "S", "CPU preprocessing seconds per request (default 0)", 0, 0},
        {"--encoder-efficiency", OPT_FRACTION, &f->enc_eff, "F", "encoder's fraction of peak FLOP/s (default 1)", 0,
         0},
        {"--lm-efficiency", OPT_FRACTION, &f->lm_eff, "F", "LM prefill's fraction of peak FLOP/s (default 1)", 0, 0},
    };
    const cli_opt table = {"--vision-table", OPT_STRING, &f->table, "FILE", "your own vision_models.tsv", 0, 0};
    int n = CLI_NOPTS(request);
    memcpy(opts, request, sizeof request);
    n += device_flag_opts(&f->device, DEVICE_GPU, opts + n);
    memcpy(opts + n, serving, sizeof serving);
    n += CLI_NOPTS(serving);
    n += device_flag_opts(&f->device, DEVICE_MEMORY, opts + n);
    opts[n++] = table;
    n += device_flag_opts(&f->device, DEVICE_CALIBRATE | DEVICE_ROOFLINE, opts + n);
    return cli_parse(&image_doc, argc, argv, opts, n, common);
}

static int check(image_flags *f)
{
    int rc;
    f->pre = 0;
    f->ttft_target = 1;
    if ((rc = cli_real_in("image", "--preprocess", f->pre_s, 0, 3600, &f->pre)) ||
        (rc = cli_real_in("image", "--ttft-target", f->ttft_s, 0, 3600, &f->ttft_target)))
        return rc;
    if (f->ttft_target <= 0)
        return cli_fail("image", EXIT_USAGE, "--ttft-target: must be more than 0 seconds");
    if (f->images > 1000)
        return cli_fail("image", EXIT_USAGE, "--images: %d is more than 1000", f->images);
    if (f->images + f->text < 1)
        return cli_fail("image", EXIT_USAGE, "a request needs --images or --text-tokens above 0");
    if (f->width > 100000 || f->height > 100000)
        return cli_fail("image", EXIT_USAGE, "--%s: %d px is more than 100000",
                        f->width > 100000 ? "width" : "height", f->width > 100000 ? f->width : f->height);
    return 0;
}

/* The vision model, its language model and the device. */
typedef struct {
    vision_table vt;
    cli_specs specs;
    const vision_spec *v;
    model_spec lm;
    precision prec;
    device_setup device;
} image_resolved;

static int resolve(const image_flags *f, const cli_common *common, image_resolved *u)
{
    char err[512];
    int rc, row;
    if ((rc = cli_precision("image", f->dtype_s, NULL, NULL, NULL, NULL, NULL, &u->prec)) != 0)
        return rc;
    if ((f->table ? vision_table_load(f->table, &u->vt, err, sizeof err)
                  : vision_table_builtin(&u->vt, err, sizeof err)) != 0)
        return cli_fail("image", f->table ? EXIT_USAGE : 1, "%s", err);
    if ((rc = cli_find_key("image", "--model", "model", f->model_key, SPEC_ROWS(&u->vt), &row)) != 0)
        return rc;
    u->v = &u->vt.rows[row];
    if (vision_lm_lookup(u->v, &u->lm) != 0)
        return cli_fail("image", EXIT_USAGE, "%s names language model '%s', which no table holds", u->v->key,
                        u->v->lm);
    double peak;
    if ((rc = cli_specs_load("image", common, &u->specs)) != 0 ||
        (rc = device_setup_resolve("image", &u->specs, &f->device, u->prec.compute, &u->device)) != 0 ||
        (rc = cli_gpu_peak("image", &u->device.timed, u->prec.compute, &peak)) != 0)
        return rc;
    step_shape probe = decode_shape(1, 1, f->tp, u->prec);
    if (step_shape_check(&u->lm, &probe, err, sizeof err) != 0)
        return cli_fail("image", EXIT_USAGE, "--tp %d: %s", f->tp, err);
    return 0;
}

/* A request that does not fit: the most images per request that do. */
static int does_not_fit(const image_flags *f, const vision_request *q, const vision_estimate *e)
{
    char why[320], err[512];
    fit_check_describe(&e->fit, 1, e->fit_context, why, sizeof why);
    int most = -1;
    vision_request fewer = *q;
    for (fewer.images = f->images - 1; fewer.images >= 0 && most < 0; fewer.images--) {
        vision_estimate less;
        if (fewer.images + f->text < 1)
            break;
        if (vision_estimate_compute(&fewer, &less, err, sizeof err) == 0 && less.fit.fits)
            most = fewer.images;
    }
    if (most >= 0)
        return cli_fail("image", EXIT_NO_FIT,
                        "one request of %d images (%d tokens of KV%s) does not fit: %s; the most images per "
                        "request that fit is %d",
                        f->images, e->fit_context, e->cross_tokens ? ", cross-attention KV counted as tokens" : "",
                        why, most);
    return cli_fail("image", EXIT_NO_FIT, "one request does not fit even without images: %s", why);
}

/* The request and a text-only one of the same text, each at the
 * efficiencies and at measured kernel rates. */
typedef struct {
    vision_estimate e, t, e_cal, t_cal;
} image_answer;

static int compute(const image_flags *f, const image_resolved *u, image_answer *a)
{
    vision_request q = vision_request_default(u->v, &u->lm, &u->device.timed);
    q.prec = u->prec;
    q.tp = f->tp;
    q.width = f->width;
    q.height = f->height;
    q.images = f->images;
    q.text_tokens = f->text;
    q.output_tokens = f->output;
    q.budget_tokens = f->budget;
    q.preprocess = f->pre;
    q.encoder_efficiency = f->enc_eff;
    q.lm_efficiency = f->lm_eff;
    q.ttft_target = f->ttft_target;
    q.policy = device_policy(&f->device, -1, -1);
    char err[512];
    if (vision_estimate_compute(&q, &a->e, err, sizeof err) != 0) {
        const char *flag = strstr(err, "image of") ? "--width/--height" : "input";
        return cli_fail("image", EXIT_USAGE, "%s: %s", flag, err);
    }
    if (!a->e.fit.fits)
        return does_not_fit(f, &q, &a->e);
    vision_request tq = q;
    tq.images = 0;
    if (f->text < 1)
        tq.text_tokens = 1; /* an image-only request: compare with one text token */
    if (vision_estimate_compute(&tq, &a->t, err, sizeof err) != 0)
        return cli_fail("image", EXIT_USAGE, "%s", err);
    memset(&a->e_cal, 0, sizeof a->e_cal);
    memset(&a->t_cal, 0, sizeof a->t_cal);
    rated_device cal = device_rated(&u->device);
    if (!cal.have)
        return 0;
    /* the fitted achieved shares stand in for the efficiencies: applying both would count the distance twice */
    vision_request qc = q, tqc = tq;
    qc.gpu = tqc.gpu = &cal.gpu;
    qc.encoder_efficiency = tqc.encoder_efficiency = qc.lm_efficiency = tqc.lm_efficiency = 1.0;
    if (vision_estimate_compute(&qc, &a->e_cal, err, sizeof err) != 0 ||
        vision_estimate_compute(&tqc, &a->t_cal, err, sizeof err) != 0)
        return cli_fail("image", EXIT_USAGE, "%s", err);
    return 0;
}

static void report_answer(report *r, const image_flags *f, const image_resolved *u, const image_answer *a)
{
    const vision_spec *v = u->v;
    const vision_estimate *e = &a->e, *t = &a->t;
    int images = f->images, text = f->text, budget = f->budget;
    double pre = f->pre, ttft_target = f->ttft_target;
    double eff = f->enc_eff < f->lm_eff ? f->enc_eff : f->lm_eff; /* below 1: an estimate, not a bound */
    report_section(r, "setup");
    report_text(r, "model", "model", v->key);
    report_text(r, "lm", "language model", u->lm.key);
    report_text(r, "gpu", "GPU", u->device.timed.key);
    device_report_measured(r, &u->device);
    report_int(r, "tp", "tensor parallel", f->tp);
    report_text(r, "dtype", "dtype", dtype_name(u->prec.weights));
    report_int(r, "images", "images per request", images);
    report_int(r, "text_tokens", "text tokens", text);
    report_int(r, "output_tokens", "output tokens", f->output);
    report_int(r, "budget_tokens", "prefill budget per step (tokens)", budget);
    if (images > 0)
        report_image(r, v, e);
    report_section(r, "request");
    report_num(r, "prompt_tokens", "prompt tokens (self-attention)", U_TOKENS, e->prompt_tokens);
    report_num(r, "cross_tokens", "cross-attention KV tokens", U_TOKENS, e->cross_tokens);
    report_num(r, "context_tokens", "context held per sequence (prompt + output)", U_TOKENS, e->context_tokens);
    if (images > 0) {
        device_report_first(r, &u->device, eff, "vision encoder, one image replicated on every GPU");
        report_num(r, "encoder_params", "encoder + projector parameters", U_PARAMS, e->encoder.params);
        report_num(r, "encoder_flop", "FLOPs per image", U_FLOP, e->encoder.flop);
        report_num(r, "encoder_flop_attention", "of which attention", U_FLOP, e->encoder.flop_attention);
        report_num(r, "encoder_time_image", "time per image on one GPU", U_SECONDS, e->encoder.time);
        report_num(r, "encoder_time_sharded", "the same image split over the TP group", U_SECONDS,
                   e->encoder.time_sharded);
        report_num(r, "encoder_time_allreduce", "of which all-reduces (2 per layer)", U_SECONDS, e->encoder.time_comm);
        report_num(r, "encoder_time", "encoder time per request (images spread over the GPUs)", U_SECONDS,
                   e->encoder_time);
    }
    if (images > 0)
        device_report_again(r, &u->device, eff, "prefill and first token");
    else
        device_report_first(r, &u->device, eff, "prefill and first token");
    report_num(r, "preprocess", "preprocessing (given)", U_SECONDS, pre);
    report_num(r, "prefill_flop", "prefill FLOPs per GPU", U_FLOP, e->prefill_flop);
    report_num(r, "prefill_time", "prefill time", U_SECONDS, e->prefill_time);
    report_num(r, "ttft", "time to first token", U_SECONDS, e->ttft);
    report_num(r, "decode_time", "next decode step (batch 1)", U_SECONDS, e->decode_time);
    device_report_again(r, &u->device, eff, "memory and capacity");
    report_num(r, "kv_per_request", "KV per request (all GPUs)", U_BYTES, e->kv_bytes);
    report_num(r, "vision_bytes", "vision weights per GPU", U_BYTES, e->vision_bytes);
    report_num(r, "kv_budget", "KV budget per GPU", U_BYTES, e->fit.kv_budget);
    report_int(r, "max_batch", "largest concurrent batch, with images", e->max_batch);
    report_int(r, "budget_requests", "requests one prefill step admits", e->budget_requests);
    report_int(r, "step_requests", "of which meet the TTFT target", e->step_requests);
    report_num(r, "ttft_target", "TTFT target", U_SECONDS, ttft_target);
    report_num(r, "requests_per_s", "requests per second within the prefill budget, with images", U_REAL,
               e->requests_per_s);
    device_report_again(r, &u->device, eff, "text only (same text, no image)");
    report_num(r, "text_prompt_tokens", "prompt tokens", U_TOKENS, t->prompt_tokens);
    report_num(r, "text_ttft", "time to first token", U_SECONDS, t->ttft);
    report_num(r, "text_kv_per_request", "KV per request", U_BYTES, t->kv_bytes);
    report_int(r, "text_max_batch", "largest concurrent batch, text only", t->max_batch);
    report_num(r, "text_requests_per_s", "requests per second within the prefill budget, text only", U_REAL,
               t->requests_per_s);

    report_table *tb = report_table_add(r, "compare", "images vs text only");
    report_col(tb, "request", "request", U_TEXT, 0);
    report_col(tb, "prompt_tokens", "prompt tokens", U_TOKENS, 0);
    report_col(tb, "ttft", "TTFT", U_SECONDS, 0);
    report_col(tb, "kv_per_request", "KV per request", U_BYTES, 0);
    report_col(tb, "max_batch", "largest batch", U_INT, 0);
    report_col(tb, "requests_per_s", "requests/s", U_REAL, 0);
    const vision_estimate *rows[2] = {e, t};
    const char *names[2] = {"with images", "text only"};
    for (int i = 0; i < 2; i++) {
        report_cell_text(tb, names[i]);
        report_cell_num(tb, rows[i]->prompt_tokens);
        report_cell_num(tb, rows[i]->ttft);
        report_cell_num(tb, rows[i]->kv_bytes);
        report_cell_int(tb, rows[i]->max_batch);
        report_cell_num(tb, rows[i]->requests_per_s);
    }
    report_calibrated(r, &u->device, &a->e_cal, &a->t_cal, images);
    if (images > 0 && e->image.clamped > 0)
        report_note(r, "the image exceeds max_pixels %.0f: the preprocessor shrinks it to %d x %d", v->max_pixels,
                    e->image.resized_w, e->image.resized_h);
    if (images > 0 && e->image.clamped < 0)
        report_note(r, "the image is under min_pixels %.0f: the preprocessor enlarges it to %d x %d", v->min_pixels,
                    e->image.resized_w, e->image.resized_h);
    if (v->family == VF_CROSS && images > 0)
        report_note(r, "image tokens live in the KV of %d cross-attention layers, not in the self-attention context",
                    v->cross_layers);
    if (e->prompt_tokens > budget)
        report_note(r, "the prompt (%d tokens) is longer than the budget: its prefill is chunked over %d steps",
                    e->prompt_tokens, (e->prompt_tokens + budget - 1) / budget);
    if (e->step_requests == 0)
        report_note(r, "not even one request meets the TTFT target of %g s (one alone takes %g s)", ttft_target,
                    e->ttft);
    if (text < 1)
        report_note(r, "the text-only column is for one text token");
}

int cmd_image(int argc, char **argv)
{
    image_flags f;
    cli_common common;
    int rc = parse(argc, argv, &f, &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    if ((rc = check(&f)) != 0)
        return rc;
    image_resolved u = {0};
    image_answer a;
    report *r = NULL;
    if ((rc = resolve(&f, &common, &u)) != 0 || (rc = compute(&f, &u, &a)) != 0)
        goto done;
    r = report_new("image");
    report_answer(r, &f, &u, &a);
    rc = report_print(r, common.format, stdout);
done:
    report_free(r);
    cli_specs_free(&u.specs);
    vision_table_free(&u.vt);
    return rc;
}
