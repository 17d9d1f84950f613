#!/usr/bin/env python3
"""The book's calculator panels, checked in a real browser against the CLI.

    tools/panel_test.py --book build/book.html --napkin build/bin/napkin \
        --out build/panels [--configs 200] [--seed N] [--chromium PATH]

1. Module: the WebAssembly build of every napkin command (window.napkin.run)
   answers a set of questions exactly as build/bin/napkin does: exit status,
   stdout and stderr, byte for byte (JSON numbers to a relative 1e-12).
2. Panels: every panel of the book (div.calc) is driven through its default,
   edge cases (the largest batch that fits and one more, a tp that does not
   divide the heads, int8 on every GPU and fp8 on one without it, values out
   of range) and --configs configurations drawn at random from the ranges its
   form offers.  For each, what the panel displays (exit status, the error
   message beside its field, every value's raw number, label and formatted
   text, the notes) must equal what `napkin <cmd> ... --format json` (and
   --format table for the labels) prints for the same flags: numbers to a
   relative 1e-12, text exactly.  The static HTML (what a reader without
   scripts sees) must match the CLI's default answer too.
3. The page makes no network request (a Content-Security-Policy that allows
   nothing outside the page is added to the test copy, and any violation or
   resource fetch is reported) and logs no console error.
4. A screenshot of each panel is saved as <out>/<panel id>.png.

Standard library only; one headless Chromium for the whole test, driven over
the DevTools protocol (tools/cdp.py), reads the verdict back from the page
and takes every screenshot.  Exit status 0 when everything matched, 1 otherwise.
"""
import argparse
import base64
import html
import html.parser
import json
import math
import os
import random
import re
import shutil
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser  # noqa: E402  (one Chromium, over its pipe)

REL_TOL = 1e-12


# ------------------------------------------------------------ the page

class PanelParser(html.parser.HTMLParser):
    """div.calc panels: their command, fields (form order) and static rows."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.panels = []
        self.depth = 0          # div nesting inside the current panel
        self.cur = None
        self.select = None
        self.span = None

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        if self.cur is None:
            if tag == "div" and "calc" in (a.get("class") or "").split():
                self.cur = {"id": a.get("id"), "cmd": a.get("data-cmd"), "show": a.get("data-show"),
                            "fields": [], "static": []}
                self.depth = 1
            return
        if tag == "div":
            self.depth += 1
        elif tag == "select":
            self.select = {"name": a["name"], "kind": "select", "options": [], "default": None}
            self.cur["fields"].append(self.select)
        elif tag == "option" and self.select is not None:
            self.select["options"].append(a["value"])
            if "selected" in a:
                self.select["default"] = a["value"]
        elif tag == "input":
            if a.get("type") == "checkbox":
                self.cur["fields"].append({"name": a["name"], "kind": "checkbox", "default": "checked" in a})
            else:
                self.cur["fields"].append({"name": a["name"], "kind": "number", "min": a["min"], "max": a["max"],
                                           "step": a["step"], "default": a["value"]})
        elif tag == "span" and "v" in (a.get("class") or "").split():
            self.span = {"key": a["data-key"], "value": a["data-value"], "shown": ""}

    def handle_endtag(self, tag):
        if self.cur is None:
            return
        if tag == "select" and self.select is not None:
            if self.select["default"] is None:
                self.select["default"] = self.select["options"][0]
            self.select = None
        elif tag == "span" and self.span is not None:
            self.cur["static"].append(self.span)
            self.span = None
        elif tag == "div":
            self.depth -= 1
            if self.depth == 0:
                self.panels.append(self.cur)
                self.cur = None

    def handle_data(self, data):
        if self.span is not None:
            self.span["shown"] += data

    def close(self):
        super().close()
        for p in self.panels:      # the HTML writer wraps long lines
            for s in p["static"]:
                s["shown"] = re.sub(r"\s+", " ", s["shown"]).strip()


# ------------------------------------------------------------ the CLI

def cli_args(fields, config):
    """The argv the panel's script hands the module, in form order."""
    args = []
    for f in fields:
        v = config[f["name"]]
        if f["kind"] == "checkbox":
            if v:
                args.append("--" + f["name"])
        else:
            args += ["--" + f["name"], v]
    return args


