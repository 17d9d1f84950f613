#!/usr/bin/env python3
"""Mutations the suites must catch: make mutants.

Reads a list of small realistic bugs (tests/mutants/list.tsv: id, file, the
exact original text, its replacement, the suites that should catch it, what
it models) and applies each, one at a time, to a scratch copy of the tree
(never the working tree), rebuilds what it touches there, and runs its
suites in order until one fails.  Prints a table: mutant, caught by (the
first failing suite), seconds.  Exits 1 when a mutant survives every suite,
when its original text is not found once in its file ("does not apply":
the list follows the code), when it does not compile, or when a suite
fails on the unmutated copy (then nothing it says about a mutant means
anything).

Suites, in the list's suites column (space-separated, run in that order):
  test_NAME   the Criterion suite tests/test_NAME.c, as make test runs it
              (make run-unit/test_NAME in the scratch copy)
  values:N    chapter N's programs rerun and tests/values/check.py
              --chapters N (the Python re-derivation, its practice seeds too)

The scratch copy ($(B)/mutants/tree by default) holds the working tree's
files as git sees them (tracked and untracked, not ignored) and, the first
time, a copy of the build's libraries, objects and programs with their
time stamps, so make rebuilds there only what a mutant touches.  Later runs
bring changed sources over and keep the copy's own build.

  mutants.py [--list FILE] [--only ID,ID] [--scratch DIR] [--root DIR]
             [--build DIR] [--jobs N] [--suite-timeout S]
  mutants.py --check-only [--list FILE] [--root DIR]   every original found once; no build
"""
import argparse
import os
import shutil
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(HERE)
COLUMNS = ("id", "file", "original", "replacement", "suites", "models")
# Build outputs the scratch copy starts from: what a mutant's rebuild and its
# suites need.  Test binaries, sanitizer builds and the book are left out
# (each suite is compiled again against the mutated library anyway).
BUILD_SEED = ("obj", "lib", "gen", "bin", "values", "data", "tools")


def unescape(s):
    """The list's escapes: \\n a newline, \\t a tab, \\\\ a backslash."""
    out, i = [], 0
    while i < len(s):
        c = s[i]
        if c == "\\" and i + 1 < len(s):
            n = s[i + 1]
            if n in "nt\\":
                out.append({"n": "\n", "t": "\t", "\\": "\\"}[n])
                i += 2
                continue
        out.append(c)
        i += 1
    return "".join(out)


def read_list(path):
    """Rows of the list as dicts; '#' lines and blank lines skipped."""
    rows, seen = [], set()
    with open(path, encoding="utf-8") as f:
        for ln, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line.strip() or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != len(COLUMNS):
                sys.exit(f"{path}:{ln}: {len(parts)} columns, want {len(COLUMNS)} ({', '.join(COLUMNS)})")
            row = dict(zip(COLUMNS, parts))
            row["original"], row["replacement"] = unescape(row["original"]), unescape(row["replacement"])
            row["suites"] = row["suites"].split()
            row["line"] = ln
            if row["id"] in seen:
                sys.exit(f"{path}:{ln}: mutant '{row['id']}' listed twice")
            if not row["suites"]:
                sys.exit(f"{path}:{ln}: mutant '{row['id']}' names no suite")
            if row["original"] == row["replacement"]:
                sys.exit(f"{path}:{ln}: mutant '{row['id']}': the replacement is the original")
            for s in row["suites"]:
                if not (s.startswith("test_") or (s.startswith("values:") and s[7:].isdigit())):
                    sys.exit(f"{path}:{ln}: suite '{s}': give test_NAME or values:N")
            seen.add(row["id"])
            rows.append(row)
    return rows


def occurrences(root, row):
    path = os.path.join(root, row["file"])
    if not os.path.isfile(path):
        return -1
    with open(path, encoding="utf-8") as f:
        return f.read().count(row["original"])


def applies(root, row):
    """None when the original text is in its file exactly once, else why not."""
    n = occurrences(root, row)
    if n == -1:
        return "does not apply (no such file)"
    if n == 0:
        return "does not apply (original text not found)"
    if n > 1:
        return f"does not apply (original text found {n} times)"
    return None


# ---------------------------------------------------------------- the scratch copy
def source_files(root):
    """The working tree's files as git sees them: tracked and untracked, not ignored."""
    try:
        out = subprocess.run(["git", "-C", root, "ls-files", "-z", "-co", "--exclude-standard"],
                             check=True, capture_output=True).stdout
        files = [f for f in out.decode().split("\0") if f]
    except (OSError, subprocess.CalledProcessError):
        files = []
        for d, subdirs, names in os.walk(root):
            rel = os.path.relpath(d, root)
            subdirs[:] = [s for s in subdirs if not (rel == "." and s in ("build", ".git"))]
            files += [os.path.normpath(os.path.join(rel, n)) for n in names]
    return sorted(f for f in files if os.path.isfile(os.path.join(root, f)) and not os.path.islink(os.path.join(root, f)))


