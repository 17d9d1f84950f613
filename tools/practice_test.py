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
7. Interaction, in the book and in the practice edition (one Chromium over
   the DevTools protocol, tools/cdp.py): the page's largest seed is the one
   `napkin practice --help` states; "new variant" clicked three times keeps
   every box (the same parts, counted before and after), writes the drawn
   seed into the address and shows that seed's numbers as the CLI prints
   them; the right answers typed into every box are judged right; seeds at
   and past the bounds (the largest, one more, -1, "abc", "1e3", 2^53) through
   show() are taken or refused with the boxes kept and a note; a module that
   refuses the variant leaves the boxes, the seed and the address as they
   were and says why; ?seed= in the address at and past the bounds opens the
   variant or the printed numbers with a note; the module and the grade
   program take the largest seed and refuse one more.

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
from cdp import Browser  # noqa: E402  (one Chromium, over its pipe)

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


# ------------------------------------------------------------ interaction

READY_JS = r"""
(function () {
  if (!window.napkin || !window.napkin.ready) return "the page has no calculator module";
  return window.napkin.ready.then(function (a) { return a.practice ? a.practice.ready : null; })
    .then(function (p) { return p ? true : "no answer boxes"; }, function (e) { return "the module failed: " + e; });
})()
"""

STATE_JS = r"""
(function () {
  var p = window.napkin.practice, spans = {}, notes = {};
  document.querySelectorAll("[data-practice]").forEach(function (e) {
    (spans[e.dataset.practice] = spans[e.dataset.practice] || []).push(e.textContent);
  });
  document.querySelectorAll("form.practice .practice-note").forEach(function (n) { notes[n.textContent] = true; });
  return {seed: p.seed(), max: p.maxSeed === undefined ? null : p.maxSeed, search: window.location.search, spans: spans, notes: Object.keys(notes),
          boxes: Array.prototype.map.call(document.querySelectorAll("form.practice input.practice-answer"),
                                          function (i) { return i.name; }),
          errors: window.__panelTest.errors, violations: window.__panelTest.violations};
})()
"""

CLICK_NEW_JS = """(function () {
  var b = document.querySelector("form.practice button.practice-new");
  if (!b) return false;
  b.click();
  return true;
})()"""

TYPE_ALL_JS = r"""
(function (answers) {
  var got = {};
  Object.keys(answers).forEach(function (part) {
    var input = document.querySelector('input.practice-answer[name="' + part + '"]');
    if (!input) { got[part] = null; return; }
    input.value = answers[part];
    input.dispatchEvent(new Event("change", {bubbles: true}));
    got[part] = input.parentNode.querySelector("output").dataset.verdict || "";
  });
  return got;
})(__ANSWERS__)
"""

# The module refuses every variant (as it would a seed it does not take).
REFUSE_JS = r"""
(function () {
  var api = window.napkin;
  window.__realRun = api.run;
  api.run = function (cmd, flags) {
    if (cmd === "practice") return {status: 2, stdout: "", stderr: "napkin practice: refused by the test\n"};
    return window.__realRun(cmd, flags);
  };
  return true;
})()
"""
RESTORE_JS = "(function () { window.napkin.run = window.__realRun; return true; })()"


def stated_max_seed(napkin):
    """The largest seed `napkin practice --help` states ("0 to N")."""
    r = subprocess.run([napkin, "practice", "--help"], capture_output=True, text=True, timeout=60)
    m = re.search(r"--seed S\s+variant, 0 to ([0-9]+)", r.stdout)
    if r.returncode != 0 or not m:
        raise SystemExit("practice_test: `napkin practice --help` states no seed range:\n" + r.stdout + r.stderr)
    return int(m.group(1))


def variant_of(napkin, chapters, seed):
    """{"parts": [ids], "spans": {name: text}} of seed over the chapters, from the CLI."""
    parts, spans = [], {}
    for ch in chapters:
        v = cli_json([napkin, "practice", "--chapter", str(ch), "--seed", str(seed), "--format", "json"])
        parts += [p["id"] for p in v["parts"]]
        spans.update({i["name"]: i["text"] for i in v["inputs"]})
    return {"parts": sorted(parts), "spans": spans}


def open_page(browser, url, timeout):
    browser.send("Page.navigate", {"url": url})
    browser.wait_event("Page.loadEventFired", timeout=timeout)
    why = browser.evaluate(READY_JS, timeout=timeout)
    if why is not True:
        raise PageDead("the answer boxes did not start at %s: %s" % (url, why))
    return browser.evaluate(STATE_JS)


