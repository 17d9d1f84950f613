#!/usr/bin/env python3
"""The student kit: the repository as committed, less what gives answers away.

    tools/student_kit.py --out build/student-kit.tar.gz --values build/values/solutions

From `git archive HEAD` (the committed tree; the working tree outside a git
checkout), it

- drops solutions/ (the worked answers and the programs that compute them),
  the grade program's answer key (code/grade/grade_key.*: without it the
  kit's grade program grades, but prints no key), the course program and
  its driver (code/course/, tools/course.py: they write every student's
  key), and the tests whose first line says "napkin: instructor" (they check the
  exercises' answers by hand);
- strips every comment from tests/exercises/ (the hand derivations beside
  each expected number) and drops the blocks between `#ifndef NB_STUDENT_KIT`
  and their `#endif` (checks of exercises the kit checks through a variant);
- defines NB_STUDENT_KIT in tests/exercises/exercise_check.h, so a failing
  check prints the answer given, close or off, and the hint, not the
  expected value;
- ships exercises/values/NN.tsv: the values the exercise text itself quotes
  that a solution program records (a datasheet's GB, a published rate), so
  the kit's book still builds.

Standard library only.
"""
import argparse
import io
import os
import re
import subprocess
import sys
import tarfile
import tempfile

TOP = "batching-by-the-numbers-student"
# the grade program's key printer (the Makefile builds --key only where it
# is) and the course program, which writes keys and Moodle questions
INSTRUCTOR_FILES = ("code/grade/grade_key.c", "code/grade/grade_key.h", "code/course/", "tools/course.py")


def strip_comments(src):
    """C source without its comments (strings and character constants kept);
    a comment becomes one space, or its newlines."""
    out, i, n = [], 0, len(src)
    while i < n:
        c = src[i]
        if c in "\"'":
            j = i + 1
            while j < n and src[j] != c:
                j += 2 if src[j] == "\\" else 1
            out.append(src[i:j + 1])
            i = j + 1
        elif src.startswith("/*", i):
            j = src.find("*/", i + 2)
            j = n if j < 0 else j + 2
            nl = src.count("\n", i, j)
            out.append("\n" * nl if nl else " ")
            i = j
        elif src.startswith("//", i):
            j = src.find("\n", i)
            i = n if j < 0 else j
        else:
            out.append(c)
            i += 1
    text = "".join(out)
    text = re.sub(r"[ \t]+\n", "\n", text)
    return re.sub(r"\n{3,}", "\n\n", text)


def drop_instructor_blocks(src):
    """Drop `#ifndef NB_STUDENT_KIT` ... `#endif` (no nesting inside)."""
    lines, out, skipping = src.split("\n"), [], False
    for line in lines:
        if re.match(r"\s*#\s*ifndef\s+NB_STUDENT_KIT\b", line):
            skipping = True
            continue
        if skipping:
            if re.match(r"\s*#\s*if", line):
                raise SystemExit("student_kit: a nested #if inside an #ifndef NB_STUDENT_KIT block")
            if re.match(r"\s*#\s*endif\b", line):
                skipping = False
            continue
        out.append(line)
    if skipping:
        raise SystemExit("student_kit: an #ifndef NB_STUDENT_KIT without its #endif")
    return "\n".join(out)


def committed_files(root):
    """{path: (bytes, mode)} of the committed tree."""
    try:
        tar = subprocess.run(["git", "-C", root, "archive", "--format=tar", "HEAD"], capture_output=True,
                             check=True).stdout
    except (OSError, subprocess.CalledProcessError):
        files = {}
        for d, dirs, names in os.walk(root):
            dirs[:] = [x for x in dirs if x not in (".git", "build")]
            for name in names:
                p = os.path.join(d, name)
                with open(p, "rb") as f:
                    files[os.path.relpath(p, root)] = (f.read(), os.stat(p).st_mode & 0o777)
        return files
    files = {}
    with tarfile.open(fileobj=io.BytesIO(tar)) as t:
        for m in t.getmembers():
            if m.isfile():
                files[m.name] = (t.extractfile(m).read(), m.mode & 0o777)
    return files


def quoted_values(files, values_dir):
    """exercises/values/NN.tsv: the solution values the exercise text quotes."""
    out = {}
    for path, (data, _) in files.items():
        m = re.match(r"exercises/(\d\d)-.*\.md$", path)
        if not m:
            continue
        names = set(re.findall(r"\{\{([a-z0-9_]+)\}\}", data.decode("utf-8")))
        recorded = {}
        for f in sorted(os.listdir(values_dir)) if os.path.isdir(values_dir) else []:
            if f.startswith(m.group(1) + "-") and f.endswith(".tsv"):
                with open(os.path.join(values_dir, f), encoding="utf-8") as fh:
                    for line in fh:
                        k, _, v = line.rstrip("\n").partition("\t")
                        recorded[k] = v
        lines = ["%s\t%s" % (k, recorded[k]) for k in sorted(names) if k in recorded]
        if lines:
            out["exercises/values/%s.tsv" % m.group(1)] = (("\n".join(lines) + "\n").encode("utf-8"), 0o644)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--out", required=True)
    ap.add_argument("--values", required=True, help="the solution programs' values ($(B)/values/solutions)")
    ap.add_argument("--root", default=".")
    o = ap.parse_args()
    files = committed_files(o.root)
    kit = {}
    for path, (data, mode) in files.items():
        if path.startswith("solutions/") or path.startswith(INSTRUCTOR_FILES):
            continue
        if path.startswith("tests/") and b"napkin: instructor" in data.split(b"\n", 1)[0]:
            continue
        if path.startswith("tests/exercises/") and path.endswith((".c", ".h")):
            text = strip_comments(drop_instructor_blocks(data.decode("utf-8")))
            if path == "tests/exercises/exercise_check.h":
                text = "#define NB_STUDENT_KIT 1\n" + text
            data = text.encode("utf-8")
        kit[path] = (data, mode)
    kit.update(quoted_values(files, o.values))
    os.makedirs(os.path.dirname(os.path.abspath(o.out)), exist_ok=True)
    with tempfile.NamedTemporaryFile(dir=os.path.dirname(os.path.abspath(o.out)), delete=False) as tmp:
        with tarfile.open(fileobj=tmp, mode="w:gz") as t:
            for path in sorted(kit):
                data, mode = kit[path]
                info = tarfile.TarInfo(TOP + "/" + path)
                info.size = len(data)
                info.mode = mode
                info.mtime = 0
                t.addfile(info, io.BytesIO(data))
    os.replace(tmp.name, o.out)
    print("student_kit: %d files in %s (solutions/ left out, tests/exercises/ without comments)" % (len(kit), o.out))
    return 0


if __name__ == "__main__":
    sys.exit(main())
