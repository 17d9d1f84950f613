#!/usr/bin/env python3
"""Open the built book in headless Chromium, as a reader would, and check it.

  tools/browser_check.py build/book.html build/screenshots

Speaks the DevTools protocol over --remote-debugging-pipe (file descriptors
3 and 4, NUL-separated JSON), standard library only.  Checks, at a desktop
width of 1280 px and again at a phone's 390 px:
  - no console error and no uncaught exception;
  - no request leaves the file (only file:, data:, about:, blob: URLs);
  - every MathML element outside the contents lays out with a non-zero size;
  - every figure's image loads, and its SVG has text (axis labels);
  - every in-page link (#id) names an element that exists;
  - no element reaches past the page width (unless a scrolling box of its
    own holds it inside the page), and the page itself does not scroll
    sideways; at 1280 px no table or code block scrolls sideways either
    (on a phone they may, inside their box);
  - every link of the navigation bar is whole on screen (not clipped);
  - no figure's text is drawn smaller than 9 px (its SVG's smallest font
    size times the scale the page draws the image at);
  - the navigation bar's search box finds the first chapter by its title
    and the first figure by its caption;
  - the interactive parts work (at 1280 px, after the screenshots): a page
    with calculator panels or exercise numbers carries the calculator
    module; every panel is live and a changed input (its batch first)
    changes what it answers; "new variant" clicked three times keeps every
    answer box (counted before and after) and a number typed into each
    exercise's first box is judged.
  - at 390 px: every figure's image (the drawing the page chose) fits the
    screen and was drawn at most 480 px wide; no table, display formula,
    panel or code block reaches past the screen unless inside a scrolling
    box of its own; table captions whole on screen; every panel value on
    screen; console and output blocks keep their lines (no wrapping); no
    numbered list starts past 1 (<ol start>: a number that began a source
    line); scrolled into the text, the bar takes at most 10 % of the height.
and saves a screenshot of each chapter's first screen at each width under
the given directory (chapter-NN.png, chapter-NN-390px.png).  Exit 0 when every check passes, 1 with one line per problem,
2 when Chromium cannot be started or does not answer in time.
Set CHROMIUM to the browser to use (default: chromium, chromium-browser).
"""
import base64
import json
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from cdp import Browser, find_chromium  # noqa: E402  (one Chromium, over its pipe)

WIDTH, HEIGHT = 1280, 900
PHONE_WIDTH, PHONE_HEIGHT = 390, 844
MIN_FIGURE_TEXT_PX = 9
MAX_PHONE_FIGURE_PX = 480   # a figure shown on a phone was drawn for one
MAX_PHONE_BAR_SHARE = 0.10  # the bar, scrolled into the text, at most this share of the height

