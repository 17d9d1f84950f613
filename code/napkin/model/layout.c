/* A replica's parallel layout: the flags as given, resolved and checked
 * (layout.h). */
#include "layout.h"

#include <stdio.h>

parallel_layout layout_single(void)
{
    return (parallel_layout){1, 1, 1, 1};
}

int layout_gpus(const parallel_layout *l)
{
    return l->tp * l->attention_dp;
}

int layout_has_ep(const parallel_layout *l)
{
    return l->moe_ep > 1;
}

moe_token_path layout_moe_token_path(const parallel_layout *l, moe_exchange exchange)
{
    if (l->attention_dp <= 1)
        return MOE_TOKENS_REPLICATED;
    return l->moe_ep > 1 && exchange == MOE_EXCHANGE_ALLTOALL ? MOE_TOKENS_ALLTOALL : MOE_TOKENS_GATHERED;
}

static int refuse(char *err, size_t errlen, const char *prefix, const char *flag, const char *why)
{
    snprintf(err, errlen, "--%s%s: %s", prefix, flag, why);
    return -1;
}

/* The quotient a / b when b divides a, else 0. */
static int exact_div(int a, int b)
{
    return b > 0 && a % b == 0 ? a / b : 0;
}

int layout_resolve(const model_spec *m, const char *prefix, int tp, int attention_dp, int moe_tp, int moe_ep,
                   parallel_layout *out, char *err, size_t errlen)
{
    char why[160];
    const int mixture = m->experts > 1;
    if (!prefix)
        prefix = "";
    if (tp < 1)
        return refuse(err, errlen, prefix, "tp", "must be at least 1");
    if (attention_dp < 0)
        return refuse(err, errlen, prefix, "attention-dp", "must be at least 1");
    if (moe_tp < 0)
        return refuse(err, errlen, prefix, "moe-tp", "must be at least 1");
    if (moe_ep < 0)
        return refuse(err, errlen, prefix, "moe-ep", "must be at least 1");
    if (!mixture && (moe_tp > 0 || moe_ep > 1)) {
        snprintf(why, sizeof why, "%s is a dense model: it has no experts to split", m->key);
        return refuse(err, errlen, prefix, moe_tp > 0 ? "moe-tp" : "moe-ep", why);
    }
    if (m->heads % tp != 0) {
        snprintf(why, sizeof why, "%d does not divide %s's %d attention heads", tp, m->key, m->heads);
        return refuse(err, errlen, prefix, "tp", why);
    }
    int d = attention_dp, mt = moe_tp, me = moe_ep;
    if (d == 0) {
        if (me > 0) {
            d = exact_div((mt > 0 ? mt : 1) * me, tp);
            if (d == 0) {
                snprintf(why, sizeof why,
                         "%d expert GPUs (moe-tp %d x moe-ep %d) are not a multiple of --%stp %d; "
                         "give --%sattention-dp",
                         (mt > 0 ? mt : 1) * me, mt > 0 ? mt : 1, me, prefix, tp, prefix);
                return refuse(err, errlen, prefix, "moe-ep", why);
            }
        } else
            d = 1;
    }
    const int gpus = tp * d;
    if (mt == 0) {
        mt = exact_div(gpus, me > 0 ? me : 1);
        if (mt == 0) {
            snprintf(why, sizeof why, "%d does not divide the replica's %d GPUs (tp %d x attention-dp %d)", me,
                     gpus, tp, d);
            return refuse(err, errlen, prefix, "moe-ep", why);
        }
    }
    if (me == 0) {
        me = exact_div(gpus, mt);
        if (me == 0) {
            snprintf(why, sizeof why, "%d does not divide the replica's %d GPUs (tp %d x attention-dp %d)", mt,
                     gpus, tp, d);
            return refuse(err, errlen, prefix, "moe-tp", why);
        }
    }
    if (mt * me != gpus) {
        snprintf(why, sizeof why,
                 "moe-tp %d x moe-ep %d = %d GPUs, but the replica spans tp %d x attention-dp %d = %d", mt, me,
                 mt * me, tp, d, gpus);
        return refuse(err, errlen, prefix, moe_ep > 0 ? "moe-ep" : "moe-tp", why);
    }
    if (mixture && m->experts % me != 0) {
        snprintf(why, sizeof why, "%d does not divide %s's %d routed experts", me, m->key, m->experts);
        return refuse(err, errlen, prefix, "moe-ep", why);
    }
    *out = (parallel_layout){tp, d, mt, me};
    return 0;
}