class PageDead(Exception):
    pass


def check_interaction(browser, page_file, label, o, chapters, max_seed, address_bounds):
    """Section 7 on one page (a test copy with the CSP); a list of failures."""
    fails = []
    seed0 = variant_of(o.napkin, chapters, 0)
    base = "file://" + page_file
    try:
        return interact(browser, base, label, o, chapters, max_seed, address_bounds, seed0, fails)
    except PageDead as e:
        return fails + ["%s: %s" % (label, e)]


def interact(browser, base, label, o, chapters, max_seed, address_bounds, seed0, fails):
    st = open_page(browser, base, o.timeout)

    def expect_boxes(st, what):
        if sorted(st["boxes"]) != seed0["parts"]:
            fails.append("%s %s: %d boxes (%s...), want the %d parts" % (
                label, what, len(st["boxes"]), st["boxes"][:3], len(seed0["parts"])))

    def expect_spans(st, want, what):
        for name, text in want["spans"].items():
            shown = st["spans"].get(name)
            if not shown or any(t != text for t in shown):
                fails.append("%s %s: %s shows %s, the CLI %s" % (label, what, name, shown, text))
                return

    if st["max"] != max_seed:
        fails.append("%s: the page's largest seed is %s, `napkin practice --help` states %d" % (label, st["max"], max_seed))
    if st["seed"] != 0 or st["notes"] not in ([], [""]):
        fails.append("%s opened without a seed: seed %s, notes %s" % (label, st["seed"], st["notes"]))
    expect_boxes(st, "as opened")
    n_before = len(st["boxes"])

    # "new variant", three times
    seen = [0]
    for k in range(3):
        if not browser.evaluate(CLICK_NEW_JS):
            fails.append("%s: no 'new variant' button" % label)
            break
        st = browser.evaluate(STATE_JS)
        what = "after 'new variant' x%d (seed %s)" % (k + 1, st["seed"])
        expect_boxes(st, what)
        if not (isinstance(st["seed"], int) and 1 <= st["seed"] <= max_seed) or st["seed"] == seen[-1]:
            fails.append("%s %s: drew seed %r after %r (want 1 to %d, a new one)" % (label, what, st["seed"], seen[-1], max_seed))
            continue
        seen.append(st["seed"])
        if st["search"] != "?seed=%d" % st["seed"]:
            fails.append("%s %s: the address says %r" % (label, what, st["search"]))
        if st["notes"] not in ([], [""]):
            fails.append("%s %s: a note beside the boxes: %s" % (label, what, st["notes"]))
        expect_spans(st, variant_of(o.napkin, chapters, st["seed"]), what)
    print("practice_test: %s: %d boxes before 'new variant', %d after three clicks (seeds %s)" % (
        label, n_before, len(st["boxes"]), ", ".join(str(x) for x in seen[1:])))

    # typing: the right answers of the variant shown, judged right in every box
    seed = st["seed"]
    keys = answer_keys(o.grade, [(ch, seed) for ch in chapters])
    right = {part: shown(v) for ch in chapters for part, v in keys[(ch, seed)].items()}
    got = browser.evaluate(TYPE_ALL_JS.replace("__ANSWERS__", json.dumps(right)))
    wrong = {p: v for p, v in got.items() if v != "right"}
    if wrong:
        fails.append("%s seed %d: right answers not judged right in %d of %d boxes: %s" % (
            label, seed, len(wrong), len(got), sorted(wrong.items())[:5]))

    # seeds at and past the bounds through show()
    for s, ok in ((max_seed, True), (max_seed + 1, False), (-1, False), ("abc", False), ("1e3", False),
                  (2 ** 53, False), (0, True), (max_seed, True)):
        before = browser.evaluate(STATE_JS)
        r = browser.evaluate("window.napkin.practice.show(%s)" % json.dumps(s))
        st = browser.evaluate(STATE_JS)
        what = "show(%s)" % json.dumps(s)
        expect_boxes(st, what)
        if r is not ok:
            fails.append("%s %s returned %r" % (label, what, r))
        if ok and st["seed"] != s:
            fails.append("%s %s: shows seed %s" % (label, what, st["seed"]))
        if not ok and (st["seed"] != before["seed"] or st["search"] != before["search"]):
            fails.append("%s %s: the seed went from %s to %s, the address from %r to %r" % (
                label, what, before["seed"], st["seed"], before["search"], st["search"]))
        if not ok and not any("0 to %d" % max_seed in n for n in st["notes"]):
            fails.append("%s %s: no note giving the range 0 to %d: %s" % (label, what, max_seed, st["notes"]))
        if ok and st["notes"] not in ([], [""]):
            fails.append("%s %s: a note %s" % (label, what, st["notes"]))

    # a module that refuses the variant: "new variant" keeps everything and says why
    before = browser.evaluate(STATE_JS)
    browser.evaluate(REFUSE_JS)
    browser.evaluate(CLICK_NEW_JS)
    st = browser.evaluate(STATE_JS)
    browser.evaluate(RESTORE_JS)
    expect_boxes(st, "after a refused 'new variant'")
    if st["seed"] != before["seed"] or st["search"] != before["search"]:
        fails.append("%s: a refused 'new variant' moved the seed %s -> %s, the address %r -> %r" % (
            label, before["seed"], st["seed"], before["search"], st["search"]))
    if not any("refused by the test" in n for n in st["notes"]):
        fails.append("%s: a refused 'new variant' says nothing of why: %s" % (label, st["notes"]))

    # the module at the bounds, against the CLI
    for s in (max_seed, max_seed + 1):
        r = browser.evaluate("window.napkin.run('practice', {chapter: '%d', seed: '%d'})" % (chapters[-1], s))
        e = panel_test.run_cli(o.napkin, "practice", ["--chapter", str(chapters[-1]), "--seed", str(s)], "json")
        if r["status"] != e["status"] or r["stderr"] != e["stderr"] or r["status"] != (0 if s == max_seed else 2):
            fails.append("%s: module seed %d: exit %s %r, CLI exit %s %r" % (
                label, s, r["status"], r["stderr"], e["status"], e["stderr"]))

    # ?seed= in the address, at and past the bounds
    for text in address_bounds(max_seed):
        st = open_page(browser, base + "?seed=" + text, o.timeout)
        what = "?seed=%s" % text
        expect_boxes(st, what)
        good = re.fullmatch(r"[0-9]+", text) and int(text) <= max_seed
        if good and (st["seed"] != int(text) or st["notes"] not in ([], [""])):
            fails.append("%s %s: seed %s, notes %s" % (label, what, st["seed"], st["notes"]))
        if good and int(text) == max_seed:
            expect_spans(st, variant_of(o.napkin, chapters, max_seed), what)
        if not good and (st["seed"] != 0 or not any("is not a variant" in n and "0 to %d" % max_seed in n
                                                      for n in st["notes"])):
            fails.append("%s %s: seed %s, notes %s (want the printed numbers and why)" % (label, what, st["seed"], st["notes"]))
        if not good:
            expect_spans(st, seed0, what)

    st = browser.evaluate(STATE_JS)
    fails += ["%s console error: %s" % (label, e) for e in st["errors"]]
    fails += ["%s network request blocked: %s" % (label, v) for v in st["violations"]]
    return fails


