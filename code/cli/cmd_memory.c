/* napkin memory: what one GPU of a replica holds, and how many sequences fit. */
#include "cli_replica.h"
#include "commands.h"

#include <string.h>

static const cli_doc DOC = {
    "memory",
    "weights, KV cache and the largest batch that fits one GPU of a replica",
    "--model M --gpu G [--tp N] [--context C] [--dtype D | --weights Q --moe-weights Q --kv D --act D]\n"
    "                     [--attention-dp D] [--moe-tp M] [--moe-ep E | --ep E]\n"
    "                     [--usable F] [--activation-tokens T] [--format table|tsv|json]",
    "Per GPU of a tensor-parallel group: usable = HBM x usable share; left for KV =\n"
    "usable - weights / tp - activation reserve; the largest batch is how many\n"
    "sequences of --context tokens that KV budget holds.  KV per token counts KV\n"
    "heads (GQA), split over tp and replicated when tp exceeds them.\n"
    "A mixture's layout as the engines state it: --attention-dp D ranks of --tp\n"
    "GPUs each hold their own sequences (the replica spans tp x D GPUs); the\n"
    "routed experts split --moe-tp M x --moe-ep E (M x E = tp x D): one GPU\n"
    "holds the dense part / tp, the shared experts / M, the routed / (M x E), and\n"
    "its rank's KV.\n"
    "--weights Q stores every weight in format Q (bf16; fp8, one scale a tensor;\n"
    "fp8_block, an fp32 scale per 128 x 128 block; int4_wo, a 16-bit scale and\n"
    "a 4-bit zero per group of 128; nvfp4, an fp8 scale per 16 values; mxfp4,\n"
    "an 8-bit exponent per 32), the scales counted; --moe-weights Q the routed\n"
    "experts alone.\n"
    "Linear-attention layers (Qwen3.5's Gated DeltaNet) keep a fixed state per\n"
    "sequence instead of KV: counted beside the other layers' KV, the same at\n"
    "every context.\n"
    "Exit status 1 when the weights and reserve alone exceed the usable memory\n"
    "(try a larger --tp or smaller --weights); 2 for a bad flag or a tp that does\n"
    "not divide the heads.",
};

int cmd_memory(int argc, char **argv)
{
    replica_flags f = replica_flags_default(DEVICE_GPU | DEVICE_MEMORY);
    ep_flags layout = ep_flags_default();
    cli_opt opts[REPLICA_NOPTS_MAX + EP_NOPTS], ep_opts[EP_NOPTS];
    int nopts = replica_flag_opts(&f, opts) - 1; /* all but --compute: nothing is computed */
    ep_flag_opts(&layout, ep_opts); /* the layout's flags only: no step, so no links */
    memcpy(opts + nopts, ep_opts, EP_LAYOUT_NOPTS * sizeof *ep_opts);
    nopts += EP_LAYOUT_NOPTS;
    f.layout = &layout;
    cli_common common;
    int rc = cli_parse(&DOC, argc, argv, opts, nopts, &common);
    if (rc != CLI_GO)
        return rc == CLI_HELP_SHOWN ? 0 : rc;

    cli_specs specs;
    device_setup d;
    replica_setup s;
    report *r = NULL;
    if ((rc = cli_specs_load(DOC.name, &common, &specs)) != 0)
        return rc;
    if ((rc = replica_setup_resolve(DOC.name, &specs, &f, &d, &s)) != 0)
        goto done;
    r = report_new(DOC.name);
    replica_report_inputs(r, &s);
    if (layout_is_split(&s.layout))
        layout_report(r, &s.layout, -1);
    replica_report_memory(r, &s);
    if (max_batch_for_memory(&s.mem, s.context) == 0)
        report_note(r, "warning: not one sequence of %d tokens fits the KV budget; shorten --context or raise --tp.",
                    s.context);
    rc = report_print(r, common.format, stdout);
done:
    report_free(r);
    cli_specs_free(&specs);
    return rc;
}
