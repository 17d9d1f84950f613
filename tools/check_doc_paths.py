#!/usr/bin/env python3
"""Every file the maps name exists: each `code span` of ARCHITECTURE.md,
README.md, the floor READMEs and the measured tables' README that looks
like a file (a known extension, or a path ending in /) is looked up where
a reader would look: the repository root, the README's own folder, and,
for a header or source named alone (the include path makes that the
norm), every floor of code/napkin/ and code/cli/.  Placeholders (<system>,
NN, NAME, *) are skipped.  Prints each missing name with its file and
line; exit 1 if any."""
import glob
import os
import re
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
DOCS = ["ARCHITECTURE.md", "README.md", "code/specs/measured/README.md"] + sorted(
    os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "code/napkin/*/README.md")))
EXT = (".c", ".h", ".py", ".sh", ".md", ".tsv", ".gp", ".cu", ".lua", ".css", ".yaml", ".html", ".bib")
SEARCH = ["", "code/cli", "code/practice", "code/specs", "code/specs/measured", "tools"] + sorted(
    os.path.relpath(p, ROOT) for p in glob.glob(os.path.join(ROOT, "code/napkin/*")) if os.path.isdir(p))
PLACEHOLDER = re.compile(r"<|>|NN|NAME|\*|\$|\{|^build/|^figures/measured/")


def candidates(token):
    """The file-like words of one code span (a span may hold a command)."""
    for word in re.split(r"[\s,;()]+", token):
        word = word.strip("`'\".:")
        word = re.sub(r"'s$", "", word)
        if not word or PLACEHOLDER.search(word) or word.startswith("-"):
            continue
        if word.endswith(EXT) or (word.endswith("/") and "/" in word[:-1]):
            yield word


def exists(word, doc_dir):
    for base in [doc_dir] + SEARCH:
        if os.path.exists(os.path.join(ROOT, base, word)):
            return True
    # a floor-relative name (price/op.h, serving/request.h), or a measured table named
    # alone (it lies under code/specs/measured/<system>/<engine>/)
    return (os.path.exists(os.path.join(ROOT, "code/napkin", word)) or
            bool(glob.glob(os.path.join(ROOT, "code/specs/measured/*/*", word))))


def main():
    missing = 0
    for doc in DOCS:
        doc_dir = os.path.dirname(doc)
        with open(os.path.join(ROOT, doc), encoding="utf-8") as f:
            for n, line in enumerate(f, 1):
                for span in re.findall(r"`([^`]+)`", line):
                    for word in candidates(span):
                        if not exists(word, doc_dir):
                            print(f"{doc}:{n}: {word}: no such file")
                            missing += 1
    print(f"check_doc_paths: {len(DOCS)} documents, {missing} missing" if missing else
          f"check_doc_paths: every file named in {len(DOCS)} documents exists")
    return 1 if missing else 0


if __name__ == "__main__":
    sys.exit(main())
