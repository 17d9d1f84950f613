#!/usr/bin/env python3
"""The exercises' answer boxes, checked in a real browser against the CLI.

    tools/practice_test.py --page build/book.html --napkin build/bin/napkin \
        --grade build/bin/grade/grade [--chapters 5,12] [--seeds 4711,0,3,77,2024]
        [--module-seeds 200] [--practice-page build/book-practice.html] [--chromium PATH]

One Chromium start opens the page at ?seed=<first seed>, then:

1. The variant from the address: every number marked data-practice in the
   exercise text shows the variant's value as `napkin practice` prints it,
   and every part of every chapter with variants has an answer box.
2. For each seed, each part gets a right answer (from the grade's answer
   key), one 5 % high, one twice the answer and one 3.7 times it, typed into
   its box; the verdict and hint the page shows must be those of
   `napkin practice --part ... --answer ...` (the same C judge): right,
   close, slip and off all occur.
3. Answers persist: after showing another seed and coming back, the boxes
   hold the last answers (localStorage).  The page's exported answers,
   graded by the grade program, score exactly the parts the page said right.
4. No console error, no network request (a Content-Security-Policy that
   allows nothing outside the page).
5. The module across many seeds (--module-seeds, 200): for seeds 1..N, the
   verdict and hint the WebAssembly module gives (the call the boxes make)
   on each part's right answer, 5 % high, twice and 3.7 times it equal the
   grade program's on the same answers (the C build of the same judge).
6. With --practice-page (the practice edition): every worked solution sits
   in its own fold, <details class="solution" data-solution="C-N">, right
   before its anchor solution-C-N, so it shows only when asked for.

Standard library only.  Exit status 0 when everything matched, 1 otherwise.
"""
import argparse
import html
import json
import os
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import panel_test  # noqa: E402  (the page, Chromium and CSP helpers)

DRIVE_JS = r"""
<pre id="practice-test-result">pending</pre>
<script>
(function () {
  var out = document.getElementById("practice-test-result");
  function spans() {
    var s = {};
    document.querySelectorAll("[data-practice]").forEach(function (e) {
      (s[e.dataset.practice] = s[e.dataset.practice] || []).push(e.textContent);
    });
    return s;
  }
  function boxes() {
    var b = [];
    document.querySelectorAll("form.practice input.practice-answer").forEach(function (i) { b.push(i.name); });
    return b;
  }
  function type(part, answer) {
    var input = document.querySelector('input.practice-answer[name="' + part + '"]');
    if (!input) return null;
    input.value = answer;
    input.dispatchEvent(new Event("change", {bubbles: true}));
    var o = input.parentNode.querySelector("output");
    return {verdict: o.dataset.verdict || null, text: o.textContent};
  }
  var api;
  window.napkin.ready.then(function (a) { api = a; return a.practice.ready; }).then(function (p) {
    var plan = __PLAN__, result = {seed: p.seed(), spans: spans(), boxes: boxes(), seeds: {}};
    plan.seeds.forEach(function (seed) {
      p.show(seed);
      var got = {spans: spans(), boxes: boxes(), answers: []};
      plan.answers[String(seed)].forEach(function (a) { got.answers.push(type(a[0], a[1])); });
      result.seeds[String(seed)] = got;
    });
    /* the last answers typed at the first seed: the right ones again */
    var first = plan.seeds[0];
    p.show(first);
    plan.right[String(first)].forEach(function (a) { type(a[0], a[1]); });
    p.show(plan.seeds[1]);
    p.show(first);
    result.restored = {};
    document.querySelectorAll("form.practice input.practice-answer").forEach(function (i) {
      result.restored[i.name] = [i.value, i.parentNode.querySelector("output").dataset.verdict || null];
    });
    result.exported = plan.chapters.map(function (c) { return p.answers(c); });
    result.module = plan.module.map(function (q) {
      var r = api.run("practice", {chapter: String(q[0]), seed: String(q[1]), part: q[2], answer: q[3]});
      if (r.status !== 0) return ["exit " + r.status, r.stderr];
      var v = JSON.parse(r.stdout).values;
      return [v.verdict, v.hint];
    });
    result.errors = window.__panelTest.errors;
    result.violations = window.__panelTest.violations;
    result.resources = performance.getEntriesByType("resource").map(function (e) { return e.name; });
    out.textContent = JSON.stringify(result);
  }).catch(function (e) { out.textContent = "FAILED: " + e; });
})();
</script>
"""



