#!/usr/bin/env python3
"""Every value the book prints, checked a second way.

For each chapter NN (01..13) this loads build/values/chNN/*.tsv (name TAB
printed text), runs tests/values/chNN.py's derive() (an independent
re-derivation from the committed data, in Python), and compares every
derived value with what the chapter's programs printed; then, for a
chapter file with practice(), it re-derives the exercise variants' answers
for a fixed sample of seeds and compares them with the grade program's
key.  Prints per chapter

  chNN: D derived, C checked (P %), E echoed, M measured, F failed

and each failure as "chNN value_name: printed X, derived Y".  Exits 1 on
any failure, on a derived value no chapter file covers, or on a chapter of
REQUIRED without a file; 2 on bad usage.  tests/values/README.md says how
to add a chapter.

  check.py [--root DIR] [--values DIR] [--bin DIR] [--chapters 1,2] [--no-practice]
"""
import argparse
import importlib.util
import json
import math
import os
import re
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)  # data.py and lib/ for the chapter files

# Chapters whose every derived value must be re-derived: each chapter's
# helper adds its number when its file is complete.
REQUIRED = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13]
CHAPTERS = range(1, 14)
PRACTICE_SEEDS = (0, 1, 2, 3, 4711)  # a fixed sample: the printed variant and four others
PRACTICE_TOL = 0.005  # relative, when the key gives no tolerance of its own

NUMBER = re.compile(r"^[+-]?(\d{1,3}(,\d{3})+|\d+)?(\.\d+)?([eE][+-]?\d+)?$")


def read_values(path):
    """name -> printed text of one values file."""
    out = {}
    with open(path, encoding="utf-8") as f:
        for n, line in enumerate(f, 1):
            line = line.rstrip("\n")
            if not line:
                continue
            name, tab, text = line.partition("\t")
            if not tab:
                raise ValueError(f"{path}:{n}: not name<TAB>value")
            out[name] = text
    return out


def chapter_values(values_dir, nn):
    d = os.path.join(values_dir, f"ch{nn:02d}")
    out = {}
    if os.path.isdir(d):
        for f in sorted(os.listdir(d)):
            if f.endswith(".tsv"):
                out.update(read_values(os.path.join(d, f)))
    return out


def parse_printed(text):
    """(value, unit of the last printed place) of a printed number, or None
    when the text is not a number.  Accepts thousands separators."""
    t = text.strip()
    if not t or not NUMBER.match(t) or not re.search(r"\d", t):
        return None
    mant, _, exp = t.replace(",", "").lower().partition("e")
    decimals = len(mant.partition(".")[2])
    unit = 10.0 ** (int(exp or 0) - decimals)
    return float(t.replace(",", "")), unit


def compare(printed_text, derived, tol=None):
    """None when the printed text agrees with the derived value, else why not.

    Text values must match exactly.  A number must equal the derived value
    rounded as printed, give or take one unit in the last printed place (a
    derivation that differs in the last bits can round the other way); a
    tolerance ("rel", x) or ("abs", x) from the chapter's TOL replaces that
    rule: |printed - derived| within it, plus half a printed unit."""
    if isinstance(derived, str):
        return None if printed_text.strip() == derived else "text differs"
    if isinstance(derived, bool) or not isinstance(derived, (int, float)):
        return f"derive() gave a {type(derived).__name__}"
    if not math.isfinite(derived):
        return "derived value is not finite"
    p = parse_printed(printed_text)
    if p is None:
        return "printed text is not a number"
    value, unit = p
    if tol is not None:
        kind, x = tol
        allowed = (x * abs(derived) if kind == "rel" else x) + unit / 2
        return None if abs(value - derived) <= allowed * (1 + 1e-12) else f"outside {kind} {x}"
    rounded = round(derived / unit) * unit
    return None if abs(value - rounded) <= unit * (1 + 1e-9) else "differs beyond the printed precision"


def load_chapter_module(path, nn):
    spec = importlib.util.spec_from_file_location(f"values_ch{nn:02d}", path)
    mod = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(mod)
    return mod


def fmt(x):
    if isinstance(x, float):
        return f"{x:.6g}"
    return str(x)


def check_values(nn, values, mod, fail):
    """Compare one chapter's printed values with its derive(); returns the
    counts (derived, checked, echoed, measured, failed)."""
    tag = f"ch{nn:02d}"
    echoed, measured = set(getattr(mod, "ECHOED", ())), set(getattr(mod, "MEASURED", ()))
    tols = dict(getattr(mod, "TOL", {}))
    derived = mod.derive()
    failed = 0

    def bad(msg):
        nonlocal failed
        failed += 1
        fail(f"{tag} {msg}")

    for name in sorted((echoed | measured) - set(values)):
        bad(f"{name}: listed as {'echoed' if name in echoed else 'measured'} but not printed")
    for name in sorted(echoed & measured):
        bad(f"{name}: listed both as echoed and as measured")
    to_derive = sorted(set(values) - echoed - measured)
    checked = 0
    for name in to_derive:
        if name not in derived:
            bad(f"{name}: printed {values[name]}, no re-derivation")
            continue
        why = compare(values[name], derived[name], tols.get(name))
        if why:
            bad(f"{name}: printed {values[name]}, derived {fmt(derived[name])} ({why})")
        else:
            checked += 1
    # an echoed value the chapter file derives anyway is compared too
    for name in sorted(echoed & set(derived) & set(values)):
        why = compare(values[name], derived[name], tols.get(name))
        if why:
            bad(f"{name}: printed {values[name]}, derived {fmt(derived[name])} ({why}; echoed)")
    for name in sorted(set(derived) - set(values) - measured):
        bad(f"{name}: derived {fmt(derived[name])}, not printed")
    return len(to_derive), checked, len(echoed), len(measured), failed


