#!/usr/bin/env python3
"""Machine-written sentences in the built chapters, found before a reader does.

    tools/prose_lint.py FILE.md...

Reads the chapter Markdown after its values are substituted
(build/md/chapters/*.md), prose only: fenced code, console output and
display math are skipped.  What it finds is what a value dropped into a
sentence written for another value produces:

  zero-run     two or more "0%" in one sentence ("saves 0% ... and 0%"):
               the sentence says nothing; say that the saving is nil once
  echo         a value repeated as its own comparison ("TP 4 (TP 4 on the
               roofline)", "batch 1 and 1"): say the two agree
  price        an amount per GPU-hour or per million tokens without a
               currency ("2.50 per GPU-hour"): write "$2.50"
  list-start   a line of a paragraph that starts with a number and a period
               or parenthesis ("52."), which pandoc reads as a numbered
               list item: rewrap the line
  all-spent    "100% is spent": a share that is all of it is not a share
  panel-side   a panel named by its side ("time (left)", "Right: ...", "on
               the left"): on a phone the panels stack, so name a panel by
               what it shows ("the step-time panel"); a "left axis" is fine

Prints file:line: kind: the text, and exits 1 when it found anything
(0 when clean, 2 for a file it cannot read).  Standard library only.
"""
import re
import sys

ZERO = r"(?<![\d.,])0(?:\.0+)? ?%"
PATTERNS = [
    ("zero-run", re.compile(ZERO + r"(?:(?![.!?](?:\s|$)).)*?" + ZERO)),
    ("echo", re.compile(r"(?<![\w.])((?:[A-Za-z]+ )?\d[\d.,]*(?: ?[%×xA-Za-zµ/]+)?) \(\1 (?:on|at|with|for|in) [^)]*\)")),
    ("echo", re.compile(r"(?<![\w.,])(\d[\d.,]*) and \1(?![\w.,]|\.\d)")),
    ("price", re.compile(r"(?<![$€£\w.,])\d[\d,]*(?:\.\d+)? (?:per|an|a) (?:GPU-hour|GPU hour|hour|million (?:\w+ )?tokens)\b")),
    ("all-spent", re.compile(r"\b100 ?% (?:of [^,.;]* )?(?:is|are) spent\b")),
    ("panel-side", re.compile(r"\((?:left|right)\)|\b(?:Left|Right): |\b[Oo]n the (?:left|right)\b(?! axis)")),
]
LIST_START = re.compile(r"^\s*\d+[.)](?:\s|$)")
ITEM = re.compile(r"^\s*(?:\d+[.)]|[-*+]|#\.)\s")
FENCE = re.compile(r"^\s*(```|~~~)")


def paragraphs(lines):
    """(first line number, [lines]) of each run of prose lines, fences and
    display math left out."""
    para, start, fence, math = [], 0, None, False
    for n, line in enumerate(lines, 1):
        m = FENCE.match(line)
        if fence:
            if m and m.group(1) == fence:
                fence = None
            continue
        if m:
            fence = m.group(1)
            if para:
                yield start, para
            para = []
            continue
        if line.strip() == "$$" or (line.strip().startswith("$$") and not line.strip().endswith("$$", 2)):
            math = not math
            continue
        if math:
            continue
        if not line.strip():
            if para:
                yield start, para
            para = []
            continue
        if not para:
            start = n
        para.append(line)
    if para:
        yield start, para


def lint(path, text):
    found = []
    lines = text.split("\n")
    for start, para in paragraphs(lines):
        # an item of a list that starts the paragraph, at the list's own indent, is meant
        in_list = ITEM.match(para[0]) is not None
        base = len(para[0]) - len(para[0].lstrip())
        for i, line in enumerate(para):
            indent = len(line) - len(line.lstrip())
            meant = in_list and indent == base
            if i and LIST_START.match(line) and not meant:
                found.append((start + i, "list-start", line.strip()))
        # a sentence may run over lines: match on the paragraph joined, report the line
        offsets, joined = [], ""
        for line in para:
            offsets.append(len(joined))
            joined += line.strip() + " "
        for kind, rx in PATTERNS:
            for m in rx.finditer(joined):
                line_no = start + max(i for i, o in enumerate(offsets) if o <= m.start())
                found.append((line_no, kind, m.group(0)))
    return sorted(found)


def main(argv):
    if len(argv) < 2:
        print(__doc__.strip().split("\n\n")[1], file=sys.stderr)
        return 2
    bad = 0
    for path in argv[1:]:
        try:
            with open(path, encoding="utf-8") as f:
                text = f.read()
        except OSError as e:
            print("prose_lint: %s: %s" % (path, e.strerror), file=sys.stderr)
            return 2
        for line_no, kind, what in lint(path, text):
            print("%s:%d: %s: %s" % (path, line_no, kind, what))
            bad += 1
    if bad:
        print("prose_lint: %d machine-written sentence%s (tools/prose_lint.py says what each kind means)"
              % (bad, "" if bad == 1 else "s"), file=sys.stderr)
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