def command_line(cmd, args):
    """The command the panel shows (calc.js quotes a value that needs it)."""
    words = ["napkin", cmd] + [a if a.startswith("--") or re.match(r"^[A-Za-z0-9._/-]+$", a) else "'" + a + "'"
                               for a in args]
    return " ".join(words)


_BATCH = {}


def run_cli(napkin, cmd, args, fmt):
    """napkin CMD ARGS --format FMT: exit status, stdout and stderr, asked of
    one long-lived `napkin --batch` (tests/test_cli_batch.c checks that it
    answers exactly as separate runs do) rather than a process per question."""
    p = _BATCH.get(napkin)
    if p is None or p.poll() is not None:
        p = _BATCH[napkin] = subprocess.Popen([napkin, "--batch"], stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                              text=True, encoding="utf-8", bufsize=1)
    p.stdin.write(json.dumps([cmd] + args + ["--format", fmt]) + "\n")
    p.stdin.flush()
    line = p.stdout.readline()
    r = json.loads(line) if line else {"error": "napkin --batch stopped (exit %s)" % p.poll()}
    if "error" in r:
        raise SystemExit("%s: napkin %s %s: %s" % (os.path.basename(sys.argv[0]), cmd, " ".join(args), r["error"]))
    return r


def section_kind(title):
    """The kind of number a section holds, from its title (as calc.js reads it)."""
    m = re.match(r"^(Bound|Estimate): ", title)
    if not m:
        return ""
    return m.group(1).lower() + (" at the given efficiencies" if title.endswith("at the given efficiencies)") else "")


def table_lines(out, n):
    """(label, shown) of the first n value lines of --format table (as calc.js
    reads them): a label ends with its section's kind, "(bound)" or "(estimate)"."""
    rows, kind = [], ""
    for line in out.split("\n"):
        if len(rows) >= n:
            break
        if line.startswith("  "):
            m = re.match(r"^  (.*?)  +(.*)$", line)
            label, shown = (m.group(1), m.group(2)) if m else (line.strip(), "")
            rows.append((label + " (%s)" % kind if kind else label, shown))
        elif line:
            kind = section_kind(line)
    return rows


def expected_display(napkin, panel, config):
    """What the panel must show for config, from the CLI."""
    args = cli_args(panel["fields"], config)
    j = run_cli(napkin, panel["cmd"], args, "json")
    exp = {"status": j["status"], "command": command_line(panel["cmd"], args)}
    if j["status"] != 0:
        exp["msg"] = j["stderr"].rstrip()
        # Beside the first field the message names, else in the status line.
        names = [f["name"] for f in panel["fields"]]
        exp["msgAt"] = next((n for n in re.findall(r"--([a-z0-9-]+)", exp["msg"]) if n in names), "status")
        if not j["stdout"]:
            return exp
    rep = json.loads(j["stdout"])   # a report, even with a non-zero exit (napkin train)
    if "values" not in rep:         # a refusal: {"error": {...}}, shown as the message alone
        return exp
    # a calibrated row's error band (<row>_band_lo/_hi/_n) is on its row's table line
    keys = [k for k in rep["values"] if not re.search(r"_band_(lo|hi|n)$", k)]
    t = run_cli(napkin, panel["cmd"], args, "table")
    lines = table_lines(t["stdout"], len(keys))
    show = panel["show"].split(",") if panel["show"] else keys
    exp["rows"] = [[k, rep["values"][k], lines[i][0], lines[i][1]] for i, k in enumerate(keys) if k in show]
    exp["notes"] = rep.get("notes", [])
    return exp


# ------------------------------------------------------------ comparing

def same_number(a, b):
    if a is None or b is None:
        return a is None and b is None
    if isinstance(a, str) or isinstance(b, str):
        return a == b
    if a == b:
        return True
    return math.isfinite(a) and math.isfinite(b) and abs(a - b) <= REL_TOL * max(abs(a), abs(b))


def parse_shown_value(raw, like):
    """data-value text back to the JSON value's type."""
    if raw == "null":
        return None
    if isinstance(like, str):
        return raw
    try:
        return float(raw)
    except ValueError:
        return raw


