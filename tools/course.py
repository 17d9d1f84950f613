"""make course: a roster in, each student's seeds, handouts and keys out.

    python3 tools/course.py --course-bin build/bin/course/course --roster roster.csv \
        --chapters 01,06 [--salt S] --out build/course --calc-page build/web/calc.html \
        --values 01 "a.tsv b.tsv" --values 06 "..." [--no-pdf]

Writes OUT/seeds.csv (id,name,chapter,seed: the course program's, from
course_seed), OUT/keys/<id>/chapter-NN.md (the course program's keys), and
for each student and chapter OUT/handouts/<id>/chapter-NN.html (the exercise
set with that student's numbers, their name, id and seed, and the live
answer boxes, whose export writes their id and seed) and chapter-NN.pdf
(printed by headless Chromium, tools/cdp.py).

Every name and id reaches a child process as one argument of an argument
list, never through a shell; ids are checked by the course program's roster
reader (letters, digits, '.', '_', '-') before they name a folder.
"""
import argparse
import base64
import csv
import html
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser, find_chromium  # noqa: E402


def run(args, env=None):
    r = subprocess.run(args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    if r.returncode != 0:
        sys.stderr.write(r.stderr.decode("utf-8", "replace"))
        raise SystemExit("course: %s failed (exit %d)" % (os.path.basename(args[0]), r.returncode))
    return r.stdout


def exercise_md(chapter):
    for name in sorted(os.listdir("exercises")):
        if name.startswith(chapter + "-") and name.endswith(".md"):
            return os.path.join("exercises", name)
    raise SystemExit("course: no exercises/%s-*.md" % chapter)


def header_html(student, seed):
    """The handout's identity for the page's script (code/web/practice.js)
    and print styles that keep the answer boxes and drop the buttons."""
    return ('<meta name="napkin-student" content="%s">\n<meta name="napkin-seed" content="%d">\n'
            "<style>@media print { button { display: none !important; } }</style>\n"
            % (html.escape(student, quote=True), seed))


def banner_html(student, name, chapter, seed):
    return ('<p class="handout-student"><strong>%s</strong> (%s): chapter %s, your variant is seed %d. '
            "Type your answers in the boxes under each exercise and press <em>export answers</em> to save "
            "the file you hand in; it names you and your seed.</p>\n"
            % (html.escape(name), html.escape(student), chapter, seed))


def handout(a, row, values, tmp, browser):
    student, name, chapter, seed = row["id"], row["name"], row["chapter"], int(row["seed"])
    folder = os.path.join(a.out, "handouts", student)
    os.makedirs(folder, exist_ok=True)
    tsv = os.path.join(tmp, "%s-%d.tsv" % (chapter, seed))
    if os.path.exists(tsv):
        os.remove(tsv)
    env = dict(os.environ, NB_SEED=str(seed), NB_VALUES=os.path.abspath(tsv))
    run([os.path.join(a.build, "bin", "ch" + chapter, "exercise_variant")], env)
    md = os.path.join(tmp, "%s-%d.md" % (chapter, seed))
    env = dict(os.environ, NB_VALUE_FILES=" ".join(values.get(chapter, []) + [tsv]))
    run([a.pandoc, "-f", "markdown", "-t", "markdown", "--lua-filter", "tools/notebook.lua",
         exercise_md(chapter), "-o", md], env)
    head, before = os.path.join(tmp, "head.html"), os.path.join(tmp, "before.html")
    with open(head, "w", encoding="utf-8") as f:
        f.write(header_html(student, seed))
    with open(before, "w", encoding="utf-8") as f:
        f.write(banner_html(student, name, chapter, seed))
    out = os.path.join(folder, "chapter-%s.html" % chapter)
    run([a.pandoc, "--standalone", "--self-contained", "--mathml", "--css=tools/book.css", "--citeproc",
         "--bibliography=chapters/references.bib", "--lua-filter", "tools/handout.lua",
         "--metadata=handout-seed:%d" % seed, "--metadata=handout-chapter:" + chapter,
         "--metadata=title:Exercises, chapter %s, variant %d" % (chapter, seed),
         "--include-in-header=" + head, "--include-before-body=" + before,
         "--include-after-body=" + a.calc_page, md, "-o", out])
    if browser:
        browser.send("Page.navigate", {"url": "file://" + os.path.abspath(out)})
        browser.wait_event("Page.loadEventFired")
        # the answer boxes appear once the module has started
        browser.evaluate("window.napkin && window.napkin.practice && window.napkin.practice.ready ? "
                         "window.napkin.practice.ready.then(function () { return true; }) : true")
        pdf = browser.send("Page.printToPDF", {"printBackground": True, "preferCSSPageSize": True}, timeout=120)
        with open(os.path.join(folder, "chapter-%s.pdf" % chapter), "wb") as f:
            f.write(base64.b64decode(pdf["data"]))


def main():
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--course-bin", required=True)
    p.add_argument("--roster", required=True)
    p.add_argument("--chapters", required=True)
    p.add_argument("--salt", default="")
    p.add_argument("--out", required=True)
    p.add_argument("--build", default="build")
    p.add_argument("--pandoc", default="pandoc")
    p.add_argument("--calc-page", required=True)
    p.add_argument("--values", nargs=2, action="append", default=[], metavar=("NN", "FILES"))
    p.add_argument("--no-pdf", action="store_true")
    a = p.parse_args()
    values = {nn: files.split() for nn, files in a.values}

    os.makedirs(a.out, exist_ok=True)
    common = ["--roster", a.roster, "--chapters", a.chapters, "--salt", a.salt]
    seeds_csv = os.path.join(a.out, "seeds.csv")
    text = run([a.course_bin, "seeds"] + common)
    with open(seeds_csv, "wb") as f:
        f.write(text)
    run([a.course_bin, "keys"] + common + ["--out", os.path.join(a.out, "keys")])
    rows = list(csv.DictReader(text.decode("utf-8").splitlines(keepends=True)))
    # the name as the roster gives it: seeds.csv guards it for spreadsheets
    names = {}
    with open(a.roster, newline="", encoding="utf-8", errors="replace") as f:
        for r in csv.DictReader(f):
            names[r.get("id", "")] = r.get("name", "")
    browser = None
    if not a.no_pdf:
        exe = find_chromium()
        if not exe:
            raise SystemExit("course: no chromium for the PDFs (tools/bootstrap.sh installs it; NO_PDF=1 skips them)")
        browser = Browser(exe)
        browser.attach_page()
        browser.send("Page.enable")
    try:
        with tempfile.TemporaryDirectory(prefix="nb-course-") as tmp:
            for row in rows:
                row["name"] = names.get(row["id"], row["name"])
                handout(a, row, values, tmp, browser)
    finally:
        if browser:
            browser.close()
    students = len({r["id"] for r in rows})
    print("course: %d students, %d handouts (%s) in %s/handouts/<id>/, keys in %s/keys/, seeds in %s"
          % (students, len(rows), "HTML" if a.no_pdf else "HTML and PDF", a.out, a.out, seeds_csv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
