/* Strings from outside (a student's name, a file's name, an unknown part
 * id) written safely into each format the grade program writes: valid
 * UTF-8 for JSON, XML without the characters XML 1.0 forbids, CSV fields
 * quoted and without a leading formula character, and the terminal
 * without control characters. */
#ifndef GRADE_TEXT_H
#define GRADE_TEXT_H

#include <stdio.h>

/* The length of the valid UTF-8 sequence at s (1-4), or 0 when it is not
 * one (a stray byte, an overlong form, a surrogate, past U+10FFFF). */
int utf8_sequence(const unsigned char *s);

/* A copy of s as valid UTF-8, each invalid byte U+FFFD, and, when
 * no_controls, each control character (C0 but tab and newline, DEL, C1)
 * U+FFFD too.  The caller frees it; NULL for NULL. */
char *text_valid(const char *s, int no_controls);

/* s as XML attribute or element text: escaped, valid, no control character. */
void xml_text(FILE *f, const char *s);
/* s as one CSV field (RFC 4180): always quoted, quotes doubled, and a
 * leading = + - @ tab or CR prefixed with ' so no spreadsheet runs it. */
void csv_field(FILE *f, const char *s);
/* s for a terminal: control characters, DEL, C1 controls and invalid
 * UTF-8 bytes as \xNN, a backslash as \\; the rest as is. */
void term_text(FILE *f, const char *s);

#endif
