/* Answer boxes under the book's exercises.
 *
 * For each chapter whose exercises have variants (`napkin practice` answers
 * for it), every exercise part gets a box under its exercise; an answer is
 * judged by the same C code as the kit's checks and the grade program
 * (judge.c, through the WebAssembly module calc.js loads), and the verdict
 * says right, close or which slip, never the expected value.  ?seed=4711 in
 * the address shows that variant: the numbers in the exercise text marked
 * data-practice change to the variant's.  Answers stay in this browser
 * (localStorage); "export answers" saves them as the JSON `make grade`
 * and `make grade-all` read: {chapter, seed, student, answers}.  A
 * student's handout (tools/course.py) names its student and seed in
 * <meta name="napkin-student"> and <meta name="napkin-seed">; the address
 * may give them too (?seed=4711&student=s01), and the handout's seed is
 * kept: no "new variant" there.  In an edition with the worked solutions (instructor, practice), a
 * button opens the exercise's solution.  No network.
 *
 * Seeds run from 0 to the largest the module takes (napkin_web_max_seed,
 * PRACTICE_MAX_SEED in C): "new variant" draws inside that range, and a
 * seed the address gives outside it is refused with a note.  A variant is
 * shown only once every chapter's variant is drawn: a seed the module
 * refuses leaves the boxes of the variant shown, says why beside them, and
 * is not written into the address.
 *
 * window.napkin.practice: {ready (a Promise), seed(), maxSeed, show(seed)
 * -> true or false, check(part, answer) -> {verdict, hint}} for readers'
 * consoles and the browser test. */
