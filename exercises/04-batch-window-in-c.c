/* Chapter 4 fill-in kit: replace each TODO body, then `make exercise N=04`.
 * The untouched kit compiles and runs; its answers are wrong on purpose. */
#include "04-batch-window-in-c.h"

#include <math.h>

/* The flusher's decision (the heart of the flusher loop).  Check, in this
 * order: an empty queue, a full batch, an expired window; otherwise say
 * when the window expires. */
batcher_decision ex04_decide(size_t queued, double oldest_arrival, double now, size_t max_batch,
                             double max_wait, double *deadline)
{
    /* TODO */
    (void)queued, (void)oldest_arrival, (void)now, (void)max_batch, (void)max_wait, (void)deadline;
    return BATCHER_IDLE;
}

/* Whole seconds and nanoseconds of now + wait; mind the carry. */
struct timespec ex04_deadline(double now, double wait)
{
    /* TODO */
    (void)now, (void)wait;
    return (struct timespec){0, 0};
}

/* Count the handler calls of the recursive bisection. */
long ex04_bisect_calls(size_t n, const int *bad)
{
    /* TODO */
    (void)n, (void)bad;
    return 0;
}

/* Chapter 3's mean wait for a window with a size cap. */
double ex04_mean_wait(double lambda, double w, int max_batch)
{
    /* TODO */
    (void)lambda, (void)w, (void)max_batch;
    return NAN;
}

/* P(a batch fills before the window closes). */
double ex04_fill_share(double lambda, double w, int max_batch)
{
    /* TODO */
    (void)lambda, (void)w, (void)max_batch;
    return NAN;
}

double ex04_serial_throughput(size_t batch, double overhead, double fixed, double per_item)
{
    /* TODO */
    (void)batch, (void)overhead, (void)fixed, (void)per_item;
    return NAN;
}
