/* A fresh directory for a test's files, under $TMPDIR (or /tmp), never in
 * the tree, and its removal with everything in it.  Include it after
 * Criterion (or criterion_or_shim.h).
 *
 *   one per test:   char dir[SCRATCH_DIR_SIZE];
 *                   scratch_dir_make(dir, "jq");  ...  scratch_dir_remove(dir);
 *   a suite's:      TestSuite(twins, .init = scratch_suite_make, .fini = scratch_suite_remove);
 *                   each test finds its own fresh directory in scratch_dir,
 *                   names a file in it with scratch_path("x.csv") and
 *                   writes one with scratch_write("x.csv", text)
 *
 * (A suite's .init and .fini take no arguments, hence the one directory
 * per file; the ThreadSanitizer runner has no suite fixtures, so the suites
 * it runs make theirs per test.)  Removal walks the tree itself rather than
 * asking a shell, so no quoting of $TMPDIR can go wrong, and it never
 * follows a link out of the directory. */
#ifndef NAPKIN_TEST_SCRATCH_DIR_H
#define NAPKIN_TEST_SCRATCH_DIR_H

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

enum { SCRATCH_DIR_SIZE = 256 };

/* Make "<$TMPDIR or /tmp>/napkin-<name>-XXXXXX" in dir (SCRATCH_DIR_SIZE
 * bytes); the test stops if it cannot. */
__attribute__((unused)) static void scratch_dir_make(char *dir, const char *name)
{
    const char *tmp = getenv("TMPDIR");
    int n = snprintf(dir, SCRATCH_DIR_SIZE, "%s/napkin-%s-XXXXXX", tmp && *tmp ? tmp : "/tmp", name);
    cr_assert(n > 0 && n < SCRATCH_DIR_SIZE, "scratch directory name too long under %s", tmp);
    cr_assert_not_null(mkdtemp(dir), "cannot make %s", dir);
}

/* Remove path: a file or link, or a directory and everything below it.
 * 0, or -1 when something stayed. */
__attribute__((unused)) static int scratch_remove_tree(const char *path)
{
    struct stat st;
    if (lstat(path, &st) != 0)
        return -1;
    if (!S_ISDIR(st.st_mode))
        return unlink(path);
    DIR *d = opendir(path);
    if (!d)
        return -1;
    int rc = 0;
    struct dirent *e;
    while ((e = readdir(d)) != NULL) {
        if (strcmp(e->d_name, ".") == 0 || strcmp(e->d_name, "..") == 0)
            continue;
        char child[1024];
        int n = snprintf(child, sizeof child, "%s/%s", path, e->d_name);
        if (n < 0 || (size_t)n >= sizeof child || scratch_remove_tree(child) != 0)
            rc = -1;
    }
    closedir(d);
    return rmdir(path) == 0 ? rc : -1;
}

/* Remove dir with everything in it; a directory that stays is named on
 * stderr, not failed: the test's own checks have spoken by then. */
__attribute__((unused)) static void scratch_dir_remove(const char *dir)
{
    if (dir[0] && scratch_remove_tree(dir) != 0)
        fprintf(stderr, "could not remove %s\n", dir);
}

/* The suite's directory: a fresh one for each of its tests. */
__attribute__((unused)) static char scratch_dir[SCRATCH_DIR_SIZE];

__attribute__((unused)) static void scratch_suite_make(void)
{
    scratch_dir_make(scratch_dir, "test");
}

__attribute__((unused)) static void scratch_suite_remove(void)
{
    scratch_dir_remove(scratch_dir);
}

/* "<scratch_dir>/name", in one of four buffers used in turn, so a path
 * lasts through the next three calls (one command line names several). */
__attribute__((unused)) static const char *scratch_path(const char *name)
{
    static char p[4][SCRATCH_DIR_SIZE + 768];
    static int k;
    k = (k + 1) % 4;
    int len = snprintf(p[k], sizeof p[k], "%s/%s", scratch_dir, name);
    cr_assert(len > 0 && (size_t)len < sizeof p[k], "scratch path too long: %s", name);
    return p[k];
}

/* text as the whole of scratch_path(name); the test stops if it cannot. */
__attribute__((unused)) static void scratch_write(const char *name, const char *text)
{
    FILE *f = fopen(scratch_path(name), "wb");
    cr_assert_not_null(f, "cannot write %s", name);
    fputs(text, f);
    cr_assert_eq(fclose(f), 0, "cannot write %s", name);
}

#endif
