/* The one rule that halves the measured serving runs into a fit half and a
 * held-out half: FNV-1a-64 of the run's id (its bytes, no terminator); an
 * even hash fits, an odd hash is held out.  A hash of the id, not the row's
 * position, so the split stays put when rows are added, reordered or
 * filtered, and anything fitted on serving runs and anything judged on them
 * call the same function. */
#ifndef NAPKIN_SPLIT_H
#define NAPKIN_SPLIT_H

#include <stdint.h>

/* FNV-1a, 64 bits: offset basis 14695981039346656037, prime 1099511628211. */
uint64_t run_id_hash(const char *id);

/* 1: the run is held out (odd hash), judged only; 0: it may be fitted on. */
int run_is_held_out(const char *id);

#endif