# At a phone's width: what a reader would otherwise pan or miss.
PHONE_JS = r"""
const phone_checks = (problems, W, where) => {
  const scrolls = (el) => /^(auto|scroll)$/.test(getComputedStyle(el).overflowX);
  // inside every box that clips it, and inside the screen
  const onScreen = (el) => {
    const r = el.getBoundingClientRect();
    if (r.left < -1 || r.right > W + 1) return false;
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      if (getComputedStyle(p).overflowX === "visible") continue;
      const q = p.getBoundingClientRect();
      if (r.left < q.left - 1 || r.right > q.right + 1) return false;
    }
    return true;
  };
  // past the screen, or spilling out of its own box, unless that box (or its
  // parent, a wrapper) scrolls and sits on the screen
  const spills = (el) => {
    const r = el.getBoundingClientRect();
    if (r.left < -1 || r.right > W + 1) {
      const p = el.parentElement;
      return !(p && scrolls(p) && p.getBoundingClientRect().right <= W + 1);
    }
    return !scrolls(el) && !(el.parentElement && scrolls(el.parentElement)) &&
      el.scrollWidth > el.clientWidth + 1 && r.left + el.scrollWidth > W + 1;
  };
  const svgWidth = (src) => {
    if (!src || !src.startsWith("data:image/svg+xml")) return 0;
    const comma = src.indexOf(",");
    const body = src.slice(0, comma).includes(";base64") ? atob(src.slice(comma + 1)) : decodeURIComponent(src.slice(comma + 1));
    const root = new DOMParser().parseFromString(body, "image/svg+xml").documentElement;
    return parseFloat(root.getAttribute("width")) || parseFloat((root.getAttribute("viewBox") || "0 0 0").split(/[ ,]+/)[2]) || 0;
  };
  const say = (el) => " near " + where(el) + ": " + (el.getAttribute("alt") || el.textContent).trim().replace(/\s+/g, " ").slice(0, 40);
  for (const img of document.querySelectorAll("figure img")) {
    const r = img.getBoundingClientRect(), natural = svgWidth(img.currentSrc) || img.naturalWidth;
    if (r.left < -1 || r.right > W + 1 || !onScreen(img))
      problems.push("figure wider than the screen (" + Math.round(r.width) + " px)" + say(img));
    if (natural > %(max_natural)d)
      problems.push("figure drawn at " + Math.round(natural) + " px natural width (> %(max_natural)d)" + say(img));
  }
  const kinds = [["table", "table"], ["math[display='block']", "formula"], ["div.calc", "panel"], ["pre", "code block"]];
  for (const [sel, kind] of kinds)
    for (const el of document.querySelectorAll(sel))
      if (el.getClientRects().length && !el.closest("nav") && spills(el))
        problems.push(kind + " past the screen outside a scrolling box of its own" + say(el));
  for (const cap of document.querySelectorAll("table > caption"))
    if (!onScreen(cap) || cap.scrollWidth > cap.clientWidth + 1) problems.push("table caption cut off" + say(cap));
  for (const td of document.querySelectorAll("div.calc tbody tr > td:last-child"))
    if (td.getClientRects().length && !onScreen(td)) problems.push("panel value off screen" + say(td.parentElement));
  let wrapped = 0;
  for (const pre of document.querySelectorAll("pre.console, pre.output")) {
    const ws = getComputedStyle(pre.querySelector("code") || pre).whiteSpace;
    if (ws !== "pre" && ws !== "nowrap" && ++wrapped <= 5) problems.push("console block wraps its lines (white-space: " + ws + ")" + say(pre));
  }
  if (wrapped > 5) problems.push("... and " + (wrapped - 5) + " more console blocks that wrap their lines");
  for (const ol of document.querySelectorAll("ol[start]"))
    if (!ol.closest("nav")) problems.push("numbered list starting at " + ol.getAttribute("start") + " in prose (a number at the start of a source line?)" + say(ol));
};
"""

# After scrolling into the text: the bar's height in CSS px.
BAR_JS = r"""
(() => { const b = document.getElementById("nb-bar"); return b ? b.getBoundingClientRect().height : 0; })()
"""

