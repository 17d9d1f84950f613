/* The measured MoE and disaggregated serving runs
 * (code/specs/measured/serving_runs_moe.tsv) as napkin serve questions.
 *
 * Each run maps to ONE question, moe_run_question: the model table's row for
 * its model, the GPU row of its system, the calibration of the engine that
 * served it (published:<system>/<engine>), the precision of its weight
 * formats and the layout its columns state, priced through serving/'s
 * request estimate (the path serve takes).  A run the library cannot state
 * yet is refused with a reason, counted by reason; when a layout or
 * disaggregation lands, only the refusal it lifts changes.
 *
 * Today's answers: a mixture at tensor parallelism (moe_ep 1, experts split
 * like the rest, moe_tp = tp) and an expert-parallel group whose experts
 * are whole on each GPU (moe_tp 1: serving/expert_parallel.h's layout, ep =
 * moe_ep, attention ranks of tp GPUs).  concurrency is per attention rank,
 * as the runs state it (a DEP 8 run of batch 2 per rank holds 16).  A
 * disaggregated run is its two pools priced by serving/disagg.h's
 * disagg_pools_estimate, the path serve --disaggregate takes. */
#ifndef NAPKIN_VALIDATE_MOE_H
#define NAPKIN_VALIDATE_MOE_H

#include "disagg.h"
#include "layout.h"
#include "measured.h"
#include "validate.h"

#include <stddef.h>

/* A layout as a run states it: -1 where the table has "-" (the package left
 * it empty), 0 where the package says 0 (unknown). */
typedef struct {
    int workers, batch, tp, pp, attention_dp, moe_tp, moe_ep;
} moe_pool;

typedef struct {
    char id[160], model[64], system[16], backend[16], mode[16];
    char precision[16], gemm_quant[16], moe_quant[16];
    int isl, osl;
    moe_pool agg;             /* an aggregated run's (batch: concurrency per attention rank; workers -1) */
    moe_pool prefill, decode; /* a disaggregated run's pools */
    double ttft, tpot;        /* seconds, measured */
    int benchmark_concurrency; /* the requests the replica kept in flight, as the package states them; -1: unstated
                                  (or no such column) */
    char measured[16];         /* the day it was measured (YYYY-MM-DD); "-" unstated or no such column */
} moe_run;

/* The runs of t (serving_runs_moe.tsv's columns; name for messages) into
 * *out (malloc'd, the caller frees).  Returns their count, or -1 with a
 * message (a missing column). */
int moe_runs_read(const measured_table *t, const char *name, moe_run **out, char *err, size_t errlen);

#define MOE_REASON_MAX 160

/* One run as a question.  setup.gpu is the GPU table's row (the roofline);
 * the calibrated answer swaps in the rates named by calibration. */
typedef struct {
    const model_spec *model;
    char gpu_key[8];
    char calibration[80]; /* published:<system>/<backend> */
    parallel_layout layout;
    request_setup setup;
    request_options options;
    int disagg;       /* 1: a disaggregated run, priced as plan (setup and options unused) */
    disagg_plan plan; /* its pools as serve --disaggregate states them */
    char reason[MOE_REASON_MAX]; /* why not, when refused */
} moe_question;

/* Map run r to its question: 1 with *q filled, 0 refused with q->reason
 * ("model not in models.tsv: <path>", "fp4 weights of a model not released in fp4 (issue 33)",
 * "layout refused: ...", ...).
 *
 * A disaggregated run (mode disagg) maps to the pools it states, as
 * serve --disaggregate --prefill-workers W --prefill-tp T ... --decode-batch
 * C takes them: each pool's workers, tp, attention_dp, moe_tp, moe_ep and
 * batch (the decode batch per attention rank).  The package's benchmark
 * holds N = C x decode attention_dp x decode workers requests in flight,
 * and the id's "_c<N>_" states N (checked against every run that states
 * its pools in full: 1152 = 16 x 8 x 9, 154 = 77 x 1 x 2).  A run that
 * states no worker count and no batch for either pool (DeepSeek-R1's
 * 2026_03_25 and 2026_04_06 sweeps, every one of their 248 disaggregated
 * runs) is refused: its N fixes workers x batch, not the two, and the
 * 60 of them that repeat a DeepSeek-V3 run (same TPOT and TTFT to the
 * microsecond) show 1 to 9 decode workers and DEP 8 pools where the sweep
 * writes TP 8, so no rule on its columns recovers the pools.
 *
 * An aggregated DeepSeek-R1 run of TensorRT-LLM's sweep measured
 * 2026-01-14 at attention-DP 1 with expert parallelism is asked with
 * multi-token prediction (request_options.mtp_steps 1, mtp_accept 0.875):
 * see run_mtp in validate_moe.c for the evidence. */
int moe_run_question(const moe_run *r, const gpu_table *gpus, const model_table *models, moe_question *q);

/* One (model, system, engine, mode) group against the model. */
typedef struct {
    char model[64], model_key[32], system[16], backend[16], mode[16];
    char calibration[80];
    int runs, answered;
    double tpot_abs_err, tpot_err; /* calibrated, median |error| and median error (bias); NAN: none answered */
    double ttft_abs_err, ttft_err; /* closed-loop TTFT */
    double tpot_err_roofline;
} moe_group;

/* How many runs of a group were refused for one reason. */
typedef struct {
    int group;
    char reason[MOE_REASON_MAX];
    int runs;
} moe_refusal;

typedef struct {
    moe_group *groups;
    int ngroups;
    moe_refusal *refusals;
    int nrefusals;
    int runs, answered;
} moe_validation;

/* Every run of runs_path, grouped, priced and compared; refusals counted
 * by group and reason ("does not fit" for a question not one sequence of
 * which fits memory).  Returns 0 (free with moe_validation_free), or -1
 * with a message. */
int validate_moe(const char *runs_path, const gpu_table *gpus, const model_table *models, moe_validation *out,
                 char *err, size_t errlen);
void moe_validation_free(moe_validation *v);

#endif
