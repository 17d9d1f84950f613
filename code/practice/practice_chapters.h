/* The chapters with exercise variants: the one list the dispatcher
 * (practice.c) turns into its table and into practice_chapters()'s text.
 * A new chapter's generator is a file practice_chNN.c defining
 * practice_build_chNN and one line here. */
#ifndef NAPKIN_PRACTICE_CHAPTERS_H
#define NAPKIN_PRACTICE_CHAPTERS_H

#include "practice_set.h"

#include <stdint.h>

#define PRACTICE_CHAPTERS(X)                                                                                          \
    X(1, practice_build_ch01)                                                                                         \
    X(2, practice_build_ch02)                                                                                         \
    X(3, practice_build_ch03)                                                                                         \
    X(4, practice_build_ch04)                                                                                         \
    X(5, practice_build_ch05)                                                                                         \
    X(6, practice_build_ch06)                                                                                         \
    X(7, practice_build_ch07)                                                                                         \
    X(8, practice_build_ch08)                                                                                         \
    X(9, practice_build_ch09)                                                                                         \
    X(10, practice_build_ch10)                                                                                        \
    X(11, practice_build_ch11)                                                                                        \
    X(12, practice_build_ch12)                                                                                        \
    X(13, practice_build_ch13)

/* Each chapter's generator: fills *out (zeroed, chapter and seed set) with
 * the variant of seed; 0, or -1. */
#define PRACTICE_DECLARE(n, build) int build(uint64_t seed, practice_set *out);
PRACTICE_CHAPTERS(PRACTICE_DECLARE)
#undef PRACTICE_DECLARE

#endif
