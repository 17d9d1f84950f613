/* The multi-token-prediction flags that decode and serve share (--mtp,
 * --mtp-accept), checked in one place, and the report section that shows
 * the round (model/mtp.h). */
#ifndef NAPKIN_CLI_MTP_H
#define NAPKIN_CLI_MTP_H

#include "cli_args.h"
#include "cli_report.h"
#include "mtp.h"

typedef struct {
    int steps;          /* --mtp N: 0 = not given (no multi-token prediction) */
    const char *accept; /* --mtp-accept A as given; NULL = not given */
} mtp_flags;

/* The flags as they were read: neither given. */
mtp_flags mtp_flags_default(void);

#define MTP_NOPTS 2
/* The flags, into opts[0..MTP_NOPTS-1]. */
void mtp_flag_opts(mtp_flags *f, cli_opt *opts);

/* Check the flags for model m: --mtp-accept goes with --mtp, is a number in
 * [0, 1); --mtp needs --mtp-accept and a model that ships an MTP module.
 * *steps = 0 without --mtp.  Returns 0, or EXIT_USAGE after the message. */
int mtp_flags_resolve(const char *cmd, const mtp_flags *f, const model_spec *m, int *steps, double *accept);

/* The round's lines: tokens a step, verify step, module pass and time, the
 * time per output token with multi-token prediction and without (the plain
 * decode step, or TPOT, priced the same way).  suffix ("" or "_calibrated")
 * ends every key; what names the answer for people ("" or ", calibrated"). */
void mtp_report(report *r, const mtp_round *m, int steps, double accept, double without, const char *suffix,
                const char *what);

/* The modules' memory on one GPU of a tp group (mtp_weight_bytes_per_gpu,
 * mtp_kv_bytes_per_token_per_gpu). */
void mtp_report_memory(report *r, const model_spec *m, precision prec, int tp);

#endif
