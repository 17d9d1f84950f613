/* Any text (a roster name, a file's name, an exercise's words) written
 * into the file formats the course and grade programs write, escaped for
 * each: XML, CSV and Markdown, and a valid copy for a JSON writer.  Each
 * writer first makes the text valid UTF-8 (utf8.h): a byte that is not
 * UTF-8 and a control character (C0 but tab and line feed, DEL, C1) become
 * U+FFFD, so no input makes an output invalid.  Text for a terminal goes
 * through text_escape.h instead. */
#ifndef NAPKIN_TEXT_FORMATS_H
#define NAPKIN_TEXT_FORMATS_H

#include <stdio.h>

/* Character data or an attribute value: & < > " ' as entities, a tab and
 * a line feed as character references (an attribute keeps them so). */
void text_xml(FILE *f, const char *s);

/* One CSV field (RFC 4180): quoted when it holds a comma, quote or line
 * break, quotes doubled; a field a spreadsheet would read as a formula
 * (first character = + - @, tab or carriage return) gets a leading
 * apostrophe, quoted. */
void text_csv(FILE *f, const char *s);

/* Inline Markdown text: every ASCII punctuation character backslash-escaped,
 * a tab and a line break as a space, so a name cannot open a link, a list
 * or raw HTML. */
void text_md(FILE *f, const char *s);

/* A copy of s as valid UTF-8, each byte that is not as U+FFFD; control
 * characters are kept (a JSON writer escapes them).  The caller frees it;
 * NULL for NULL or when out of memory. */
char *text_utf8_valid(const char *s);

#endif
