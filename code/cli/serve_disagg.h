/* napkin serve --disaggregate: prefill and decode on separate pools, each
 * its own layout, worker count and batch (code/napkin/serving/disagg.h),
 * one split, a split at a --rate, or the search over splits; the roofline's
 * answer and the calibrated one beside it. */
#ifndef NAPKIN_SERVE_DISAGG_H
#define NAPKIN_SERVE_DISAGG_H

#include "cli_args.h"
#include "cli_device.h"
#include "cli_ep.h"
#include "cli_report.h"
#include "request.h"

/* One pool's flags, 0 where not given. */
typedef struct {
    int workers, tp, attention_dp, moe_tp, moe_ep, batch;
} pool_flags;

typedef struct {
    int prefill_gpus, decode_gpus; /* the older form: pools of --tp GPUs (0: not given) */
    pool_flags prefill, decode;
    double kv_link_gb_s;           /* 0: chosen from where the pools sit (disagg_kv_link) */
    double kv_link_us;             /* fixed cost of a hand-off, microseconds */
} disagg_flags;

#define DISAGG_NOPTS 15
/* The flags, into opts[0..DISAGG_NOPTS-1]. */
void disagg_flag_opts(disagg_flags *f, cli_opt *opts);

/* The name of the first pool or link flag given (they go with
 * --disaggregate), or NULL when none is. */
const char *disagg_flag_given(const disagg_flags *f);

/* Add the sections of a disaggregated answer to r: s is the request as
 * planned (its tp the default of each pool's, its concurrency the default
 * decode batch), ef the links (--gpus-per-node, --net-gb-s) and the router;
 * search: the best split of `gpus` under ttft and tpot; rate > 0: the
 * smallest decode batch that serves it.  Returns 0, or the exit status
 * after printing the message (EXIT_USAGE for a bad split or flag, naming
 * it; EXIT_NO_FIT when nothing fits, meets the targets or serves the rate). */
int serve_disaggregated(report *r, const device_setup *d, const request_setup *s, const ep_flags *ef,
                        const disagg_flags *f, int search, int gpus, double ttft, double tpot, double rate);

#endif
