/* A course roster: a CSV file with the header id,name,email (RFC 4180:
 * fields may be quoted, a quoted field may hold commas, doubled quotes and
 * line breaks), one student a row.
 *
 * An id names the student's folder (handouts/<id>/, keys/<id>/), so it is
 * kept to letters, digits, '.', '_' and '-', not starting with '.' or '-',
 * at most 64 bytes; a name is any text (it is escaped wherever it is
 * written).  Ids are unique.  The course program hands out by it and the
 * grade program grades by it, so both read it here. */
#ifndef NAPKIN_COURSE_ROSTER_H
#define NAPKIN_COURSE_ROSTER_H

#include <stddef.h>

typedef struct {
    char *id, *name, *email;
} roster_student;

typedef struct {
    int n;
    roster_student *students;
} roster;

/* Reads path into *out.  0, or -1 with a message naming path and line in
 * err (the roster is left empty); a roster without students is refused. */
int roster_load(const char *path, roster *out, char *err, size_t n);
void roster_free(roster *r);

/* The student with that id, or NULL. */
const roster_student *roster_find(const roster *r, const char *id);

/* Whether id is a roster id as above. */
int roster_id_ok(const char *id);

#endif
