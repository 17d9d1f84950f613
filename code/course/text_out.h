/* Writing any text (a roster name, an exercise's words) into the formats
 * the course tools write, escaped for each: XML, CSV and Markdown.  Every
 * writer first makes the text valid UTF-8: an invalid byte and a control
 * character (other than tab and line feed, where the format keeps them)
 * become U+FFFD, so no input makes an output invalid. */
#ifndef NAPKIN_COURSE_TEXT_OUT_H
#define NAPKIN_COURSE_TEXT_OUT_H

#include <stdio.h>

/* Character data or an attribute value: & < > " ' as entities. */
void text_xml(FILE *f, const char *s);
/* One CSV field (RFC 4180): quoted when it holds a comma, quote or line
 * break; a field a spreadsheet would read as a formula (first character
 * = + - @, tab or carriage return) gets a leading apostrophe, quoted. */
void text_csv(FILE *f, const char *s);
/* Inline Markdown text: every ASCII punctuation character backslash-escaped,
 * line breaks as spaces, so a name cannot open a link, a list or raw HTML. */
void text_md(FILE *f, const char *s);

/* The length of the valid UTF-8 sequence at s (1 to 4), or 0 when the
 * bytes there are not one (a stray continuation byte, an overlong form, a
 * surrogate, a truncated sequence, above U+10FFFF). */
int text_utf8_len(const unsigned char *s);

#endif
