/* The batch window's classic deadlock, kept as a specimen next to its fix.
 *
 * Both demos run the same tiny window batcher: one request is submitted, the
 * batch never fills, so the window timer must flush it.  They differ only in
 * how the timer path flushes.
 *
 * deadlock_demo_buggy: the timer calls the same flush() that the fill path
 * uses, and flush() first stops the timer, waiting for a timer callback in
 * progress to finish so that nothing flushes twice.  Called from the timer
 * callback, it waits for itself: the call never returns.  Run it only in a
 * child process with a watchdog (the tests do).
 *
 * deadlock_demo_fixed: one thread owns both triggers.  The fill path never
 * flushes and never stops anything; it only signals.  The flusher decides
 * and flushes itself, so no thread ever waits for the flush it is running.
 * Returns the number of requests flushed (1), or -1 if a thread cannot start. */
#ifndef NAPKIN_BATCHER_DEADLOCK_H
#define NAPKIN_BATCHER_DEADLOCK_H

int deadlock_demo_buggy(double window_s);
int deadlock_demo_fixed(double window_s);

#endif