CHECK_JS = r"""
((wide_only, min_text) => {
  const problems = [];
  const W = document.documentElement.clientWidth;
  const where = (el) => {
    const sec = el.closest("section[id]") ;
    let h = null;
    for (let n = el; n && !h; n = n.previousElementSibling || n.parentElement)
      if (/^H[1-4]$/.test(n.tagName) && n.id) h = n;
    return (h ? "#" + h.id : (sec ? "#" + sec.id : "?"));
  };
  const toc = document.getElementById("TOC");
  let maths = 0;
  for (const m of document.querySelectorAll("math")) {
    if (toc && toc.contains(m)) continue;
    maths++;
    const r = m.getBoundingClientRect();
    if (!(r.width > 0 && r.height > 0))
      problems.push("math without size near " + where(m) + ": " + m.textContent.slice(0, 60));
  }
  let figures = 0;
  for (const img of document.querySelectorAll("figure img, img")) {
    figures++;
    const label = (img.getAttribute("alt") || "").slice(0, 50);
    if (!img.complete || img.naturalWidth === 0) {
      problems.push("figure not drawn near " + where(img) + ": " + label);
      continue;
    }
    // the drawing the page chose (a <picture>'s narrow source on a phone)
    const src = img.currentSrc || img.getAttribute("src") || "";
    if (src.startsWith("data:image/svg+xml")) {
      let text = "";
      try {
        const comma = src.indexOf(",");
        const body = src.slice(0, comma).includes(";base64")
          ? atob(src.slice(comma + 1)) : decodeURIComponent(src.slice(comma + 1));
        const svg = new DOMParser().parseFromString(body, "image/svg+xml");
        const texts = Array.from(svg.querySelectorAll("text")).map(t => t.textContent.trim()).filter(t => t);
        const rotated = Array.from(svg.querySelectorAll("text, g")).filter(t => /rotate\(\s*(-?90|270)\b/.test(t.getAttribute("transform") || "") && t.textContent.trim() !== "");
        if (texts.length < 2) problems.push("figure without axis labels near " + where(img) + ": " + label);
        else if (rotated.length === 0) problems.push("figure without a y-axis label near " + where(img) + ": " + label);
        // the smallest font any text is set in, inherited from its groups, times the drawn scale
        const root = svg.documentElement;
        const natural = parseFloat(root.getAttribute("width")) ||
          parseFloat((root.getAttribute("viewBox") || "0 0 0").split(/[ ,]+/)[2]) || img.naturalWidth;
        const scale = img.getBoundingClientRect().width / natural;
        let smallest = Infinity;
        for (const t of svg.querySelectorAll("text")) {
          if (!t.textContent.trim()) continue;
          for (let n = t; n && n.getAttribute; n = n.parentNode) {
            const m = (n.getAttribute("style") || "").match(/font-size:\s*([\d.]+)/);
            const v = m ? parseFloat(m[1]) : parseFloat(n.getAttribute("font-size"));
            if (v > 0) { smallest = Math.min(smallest, v); break; }
          }
        }
        if (smallest < Infinity && smallest * scale < min_text - 0.01)
          problems.push("figure text drawn at " + (smallest * scale).toFixed(1) + " px (< " + min_text
            + " px) near " + where(img) + ": " + label);
      } catch (e) {
        problems.push("figure SVG unreadable near " + where(img) + ": " + e);
      }
    }
  }
  let links = 0;
  for (const a of document.querySelectorAll("a[href^='#']")) {
    const id = decodeURIComponent(a.getAttribute("href").slice(1));
    if (id === "") continue;
    links++;
    if (!document.getElementById(id))
      problems.push("link to a missing anchor #" + id + " near " + where(a) + ": " + a.textContent.slice(0, 40));
  }
  const clips = (el) => {
    for (let p = el.parentElement; p && p !== document.body; p = p.parentElement) {
      const s = getComputedStyle(p);
      if (s.overflowX !== "visible" || s.position === "fixed")
        return p.getBoundingClientRect().right <= W + 1;
    }
    return false;
  };
  let wide = 0;
  for (const el of document.body.querySelectorAll("*")) {
    const r = el.getBoundingClientRect();
    if (r.width === 0 || r.right <= W + 1) continue;
    if (clips(el)) continue;
    if (++wide <= 20)
      problems.push("overflows the page width (" + Math.round(r.right) + " > " + W + " px): <"
        + el.tagName.toLowerCase() + (el.className ? " class=" + el.className : "") + "> near " + where(el));
  }
  const bar = document.getElementById("nb-bar");
  if (bar)
    for (const a of bar.querySelectorAll("a")) {
      if (a.hidden || a.getClientRects().length === 0) continue;
      const r = a.getBoundingClientRect();
      if (r.left < -1 || r.right > W + 1 || a.scrollWidth > a.clientWidth + 1 || r.width === 0)
        problems.push("navigation link clipped (" + Math.round(r.left) + " to " + Math.round(r.right) + " of " + W
          + " px): " + a.textContent.trim());
    }
  // the search box finds the first chapter by its title and a figure by its caption
  const search = document.querySelector("#nb-bar .nb-search"), found = document.querySelector(".nb-results");
  if (search && found) {
    const h = Array.from(document.querySelectorAll("h1[data-number]")).find(x => !x.closest("header"));
    const cap = document.querySelector("figcaption");
    for (const probe of [h, cap]) {
      if (!probe) continue;
      const words = probe.textContent.replace(/^\s*(Figure )?[\d.:]+\s*/, "").trim().split(/\s+/).slice(0, 3).join(" ");
      search.value = words;
      search.dispatchEvent(new Event("input"));
      if (found.hidden || !found.querySelector("button"))
        problems.push("the search box finds nothing for '" + words + "'");
    }
    search.value = "";
    search.dispatchEvent(new Event("input"));
  }
  for (const el of document.querySelectorAll("table, pre")) {
    if (!wide_only) break;
    if (toc && toc.contains(el)) continue;
    if (el.scrollWidth > el.clientWidth + 1)
      problems.push("a " + el.tagName.toLowerCase() + " scrolls sideways (" + el.scrollWidth + " > "
        + el.clientWidth + " px) near " + where(el) + ": " + el.textContent.trim().slice(0, 40));
  }
  if (!wide_only) phone_checks(problems, W, where);
  if (wide > 20) problems.push("... and " + (wide - 20) + " more elements past the page width");
  if (document.documentElement.scrollWidth > W + 1)
    problems.push("the page scrolls sideways: " + document.documentElement.scrollWidth + " > " + W + " px");
  const chapters = Array.from(document.querySelectorAll("h1[id]"))
    .filter(h => h.getAttribute("data-number")).map(h => [h.getAttribute("data-number"), h.id]);
  return JSON.stringify({ problems, counts: { maths, figures, links }, chapters });
})(%s, %d)
"""


