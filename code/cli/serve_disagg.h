/* napkin serve --disaggregate: prefill and decode on separate pools
 * (code/napkin/serving/disagg.h), one split or the search over splits. */
#ifndef NAPKIN_SERVE_DISAGG_H
#define NAPKIN_SERVE_DISAGG_H

#include "cli_report.h"
#include "request.h"

typedef struct {
    int prefill_gpus, decode_gpus; /* 0: not given */
    double kv_link_gb_s;           /* 0: the GPU row's link (NVLink), for pools in one node */
    double kv_link_us;             /* fixed cost of a hand-off, microseconds */
} disagg_flags;

/* Add the sections of a disaggregated answer to r, titled with its kind
 * ("Bound" or "Estimate", device_first_kind); rate > 0 (one split,
 * not the search): the smallest decode concurrency that serves it
 * (disagg_for_rate).  Returns 0, or the exit status after printing the
 * message (EXIT_USAGE for a bad split, EXIT_NO_FIT when nothing fits, meets
 * the targets or serves the rate). */
int serve_disaggregated(report *r, const char *kind, const request_setup *s, const disagg_flags *f, int search, int gpus,
                        double ttft, double tpot, double rate);

#endif
