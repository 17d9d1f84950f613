/* A course roster: CSV (RFC 4180) with the header id,name,email; names may
 * hold commas, quotes and newlines inside quotes.  An id is the student's
 * name in every path the grader writes, so it is letters, digits, '.', '_'
 * and '-' only, not starting with '.', and unique. */
#ifndef GRADE_ROSTER_H
#define GRADE_ROSTER_H

typedef struct {
    char *id, *name, *email;
} roster_student;

typedef struct {
    int n;
    roster_student *students;
} roster;

/* Reads path into *r.  Returns 0, or -1 with why (file:line) in err. */
int roster_load(const char *path, roster *r, char *err, int n);
void roster_free(roster *r);
/* The student with that id, or NULL. */
const roster_student *roster_find(const roster *r, const char *id);
/* Whether id may name a student's folder: [A-Za-z0-9._-]+, no leading '.'. */
int roster_id_ok(const char *id);

#endif
