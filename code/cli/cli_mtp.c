#include "cli_mtp.h"

#include "memory.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

mtp_flags mtp_flags_default(void)
{
    mtp_flags f = {0, NULL};
    return f;
}

void mtp_flag_opts(mtp_flags *f, cli_opt *o)
{
    const cli_opt opts[MTP_NOPTS] = {
        {"--mtp", OPT_POS_INT, &f->steps, "N",
         "multi-token prediction: the model's MTP module drafts N tokens a step, the model verifies N + 1", 0, 0},
        {"--mtp-accept", OPT_STRING, &f->accept, "A", "with --mtp: acceptance of each drafted token, in [0, 1)", 0,
         0},
    };
    memcpy(o, opts, sizeof opts);
}

int mtp_flags_resolve(const char *cmd, const mtp_flags *f, const model_spec *m, int *steps, double *accept)
{
    *steps = 0;
    *accept = 0;
    if (!f->steps && f->accept)
        return cli_fail(cmd, EXIT_USAGE, "--mtp-accept goes with --mtp");
    if (!f->steps)
        return 0;
    if (!f->accept)
        return cli_fail(cmd, EXIT_USAGE, "--mtp %d needs --mtp-accept A, the acceptance of each drafted token",
                        f->steps);
    char *end = NULL;
    double a = strtod(f->accept, &end);
    if (end == f->accept || *end != '\0' || !(a >= 0 && a < 1))
        return cli_fail(cmd, EXIT_USAGE, "--mtp-accept '%s': the acceptance of a drafted token is a number in "
                                         "[0, 1) (at 1 every draft would pass)", f->accept);
    if (m->mtp_layers < 1)
        return cli_fail(cmd, EXIT_USAGE, "--mtp %d: %s ships no multi-token-prediction module (its models.tsv row "
                                         "has no mtp= in arch); use speculative decoding with a draft model "
                                         "(napkin spec)", f->steps, m->key);
    char err[256];
    if (mtp_check(m, f->steps, a, err, sizeof err) != 0) /* the library's own word on the rest */
        return cli_fail(cmd, EXIT_USAGE, "--mtp %d: %s", f->steps, err);
    *steps = f->steps;
    *accept = a;
    return 0;
}

static void key(char *buf, size_t n, const char *base, const char *suffix)
{
    snprintf(buf, n, "%s%s", base, suffix);
}

void mtp_report(report *r, const mtp_round *m, int steps, double accept, double without, const char *suffix,
                const char *what)
{
    char k[64], label[128];
    snprintf(label, sizeof label, "Multi-token prediction%s", what);
    report_section(r, label);
    if (!*suffix) { /* the inputs once */
        report_int(r, "mtp_steps", "tokens the module drafts a step", steps);
        report_num(r, "mtp_accept", "acceptance of each drafted token", U_REAL, accept);
        report_num(r, "mtp_tokens_per_step", "expected tokens a step yields (1 + A + ... + A^N)", U_REAL, m->tokens);
    }
    key(k, sizeof k, "mtp_verify_step", suffix);
    report_num(r, k, "verify step (N + 1 tokens a sequence)", U_SECONDS, m->verify);
    key(k, sizeof k, "mtp_module_pass", suffix);
    report_num(r, k, "one module pass (one drafted token a sequence)", U_SECONDS, m->pass);
    key(k, sizeof k, "mtp_module_time", suffix);
    report_num(r, k, "module time a step (N passes)", U_SECONDS, m->module);
    key(k, sizeof k, "mtp_round", suffix);
    report_num(r, k, "a step with its drafts (verify + module)", U_SECONDS, m->round);
    key(k, sizeof k, "tpot_mtp", suffix);
    report_num(r, k, "time per output token with MTP (step / tokens a step)", U_SECONDS, m->per_token);
    key(k, sizeof k, "tpot_without_mtp", suffix);
    report_num(r, k, "time per output token without MTP", U_SECONDS, without);
    key(k, sizeof k, "mtp_speedup", suffix);
    report_num(r, k, "speedup of the decode (without / with)", U_REAL, without / m->per_token);
}

void mtp_report_memory(report *r, const model_spec *m, precision prec, int tp)
{
    report_num(r, "mtp_weight_bytes_per_gpu", "MTP module weights per GPU (embedding and head shared)", U_BYTES,
               mtp_weight_bytes_per_gpu_at(m, prec, tp));
    report_num(r, "mtp_kv_per_token", "MTP module KV per token per GPU", U_BYTES,
               mtp_kv_bytes_per_token_per_gpu(m, prec.kv, tp));
}