def variant_chapters(grade):
    """The chapters with variants, as the grade program lists them."""
    r = subprocess.run([grade, "--chapter", "0", "--key"], capture_output=True, text=True, timeout=60)
    m = re.search(r"chapters with variants: ([0-9 ]+)", r.stderr)
    if not m:
        raise SystemExit("practice_test: no list of chapters with variants from %s" % grade)
    return m.group(1).split()


def cli_json(args):
    r = subprocess.run(args, capture_output=True, text=True, timeout=60)
    if r.returncode != 0:
        raise SystemExit("practice_test: %s exited %d: %s" % (" ".join(args), r.returncode, r.stderr))
    return json.loads(r.stdout) if r.stdout.lstrip().startswith("{") else r.stdout


def grade_batch(grade, requests):
    """The grade program's replies to many requests in one run (grade --batch):
    an answer key for {"chapter", "seed", "key": true}, a report for answers."""
    text = "".join(json.dumps(r) + "\n" for r in requests)
    g = subprocess.run([grade, "--batch"], input=text, capture_output=True, text=True, timeout=600)
    replies = [json.loads(l) for l in g.stdout.splitlines()]
    if g.returncode != 0 or len(replies) != len(requests):
        raise SystemExit("practice_test: grade --batch exited %d with %d replies to %d requests: %s" % (
            g.returncode, len(replies), len(requests), g.stderr))
    for q, r in zip(requests, replies):
        if "error" in r:
            raise SystemExit("practice_test: grade --batch on %s: %s" % (json.dumps(q), r["error"]))
    return replies


def answer_keys(grade, pairs):
    """(chapter, seed) -> {part id: the expected value}, from the instructor's key."""
    replies = grade_batch(grade, [{"chapter": c, "seed": s, "key": True} for c, s in pairs])
    return {pair: r["parts"] for pair, r in zip(pairs, replies)}


def shown(v):
    """An answer as a person types it: whole numbers plain, others to 4 figures."""
    return "%d" % round(v) if abs(v - round(v)) < 1e-9 else "%.4g" % v


def expected_verdict(napkin, chapter, seed, part, answer):
    r = panel_test.run_cli(napkin, "practice", ["--chapter", str(chapter), "--seed", str(seed), "--part", part,
                                                "--answer", answer], "json")
    if r["status"] != 0:
        raise SystemExit("practice_test: napkin practice %s %s exited %d: %s" % (part, answer, r["status"], r["stderr"]))
    v = json.loads(r["stdout"])["values"]
    return {"verdict": v["verdict"], "text": "right" if v["verdict"] == "right" else v["verdict"] + ": " + v["hint"]}