def same_bytes(a, b):
    try:
        with open(a, "rb") as x, open(b, "rb") as y:
            return x.read() == y.read()
    except OSError:
        return False


def sync_scratch(root, build, scratch):
    """Bring the working tree's sources into the scratch copy.  A fresh copy
    keeps every time stamp (sources and build alike), so make there sees
    what the working tree's make sees; later, a changed source arrives with
    the time of now, so make rebuilds what depends on it."""
    fresh = not os.path.isdir(os.path.join(scratch, "build"))
    files = source_files(root)
    keep = set(files)
    for d, subdirs, names in os.walk(scratch):
        rel = os.path.relpath(d, scratch)
        if rel == ".":
            subdirs[:] = [s for s in subdirs if s != "build"]
        for n in names:
            f = os.path.normpath(os.path.join(rel, n))
            if f not in keep:
                os.remove(os.path.join(scratch, f))
    for f in files:
        src, dst = os.path.join(root, f), os.path.join(scratch, f)
        if os.path.exists(dst) and same_bytes(src, dst):
            continue
        os.makedirs(os.path.dirname(dst), exist_ok=True)
        if fresh:
            shutil.copy2(src, dst)
        else:
            shutil.copyfile(src, dst)
            shutil.copymode(src, dst)
    if fresh:
        for d in BUILD_SEED:
            src = os.path.join(build, d)
            if os.path.isdir(src):
                shutil.copytree(src, os.path.join(scratch, "build", d), symlinks=True)
        os.makedirs(os.path.join(scratch, "build"), exist_ok=True)


def clean_env():
    """The environment of a make in the scratch copy: none of the calling
    make's jobserver or the suites' variables (the copy sets its own)."""
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("MAKE", "MFLAGS", "NB_", "NAPKIN_", "SOAK_", "GNUMAKE"))}
    return env


class Scratch:
    def __init__(self, path, jobs, timeout, log):
        self.path, self.jobs, self.timeout, self.log = path, jobs, timeout, log
        self.env = clean_env()

    def run(self, cmd, timeout=None):
        """Run cmd in the copy, its output to the log; 'ok', 'failed' or 'timeout'."""
        self.log.write(f"$ {' '.join(cmd)}\n")
        self.log.flush()
        try:
            rc = subprocess.run(cmd, cwd=self.path, env=self.env, stdout=self.log, stderr=subprocess.STDOUT,
                                stdin=subprocess.DEVNULL, timeout=timeout).returncode
        except subprocess.TimeoutExpired:
            self.log.write(f"(timed out after {timeout} s)\n")
            return "timeout"
        self.log.write(f"(exit {rc})\n")
        if rc in (124, 137) and cmd[0] == "timeout":
            return "timeout"
        if rc < 0:
            return "signal"  # ended from outside (not by what it ran): worth one more try
        return "ok" if rc == 0 else "failed"

    def make(self, targets, limit=None):
        """make in the copy; the kernels are left out (HAVE_NVCC empty): no
        mutant is in them, and nvcc would rebuild each one per mutant."""
        cmd = ["make", "--no-print-directory", f"-j{self.jobs}", "HAVE_NVCC=", *targets]
        if limit:  # a hang is caught: timeout ends make and, with -k, what it started
            return self.run(["timeout", "-k", "10", str(limit), *cmd], timeout=limit + 30)
        return self.run(cmd)

    def chapter_targets(self, n):
        """Chapter n's values, its exercise variants' program and the grade program."""
        d = os.path.join(self.path, "code", f"ch{n:02d}")
        progs = sorted(f[:-2] for f in os.listdir(d) if f.endswith(".c")) if os.path.isdir(d) else []
        t = [f"build/values/ch{n:02d}/{p}.tsv" for p in progs]
        if "exercise_variant" in progs:
            t += [f"build/bin/ch{n:02d}/exercise_variant", "build/bin/grade/grade"]
        return t

    def build(self, suites):
        """Build what the suites need; 'ok' or 'failed' (a build some other
        process ended is tried once more)."""
        targets = []
        for s in suites:
            if s.startswith("values:"):
                targets += self.chapter_targets(int(s[7:]))
            else:
                targets.append(f"build/tests/{s}")
        st = self.make(targets)
        return self.make(targets) if st == "signal" else st

    def run_suite(self, s):
        """'ok', 'failed' (the suite caught something) or 'timeout'."""
        if s.startswith("values:"):
            n = int(s[7:])
            st = self.make(self.chapter_targets(n), self.timeout)
            if st != "ok":
                return st  # a chapter program that fails (or hangs) under make is caught too
            return self.run(["timeout", "-k", "10", str(self.timeout), sys.executable, "tests/values/check.py",
                             "--chapters", str(n), "--required", str(n)], timeout=self.timeout + 30)
        return self.make([f"run-unit/{s}"], self.timeout)


def write_file(path, text):
    with open(path, "w", encoding="utf-8") as f:
        f.write(text)