def compare(exp, got):
    """A list of differences between the CLI's answer and the panel's display."""
    d = []
    if str(exp["status"]) != got.get("status"):
        d.append("exit status: CLI %s, panel %s" % (exp["status"], got.get("status")))
        return d
    if got.get("command") != exp["command"]:
        d.append("command line: CLI %r, panel %r" % (exp["command"], got.get("command")))
    if exp["status"] != 0:
        msgs = got.get("msgs", [])
        if msgs != ([exp["msg"]] if exp["msg"] else []):
            d.append("message: CLI %r, panel %r" % (exp["msg"], msgs))
        elif exp["msg"] and got.get("msgAt") != exp["msgAt"]:
            d.append("message shown at %s, not beside %s" % (got.get("msgAt"), exp["msgAt"]))
        if not exp["msg"] and not exp.get("notes"):
            d.append("exit %d with neither a message nor a report to show" % exp["status"])
        if "rows" not in exp:
            if not got.get("tableHidden"):
                d.append("the result table stays visible beside an error")
            return d
    rows = got.get("rows", [])
    if len(rows) != len(exp["rows"]):
        d.append("rows: CLI %d, panel %d" % (len(exp["rows"]), len(rows)))
    for e, g in zip(exp["rows"], rows):
        key, value, label, shown = e
        if g[0] != key:
            d.append("row key: CLI %s, panel %s" % (key, g[0]))
            continue
        if not same_number(value, parse_shown_value(g[1], value)):
            d.append("%s: CLI %r, panel %r" % (key, value, g[1]))
        if g[2] != label or g[3] != shown:
            d.append("%s shown: CLI %r %r, panel %r %r" % (key, label, shown, g[2], g[3]))
        if not g[3].strip() or re.search(r"nan|inf", g[3], re.I):
            d.append("%s shows %r (blank or not a number)" % (key, g[3]))
    if got.get("notes") != exp["notes"]:
        d.append("notes: CLI %r, panel %r" % (exp["notes"], got.get("notes")))
    if got.get("msgs") and exp["status"] == 0:
        d.append("an error message beside an answer: %r" % got["msgs"])
    return d


# ------------------------------------------------------------ configurations

def decimals(step):
    return len(step.split(".")[1]) if "." in step else 0