def folded_solutions(path):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    anchors = re.findall(r'id="solution-(\d+-\d+)"', text)
    folds = re.findall(r'<details class="solution" data-solution="(\d+-\d+)"><summary>', text)
    fails = []
    if not anchors:
        fails.append("%s: no worked solution" % path)
    if anchors != folds:
        fails.append("%s: %d solutions, %d folds (%s)" % (path, len(anchors), len(folds),
                                                          sorted(set(anchors) ^ set(folds))[:10]))
    for sid in anchors:
        m = re.search(r'<details class="solution" data-solution="%s"><summary>[^<]*</summary>\s*<p><span id="solution-%s"'
                      % (sid, sid), text)
        if not m:
            fails.append("%s: solution %s is not the first thing in its fold" % (path, sid))
    return fails


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--page", required=True)
    ap.add_argument("--napkin", required=True)
    ap.add_argument("--grade", required=True)
    ap.add_argument("--chapters", default=None,
                    help="the chapters with variants (default: every one the grade program lists)")
    ap.add_argument("--seeds", default="4711,0,3,77,2024")
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM") or shutil.which("chromium")
                    or shutil.which("chromium-browser") or "/usr/bin/chromium")
    ap.add_argument("--timeout", type=int, default=240)
    ap.add_argument("--practice-page", help="the practice edition, whose solutions must be folded")
    ap.add_argument("--module-seeds", type=int, default=200)
    o = ap.parse_args()
    if not os.path.exists(o.chromium):
        print("practice_test: no Chromium at %s (apt-get install chromium)" % o.chromium, file=sys.stderr)
        return 1
    seeds = [int(s) for s in o.seeds.split(",")]
    if len(seeds) < 2:
        raise SystemExit("practice_test: --seeds needs at least two seeds")
    with open(o.page, encoding="utf-8") as f:
        page = f.read()

    if o.chapters is None:
        o.chapters = ",".join(variant_chapters(o.grade))
    chapters = [int(c) for c in o.chapters.split(",")]
    plan = {"chapters": chapters, "seeds": seeds, "answers": {}, "right": {}}
    expected, variants = {}, {}
    keys = answer_keys(o.grade, [(ch, seed) for seed in seeds for ch in chapters] +
                       [(ch, seed) for ch in chapters for seed in range(1, o.module_seeds + 1)])
    for seed in seeds:
        variants[seed] = {"inputs": [], "parts": []}
        answers, right = [], []
        for ch in chapters:
            v = cli_json([o.napkin, "practice", "--chapter", str(ch), "--seed", str(seed), "--format", "json"])
            variants[seed]["inputs"] += v["inputs"]
            variants[seed]["parts"] += v["parts"]
            key = keys[(ch, seed)]
            parts = [p["id"] for p in v["parts"]]
            if sorted(key) != sorted(parts):
                raise SystemExit("practice_test: the key of chapter %d seed %d has parts %s, the variant %s" % (
                    ch, seed, key, parts))
            for part in parts:
                for factor in (1.0, 1.05, 2.0, 3.7):
                    answers.append([part, shown(key[part] * factor)])
                right.append([part, shown(key[part])])
        plan["answers"][str(seed)] = answers
        plan["right"][str(seed)] = right
        expected[seed] = [expected_verdict(o.napkin, int(p.split(".")[0]), seed, p, a) for p, a in answers]

    # 5: many seeds through the module, against the grade program
    module_plan, module_expected = [], []
    factors = (1.0, 1.05, 2.0, 3.7)
    requests = []
    for ch in chapters:
        for seed in range(1, o.module_seeds + 1):
            key = keys[(ch, seed)]
            for factor in factors:
                requests.append({"chapter": ch, "seed": seed, "answers": {p: shown(v * factor) for p, v in key.items()}})
    for q, report in zip(requests, grade_batch(o.grade, requests)):
        for ex in report["exercises"]:
            for part in ex["parts"]:
                module_plan.append([q["chapter"], q["seed"], part["id"], q["answers"][part["id"]]])
                module_expected.append([part["verdict"], part["hint"]])
    plan["module"] = module_plan

    fails = []
    with tempfile.TemporaryDirectory(prefix="practice_test.") as tmp:
        test_page = os.path.join(tmp, "page-test.html")
        with open(test_page, "w", encoding="utf-8") as f:
            f.write(panel_test.page_with(page, panel_test.HEAD_JS, DRIVE_JS.replace("__PLAN__", json.dumps(plan))))
        r = panel_test.run_chromium(panel_test.chromium_cmd(o.chromium, os.path.join(tmp, "profile")) +
                                    ["--dump-dom", "file://" + test_page + "?seed=%d" % seeds[0]], o.timeout)
        m = re.search(r'<pre id="practice-test-result">(.*?)</pre>', r.stdout, re.S)
        fails += ["console: " + l for l in panel_test.console_lines(r.stderr)]
        if not m or not html.unescape(m.group(1)).startswith("{"):
            print("practice_test: no verdict from the page (%s); chromium exited %d:\n%s" % (
                html.unescape(m.group(1))[:500] if m else "nothing", r.returncode, r.stderr[-3000:]), file=sys.stderr)
            return 1
        res = json.loads(html.unescape(m.group(1)))

        if res["seed"] != seeds[0]:
            fails.append("the page opened at ?seed=%d shows seed %s" % (seeds[0], res["seed"]))
        verdicts = {}
        for seed in seeds:
            want_spans = {i["name"]: i["text"] for i in variants[seed]["inputs"]}
            got = res["seeds"][str(seed)]
            views = [("address", res)] if seed == seeds[0] else []
            for label, view in views + [("show", got)]:
                for name, text in want_spans.items():
                    shown_texts = view["spans"].get(name)
                    if not shown_texts:
                        fails.append("seed %d: the exercise text marks no number %s" % (seed, name))
                    elif any(t != text for t in shown_texts):
                        fails.append("seed %d (%s): %s shows %s, the variant %s" % (seed, label, name, shown_texts, text))
                if sorted(view["boxes"]) != sorted(p["id"] for p in variants[seed]["parts"]):
                    fails.append("seed %d (%s): boxes %s" % (seed, label, view["boxes"]))
            for (part, answer), e, g in zip(plan["answers"][str(seed)], expected[seed], got["answers"]):
                verdicts[e["verdict"]] = verdicts.get(e["verdict"], 0) + 1
                if g != e:
                    fails.append("seed %d %s answer %s: CLI %r, page %r" % (seed, part, answer, e, g))
        for v in ("right", "close", "slip", "off"):
            if not verdicts.get(v):
                fails.append("no answer was judged %s: the plan does not exercise every verdict" % v)

        right = dict(plan["right"][str(seeds[0])])
        for part, answer in right.items():
            if res["restored"].get(part) != [answer, "right"]:
                fails.append("seed %d %s: after another seed the box holds %r, not %r (right)" % (
                    seeds[0], part, res["restored"].get(part), answer))
        for ch, exported in zip(chapters, res["exported"]):
            mine = {k: v for k, v in right.items() if k.startswith("%d." % ch)}
            if exported.get("seed") != seeds[0] or exported.get("chapter") != ch or exported.get("answers") != mine:
                fails.append("chapter %d: exported answers %r, typed %r" % (ch, exported, mine))
                continue
            path = os.path.join(tmp, "answers.json")
            with open(path, "w") as f:
                json.dump(exported, f)
            g = subprocess.run([o.grade, "--answers", path], capture_output=True, text=True, timeout=60)
            if g.returncode != 0 or "score: %d/%d" % (len(mine), len(mine)) not in g.stdout:
                fails.append("chapter %d: the exported answers graded: exit %d\n%s%s" % (
                    ch, g.returncode, g.stdout, g.stderr))

        module_verdicts = {}
        for q, e, g in zip(module_plan, module_expected, res["module"]):
            module_verdicts[e[0]] = module_verdicts.get(e[0], 0) + 1
            if e != g:
                fails.append("module chapter %d seed %d %s answer %s: grade %r, page %r" % (q[0], q[1], q[2], q[3], e, g))
        if len(res["module"]) != len(module_plan):
            fails.append("module: %d verdicts for %d questions" % (len(res["module"]), len(module_plan)))

        fails += ["console error: " + e for e in res["errors"]]
        fails += ["network request blocked: " + v for v in res["violations"]]
        fails += ["resource fetched: " + u for u in res["resources"]]

    if o.practice_page:
        fails += folded_solutions(o.practice_page)

    n = sum(len(plan["answers"][str(s)]) for s in seeds)
    print("practice_test: chapters %s, seeds %s: %d answers in the boxes (%s)" % (
        o.chapters, o.seeds, n, ", ".join("%s %d" % kv for kv in sorted(verdicts.items()))))
    print("practice_test: chapters %s, seeds 1-%d: %d answers through the module (%s)" % (
        o.chapters, o.module_seeds, len(module_plan), ", ".join("%s %d" % kv for kv in sorted(module_verdicts.items()))))
    if fails:
        for f in fails[:60]:
            print("FAIL " + f, file=sys.stderr)
        print("practice_test: %d differences" % len(fails), file=sys.stderr)
        return 1
    print("practice_test: the page's verdicts agree with the CLI's; answers persist and grade; no network request")
    return 0


if __name__ == "__main__":
    sys.exit(main())