def mutate(scratch, row):
    """Apply the mutant in the copy; return the original content to restore."""
    path = os.path.join(scratch, row["file"])
    with open(path, encoding="utf-8") as f:
        text = f.read()
    write_file(path, text.replace(row["original"], row["replacement"], 1))
    return text


def table(results):
    w_id = max([len("mutant")] + [len(r[0]) for r in results])
    w_by = max([len("caught by")] + [len(r[1]) for r in results])
    lines = [f"{'mutant':<{w_id}}  {'caught by':<{w_by}}  {'time':>6}"]
    lines += [f"{i:<{w_id}}  {by:<{w_by}}  {t:6.1f}" for i, by, t in results]
    return "\n".join(lines)


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--root", default=ROOT, help="the working tree (default this checkout)")
    ap.add_argument("--list", help="the mutants (default ROOT/tests/mutants/list.tsv)")
    ap.add_argument("--only", help="comma-separated mutant ids")
    ap.add_argument("--scratch", help="the scratch copy (default ROOT/build/mutants/tree)")
    ap.add_argument("--build", help="the build a fresh copy starts from (default ROOT/build)")
    ap.add_argument("--jobs", type=int, default=2, help="make -j in the copy (default 2)")
    ap.add_argument("--suite-timeout", type=int, default=900, help="seconds a suite may run (a hang is caught)")
    ap.add_argument("--check-only", action="store_true", help="check every original is found once; build nothing")
    a = ap.parse_args()
    root = os.path.abspath(a.root)
    rows = read_list(a.list or os.path.join(root, "tests", "mutants", "list.tsv"))
    if a.only:
        want = a.only.split(",")
        unknown = [i for i in want if i not in {r["id"] for r in rows}]
        if unknown:
            sys.exit(f"--only: no mutant {', '.join(unknown)}")
        rows = [r for r in rows if r["id"] in want]
    if not rows:
        sys.exit("no mutants listed")

    stale = [(r, applies(root, r)) for r in rows]
    stale = [(r, why) for r, why in stale if why]
    for r, why in stale:
        print(f"{r['id']}: {r['file']}: {why}")
    if a.check_only:
        if stale:
            return 1
        print(f"mutants: {len(rows)} listed, every original text found once")
        return 0

    scratch = os.path.abspath(a.scratch or os.path.join(root, "build", "mutants", "tree"))
    os.makedirs(scratch, exist_ok=True)
    logdir = os.path.join(os.path.dirname(scratch), "logs")
    os.makedirs(logdir, exist_ok=True)
    t0 = time.monotonic()
    sync_scratch(root, os.path.abspath(a.build or os.path.join(root, "build")), scratch)
    print(f"mutants: scratch copy {scratch} ({time.monotonic() - t0:.1f} s); logs in {logdir}", flush=True)

    # The suites on the unmutated copy first: each must pass there.
    suites = []
    for r in rows:
        suites += [s for s in r["suites"] if s not in suites]
    with open(os.path.join(logdir, "baseline.log"), "w") as log:
        sc = Scratch(scratch, a.jobs, a.suite_timeout, log)
        t = time.monotonic()
        if sc.build(suites) != "ok":
            print(f"mutants: the unmutated copy does not build (see {log.name})")
            return 1
        broken = [s for s in suites if sc.run_suite(s) != "ok"]
        if broken:
            print(f"mutants: on the unmutated copy these fail: {' '.join(broken)} (see {log.name})")
            return 1
        print(f"mutants: baseline: {len(suites)} suites pass unmutated ({time.monotonic() - t:.1f} s)", flush=True)

    results, bad = [], 0
    for r in rows:
        t = time.monotonic()
        why = applies(scratch, r)
        if why:
            results.append((r["id"], why, 0.0))
            bad += 1
            continue
        with open(os.path.join(logdir, f"{r['id']}.log"), "w") as log:
            log.write(f"{r['id']}: {r['file']}: {r['models']}\n")
            sc = Scratch(scratch, a.jobs, a.suite_timeout, log)
            original = mutate(scratch, r)
            try:
                if sc.build(r["suites"]) != "ok":
                    by = "does not build"
                    bad += 1
                else:
                    by = None
                    for s in r["suites"]:
                        st = sc.run_suite(s)
                        if st != "ok":
                            by = s + (" (timeout)" if st == "timeout" else "")
                            break
                    if by is None:
                        by = "SURVIVED"
                        bad += 1
            finally:
                write_file(os.path.join(scratch, r["file"]), original)
        results.append((r["id"], by, time.monotonic() - t))
        print(f"  {r['id']}: {by} ({results[-1][2]:.1f} s)", flush=True)

    print()
    print(table(results))
    caught = len(results) - bad
    print(f"\nmutants: {caught} of {len(results)} caught ({time.monotonic() - t0:.0f} s)")
    return 1 if bad else 0


if __name__ == "__main__":
    sys.exit(main())