# The interactive parts, once the module runs: panels answer a changed input,
# "new variant" keeps the boxes, typing judges.
INTERACT_JS = r"""
(async () => {
  const problems = [], counts = { panels: 0, boxes: 0, clicks: 0, judged: 0 };
  const done = () => JSON.stringify({ problems, counts });
  const wantsModule = document.querySelector("div.calc, [data-practice]");
  if (!window.napkin || !window.napkin.ready) {
    if (wantsModule) problems.push("the page has panels or exercise numbers but no calculator module");
    return done();
  }
  try { await window.napkin.ready; } catch (e) { problems.push("the calculator module did not start: " + e); return done(); }
  const shownAnswer = (panel) => panel.dataset.status + "|" + panel.querySelector("table").textContent + "|"
    + panel.querySelector(".calc-status").textContent;
  for (const panel of document.querySelectorAll("div.calc")) {
    counts.panels++;
    if (!panel.classList.contains("calc-live")) { problems.push("panel " + panel.id + " is not live"); continue; }
    const form = panel.querySelector("form.calc-form");
    const numbers = Array.from(form.querySelectorAll("input[type=number]"));
    numbers.sort((a, b) => (b.name === "batch") - (a.name === "batch"));
    let changed = false;
    for (const input of numbers) {
      const before = shownAnswer(panel), old = input.value;
      const lo = Number(input.min), hi = Number(input.max), v = Number(old);
      for (const x of [Math.round(v * 4.6), Math.round(v / 3), lo, hi]) {  /* 64 becomes 294 first */
        if (!(x >= lo && x <= hi) || x === v) continue;
        input.value = String(x);
        form.dispatchEvent(new Event("input", { bubbles: true }));
        if (shownAnswer(panel) !== before) { changed = true; break; }
      }
      input.value = old;
      form.dispatchEvent(new Event("input", { bubbles: true }));
      if (changed) break;
    }
    if (!changed && numbers.length) problems.push("panel " + panel.id + " answers no changed input");
  }
  let practice = null;
  try { practice = window.napkin.practice && await window.napkin.practice.ready; }
  catch (e) { problems.push("the answer boxes did not start: " + e); return done(); }
  const boxes = () => Array.from(document.querySelectorAll("form.practice input.practice-answer")).map(i => i.name).join(",");
  if (!practice) {
    if (document.querySelector("[data-practice]")) problems.push("the page has exercise numbers but no answer boxes");
    return done();
  }
  const first = boxes();
  counts.boxes = first ? first.split(",").length : 0;
  if (document.querySelector("[data-practice]") && !counts.boxes) problems.push("exercise numbers but no answer box");
  for (let k = 0; k < 3; k++) {
    const b = document.querySelector("form.practice button.practice-new");
    if (!b) break;
    b.click();
    counts.clicks++;
    if (boxes() !== first)
      problems.push("'new variant' click " + (k + 1) + " left " + document.querySelectorAll("form.practice input.practice-answer").length
        + " of " + counts.boxes + " answer boxes (seed " + practice.seed() + ")");
  }
  for (const f of document.querySelectorAll("form.practice")) {
    const input = f.querySelector("input.practice-answer");
    input.value = "1";
    input.dispatchEvent(new Event("change", { bubbles: true }));
    const out = input.parentNode.querySelector("output");
    if (out.dataset.verdict && out.dataset.verdict !== "error") counts.judged++;
    else problems.push("typing into " + input.name + " is not judged: " + out.textContent);
  }
  return done();
})()
"""