def draw(rng, f):
    if f["kind"] == "select":
        return rng.choice(f["options"])
    if f["kind"] == "checkbox":
        return rng.random() < 0.3
    lo, hi, nd = float(f["min"]), float(f["max"]), decimals(f["step"])
    if nd == 0:
        lo, hi = int(lo), int(hi)
        # Tensor-parallel degrees are mostly powers of two in practice.
        if f["name"] in ("tp", "draft-tp", "pp", "dp", "gpus") and rng.random() < 0.8:
            return str(rng.choice([t for t in (1, 2, 4, 8, 16, 32, 64) if lo <= t <= hi]))
        # Log-uniform over wide ranges, so small values (which fit) are drawn
        # as often as large ones (which often do not).
        if hi > 100 * max(lo, 1):
            x = int(round(math.exp(rng.uniform(math.log(max(lo, 1)), math.log(hi)))))
            step = int(f["step"])
            x = lo + step * ((min(max(x, lo), hi) - lo) // step)
            return str(x)
        step = int(f["step"])
        return str(lo + step * rng.randint(0, (hi - lo) // step))
    x = rng.uniform(lo, hi)
    return ("%.*f" % (nd, x)).rstrip("0").rstrip(".") or "0"


def edge_cases(napkin, panel, defaults):
    """Named configurations at the edges the issue names."""
    names = {f["name"]: f for f in panel["fields"]}
    cases = []

    def case(**over):
        c = dict(defaults)
        c.update(over)
        cases.append(c)

    j = run_cli(napkin, panel["cmd"], cli_args(panel["fields"], defaults), "json")
    values = json.loads(j["stdout"])["values"] if j["status"] == 0 else {}
    # The largest batch (or microbatch) that fits, and one more.
    for field, key in (("batch", "max_batch"), ("micro-batch", "max_micro_batch")):
        if field not in names:
            continue
        mb = values.get(key)
        if isinstance(mb, int) and mb >= 1:
            case(**{field: str(mb)})
            case(**{field: str(mb + 1)})
        case(**{field: "0"})
        case(**{field: ""})
        case(**{field: names[field]["max"]})
    if "tp" in names:
        for tp in ("3", "5", "6", "7"):
            case(tp=tp)
    for dt in ("dtype", "weights", "compute"):
        if dt in names and "gpu" in names:
            for g in names["gpu"]["options"]:
                case(**{dt: "int8", "gpu": g})
            if "a100" in names["gpu"]["options"]:
                case(**{dt: "fp8", "gpu": "a100"})
    if "context" in names:
        case(context="1")
        case(context=names["context"]["max"])
    if "alpha" in names:
        case(alpha="1")
        case(alpha="1.5")
        case(alpha="0.01")
    if "frames" in names:
        case(frames="80")          # not 4k + 1: refused
    if "gamma" in names:
        case(gamma="1")
        case(gamma=names["gamma"]["max"])
    return cases


# ------------------------------------------------------------ the browser

HEAD_JS = r"""
<meta http-equiv="Content-Security-Policy" content="default-src 'none'; script-src 'unsafe-inline' 'wasm-unsafe-eval'; style-src 'unsafe-inline'; img-src data:; font-src data:">
<script>
window.__panelTest = {errors: [], violations: []};
(function () {
  var t = window.__panelTest, orig = console.error;
  console.error = function () { t.errors.push(Array.prototype.join.call(arguments, " ")); orig.apply(console, arguments); };
  window.addEventListener("error", function (e) { t.errors.push("error: " + (e.message || e.type)); }, true);
  window.addEventListener("unhandledrejection", function (e) { t.errors.push("unhandled rejection: " + e.reason); });
  document.addEventListener("securitypolicyviolation", function (e) { t.violations.push(e.blockedURI + " (" + e.violatedDirective + ")"); });
})();
</script>
"""

DRIVE_JS = r"""
<pre id="panel-test-result">pending</pre>
<script>
(function () {
  var out = document.getElementById("panel-test-result");
  function display(panel) {
    var d = {status: panel.dataset.status, rows: [], msgs: [], notes: []};
    var code = panel.querySelector(".calc-command code");
    d.command = code ? code.textContent : null;
    panel.querySelectorAll(".calc-msg").forEach(function (m) {
      d.msgs.push(m.textContent);
      d.msgAt = m.parentNode.dataset.for || (m.parentNode.classList.contains("calc-status") ? "status" : "?");
    });
    var table = panel.querySelector("table");
    function shown(el) { return el.getClientRects().length > 0; }   /* rendered, not only present */
    d.tableHidden = !shown(table);
    if (shown(table))
      table.querySelectorAll("tbody tr").forEach(function (tr) {
        var v = tr.querySelector("span.v");
        d.rows.push([v.dataset.key, v.dataset.value, tr.children[0].textContent, v.textContent]);
      });
    if (shown(panel.querySelector(".calc-notes")))
      panel.querySelectorAll(".calc-notes p").forEach(function (p) { d.notes.push(p.textContent); });
    return d;
  }
  function set(panel, config) {
    var form = panel.querySelector("form.calc-form");
    Object.keys(config).forEach(function (k) {
      var el = form.elements[k];
      if (el.type === "checkbox") el.checked = !!config[k]; else el.value = config[k];
    });
    form.elements[0].dispatchEvent(new Event("change", {bubbles: true}));
  }
  window.napkin.ready.then(function (api) {
    var plan = __PLAN__, result = {panels: {}, module: []};
    plan.module.forEach(function (q) { result.module.push(api.run(q[0], q[1])); });
    plan.panels.forEach(function (p) {
      var panel = document.getElementById(p.id), got = [];
      got.push(display(panel));            /* as the page opened */
      p.configs.forEach(function (c) { set(panel, c); got.push(display(panel)); });
      result.panels[p.id] = got;
    });
    result.errors = window.__panelTest.errors;
    result.violations = window.__panelTest.violations;
    result.resources = performance.getEntriesByType("resource").map(function (e) { return e.name; });
    out.textContent = JSON.stringify(result);
  }).catch(function (e) { out.textContent = "FAILED: " + e; });
})();
</script>
"""

VERDICT_JS = r"""
new Promise(function (done) {
  var out = document.getElementById("panel-test-result");
  (function look() { if (out.textContent !== "pending") done(out.textContent); else setTimeout(look, 100); })();
})
"""

# Run in the verdict page, once per screenshot: the panel alone on the page
# (and the calculator's styles), set to a configuration.  The first call
# keeps every panel, since the page then holds only one at a time.
SHOT_JS = r"""
(function (id, config) {
  if (!window.__shot) {
    var all = {};
    document.querySelectorAll("div.calc[id]").forEach(function (p) { all[p.id] = p; });
    window.__shot = {panels: all, keep: Array.prototype.slice.call(document.querySelectorAll("body style"))};
  }
  var panel = window.__shot.panels[id];
  document.body.replaceChildren.apply(document.body, [panel].concat(window.__shot.keep));
  document.body.style.maxWidth = "46rem";
  var form = panel.querySelector("form.calc-form");
  Object.keys(config).forEach(function (k) {
    var el = form.elements[k];
    if (el.type === "checkbox") el.checked = !!config[k]; else el.value = config[k];
  });
  form.elements[0].dispatchEvent(new Event("change", {bubbles: true}));
  window.scrollTo(0, 0);
  return true;
})(__ID__, __CONFIG__)
"""


def page_with(book_html, head, tail):
    i = book_html.find("<head>")
    j = book_html.rfind("</body>")
    if i < 0 or j < 0:
        raise SystemExit("panel_test: the book has no <head> or </body>")
    i += len("<head>")
    return book_html[:i] + head + book_html[i:j] + tail + book_html[j:]


def chromium_cmd(chromium, profile):
    return [chromium, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-extensions", "--disable-background-networking", "--disable-sync",
            "--user-data-dir=" + profile, "--virtual-time-budget=60000", "--enable-logging=stderr", "--v=0"]


def console_lines(stderr):
    """What the page wrote to its console, as Chromium logs it (any level:
    the page has no reason to log anything)."""
    return [l for l in stderr.splitlines() if ":CONSOLE" in l]


def run_chromium(cmd, timeout):
    try:
        return subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    except subprocess.TimeoutExpired:
        raise SystemExit("panel_test: chromium did not finish within %d s" % timeout)


# ------------------------------------------------------------ main

MODULE_QUESTIONS = [
    ("roofline", {"gpu": "h100"}),
    ("roofline", {"gpu": "h100", "dtype": "fp8"}),
    ("roofline", {"gpu": "a100", "dtype": "fp8"}),
    ("memory", {"model": "llama3-70b", "gpu": "h100", "tp": 4, "context": 4096}),
    ("memory", {"model": "llama3-405b", "gpu": "h100"}),
    ("decode", {"model": "llama3-70b", "gpu": "h100", "tp": 4, "batch": 64, "context": 4096, "no-comm": True}),
    ("decode", {"model": "llama3-70b", "gpu": "h100", "tp": 3}),
    ("decode", {"model": "nope", "gpu": "h100"}),
    ("spec", {"alpha": 0.7, "gamma": 5}),
    ("prefill", {"model": "llama3-8b", "gpu": "h100"}),
    ("serve", {"model": "llama3-8b", "gpu": "h100"}),
    ("train", {"model": "llama3-8b", "gpu": "h100"}),
    ("specs", {}),
    ("decode", {"model": "llama3-8b", "gpu": "h100", "format": "table"}),
    ("decode", {"model": "llama3-8b", "gpu": "h100", "batch": "4k"}),
    ("decode", {"model": "llama3-8b", "gpu": "h100", "--batch": 4}),
]


def module_args(flags):
    args, fmt = [], "json"
    for k, v in flags.items():
        if k == "format":
            fmt = v
        elif v is True:
            args.append("--" + k)
        elif v is not False and v is not None:
            args += ["--" + k, str(v)]
    return args, fmt


def check_module(napkin, answers):
    fails = []
    for (cmd, flags), got in zip(MODULE_QUESTIONS, answers):
        args, fmt = module_args(flags)
        if any(k.startswith("-") for k in flags):   # not a flag name: the module refuses it, exit 2
            if got["status"] != 2 or "flag name" not in got["stderr"]:
                fails.append("module %s %r: expected a refusal of the flag name, got %r" % (cmd, flags, got))
            continue
        exp = run_cli(napkin, cmd, args, fmt)
        same = exp["status"] == got["status"] and exp["stderr"] == got["stderr"]
        if same and fmt == "json" and exp["status"] == 0:
            same = json_equal(json.loads(exp["stdout"]), json.loads(got["stdout"]))
        elif same and fmt == "json" and not got["stdout"]:
            # A refusal: the CLI (main.c) also writes the message as a JSON object on
            # stdout for programs that read JSON; the page shows the message itself.
            want = {"error": {"command": cmd, "status": exp["status"], "message": exp["stderr"].rstrip("\n")}}
            same = json_equal(json.loads(exp["stdout"]), want)
        elif same:
            same = exp["stdout"] == got["stdout"]
        if not same:
            fails.append("module %s %r: CLI %r, module %r" % (cmd, flags, exp, got))
    return fails


def json_equal(a, b):
    if isinstance(a, dict) and isinstance(b, dict):
        return list(a.keys()) == list(b.keys()) and all(json_equal(a[k], b[k]) for k in a)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(json_equal(x, y) for x, y in zip(a, b))
    if isinstance(a, (int, float)) and isinstance(b, (int, float)) and not isinstance(a, bool):
        return same_number(a, b)
    return a == b


SHOT_WIDTH, SHOT_HEIGHT = 900, 1100


def console_events(events):
    """What the page logged (any level: it has no reason to log anything) and
    what it threw, from the protocol's events."""
    lines = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.consoleAPICalled":
            lines.append("%s: %s" % (p.get("type"), " ".join(str(a.get("value", a.get("description", "")))
                                                             for a in p.get("args", []))))
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            lines.append("uncaught exception: %s" % (d.get("exception", {}).get("description") or d.get("text")))
        elif m == "Log.entryAdded" and p.get("entry", {}).get("level") in ("error", "warning"):
            lines.append("%s: %s %s" % (p["entry"]["level"], p["entry"].get("text", ""), p["entry"].get("url", "")))
    return lines


def drive(browser, book, plan, panels, expected, o):
    """One Chromium for everything: the test page drives every panel and
    asks the module its questions; then, in the same page, each panel alone
    as it opens (its defaults) and refusing its first edge case without an
    answer is screenshot.  Returns (the page's result, or a message saying
    why there is none; the failures of the screenshots and the console)."""
    fails = []
    with tempfile.TemporaryDirectory(prefix="panel_test.") as tmp:
        test_page = os.path.join(tmp, "book-test.html")
        with open(test_page, "w", encoding="utf-8") as f:
            f.write(page_with(book, HEAD_JS, DRIVE_JS.replace("__PLAN__", json.dumps(plan))))
        browser.attach_page()
        for domain in ("Page", "Runtime", "Log"):
            browser.send(domain + ".enable")
        browser.send("Emulation.setDeviceMetricsOverride",
                     {"width": SHOT_WIDTH, "height": SHOT_HEIGHT, "deviceScaleFactor": 1, "mobile": False})
        browser.send("Page.navigate", {"url": "file://" + test_page})
        browser.wait_event("Page.loadEventFired", timeout=o.timeout)
        # The verdict is written once the module has started and every panel
        # is driven (the page is busy until then: one promise waits for it).
        try:
            text = browser.evaluate(VERDICT_JS, timeout=o.timeout)
        except TimeoutError:
            return "no verdict from the page within %d s" % o.timeout, fails
        if not text.startswith("{"):
            return "the page says: %s" % text[:2000], fails
        result = json.loads(text)

        for p, pl in zip(panels, plan["panels"]):
            refused = next((c for c, e in zip(pl["configs"], expected[p["id"]]) if e["status"] != 0), None)
            for name, config in ((p["id"], pl["configs"][0]), (p["id"] + "-refused", refused)):
                if config is None:
                    continue
                png = os.path.abspath(os.path.join(o.out, name + ".png"))
                if os.path.exists(png):
                    os.remove(png)
                browser.evaluate(SHOT_JS.replace("__ID__", json.dumps(p["id"]))
                                 .replace("__CONFIG__", json.dumps(config)))
                data = browser.send("Page.captureScreenshot", {"format": "png"}).get("data")
                if data:
                    with open(png, "wb") as f:
                        f.write(base64.b64decode(data))
                if not os.path.exists(png) or os.path.getsize(png) == 0:
                    fails.append("%s: no screenshot" % name)
        browser.drain(0.3)
        fails += ["console: " + line for line in console_events(browser.events)]
    return result, fails


def main():
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--book", required=True)
    ap.add_argument("--napkin", required=True)
    ap.add_argument("--out", required=True)
    ap.add_argument("--configs", type=int, default=200)
    ap.add_argument("--seed", type=int, default=int(os.environ.get("PANEL_SEED", "20261201")))
    ap.add_argument("--chromium", default=os.environ.get("CHROMIUM") or shutil.which("chromium")
                    or shutil.which("chromium-browser") or "/usr/bin/chromium")
    ap.add_argument("--timeout", type=int, default=300)
    o = ap.parse_args()
    if not os.path.exists(o.chromium):
        print("panel_test: no Chromium at %s (apt-get install chromium)" % o.chromium, file=sys.stderr)
        return 1
    os.makedirs(o.out, exist_ok=True)
    with open(o.book, encoding="utf-8") as f:
        book = f.read()
    pp = PanelParser()
    pp.feed(book)
    pp.close()
    panels = pp.panels
    if not panels:
        print("panel_test: %s has no calculator panel" % o.book, file=sys.stderr)
        return 1

    rng = random.Random(o.seed)
    plan = {"module": [[c, f] for c, f in MODULE_QUESTIONS], "panels": []}
    expected, fails = {}, []
    for p in panels:
        defaults = {f["name"]: f["default"] for f in p["fields"]}
        configs = [dict(defaults)] + edge_cases(o.napkin, p, defaults)
        for _ in range(o.configs):
            configs.append({f["name"]: draw(rng, f) for f in p["fields"]})
        plan["panels"].append({"id": p["id"], "configs": configs})
        exp = [expected_display(o.napkin, p, c) for c in configs]
        expected[p["id"]] = exp
        # The static page: the default answer, as the CLI gives it.
        if exp[0]["status"] != 0:
            fails.append("%s: the default configuration has no answer: %s" % (p["id"], exp[0]["msg"]))
        else:
            static = [[s["key"], s["value"], None, s["shown"]] for s in p["static"]]
            for e, s in zip(exp[0]["rows"], static):
                if e[0] != s[0] or not same_number(e[1], parse_shown_value(s[1], e[1])) or e[3] != s[3]:
                    fails.append("%s static page: CLI %r, page %r" % (p["id"], e, s))
            if len(static) != len(exp[0]["rows"]):
                fails.append("%s static page: %d rows, CLI %d" % (p["id"], len(static), len(exp[0]["rows"])))

    browser = Browser(o.chromium, SHOT_WIDTH, SHOT_HEIGHT)
    try:
        result, shot_fails = drive(browser, book, plan, panels, expected, o)
    except (TimeoutError, RuntimeError, StopIteration, OSError) as e:
        print("panel_test: Chromium did not answer: %s" % e, file=sys.stderr)
        return 1
    finally:
        browser.close()
    if isinstance(result, str):
        print("panel_test: %s" % result, file=sys.stderr)
        return 1
    fails += shot_fails

    fails += check_module(o.napkin, result["module"])
    fails += ["console error: " + e for e in result["errors"]]
    fails += ["network request blocked: " + v for v in result["violations"]]
    fails += ["resource fetched: " + u for u in result["resources"]]
    counts = []
    for p in plan["panels"]:
        got = result["panels"].get(p["id"], [])
        exp = expected[p["id"]]
        if len(got) != len(exp) + 1:
            fails.append("%s: %d displays for %d configurations" % (p["id"], len(got) - 1, len(exp)))
            continue
        # got[0] is the page as opened: the defaults, computed live.
        for i, (e, g) in enumerate([(exp[0], got[0])] + list(zip(exp, got[1:]))):
            for d in compare(e, g):
                cfg = p["configs"][max(i - 1, 0)]
                fails.append("%s config %d %s: %s" % (p["id"], max(i - 1, 0), json.dumps(cfg), d))
        by_status = {}
        for e in exp:
            by_status[e["status"]] = by_status.get(e["status"], 0) + 1
        counts.append("%s: %d configurations (%s)" % (
            p["id"], len(exp), ", ".join("exit %d: %d" % kv for kv in sorted(by_status.items()))))

    for c in counts:
        print("panel_test: " + c)
    print("panel_test: module: %d questions; seed %d; screenshots in %s" % (len(MODULE_QUESTIONS), o.seed, o.out))
    if fails:
        for f in fails[:60]:
            print("FAIL " + f, file=sys.stderr)
        print("panel_test: %d differences%s" % (len(fails), " (first 60 shown)" if len(fails) > 60 else ""),
              file=sys.stderr)
        return 1
    print("panel_test: every panel agrees with the CLI; no network request, no console error")
    return 0


if __name__ == "__main__":
    sys.exit(main())
