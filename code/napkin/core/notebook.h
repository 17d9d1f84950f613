/* Notebook side channel: how a program hands numbers and data to the book.
 *
 * nb_value("ridge_h100", "%.0f", r) appends "ridge_h100\t295" to the file
 * named by $NB_VALUES; the book's prose then says {{ridge_h100}}.
 * nb_data_open("01-roofline.tsv") opens $NB_DATA/01-roofline.tsv for a figure.
 *
 * Values never go to stdout, because stdout of a run cell is shown in the book.
 * With $NB_VALUES unset a value is silently dropped, so chapter programs also
 * run by hand.  Names are [a-z0-9_]+; anything else is a programming error
 * and aborts with a message. */
#ifndef NAPKIN_NOTEBOOK_H
#define NAPKIN_NOTEBOOK_H

#include <stdio.h>

#if defined(__GNUC__)
#define NB_PRINTF(a, b) __attribute__((format(printf, a, b)))
#else
#define NB_PRINTF(a, b)
#endif

/* Record one value; exits with status 1 on a bad name or an I/O error. */
void nb_value(const char *name, const char *fmt, ...) NB_PRINTF(2, 3);

/* Open a data file for writing under $NB_DATA (default "build/data").
 * Exits with status 1 and a message if it cannot be opened. */
FILE *nb_data_open(const char *filename);

/* 1 when name is a valid value name. */
int nb_valid_name(const char *name);

#endif