def main():
    if len(sys.argv) != 3:
        print("usage: browser_check.py BOOK.html SCREENSHOT_DIR", file=sys.stderr)
        return 2
    page, shots = os.path.abspath(sys.argv[1]), sys.argv[2]
    if not os.path.exists(page):
        print("browser check: %s does not exist" % page, file=sys.stderr)
        return 2
    exe = find_chromium()
    if not exe:
        print("browser check: no chromium on PATH (tools/bootstrap.sh installs it)", file=sys.stderr)
        return 2
    os.makedirs(shots, exist_ok=True)
    b = Browser(exe)
    try:
        b.attach_page()
        for domain in ("Page", "Runtime", "Log", "Network"):
            b.send(domain + ".enable")
        problems = []
        for width, height, suffix in ((WIDTH, HEIGHT, ""), (PHONE_WIDTH, PHONE_HEIGHT, "-%dpx" % PHONE_WIDTH)):
            phone = width != WIDTH
            b.send("Emulation.setDeviceMetricsOverride",
                   {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": phone})
            b.send("Page.navigate", {"url": "file://" + page})
            b.wait_event("Page.loadEventFired")
            b.drain(1.0)
            js = (PHONE_JS % {"max_natural": MAX_PHONE_FIGURE_PX}) + CHECK_JS % ("false" if phone else "true", MIN_FIGURE_TEXT_PX)
            verdict = json.loads(b.send("Runtime.evaluate", {"expression": js, "returnByValue": True})
                                 ["result"]["value"])
            problems += [("at %d px: " % width if phone else "") + p for p in verdict["problems"]]
            if phone:
                b.send("Runtime.evaluate", {"expression": "window.scrollTo(0, document.documentElement.scrollHeight / 2)"})
                b.drain(0.5)
                share = b.send("Runtime.evaluate", {"expression": BAR_JS, "returnByValue": True})["result"]["value"] / height
                if share > MAX_PHONE_BAR_SHARE:
                    problems.append("at %d px: the navigation bar takes %.0f%% of the screen's height in the text (> %.0f%%)"
                                    % (width, 100 * share, 100 * MAX_PHONE_BAR_SHARE))
            for num, hid in verdict["chapters"]:
                b.send("Runtime.evaluate", {"expression":
                       "document.getElementById(%s).scrollIntoView(); window.scrollBy(0, -40)" % json.dumps(hid)})
                b.drain(0.3)
                png = base64.b64decode(b.send("Page.captureScreenshot", {"format": "png"})["data"])
                with open(os.path.join(shots, "chapter-%02d%s.png" % (int(num), suffix)), "wb") as f:
                    f.write(png)
            if not verdict["chapters"]:  # a page without chapters: its first screen
                b.send("Runtime.evaluate", {"expression": "window.scrollTo(0, 0)"})
                png = base64.b64decode(b.send("Page.captureScreenshot", {"format": "png"})["data"])
                name = os.path.splitext(os.path.basename(page))[0]
                with open(os.path.join(shots, "%s%s.png" % (name, suffix)), "wb") as f:
                    f.write(png)
            if not phone:
                acted = json.loads(b.evaluate(INTERACT_JS, timeout=120))
                problems += acted["problems"]
                interaction = acted["counts"]
        b.drain(0.5)
        for e in b.events:
            m, p = e.get("method"), e.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p.get("exceptionDetails", {})
                problems.append("uncaught exception: %s" % (d.get("exception", {}).get("description") or d.get("text")))
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                problems.append("console error: " + " ".join(str(a.get("value", a.get("description", ""))) for a in p.get("args", [])))
            elif m == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
                problems.append("console error: " + p["entry"].get("text", "") + " " + p["entry"].get("url", ""))
            elif m == "Network.requestWillBeSent":
                url = p.get("request", {}).get("url", "")
                if not url.split(":", 1)[0] in ("file", "data", "about", "blob"):
                    problems.append("request leaves the file: " + url)
    except (TimeoutError, RuntimeError, StopIteration, OSError) as e:
        print("browser check: Chromium did not answer: %s" % e, file=sys.stderr)
        b.close()
        return 2
    b.close()
    c = verdict["counts"]
    for p in problems:
        print("browser check: %s: %s" % (os.path.relpath(page), p), file=sys.stderr)
    i = interaction
    print("browser check: %s: %d math elements, %d figures, %d in-page links, %d chapter screenshots at %d and %d px "
          "in %s; %d live panels, %d answer boxes through %d 'new variant' clicks, %d exercises judged: %s"
          % (os.path.relpath(page), c["maths"], c["figures"], c["links"], len(verdict["chapters"]), WIDTH, PHONE_WIDTH,
             shots, i["panels"], i["boxes"], i["clicks"], i["judged"],
             "%d problems" % len(problems) if problems else "all good"))
    return 1 if problems else 0


if __name__ == "__main__":
    sys.exit(main())
