/* The closed-loop benchmark replayed step by step: see simulate.h. */
#include "simulate.h"

#include "rng.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { WAITING, DECODING, DONE };

typedef struct {
    int state;
    int progress; /* prompt tokens prefilled */
    int produced; /* output tokens */
} sim_slot;

static int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return (x > y) - (x < y);
}

void sim_stats_of(double *x, int n, sim_stats *s)
{
    memset(s, 0, sizeof *s);
    if (n <= 0)
        return;
    qsort(x, (size_t)n, sizeof *x, cmp_double);
    double sum = 0;
    for (int i = 0; i < n; i++)
        sum += x[i];
    s->mean = sum / n;
    const double q[3] = {0.50, 0.90, 0.99};
    double *o[3] = {&s->p50, &s->p90, &s->p99};
    for (int j = 0; j < 3; j++) {
        double pos = q[j] * (n - 1);
        int lo = (int)floor(pos);
        int hi = lo + 1 < n ? lo + 1 : lo;
        *o[j] = x[lo] + (pos - lo) * (x[hi] - x[lo]);
    }
}

void sim_result_free(sim_result *r)
{
    free(r->requests);
    r->requests = NULL;
}

/* Send request i at time t: it reaches the engine after its overhead. */
static void send(const sim_setup *s, sim_request *q, int i, double t, rng_state *g)
{
    const double h = s->bench.overhead;
    const int O = s->bench.output, lo = (int)lround(O * (1 - s->spread)), hi = (int)lround(O * (1 + s->spread));
    q[i].sent = t;
    q[i].arrived = t + (s->jitter && h > 0 ? rng_exponential(g, 1 / h) : h);
    q[i].output = s->spread > 0 ? lo + (int)rng_below(g, (uint64_t)(hi - lo + 1)) : O;
    if (q[i].output < 1)
        q[i].output = 1;
}

//> sim_step
int sim_run(const sim_setup *s, int keep, sim_result *out, char *err, size_t errlen)
{
    const bench_setup *b = &s->bench;
    const int C = b->concurrency, N = bench_requests(b), B = bench_budget(b), P = b->prompt, O = b->output;
    memset(out, 0, sizeof *out);
    if (C < 1 || N < C || B < 1 || P < 1 || O < 1 || !(b->overhead >= 0) || !(s->spread >= 0 && s->spread < 1) || s->warmup < 0 || s->warmup >= N) {
        snprintf(err, errlen, "a simulation needs C >= 1, N >= C, a budget >= 1, prompt and output >= 1, an "
                              "overhead >= 0, an output spread from 0 to below 1 and fewer warm-up requests than N");
        return -1;
    }
    sim_request *q = calloc((size_t)N, sizeof *q);
    sim_slot *sl = calloc((size_t)N, sizeof *sl);
    int *live = malloc((size_t)C * sizeof *live); /* sent, not finished, in the order sent */
    double *x = malloc((size_t)N * sizeof *x);
    if (!q || !sl || !live || !x) {
        free(q), free(sl), free(live), free(x);
        snprintf(err, errlen, "out of memory");
        return -1;
    }
    rng_state g = rng_make(s->seed);
    int nlive = 0, nsent = 0, ndone = 0;
    for (; nsent < C; nsent++) { /* the start-up burst */
        q[nsent].ready = 0;
        send(s, q, nsent, 0, &g);
        live[nlive++] = nsent;
    }
    if (nsent < N)
        q[nsent].ready = 0; /* made ready as the last of the burst went */
    double t = 0;
    while (ndone < N) {
        /* the step: every decoding request, then prompt tokens in order of arrival */
        int decoding = 0, admitted = 0;
        double next_arrival = INFINITY;
        for (int j = 0; j < nlive; j++) {
            int i = live[j];
            if (sl[i].state == DECODING)
                decoding++;
            else if (q[i].arrived <= t)
                admitted++;
            else if (q[i].arrived < next_arrival)
                next_arrival = q[i].arrived;
        }
        if (decoding == 0 && admitted == 0) { /* idle until the next arrival */
            t = next_arrival;
            continue;
        }
        /* prefill first: a step with prompts to run carries no decodes */
        const int riding = b->prefill_first && admitted > 0 ? 0 : decoding;
        int room = B - riding > 0 ? B - riding : 1, tokens = 0;
        /* first come first served: repeatedly the earliest arrival not yet full */
        for (;;) {
            int pick = -1;
            for (int j = 0; j < nlive; j++) {
                int i = live[j];
                if (sl[i].state != WAITING || q[i].arrived > t || sl[i].progress < 0)
                    continue;
                if (pick < 0 || q[i].arrived < q[pick].arrived || (q[i].arrived == q[pick].arrived && i < pick))
                    pick = i;
            }
            if (pick < 0 || room <= 0)
                break;
            int take = P - sl[pick].progress < room ? P - sl[pick].progress : room;
            sl[pick].progress += take;
            tokens += take;
            room -= take;
            if (sl[pick].progress < P)
                break; /* chunked: the budget is spent */
            sl[pick].progress = -1; /* whole: first token at the end of this step */
        }
        t += step_costs_time(&s->costs, riding, tokens);
        out->steps++;
        /* after the step: first tokens, decoded tokens, completions (each sends the next) */
        for (int j = 0; j < nlive; j++) {
            int i = live[j];
            if (sl[i].state == DECODING) {
                if (riding == 0)
                    continue; /* paused for the prompts */
                sl[i].produced++;
            } else if (sl[i].progress == -1) {
                sl[i].state = DECODING;
                sl[i].produced = 1;
                q[i].first = t;
            } else
                continue;
            if (sl[i].produced >= q[i].output) {
                sl[i].state = DONE;
                q[i].last = t;
            }
        }
        int kept = 0;
        for (int j = 0; j < nlive; j++) {
            int i = live[j];
            if (sl[i].state != DONE) {
                live[kept++] = i;
                continue;
            }
            ndone++;
            if (nsent < N) { /* the next request goes now; the one after it is made ready */
                send(s, q, nsent, t, &g);
                if (nsent + 1 < N)
                    q[nsent + 1].ready = t;
                live[kept++] = nsent++;
            }
        }
        nlive = kept;
    }
    int m = 0;
    for (int i = s->warmup; i < N; i++)
        x[m++] = q[i].first - (b->departure_wait ? q[i].ready : q[i].sent);
    sim_stats_of(x, m, &out->ttft);
    m = 0;
    for (int i = s->warmup; i < N; i++)
        x[m++] = q[i].output > 1 ? (q[i].last - q[i].first) / (q[i].output - 1) : 0;
    sim_stats_of(x, m, &out->tpot);
    out->measured = m;
    out->makespan = t;
    free(sl), free(live), free(x);
    if (keep)
        out->requests = q;
    else
        free(q);
    return 0;
}
//< sim_step
