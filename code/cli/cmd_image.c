/* napkin image: what images do to a request.  The preprocessor's resize,
 * tokens per image and per request, the vision encoder's FLOPs and time, the
 * language model's prefill, the time to first token, KV per request, and the
 * two capacity numbers (concurrent sequences; requests per second within the
 * prefill budget at a TTFT target), beside a text-only request of the same text. */
#include "cli_args.h"
#include "cli_lookup.h"
#include "cli_rates.h"
#include "commands.h"
#include "vision.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

static const cli_doc image_doc = {
    .name = "image",
    .summary = "images as tokens: tokens per image, encoder and prefill time, TTFT, KV, capacity vs text only",
    .usage = "[--model M] [--width W] [--height H] [--images N] [--text-tokens T] [--output-tokens T]\n"
             "                      [--gpu G] [--tp N] [--dtype D] [--budget T] [--ttft-target S]\n"
             "                      [--preprocess S] [--encoder-efficiency F] [--lm-efficiency F]\n"
             "                      [--usable F] [--hbm BYTES] [--vision-table FILE]\n"
             "                      [--calibrate published:SYSTEM/BACKEND | --roofline]",
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
               "the GPU's published set (h100, h200), or --calibrate NAME; --roofline gives the first answer\n"
               "alone.",
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

static void report_calibrated(report *r, const cli_rates *cal, const vision_estimate *e, const vision_estimate *t,
                              int images)
{
    report_section(r, "The same request at measured kernel rates (calibrated, in place of the efficiencies)");
    cli_rates_report(r, cal);
    if (!cal->have)
        return;
    if (images > 0) {
        report_num(r, "encoder_time_image_calibrated", "time per image on one GPU, calibrated", U_SECONDS,
                   e->encoder.time);
        report_num(r, "encoder_time_calibrated", "encoder time per request, calibrated", U_SECONDS, e->encoder_time);
    }
    report_num(r, "prefill_time_calibrated", "prefill time, calibrated", U_SECONDS, e->prefill_time);
    report_num(r, "ttft_calibrated", "time to first token, calibrated", U_SECONDS, e->ttft);
    report_num(r, "decode_time_calibrated", "next decode step (batch 1), calibrated", U_SECONDS, e->decode_time);
    report_num(r, "requests_per_s_calibrated", "requests per second within the prefill budget, calibrated", U_REAL,
               e->requests_per_s);
    report_num(r, "text_ttft_calibrated", "text only: time to first token, calibrated", U_SECONDS, t->ttft);
    report_num(r, "text_requests_per_s_calibrated", "text only: requests per second, calibrated", U_REAL,
               t->requests_per_s);
}

int cmd_image(int argc, char **argv)
{
    const char *model_key = "qwen2-vl-7b", *gpu_key = "h100", *dtype_s = "bf16", *table = NULL;
    const char *pre_s = "0", *ttft_s = "1";
    int width = 1920, height = 1080, images = 1, text = 200, output = 256, tp = 1, budget = 8192;
    double enc_eff = 1.0, lm_eff = 1.0, usable = NAN, hbm = 0;
    int roofline = 0;
    const char *calibrate = NULL;
    cli_opt opts[] = {
        {"--model", OPT_STRING, &model_key, "M", "vision-language model (default qwen2-vl-7b)", 0, 0},
        {"--width", OPT_POS_INT, &width, "W", "image width in px (default 1920)", 0, 0},
        {"--height", OPT_POS_INT, &height, "H", "image height in px (default 1080)", 0, 0},
        {"--images", OPT_NONNEG_INT, &images, "N", "images per request (default 1)", 0, 0},
        {"--text-tokens", OPT_NONNEG_INT, &text, "T", "text tokens of the prompt (default 200)", 0, 0},
        {"--output-tokens", OPT_POS_INT, &output, "T", "tokens generated, whose KV is held too (default 256)", 0, 0},
        {"--gpu", OPT_STRING, &gpu_key, "G", "GPU (default h100)", 0, 0},
        {"--tp", OPT_POS_INT, &tp, "N", "tensor-parallel degree of the LM (default 1)", 0, 0},
        {"--dtype", OPT_STRING, &dtype_s, "D", "weights, KV, activations (default bf16)", 0, 0},
        {"--budget", OPT_POS_INT, &budget, "T", "prefill tokens per scheduler step (default 8192)", 0, 0},
        {"--ttft-target", OPT_STRING, &ttft_s, "S", "time-to-first-token target in seconds (default 1)", 0, 0},
        {"--preprocess", OPT_STRING, &pre_s, "S", "CPU preprocessing seconds per request (default 0)", 0, 0},
        {"--encoder-efficiency", OPT_FRACTION, &enc_eff, "F", "encoder's fraction of peak FLOP/s (default 1)", 0, 0},
        {"--lm-efficiency", OPT_FRACTION, &lm_eff, "F", "LM prefill's fraction of peak FLOP/s (default 1)", 0, 0},
        {"--usable", OPT_FRACTION, &usable, "F", "share of GPU memory the server may use (default 0.9)", 0, 0},
        {"--hbm", OPT_POS_REAL, &hbm, "BYTES", "memory of one GPU in bytes (default: what the driver reports)", 0, 0},
        {"--vision-table", OPT_STRING, &table, "FILE", "your own vision_models.tsv", 0, 0},
        {"--calibrate", OPT_STRING, &calibrate, "NAME",
         "the calibrated answer's rates (default: the GPU's published set)", 0, 0},
        {"--roofline", OPT_FLAG, &roofline, NULL, "the roofline alone, no calibrated answer", 0, 0},
    };
    cli_common common;
    int rc = cli_parse(&image_doc, argc, argv, opts, CLI_NOPTS(opts), &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;
    double pre = 0, ttft_target = 1;
    if ((rc = cli_real_in("image", "--preprocess", pre_s, 0, 3600, &pre)) ||
        (rc = cli_real_in("image", "--ttft-target", ttft_s, 0, 3600, &ttft_target)))
        return rc;
    if (ttft_target <= 0)
        return cli_fail("image", EXIT_USAGE, "--ttft-target: must be more than 0 seconds");
    if (images > 1000)
        return cli_fail("image", EXIT_USAGE, "--images: %d is more than 1000", images);
    if (images + text < 1)
        return cli_fail("image", EXIT_USAGE, "a request needs --images or --text-tokens above 0");
    if (width > 100000 || height > 100000)
        return cli_fail("image", EXIT_USAGE, "--%s: %d px is more than 100000", width > 100000 ? "width" : "height",
                        width > 100000 ? width : height);
    if (cli_hbm_check("image", hbm) != 0)
        return EXIT_USAGE;

    precision prec;
    if ((rc = cli_precision("image", dtype_s, NULL, NULL, NULL, NULL, &prec)) != 0)
        return rc;
    char err[512];
    vision_table vt;
    if ((table ? vision_table_load(table, &vt, err, sizeof err) : vision_table_builtin(&vt, err, sizeof err)) != 0)
        return cli_fail("image", table ? EXIT_USAGE : 1, "%s", err);
    int row;
    if ((rc = cli_find_key("image", "--model", "model", model_key, SPEC_ROWS(&vt), &row)) != 0) {
        vision_table_free(&vt);
        return rc;
    }
    const vision_spec *v = &vt.rows[row];
    model_spec lm;
    if (vision_lm_lookup(v, &lm) != 0) {
        rc = cli_fail("image", EXIT_USAGE, "%s names language model '%s', which no table holds", v->key, v->lm);
        vision_table_free(&vt);
        return rc;
    }
    cli_specs specs;
    const gpu_spec *gpu;
    if ((rc = cli_specs_load("image", &common, &specs)) != 0) {
        vision_table_free(&vt);
        return rc;
    }
    if ((rc = cli_find_gpu("image", &specs, "--gpu", gpu_key, &gpu)) != 0)
        goto done;
    double peak;
    if ((rc = cli_gpu_peak("image", gpu, prec.compute, &peak)) != 0)
        goto done;
    step_shape probe = decode_shape(1, 1, tp, prec);
    if (step_shape_check(&lm, &probe, err, sizeof err) != 0) {
        rc = cli_fail("image", EXIT_USAGE, "--tp %d: %s", tp, err);
        goto done;
    }

    vision_request q = vision_request_default(v, &lm, gpu);
    q.prec = prec;
    q.tp = tp;
    q.width = width;
    q.height = height;
    q.images = images;
    q.text_tokens = text;
    q.output_tokens = output;
    q.budget_tokens = budget;
    q.preprocess = pre;
    q.encoder_efficiency = enc_eff;
    q.lm_efficiency = lm_eff;
    q.ttft_target = ttft_target;
    q.policy = cli_policy(usable, -1, -1, hbm);
    vision_estimate e, t;
    if (vision_estimate_compute(&q, &e, err, sizeof err) != 0) {
        const char *flag = strstr(err, "image of") ? "--width/--height" : "input";
        rc = cli_fail("image", EXIT_USAGE, "%s: %s", flag, err);
        goto done;
    }
    if (!e.fit.fits) {
        char why[320];
        fit_check_describe(&e.fit, 1, e.fit_context, why, sizeof why);
        int most = -1;
        vision_request fewer = q;
        for (fewer.images = images - 1; fewer.images >= 0 && most < 0; fewer.images--) {
            vision_estimate f;
            if (fewer.images + text < 1)
                break;
            if (vision_estimate_compute(&fewer, &f, err, sizeof err) == 0 && f.fit.fits)
                most = fewer.images;
        }
        if (most >= 0)
            rc = cli_fail("image", EXIT_NO_FIT,
                          "one request of %d images (%d tokens of KV%s) does not fit: %s; the most images per "
                          "request that fit is %d",
                          images, e.fit_context, e.cross_tokens ? ", cross-attention KV counted as tokens" : "",
                          why, most);
        else
            rc = cli_fail("image", EXIT_NO_FIT, "one request does not fit even without images: %s", why);
        goto done;
    }
    vision_request tq = q;
    tq.images = 0;
    if (text < 1)
        tq.text_tokens = 1; /* an image-only request: compare with one text token */
    if (vision_estimate_compute(&tq, &t, err, sizeof err) != 0) {
        rc = cli_fail("image", EXIT_USAGE, "%s", err);
        goto done;
    }
    cli_rates cal;
    vision_estimate e_cal, t_cal;
    memset(&e_cal, 0, sizeof e_cal);
    memset(&t_cal, 0, sizeof t_cal);
    if ((rc = cli_rates_resolve("image", gpu, calibrate, roofline, &cal)) != 0)
        goto done;
    if (cal.have) {
        /* the fitted achieved shares stand in for the efficiencies: applying both would count the distance twice */
        vision_request qc = q, tqc = tq;
        qc.gpu = tqc.gpu = &cal.gpu;
        qc.encoder_efficiency = tqc.encoder_efficiency = qc.lm_efficiency = tqc.lm_efficiency = 1.0;
        if (vision_estimate_compute(&qc, &e_cal, err, sizeof err) != 0 ||
            vision_estimate_compute(&tqc, &t_cal, err, sizeof err) != 0) {
            rc = cli_fail("image", EXIT_USAGE, "%s", err);
            goto done;
        }
    }

    report *r = report_new("image");
    report_section(r, "setup");
    report_text(r, "model", "model", v->key);
    report_text(r, "lm", "language model", lm.key);
    report_text(r, "gpu", "GPU", gpu->key);
    report_int(r, "tp", "tensor parallel", tp);
    report_text(r, "dtype", "dtype", dtype_name(prec.weights));
    report_int(r, "images", "images per request", images);
    report_int(r, "text_tokens", "text tokens", text);
    report_int(r, "output_tokens", "output tokens", output);
    report_int(r, "budget_tokens", "prefill budget per step (tokens)", budget);
    if (images > 0)
        report_image(r, v, &e);
    report_section(r, "request");
    report_num(r, "prompt_tokens", "prompt tokens (self-attention)", U_TOKENS, e.prompt_tokens);
    report_num(r, "cross_tokens", "cross-attention KV tokens", U_TOKENS, e.cross_tokens);
    report_num(r, "context_tokens", "context held per sequence (prompt + output)", U_TOKENS, e.context_tokens);
    if (images > 0) {
        report_section(r, "vision encoder (one image, replicated on every GPU)");
        report_num(r, "encoder_params", "encoder + projector parameters", U_PARAMS, e.encoder.params);
        report_num(r, "encoder_flop", "FLOPs per image", U_FLOP, e.encoder.flop);
        report_num(r, "encoder_flop_attention", "of which attention", U_FLOP, e.encoder.flop_attention);
        report_num(r, "encoder_time_image", "time per image on one GPU", U_SECONDS, e.encoder.time);
        report_num(r, "encoder_time_sharded", "the same image split over the TP group", U_SECONDS,
                   e.encoder.time_sharded);
        report_num(r, "encoder_time_allreduce", "of which all-reduces (2 per layer)", U_SECONDS, e.encoder.time_comm);
        report_num(r, "encoder_time", "encoder time per request (images spread over the GPUs)", U_SECONDS,
                   e.encoder_time);
    }
    report_section(r, "prefill and first token");
    report_num(r, "preprocess", "preprocessing (given)", U_SECONDS, pre);
    report_num(r, "prefill_flop", "prefill FLOPs per GPU", U_FLOP, e.prefill_flop);
    report_num(r, "prefill_time", "prefill time", U_SECONDS, e.prefill_time);
    report_num(r, "ttft", "time to first token", U_SECONDS, e.ttft);
    report_num(r, "decode_time", "next decode step (batch 1)", U_SECONDS, e.decode_time);
    report_section(r, "memory and capacity");
    report_num(r, "kv_per_request", "KV per request (all GPUs)", U_BYTES, e.kv_bytes);
    report_num(r, "vision_bytes", "vision weights per GPU", U_BYTES, e.vision_bytes);
    report_num(r, "kv_budget", "KV budget per GPU", U_BYTES, e.fit.kv_budget);
    report_int(r, "max_batch", "largest concurrent batch, with images", e.max_batch);
    report_int(r, "budget_requests", "requests one prefill step admits", e.budget_requests);
    report_int(r, "step_requests", "of which meet the TTFT target", e.step_requests);
    report_num(r, "ttft_target", "TTFT target", U_SECONDS, ttft_target);
    report_num(r, "requests_per_s", "requests per second within the prefill budget, with images", U_REAL,
               e.requests_per_s);
    report_section(r, "text only (same text, no image)");
    report_num(r, "text_prompt_tokens", "prompt tokens", U_TOKENS, t.prompt_tokens);
    report_num(r, "text_ttft", "time to first token", U_SECONDS, t.ttft);
    report_num(r, "text_kv_per_request", "KV per request", U_BYTES, t.kv_bytes);
    report_int(r, "text_max_batch", "largest concurrent batch, text only", t.max_batch);
    report_num(r, "text_requests_per_s", "requests per second within the prefill budget, text only", U_REAL,
               t.requests_per_s);

    report_table *tb = report_table_add(r, "compare", "images vs text only");
    report_col(tb, "request", "request", U_TEXT, 0);
    report_col(tb, "prompt_tokens", "prompt tokens", U_TOKENS, 0);
    report_col(tb, "ttft", "TTFT", U_SECONDS, 0);
    report_col(tb, "kv_per_request", "KV per request", U_BYTES, 0);
    report_col(tb, "max_batch", "largest batch", U_INT, 0);
    report_col(tb, "requests_per_s", "requests/s", U_REAL, 0);
    const vision_estimate *rows[2] = {&e, &t};
    const char *names[2] = {"with images", "text only"};
    for (int i = 0; i < 2; i++) {
        report_cell_text(tb, names[i]);
        report_cell_num(tb, rows[i]->prompt_tokens);
        report_cell_num(tb, rows[i]->ttft);
        report_cell_num(tb, rows[i]->kv_bytes);
        report_cell_int(tb, rows[i]->max_batch);
        report_cell_num(tb, rows[i]->requests_per_s);
    }
    report_calibrated(r, &cal, &e_cal, &t_cal, images);
    if (images > 0 && e.image.clamped > 0)
        report_note(r, "the image exceeds max_pixels %.0f: the preprocessor shrinks it to %d x %d", v->max_pixels,
                    e.image.resized_w, e.image.resized_h);
    if (images > 0 && e.image.clamped < 0)
        report_note(r, "the image is under min_pixels %.0f: the preprocessor enlarges it to %d x %d", v->min_pixels,
                    e.image.resized_w, e.image.resized_h);
    if (v->family == VF_CROSS && images > 0)
        report_note(r, "image tokens live in the KV of %d cross-attention layers, not in the self-attention context",
                    v->cross_layers);
    if (e.prompt_tokens > budget)
        report_note(r, "the prompt (%d tokens) is longer than the budget: its prefill is chunked over %d steps",
                    e.prompt_tokens, (e.prompt_tokens + budget - 1) / budget);
    if (e.step_requests == 0)
        report_note(r, "not even one request meets the TTFT target of %g s (one alone takes %g s)", ttft_target,
                    e.ttft);
    if (text < 1)
        report_note(r, "the text-only column is for one text token");
    rc = report_print(r, common.format, stdout);
    report_free(r);
done:
    cli_specs_free(&specs);
    vision_table_free(&vt);
    return rc;
}