(function () {
  "use strict";

  var api = window.napkin;
  if (!api || !api.ready) return;
  var practice = { ready: null, seed: null, maxSeed: 0, show: null, check: null };
  api.practice = practice;
  var maxSeed = 0;  /* from the module once it runs */

  function el(tag, cls, s) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    if (s !== undefined) e.textContent = s;
    return e;
  }

  function meta(name) {
    var m = document.querySelector('meta[name="' + name + '"]');
    return m ? m.getAttribute("content") : null;
  }
  function fromAddress(key) {
    var m = new RegExp("[?&]" + key + "=([^&#]*)").exec(window.location.search);
    if (!m) return null;
    try { return decodeURIComponent(m[1].replace(/\+/g, " ")); } catch (e) { return null; }
  }
  /* A seed as text: digits only, 0 to maxSeed; else null. */
  function parseSeed(text) {
    if (!/^[0-9]+$/.test(text)) return null;
    var s = Number(text);
    return Number.isSafeInteger(s) && s <= maxSeed ? s : null;
  }
  function seedRange() { return "a whole number from 0 to " + maxSeed; }
  /* A handout's seed first, then the address's, else the printed book's:
   * {seed, note}, the note saying why a given seed is not used. */
  function seedFromPage() {
    var handout = meta("napkin-seed"), text = handout !== null ? handout : fromAddress("seed");
    if (text === null || text === "") return { seed: 0, note: null };
    var s = parseSeed(text);
    if (s !== null) return { seed: s, note: null };
    return { seed: 0, note: (handout !== null ? "this handout's seed" : "the address's seed") + " '" +
             text.slice(0, 40) + "' is not a variant (" + seedRange() + "): showing the printed numbers (seed 0)" };
  }
  /* The roster id the export names: the handout's, or ?student= */
  function studentFromPage() {
    var id = meta("napkin-student") || fromAddress("student");
    return id && id.trim() ? id.trim() : null;
  }

  function store(key, value) {
    try {
      if (value === null) window.localStorage.removeItem(key);
      else window.localStorage.setItem(key, value);
    } catch (e) { /* storage refused (private mode): the answers live in the page only */ }
  }
  function recall(key) {
    try { return window.localStorage.getItem(key); } catch (e) { return null; }
  }
  function storeKey(chapter, seed, part) { return "napkin-practice/" + chapter + "/" + seed + "/" + part; }

  /* The module's answer for a variant (and a verdict): {report} or {error}. */
  function variant(chapter, seed, part, answer) {
    var flags = { chapter: String(chapter), seed: String(seed) }, r;
    if (part !== undefined) { flags.part = part; flags.answer = answer; }
    try {
      r = api.run("practice", flags);
    } catch (e) {
      return { error: "the calculator module failed (" + e.message + ")" };
    }
    if (r.status !== 0) return { error: r.stderr.trim() || "napkin practice exited " + r.status };
    try {
      return { report: JSON.parse(r.stdout) };
    } catch (e) {
      return { error: "napkin practice answered no JSON (" + e.message + ")" };
    }
  }

  /* Chapters with exercises on this page, from their anchors. */
  function pageChapters() {
    var seen = {}, list = [];
    document.querySelectorAll('[id^="exercise-"]').forEach(function (a) {
      var m = /^exercise-([0-9]+)-[0-9]+$/.exec(a.id);
      if (m && !seen[m[1]]) { seen[m[1]] = true; list.push(Number(m[1])); }
    });
    return list;
  }

  var state = { seed: 0, chapters: [], student: null, handout: false, note: null };

  function judge(chapter, input, out) {
    var part = input.name, answer = input.value;
    store(storeKey(chapter, state.seed, part), answer.trim() ? answer : null);
    if (!answer.trim()) {
      out.textContent = "";
      delete out.dataset.verdict;
      return null;
    }
    var r = variant(chapter, state.seed, part, answer);
    if (r.error) {
      out.dataset.verdict = "error";
      out.textContent = "not judged: " + r.error;
      return { verdict: "error", hint: r.error };
    }
    var v = r.report.values;
    out.dataset.verdict = v.verdict;
    out.textContent = v.verdict === "right" ? "right" : v.verdict + ": " + v.hint;
    return { verdict: v.verdict, hint: v.hint };
  }

  function answersOf(chapter) {
    var answers = {};
    document.querySelectorAll('form.practice[data-chapter="' + chapter + '"] input.practice-answer').forEach(
      function (i) { if (i.value.trim()) answers[i.name] = i.value.trim(); });
    var out = { chapter: chapter, seed: state.seed };
    if (state.student) out.student = state.student;
    out.answers = answers;
    return out;
  }

  function exportAnswers(chapter) {
    var blob = new Blob([JSON.stringify(answersOf(chapter), null, 2) + "\n"], { type: "application/json" });
    var a = el("a");
    a.href = URL.createObjectURL(blob);
    a.download = (state.student ? state.student.replace(/[^A-Za-z0-9._-]/g, "_") + "-" : "") +
                 "answers-" + chapter + "-seed-" + state.seed + ".json";
    document.body.appendChild(a);
    a.click();
    a.remove();
    setTimeout(function () { URL.revokeObjectURL(a.href); }, 0);
  }

  /* A seed from 1 to maxSeed (53 random bits, reduced: a bias far below
   * one in a million for any range the module states). */
  function newSeed() {
    var b = new Uint32Array(2);
    window.crypto.getRandomValues(b);
    return 1 + ((b[0] * 2097152 + (b[1] >>> 11)) % maxSeed);
  }

  function bar(chapter) {
    var p = el("p", "practice-bar");
    p.appendChild(el("span", "practice-seed", (state.student ? state.student + ": " : "") +
                     (state.seed === 0 ? "the printed numbers (seed 0)" : "variant " + state.seed)));
    var fresh = el("button", "practice-new", "new variant");
    fresh.type = "button";
    fresh.addEventListener("click", function () { show(newSeed(), true); });
    var exp = el("button", "practice-export", "export answers");
    exp.type = "button";
    exp.addEventListener("click", function () { exportAnswers(chapter); });
    if (!state.handout && maxSeed > 0) p.appendChild(fresh);
    p.appendChild(exp);
    var note = el("span", "practice-note", state.note || "");
    note.setAttribute("role", "status");
    p.appendChild(note);
    return p;
  }

  /* The worked solution, where the edition has one (instructor, practice):
   * a button that opens its fold and goes to it. */
  function solutionButton(chapter, exercise) {
    var anchor = document.getElementById("solution-" + chapter + "-" + exercise);
    if (!anchor) return null;
    /* the worked solutions are the printed book's: say so on a variant */
    var b = el("button", "practice-solution",
               state.seed === 0 ? "show the worked solution" : "show the worked solution (printed numbers)");
    b.type = "button";
    b.addEventListener("click", function () {
      var fold = anchor.closest("details");
      if (fold) fold.open = true;
      anchor.scrollIntoView();
    });
    return b;
  }

  function form(chapter, exercise, parts) {
    var f = el("form", "practice");
    f.dataset.chapter = String(chapter);
    f.dataset.exercise = String(exercise);
    f.appendChild(el("p", "practice-title", "Check your answers (" + chapter + "." + exercise + ")"));
    parts.forEach(function (p) {
      var row = el("label", "practice-part");
      row.appendChild(el("span", "practice-id", p.id));
      row.appendChild(el("span", "practice-what", p.what + " (" + p.unit + ", " + p.rule + ")"));
      var input = el("input", "practice-answer");
      input.name = p.id;
      input.type = "text";
      input.inputMode = "decimal";
      input.autocomplete = "off";
      var out = el("output", "practice-verdict");
      out.setAttribute("aria-live", "polite");
      var saved = recall(storeKey(chapter, state.seed, p.id));
      if (saved !== null) input.value = saved;
      input.addEventListener("change", function () { judge(chapter, input, out); });
      row.appendChild(input);
      row.appendChild(out);
      f.appendChild(row);
      if (saved !== null) judge(chapter, input, out);
    });
    f.addEventListener("submit", function (e) {
      e.preventDefault();
      f.querySelectorAll("input.practice-answer").forEach(function (i) {
        judge(chapter, i, i.parentNode.querySelector("output"));
      });
    });
    var check = el("button", "practice-check", "check");
    check.type = "submit";
    f.appendChild(check);
    var b = bar(chapter), sol = solutionButton(chapter, exercise);
    if (sol) b.appendChild(sol);
    f.appendChild(b);
    return f;
  }

  function setNote(text) {
    state.note = text;
    document.querySelectorAll("form.practice .practice-note").forEach(function (n) { n.textContent = text || ""; });
  }
  /* A variant that cannot be drawn: the boxes shown stay, and say why. */
  function refuse(seed, why) {
    setNote("variant " + String(seed).slice(0, 40) + " could not be drawn (" + why + "); " +
            (state.seed === 0 ? "still the printed numbers (seed 0)" : "still variant " + state.seed));
    return false;
  }

  /* Shows seed's variant of every chapter on the page, or, when one cannot
   * be drawn, nothing changes but the note.  Returns whether it was shown. */
  function show(seed, remember) {
    var s = parseSeed(String(seed));
    if (s === null) return refuse(seed, "not a seed: " + seedRange());
    var drawn = [];
    for (var c = 0; c < state.chapters.length; c++) {
      var r = variant(state.chapters[c], s);
      if (r.error) return refuse(s, r.error);
      drawn.push({ chapter: state.chapters[c], v: r.report });
    }
    state.seed = s;
    state.note = null;
    if (remember) {
      try { window.history.replaceState(null, "", "?seed=" + s +
          (state.student ? "&student=" + encodeURIComponent(state.student) : "") + window.location.hash); } catch (e) { /* file: */ }
    }
    document.querySelectorAll("form.practice").forEach(function (f) { f.remove(); });
    drawn.forEach(function (d) {
      var chapter = d.chapter, v = d.v;
      v.inputs.forEach(function (i) {
        document.querySelectorAll('[data-practice="' + i.name + '"]').forEach(function (span) { span.textContent = i.text; });
      });
      var byExercise = {};
      v.parts.forEach(function (p) { (byExercise[p.exercise] = byExercise[p.exercise] || []).push(p); });
      Object.keys(byExercise).forEach(function (e) {
        var anchor = document.getElementById("exercise-" + chapter + "-" + e);
        if (!anchor) return;
        var block = anchor.closest("p, div, section") || anchor;
        block.after(form(chapter, Number(e), byExercise[e]));
      });
    });
    return true;
  }

  practice.ready = api.ready.then(function () {
    maxSeed = api.maxSeed > 0 ? api.maxSeed : 0;
    practice.maxSeed = maxSeed;
    state.chapters = pageChapters().filter(function (c) { return !variant(c, 0).error; });
    practice.seed = function () { return state.seed; };
    practice.show = function (seed) { return show(seed, false); };
    practice.check = function (part, answer) {
      var input = document.querySelector('input.practice-answer[name="' + part + '"]');
      if (!input) return null;
      input.value = answer;
      return judge(Number(input.closest("form").dataset.chapter), input, input.parentNode.querySelector("output"));
    };
    practice.answers = answersOf;
    state.student = studentFromPage();
    state.handout = meta("napkin-seed") !== null;
    var start = seedFromPage();
    if (!show(start.seed, false)) show(0, false);
    if (start.note) setNote(start.note);
    return practice;
  });
})();