def run_variant(bin_dir, nn, seed):
    """The variant's inputs: name -> printed text, as exercise_variant writes them."""
    prog = os.path.join(bin_dir, f"ch{nn:02d}", "exercise_variant")
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "variant.tsv")
        env = dict(os.environ, NB_SEED=str(seed), NB_VALUES=path)
        subprocess.run([prog], env=env, check=True, stdout=subprocess.DEVNULL, timeout=120)
        return read_values(path)


def grade_keys(bin_dir, nn, seeds):
    """seed -> {part id: expected (value, relative tolerance or None)} from
    the grade program's key, one batch for all seeds."""
    prog = os.path.join(bin_dir, "grade", "grade")
    req = "".join(json.dumps({"chapter": nn, "seed": s, "key": True}) + "\n" for s in seeds)
    out = subprocess.run([prog, "--batch"], input=req, capture_output=True, text=True, check=True, timeout=120)
    keys = {}
    for line in out.stdout.splitlines():
        reply = json.loads(line)
        if "error" in reply:
            raise RuntimeError(f"grade --batch: {reply['error']}")
        parts = {}
        for pid, v in reply["parts"].items():
            parts[pid] = (v["value"], v.get("tol")) if isinstance(v, dict) else (v, None)
        keys[reply["seed"]] = parts
    return keys


def check_practice(nn, mod, bin_dir, fail):
    """(parts compared, failed) over PRACTICE_SEEDS."""
    tag = f"ch{nn:02d}"
    keys = grade_keys(bin_dir, nn, PRACTICE_SEEDS)
    compared = failed = 0
    for seed in PRACTICE_SEEDS:
        inputs = run_variant(bin_dir, nn, seed)
        mine = mod.practice(seed, inputs)
        for pid, (want, tol) in sorted(keys[seed].items()):
            compared += 1
            if pid not in mine:
                failed += 1
                fail(f"{tag} seed {seed} {pid}: key {fmt(want)}, no re-derivation")
                continue
            rel = PRACTICE_TOL if tol is None else tol
            got = mine[pid]
            if isinstance(got, int) and not isinstance(got, bool):
                ok = got == want  # a count (sequences, a factor of heads) is exact
            else:
                ok = abs(got - want) <= rel * abs(want) + 1e-12
            if not ok:
                failed += 1
                fail(f"{tag} seed {seed} {pid}: key {fmt(want)}, derived {fmt(got)}")
        for pid in sorted(set(mine) - set(keys[seed])):
            failed += 1
            fail(f"{tag} seed {seed} {pid}: derived {fmt(mine[pid])}, no such part in the key")
    return compared, failed


def main(argv=None):
    ap = argparse.ArgumentParser(description="Check every printed value against its re-derivation.")
    ap.add_argument("--root", default=os.path.dirname(os.path.dirname(HERE)), help="repository root")
    ap.add_argument("--values", help="values directory (default ROOT/build/values)")
    ap.add_argument("--bin", help="programs directory (default ROOT/build/bin)")
    ap.add_argument("--chapters-dir", default=HERE, help="where chNN.py live (default this folder)")
    ap.add_argument("--chapters", help="comma-separated chapter numbers (default 1-13)")
    ap.add_argument("--required", help="comma-separated chapters that must have a file (default REQUIRED)")
    ap.add_argument("--no-practice", action="store_true", help="skip the exercise variants")
    a = ap.parse_args(argv)
    try:
        chapters = [int(x) for x in a.chapters.split(",")] if a.chapters else list(CHAPTERS)
        required = [int(x) for x in a.required.split(",") if x] if a.required is not None else REQUIRED
    except ValueError:
        print("check.py: --chapters and --required take comma-separated numbers", file=sys.stderr)
        return 2
    values_dir = a.values or os.path.join(a.root, "build", "values")
    bin_dir = a.bin or os.path.join(a.root, "build", "bin")
    failures = []
    fail = failures.append
    for nn in chapters:
        tag = f"ch{nn:02d}"
        values = chapter_values(values_dir, nn)
        path = os.path.join(a.chapters_dir, f"{tag}.py")
        if not os.path.exists(path):
            if nn in required:
                fail(f"{tag}: required, but {os.path.relpath(path)} does not exist")
            print(f"{tag}: no re-derivation yet ({len(values)} values)")
            continue
        if not values:
            fail(f"{tag}: no values in {values_dir}/{tag}/ (build them: make -j2)")
            continue
        try:
            mod = load_chapter_module(path, nn)
            d, c, e, m, f = check_values(nn, values, mod, fail)
        except Exception as x:  # a chapter file's own bug: say which, check the others
            fail(f"{tag}: {os.path.basename(path)} raised {type(x).__name__}: {x}")
            continue
        pct = 100 * c // d if d else 100  # rounded down: 285 of 286 is not 100 %
        print(f"{tag}: {d} derived, {c} checked ({pct} %), {e} echoed, {m} measured, {f} failed")
        if hasattr(mod, "practice") and not a.no_practice:
            try:
                n, pf = check_practice(nn, mod, bin_dir, fail)
            except (Exception, subprocess.SubprocessError) as x:
                fail(f"{tag} practice: {type(x).__name__}: {x}")
                continue
            print(f"{tag} practice: {n} parts over seeds {', '.join(map(str, PRACTICE_SEEDS))}, {pf} failed")
    for line in failures:
        print(line)
    if failures:
        print(f"values-check: {len(failures)} failure(s)")
        return 1
    print("values-check: every re-derived value agrees")
    return 0


if __name__ == "__main__":
    sys.exit(main())
