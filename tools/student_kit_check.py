#!/usr/bin/env python3
"""The student kit leaks no answer.

    tools/student_kit_check.py --kit build/student-kit.tar.gz \
        --grade build/bin/grade/grade --lib build/lib/libnapkin.a --practice-lib build/lib/libpractice.a [--seeds 0,4711]

1. No solutions/, no test marked "napkin: instructor"; no comment left in
   tests/exercises/; the checks are in
   student mode (NB_STUDENT_KIT defined first in exercise_check.h).
2. No text file of the kit holds a computed answer of the variant parts
   (the grade's answer key for each chapter and seed): each answer to 4 significant
   figures, rounded and cut (12.35 and 12.34 for 12.345), and in percent
   parts also as a fraction (0.1234 for 12.34 %), anywhere; answers of
   three significant digits (0.375) and counts of 100 or more (1392 and
   1,392) in the chapter's own exercise files (exercises/NN-*,
   exercises/values/NN.tsv, tests/exercises/*NN*), where a number is that
   chapter's.  A part whose answer is the same at every seed checked (a fact
   of fixed inputs: the H100's ridge, a model's KV bytes per token), or, in
   an exercise that draws a row of a table (a choice input: which GPU),
   takes only a few values over a sample of seeds (that row's fact: the
   drawn GPU's ridge), is
   searched in those files only: the library and its own tests, which the kit
   ships and a candidate may call, compute such facts.  Not searched: answers
   of one or two significant digits (480, 0.8, 4 s) and powers of two
   (8,192), which are everywhere in the repository as other numbers.
3. No entry point the kit ships computes a key: the kit ships no key
   printer (code/grade/grade_key.*); its grade program, built from the
   kit's own code/grade/ as its Makefile builds it, refuses --key and a
   --batch key line; neither it nor `napkin practice` (--napkin) prints an
   answer of the variant.
4. The kit's own checks of those chapters, built from the kit's sources
   against the library, run on the untouched kit at each seed: they fail without a
   crash, print "your answer" with a verdict and hint, and neither
   "expected <number>" nor any answer.

Standard library only.  Exit status 0 when the kit is clean, 1 otherwise.
"""
import argparse
import glob
import math
import os
import re
import subprocess
import sys
import tarfile
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import student_kit  # noqa: E402  (the comment stripper)


# Published kernel measurements, the committed measurement sets
# (figures/measured/), their fixtures and the model's errors against them
# (tests/validate_bounds.tsv): thousands of timings of other
# machines' kernels, inputs that no exercise derives.  Their digits
# match short answers by chance (a three-figure answer inside a timing's
# mantissa), so the search for answers leaves them out.
# A part of an exercise with a choice input (a table row the variant draws,
# 1.1's GPU) whose answers over ROW_FACT_SAMPLE seeds take at most
# ROW_FACT_VALUES values: its answer is that row's fact.
ROW_FACT_SAMPLE = 24
ROW_FACT_VALUES = 5

# Numbers in shipped files that equal a variant's answer by chance, each
# checked by hand: (file, the answer's digits) -> why it is not a key.
COINCIDENCES = {
    ("tests/test_ch01.c", "0.05952"):
        "chapter 1's all-reduce hand derivation (0.059523 ms); 6.x at seed 4711 lands on the same digits",
    ("tests/test_ch10.c", "152.7"):
        "chapter 10's hand-derived break-even batch (30.96 ms / 202.8 us); 1.1 at seed 4711 lands on the same digits",
    ("tests/test_judge.c", "41.58"):
        "the judge's 1 % boundary around 41.17 (41.5817); 7.x at seed 4711 lands on the same digits",
    ("tests/test_blackwell.c", "152.7"):
        "an nvfp4 projection's time by hand on B200 (1.3744e12 FLOP at 9 PFLOP/s = 152.7 us); 1.1 at seed 4711 "
        "lands on the same digits",
    ("code/napkin/calib/validate_moe.c", "12.47"):
        "a measured MiniMax-M2.5 TPOT quoted as the evidence of a run's layout (12.47 ms); 7.x at seed 0 lands "
        "on the same digits",
    ("code/ch05/end_to_end.c", "63.75"):
        "the decodes a mixed step carries at 64 in flight (1 + 63 x 255 / 256); 13.x at seed 0 lands on the "
        "same digits",
    ("tests/test_import_measured.c", "5.250"):
        "an all-to-all fixture row as the importer writes it (5.250000e-05 s); 3.x at seed 0 lands on the same digits",
    ("tests/test_import_measured.c", "9.000"):
        "a serving-run fixture row's TPOT as the importer writes it (9.000000e-03 s); 12.x at seed 4711 lands on "
        "the same digits",
    ("tests/test_validate_moe.c", "9.000"):
        "the same fixture run's TPOT (9.000000e-03 s) in the MoE runs' fixture; 12.x at seed 4711 lands on the "
        "same digits",
}

