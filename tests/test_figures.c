/* napkin: no-asan
 * Every built figure reads in a browser: for each figures/NN-name.gp, the SVG
 * the build drew ($NB_BUILD/figures/NN-name.svg) carries every axis label
 * the script sets (xlabel, ylabel, y2label, cblabel given as a literal), as
 * text on the canvas, and no enhanced-text markup the SVG terminal leaves
 * unmapped ({/Symbol l} prints "l"). The expected labels are read from the
 * scripts, not from the SVGs. */
#include <criterion/criterion.h>

#include <dirent.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "test_text.h"

#define CANVAS_W 760.0 /* the Makefile's `set terminal svg size 760,460` */
#define CANVAS_H 460.0

/* The SVG's text with tags removed and the entities gnuplot writes decoded,
 * each text element's content on its own line. */
static char *svg_text(const char *svg)
{
    size_t n = strlen(svg);
    char *out = malloc(n + 1), *o = out;
    cr_assert_not_null(out);
    for (const char *p = svg; *p;) {
        if (*p == '<') {
            if (strncmp(p, "</text>", 7) == 0)
                *o++ = '\n';
            const char *e = strchr(p, '>');
            p = e ? e + 1 : p + strlen(p);
            continue;
        }
        static const struct { const char *ent; char c; } ents[] = {
            { "&amp;", '&' }, { "&lt;", '<' }, { "&gt;", '>' }, { "&apos;", '\'' }, { "&quot;", '"' },
        };
        int done = 0;
        for (size_t i = 0; i < sizeof ents / sizeof ents[0] && !done; i++)
            if (strncmp(p, ents[i].ent, strlen(ents[i].ent)) == 0) {
                *o++ = ents[i].c;
                p += strlen(ents[i].ent);
                done = 1;
            }
        if (!done)
            *o++ = *p++;
    }
    *o = 0;
    return out;
}

/* The translate(x,y) of the group holding a text, or 0 when there is none. */
static int text_position(const char *svg, const char *label, double *x, double *y)
{
    char *needle = fmt(">%s</tspan>", label);
    const char *hit = strstr(svg, needle);
    if (!hit)
        return 0;
    const char *g = NULL;
    for (const char *p = hit; p > svg; p--)
        if (strncmp(p, "translate(", 10) == 0) {
            g = p;
            break;
        }
    return g && sscanf(g, "translate(%lf,%lf)", x, y) == 2;
}

typedef struct {
    char name[256];
} gp_file;

static int list_scripts(const char *dir, gp_file *out, int max)
{
    DIR *d = opendir(dir);
    cr_assert_not_null(d, "cannot open %s", dir);
    int n = 0;
    struct dirent *e;
    while ((e = readdir(d)) && n < max) {
        size_t len = strlen(e->d_name);
        if (len > 3 && strcmp(e->d_name + len - 3, ".gp") == 0 && e->d_name[0] >= '0' && e->d_name[0] <= '9')
            snprintf(out[n++].name, sizeof out[0].name, "%.*s", (int)(len - 3), e->d_name);
    }
    closedir(d);
    return n;
}

/* Each `set xlabel 'literal'` (ylabel, y2label, cblabel; single or double
 * quotes) of a script, in order; labels built with sprintf are skipped. */
static int script_labels(const char *gp, char labels[][200], int max)
{
    int n = 0;
    static const char *kinds[] = { "set xlabel ", "set ylabel ", "set y2label ", "set cblabel " };
    for (const char *line = gp; line && *line && n < max; line = strchr(line, '\n') ? strchr(line, '\n') + 1 : NULL) {
        const char *hash = line;
        while (*hash == ' ' || *hash == '\t')
            hash++;
        if (*hash == '#')
            continue;
        for (size_t k = 0; k < sizeof kinds / sizeof kinds[0]; k++) {
            for (const char *p = strstr(line, kinds[k]); p && (!strchr(line, '\n') || p < strchr(line, '\n'));
                 p = strstr(p + 1, kinds[k])) {
                const char *q = p + strlen(kinds[k]);
                if (*q != '\'' && *q != '"')
                    continue;
                const char *end = strchr(q + 1, *q);
                if (!end || (strchr(line, '\n') && end > strchr(line, '\n')))
                    continue;
                snprintf(labels[n], 200, "%.*s", (int)(end - q - 1), q + 1);
                if (++n == max)
                    return n;
            }
        }
    }
    return n;
}

Test(figures, every_svg_has_its_axis_labels_on_the_canvas)
{
    const char *src = need_env("NB_SRC"), *build = need_env("NB_BUILD");
    gp_file scripts[128];
    int n = list_scripts(fmt("%s/figures", src), scripts, 128);
    cr_assert_gt(n, 0, "no figure scripts in %s/figures", src);
    int checked = 0;
    for (int i = 0; i < n; i++) {
        char *gp = slurp(fmt("%s/figures/%s.gp", src, scripts[i].name));
        char *svg = slurp(fmt("%s/figures/%s.svg", build, scripts[i].name));
        cr_assert_not_null(gp);
        cr_assert_not_null(svg, "%s/figures/%s.svg is missing: run `make figures` first", build, scripts[i].name);
        char *text = svg_text(svg);
        char labels[16][200];
        int m = script_labels(gp, labels, 16);
        cr_expect_gt(m, 0, "figures/%s.gp sets no axis label", scripts[i].name);
        for (int k = 0; k < m; k++) {
            cr_expect_neq(strstr(text, labels[k]), NULL, "figure %s: axis label '%s' is not in its SVG",
                          scripts[i].name, labels[k]);
            double x, y;
            if (text_position(svg, labels[k], &x, &y))
                cr_expect(x >= 0 && x <= CANVAS_W && y >= 0 && y <= CANVAS_H,
                          "figure %s: label '%s' drawn off the canvas at (%.0f, %.0f)", scripts[i].name,
                          labels[k], x, y);
            checked++;
        }
        cr_expect_eq(strstr(svg, "{/Symbol"), NULL, "figure %s: '{/Symbol ...}' does not map in SVG; write the UTF-8 character",
                     scripts[i].name);
        cr_expect_eq(strstr(gp, "{/Symbol"), NULL, "figures/%s.gp: '{/Symbol ...}' does not map in SVG; write the UTF-8 character",
                     scripts[i].name);
        free(text);
    }
    cr_expect_gt(checked, n, "fewer labels than figures: the label reader found too little");
}

/* The label reader itself, on a script written here: two literal labels, a
 * sprintf one skipped, a commented one skipped, one inside an if block. */
Test(figures, label_reader)
{
    const char *gp = "set xlabel 'Batch (sequences)'\n"
                     "# set ylabel 'not this'\n"
                     "set ylabel sprintf('%d', 3)\n"
                     "    if (t == 0) { set ylabel \"Speedup\" } else { unset ylabel }\n"
                     "set cblabel 'x' offset -0.5, 0\n";
    char labels[8][200];
    int n = script_labels(gp, labels, 8);
    cr_assert_eq(n, 3);
    cr_expect_str_eq(labels[0], "Batch (sequences)");
    cr_expect_str_eq(labels[1], "Speedup");
    cr_expect_str_eq(labels[2], "x");
}