def grade_bounds(grade, max_seed, chapter):
    """The grade program takes the largest seed and refuses one more."""
    fails = []
    for s, ok in ((max_seed, True), (max_seed + 1, False)):
        g = subprocess.run([grade, "--chapter", str(chapter), "--seed", str(s), "--key"], capture_output=True,
                           text=True, timeout=60)
        if (g.returncode == 0) != ok or (not ok and "--seed" not in g.stderr):
            fails.append("grade --seed %d: exit %d %s" % (s, g.returncode, g.stderr.strip()))
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

    # 7: interaction, in the book and the practice edition
    max_seed = stated_max_seed(o.napkin)
    fails += grade_bounds(o.grade, max_seed, chapters[-1])
    pages = [("book", o.page, lambda m: ["0", str(m), str(m + 1), "-1", "abc", "1e3", "99999999999999999999"])]
    if o.practice_page:
        pages.append(("practice edition", o.practice_page, lambda m: [str(m), str(m + 1), "abc"]))
    with tempfile.TemporaryDirectory(prefix="practice_test.") as tmp:
        browser = Browser(o.chromium)
        try:
            browser.attach_page()
            browser.send("Page.enable")
            for label, path, bounds in pages:
                with open(path, encoding="utf-8") as f:
                    text = f.read()
                copy = os.path.join(tmp, os.path.basename(path))
                with open(copy, "w", encoding="utf-8") as f:
                    f.write(panel_test.page_with(text, panel_test.HEAD_JS, ""))
                fails += check_interaction(browser, copy, label, o, chapters, max_seed, bounds)
        except (TimeoutError, RuntimeError, StopIteration, OSError) as e:
            fails.append("interaction: Chromium did not answer: %s" % e)
        finally:
            browser.close()

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