MEASURED_DATA = ("code/specs/measured/", "tests/published_fixture/", "tests/measured_fixture/",
                 "code/specs/calibrations.tsv", "figures/measured/",
                 "tests/validate_bounds.tsv")  # the model's errors against those measurements



def variant_chapters(grade):
    """The chapters with variants, as the grade program lists them."""
    r = subprocess.run([grade, "--chapter", "0", "--key"], capture_output=True, text=True, timeout=60)
    m = re.search(r"chapters with variants: ([0-9 ]+)", r.stderr)
    if not m:
        raise SystemExit("student_kit_check: no list of chapters with variants from %s" % grade)
    return m.group(1).split()



def variant_chapters(grade):
    """The chapters with variants, as the grade program lists them."""
    r = subprocess.run([grade, "--chapter", "0", "--key"], capture_output=True, text=True, timeout=60)
    m = re.search(r"chapters with variants: ([0-9 ]+)", r.stderr)
    if not m:
        raise SystemExit("student_kit_check: no list of chapters with variants from %s" % grade)
    return m.group(1).split()


def choice_exercises(grade, chapter, seed):
    """The exercises of a chapter's variant that draw a table row: their
    choice inputs ("input ch01_ex1_gpu_a 2 (b200)") name it."""
    out = subprocess.run([grade, "--chapter", str(chapter), "--seed", str(seed), "--key"], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    return {int(m.group(1)) for m in re.finditer(r"^\s+input ch\d+_ex(\d+)_\S+\s+\S+ \(\S+\)$", out, re.M)}


def answer_key(grade, chapter, seed):
    out = subprocess.run([grade, "--chapter", str(chapter), "--seed", str(seed), "--key"], capture_output=True,
                         text=True, timeout=60, check=True).stdout
    key = []
    for line in out.splitlines():
        m = re.match(r"\s+(\d+\.\d+\(\w+\))\s+(.*)\s(-?[0-9][0-9.e+-]*) \[([^\]]*)\] \((.*)\)$", line)
        if m:
            key.append((m.group(1), float(m.group(3)), m.group(4), m.group(5)))
    parts = len(re.findall(r"^\s+\d+\.\d+\(\w+\)", out, re.M))
    if not key or len(key) != parts:
        raise SystemExit("student_kit_check: read %d of %d parts of the answer key from %s" % (len(key), parts, grade))
    return key


def significant(v):
    """The significant digits of v to 4 figures, trailing zeros dropped: 120 -> 2, 12.34 -> 4."""
    return len(("%.3e" % abs(v)).split("e")[0].replace(".", "").rstrip("0"))


def sig4(v):
    """v to 4 significant figures, rounded and cut, as digit strings."""
    e = 3 - int(math.floor(math.log10(abs(v))))
    rounded = "%.*f" % (max(e, 0), round(v, e)) if e > 0 else "%d" % round(v, e)
    scale = 10 ** e
    cut_v = int(abs(v) * scale) / scale
    cut = "%.*f" % (max(e, 0), cut_v) if e > 0 else "%d" % cut_v
    return {rounded, cut}


def power_of_two(v):
    n = int(round(v))
    return n > 0 and abs(v - n) <= 1e-6 * n and not n & (n - 1)


def patterns(key, fixed=frozenset()):
    """(forms searched everywhere, forms searched in the chapter's exercise files);
    the parts in `fixed` are searched in the chapter's files only."""
    anywhere, in_exercises = set(), set()
    for part, v, unit, rule in key:
        if v == 0 or power_of_two(v):
            continue
        if rule == "exactly":
            n = int(round(v))
            if n >= 100:
                in_exercises |= {str(n), "{:,}".format(n)}
            continue
        for x in [v] + ([v / 100] if unit == "%" else []):
            if significant(x) >= 4:
                (in_exercises if part in fixed else anywhere).update(sig4(x))
            elif significant(x) == 3:
                in_exercises |= {("%.3g" % x)}
    return anywhere, in_exercises


def key_attempts(o, top, rel, tmp, chapters, seeds, keys, fails):
    """Every way the kit offers to print a variant's expected values, tried."""
    shipped = [r for r in rel if r.startswith(student_kit.INSTRUCTOR_FILES)]
    if shipped:
        fails.append("the kit ships the key printer: %s" % ", ".join(shipped))
    srcs = sorted(glob.glob(os.path.join(top, "code/grade/*.c")))
    grade = os.path.join(tmp, "kit_grade")
    flag = ["-DGRADE_KEY"] if any(s_.endswith("/grade_key.c") for s_ in srcs) else []
    cmd = [o.cc, "-std=c11", "-O0", "-D_POSIX_C_SOURCE=200809L", "-I" + os.path.join(top, "code"),
           "-I" + os.path.join(top, "code/practice"), "-I" + os.path.join(top, "code/grade")] + \
          ["-I" + d for d in sorted(glob.glob(os.path.join(top, "code/napkin/*/")))] + flag + srcs + \
          [os.path.abspath(o.practice_lib), os.path.abspath(o.lib), "-lm", "-lpthread", "-ljansson", "-o", grade]
    b = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
    if b.returncode != 0:
        fails.append("the kit's grade program does not build:\n%s" % b.stderr[-2000:])
        return
    for ch in chapters:
        for seed in seeds:
            anywhere, _ = patterns(keys[(seed, ch)])
            tries = [([grade, "--chapter", str(ch), "--seed", str(seed), "--key"], None, "grade --key"),
                     ([grade, "--batch"], '{"chapter": %d, "seed": %d, "key": true}\n' % (ch, seed),
                      "grade --batch key line")]
            if o.napkin:
                tries.append(([o.napkin, "practice", "--chapter", str(ch), "--seed", str(seed), "--format", "json"],
                              None, "napkin practice"))
            for argv, stdin, what in tries:
                r = subprocess.run(argv, input=stdin, capture_output=True, text=True, timeout=60)
                out = r.stdout + r.stderr
                if what == "grade --key" and (r.returncode == 0 or "answer key" in r.stdout):
                    fails.append("chapter %d seed %d: the kit's %s prints a key" % (ch, seed, what))
                if what.startswith("grade --batch") and '"error"' not in r.stdout:
                    fails.append("chapter %d seed %d: the kit's %s answers" % (ch, seed, what))
                for pat in anywhere:
                    if re.search(r"(?<![0-9.])" + re.escape(pat) + r"(?![0-9])", out):
                        fails.append("chapter %d seed %d: the kit's %s prints the answer %s" % (ch, seed, what, pat))


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kit", required=True)
    ap.add_argument("--grade", required=True)
    ap.add_argument("--lib", required=True)
    ap.add_argument("--practice-lib", required=True)
    ap.add_argument("--seeds", default="0,4711")
    ap.add_argument("--napkin", default=None, help="the napkin CLI, whose practice command is tried for a key")
    ap.add_argument("--chapters", default=None,
                    help="the chapters with variants (default: every one the grade program lists)")
    ap.add_argument("--cc", default=os.environ.get("CC", "cc"))
    o = ap.parse_args()
    fails = []
    seeds = [int(s) for s in o.seeds.split(",")]
    with tempfile.TemporaryDirectory(prefix="student_kit_check.") as tmp:
        with tarfile.open(o.kit) as t:
            names = t.getnames()
            t.extractall(tmp)
        top = os.path.join(tmp, student_kit.TOP)
        rel = [n.split("/", 1)[1] for n in names if "/" in n]
        if any(r.startswith("solutions/") for r in rel):
            fails.append("the kit holds solutions/")
        texts = {}
        for r in rel:
            p = os.path.join(top, r)
            if not os.path.isfile(p):
                continue
            with open(p, "rb") as f:
                data = f.read()
            if b"\0" not in data:
                texts[r] = data.decode("utf-8", "replace")
        for r, text in texts.items():
            if r.startswith("tests/") and text.split("\n", 1)[0].find("napkin: instructor") >= 0:
                fails.append("%s is marked napkin: instructor" % r)
            if r.startswith("tests/exercises/") and r.endswith((".c", ".h")):
                if re.sub(r"\s+", " ", student_kit.strip_comments(text)) != re.sub(r"\s+", " ", text):
                    fails.append("%s still has comments" % r)
                if "NB_STUDENT_KIT" in text and r != "tests/exercises/exercise_check.h" and "#ifndef" in text:
                    fails.append("%s still has an instructor block" % r)
        for (r, digits), why in COINCIDENCES.items():
            if digits not in texts.get(r, ""):
                fails.append("COINCIDENCES lists %s in %s, which no longer holds it: drop the entry" % (digits, r))
        check_h = texts.get("tests/exercises/exercise_check.h", "")
        if not check_h.startswith("#define NB_STUDENT_KIT"):
            fails.append("tests/exercises/exercise_check.h does not define NB_STUDENT_KIT first")

        searched = 0
        forms_of = {}  # chapter -> the forms of its answers at every seed checked
        if o.chapters is None:
            o.chapters = ",".join(variant_chapters(o.grade))
        chapters = [int(c) for c in o.chapters.split(",")]
        keys = {(s_, c_): answer_key(o.grade, c_, s_) for s_ in seeds for c_ in chapters}
        # a sample of other seeds, for the parts whose answers are a few table rows' facts
        sample = [s_ for s_ in range(1, 1 + ROW_FACT_SAMPLE) if s_ not in seeds]
        choices = {c_: choice_exercises(o.grade, c_, seeds[0]) for c_ in chapters}
        sampled = {c_: [{part: v for part, v, _, _ in answer_key(o.grade, c_, s_)} for s_ in sample]
                   if choices[c_] else [] for c_ in chapters}
        for seed, ch in [(s_, c_) for s_ in seeds for c_ in chapters]:
            values = [{part: v for part, v, _, _ in keys[(s_, ch)]} for s_ in seeds]
            fixed = {part for part in values[0] if all(vs.get(part) == values[0][part] for vs in values)}
            fixed |= {part for part in values[0] if int(part.split(".")[1].split("(")[0]) in choices[ch]
                      and len({vs.get(part) for vs in values + sampled[ch]}) <= ROW_FACT_VALUES}
            anywhere, in_ex = patterns(keys[(seed, ch)], fixed if len(seeds) > 1 else frozenset())
            own = re.compile(r"(exercises/%02d-|exercises/values/%02d\.tsv$|tests/exercises/\D*%02d\b)" % (ch, ch, ch))
            forms_of.setdefault(ch, set()).update(anywhere | in_ex)
            for r, text in texts.items():
                if r.startswith(MEASURED_DATA):
                    continue
                for pat in anywhere:
                    searched += 1
                    if pat not in text:   # what the patterns below can match holds pat itself
                        continue
                    # an exercise's own label ("13.5(a) ...", "13.5 a pool ...") is a name, not an answer
                    label = r"(?!\([a-z]\))" if "." in pat else ""
                    # this script names the coincidences below, by their digits
                    if (r, pat) in COINCIDENCES or r == "tools/student_kit_check.py":
                        continue
                    if re.search(r'(?<![0-9."])' + re.escape(pat) + r"(?![0-9])" + label, text) or \
                       re.search(r'(?<![0-9."])' + re.escape(pat) + r"[0-9]", text) and "." in pat:
                        fails.append("chapter %d seed %d: %s holds the answer %s" % (ch, seed, r, pat))
                if own.match(r):
                    for pat in in_ex:
                        searched += 1
                        if pat not in text:
                            continue
                        label = r"(?!\([a-z]\))" if "." in pat else ""
                        if re.search(r'(?<![0-9.,"])' + re.escape(pat) + r"(?![0-9,])" + label, text):
                            fails.append("chapter %d seed %d: %s holds the answer %s" % (ch, seed, r, pat))

        key_attempts(o, top, rel, tmp, chapters, seeds, keys, fails)

        # the kit's own checks, from the kit's sources
        for ch in chapters:
            nn = "%02d" % ch
            kit_c = [os.path.join(top, r) for r in rel if re.match(r"exercises/%s-.*\.c$" % nn, r)]
            binary = os.path.join(tmp, "kit_" + nn)
            cmd = [o.cc, "-std=c11", "-Wall", "-Wextra", "-Werror", "-Wno-unused-parameter", "-O0",
                   "-D_POSIX_C_SOURCE=200809L", "-DNB_EXERCISE_TEST", "-I" + os.path.join(top, "code"),
                   ] + ["-I" + d for d in sorted(glob.glob(os.path.join(top, "code/napkin/*/")))] + [
                   "-I" + os.path.join(top, "code/practice"), "-I" + os.path.join(top, "exercises"),
                   os.path.join(top, "tests/exercises/test_%s.c" % nn)] + kit_c + \
                  [os.path.abspath(o.practice_lib), os.path.abspath(o.lib), "-lcriterion", "-lm", "-lpthread", "-ljansson", "-o", binary]
            b = subprocess.run(cmd, capture_output=True, text=True, timeout=120)
            if b.returncode != 0:
                fails.append("the kit's chapter %d checks do not build:\n%s" % (ch, b.stderr[-2000:]))
                continue
            for seed in seeds:
                r = subprocess.run([binary, "--jobs=1"], capture_output=True, text=True, timeout=120,
                                   env=dict(os.environ, NB_SEED=str(seed)))
                out = r.stdout + r.stderr
                synth = re.search(r"Failing: (\d+) \| Crashing: (\d+)", out)
                if not synth or int(synth.group(1)) == 0 or int(synth.group(2)) != 0:
                    fails.append("chapter %d seed %d: the untouched kit should fail without a crash: %s" % (
                        ch, seed, synth.group(0) if synth else out[-500:]))
                leak = [l for l in out.splitlines() if re.search(r"expected [-+0-9.]", l)]
                if leak:
                    fails.append("chapter %d seed %d: a check prints the expected value: %s" % (ch, seed, leak[0]))
                if "your answer" not in out or not re.search(r": (off|missing|close|slip): ", out):
                    fails.append("chapter %d seed %d: no verdict with a hint in the checks' output" % (ch, seed))
                # a failure's place ("test_13.c:105:") and an exercise's own label at
                # the head of a message ("13.5(a) ...", "13.5 a pool ...") are names
                named = re.sub(r"\S+\.c:[0-9]+:", " ", out)
                named = re.sub(r"(?m)^(\[----\]\s+)[0-9]+\.[0-9]+(\([a-z0-9]+\))?", r"\1", named)
                # a check can leak its own chapter's answers; another chapter's answer
                # that happens to equal an input here (6.7's 800 GPUs, 7.3's 800 x 600
                # image) is not one
                for pat in forms_of.get(ch, ()):
                    if re.search(r"(?<![0-9.])" + re.escape(pat) + r"(?![0-9])", named):
                        fails.append("chapter %d seed %d: the checks' output holds the answer %s" % (ch, seed, pat))
    print("student_kit_check: %d files, chapters %s, seeds %s, %d searches" % (len(rel), o.chapters, o.seeds,
                                                                                searched))
    if fails:
        for f in fails[:60]:
            print("FAIL " + f, file=sys.stderr)
        return 1
    print("student_kit_check: no solutions, no derivations, no answer in the kit or its checks' output")
    return 0


if __name__ == "__main__":
    sys.exit(main())
