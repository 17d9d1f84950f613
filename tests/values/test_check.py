#!/usr/bin/env python3
"""Tests of the values runner (check.py) on a fixture chapter
(tests/values/fixture/): a right value, a wrong one, an uncovered one, a
rounded one, a text value, echoed and measured values, and a practice part
that is wrong for one seed, each with the verdict it must get.  Run by make
values-check before the book's own chapters."""
import contextlib
import io
import os
import stat
import sys
import tempfile
import textwrap
import unittest

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)
import check  # noqa: E402

FIXTURE = os.path.join(HERE, "fixture")


def run(*args):
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        rc = check.main(list(args))
    return rc, out.getvalue().splitlines()


def fake_programs(d):
    """A bin folder with an exercise_variant that writes one input and a
    grade whose key is 2 x batch and the batch."""
    os.makedirs(os.path.join(d, "ch01"))
    os.makedirs(os.path.join(d, "grade"))
    variant = os.path.join(d, "ch01", "exercise_variant")
    with open(variant, "w") as f:
        # seed s < 100 gives batch 1,0ss (printed with a separator), larger seeds 1,099
        f.write('#!/bin/sh\nif [ "$NB_SEED" -lt 100 ]; then b=$(printf "1,%03d" "$NB_SEED"); else b=1,099; fi\n'
                'printf "fx_batch\\t%s\\n" "$b" > "$NB_VALUES"\n')
    grade = os.path.join(d, "grade", "grade")
    with open(grade, "w") as f:
        f.write(textwrap.dedent("""\
            #!/usr/bin/env python3
            import json, sys
            for line in sys.stdin:
                r = json.loads(line)
                s = r["seed"]
                b = 1000 + s if s < 100 else 1099
                print(json.dumps({"chapter": r["chapter"], "seed": s, "parts": {"9.1(a)": 2.0 * b, "9.1(b)": b}}))
            """))
    for p in (variant, grade):
        os.chmod(p, os.stat(p).st_mode | stat.S_IXUSR)


class Compare(unittest.TestCase):
    def test_rounding(self):
        self.assertIsNone(check.compare("1.34", 1.3412))
        self.assertIsNone(check.compare("1,235", 1234.6))
        self.assertIsNone(check.compare("3", 2.4999999))  # one unit in the last place
        self.assertIsNotNone(check.compare("1.25", 1.3412))  # GiB for GB
        self.assertIsNotNone(check.compare("297", 295.4))
        self.assertIsNotNone(check.compare("0.2", 0.0))

    def test_text_and_kinds(self):
        self.assertIsNone(check.compare("memory", "memory"))
        self.assertIsNotNone(check.compare("compute", "memory"))
        self.assertIsNotNone(check.compare("none", 3.0))
        self.assertIsNotNone(check.compare("3", float("nan")))

    def test_tolerance(self):
        self.assertIsNone(check.compare("105", 100.0, ("rel", 0.05)))
        self.assertIsNotNone(check.compare("106", 100.0, ("rel", 0.05)))
        self.assertIsNone(check.compare("0.52", 0.5, ("abs", 0.02)))

    def test_printed_precision(self):
        self.assertEqual(check.parse_printed("12,345.5"), (12345.5, 0.1))
        self.assertEqual(check.parse_printed("0.864")[1], 0.001)
        self.assertIsNone(check.parse_printed("1,23"))
        self.assertIsNone(check.parse_printed("yes"))


class Runner(unittest.TestCase):
    def test_fixture_chapter(self):
        with tempfile.TemporaryDirectory() as d:
            fake_programs(d)
            rc, lines = run("--values", os.path.join(FIXTURE, "values"), "--chapters-dir", FIXTURE,
                            "--bin", d, "--chapters", "1", "--required", "1")
        self.assertEqual(rc, 1)
        # fx_right, fx_rounded, fx_last_bits, fx_bound checked; fx_wrong and fx_uncovered failed
        self.assertIn("ch01: 6 derived, 4 checked (66 %), 1 echoed, 1 measured, 2 failed", lines)
        self.assertIn("ch01 fx_wrong: printed 1.25, derived 1.3412 (differs beyond the printed precision)", lines)
        self.assertIn("ch01 fx_uncovered: printed 7, no re-derivation", lines)
        self.assertIn("ch01 practice: 10 parts over seeds 0, 1, 2, 3, 4711, 1 failed", lines)
        self.assertIn("ch01 seed 4711 9.1(b): key 1099, derived 1100", lines)
        self.assertFalse([l for l in lines if "fx_rounded" in l or "fx_last_bits" in l or "fx_right" in l])

    def test_missing_chapter_file(self):
        with tempfile.TemporaryDirectory() as d:
            rc, lines = run("--values", os.path.join(FIXTURE, "values"), "--chapters-dir", d,
                            "--chapters", "1", "--required", "")
            self.assertEqual(rc, 0)
            self.assertIn("ch01: no re-derivation yet (8 values)", lines)
            rc, lines = run("--values", os.path.join(FIXTURE, "values"), "--chapters-dir", d,
                            "--chapters", "1", "--required", "1")
            self.assertEqual(rc, 1)

    def test_echoed_name_not_printed(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "ch01.py"), "w") as f:
                f.write("ECHOED = {'fx_gone'}\nMEASURED = {'fx_noise'}\n"
                        "def derive():\n    return {}\n")
            rc, lines = run("--values", os.path.join(FIXTURE, "values"), "--chapters-dir", d,
                            "--chapters", "1", "--no-practice")
        self.assertEqual(rc, 1)
        self.assertIn("ch01 fx_gone: listed as echoed but not printed", lines)

    def test_chapter_file_that_raises(self):
        with tempfile.TemporaryDirectory() as d:
            with open(os.path.join(d, "ch01.py"), "w") as f:
                f.write("ECHOED = set()\nMEASURED = set()\ndef derive():\n    return 1 / 0\n")
            rc, lines = run("--values", os.path.join(FIXTURE, "values"), "--chapters-dir", d,
                            "--chapters", "1", "--no-practice")
        self.assertEqual(rc, 1)
        self.assertIn("ch01: ch01.py raised ZeroDivisionError: division by zero", lines)


if __name__ == "__main__":
    unittest.main()
