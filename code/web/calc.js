/* The book's "change the assumptions" panels (tools/calc.lua renders them).
 *
 * The napkin library and the CLI's commands, compiled to one WebAssembly
 * module (code/web/napkin_web.c), arrive base64 in <script id="napkin-wasm">.
 * The few WASI calls the C library makes are stubbed here: fd_write collects
 * what a command prints on stdout (its report) and stderr (its error
 * message); there are no files, no environment, no clock.  A panel sends
 * its fields as JSON to napkin_<cmd> twice, for --format json (the numbers,
 * kept in data-value) and --format table (the CLI's own labels and
 * formatting, shown), and shows the exit status and the CLI's message when
 * the question has no answer.  No network, no framework.
 *
 * window.napkin: {ready (a Promise), run(cmd, flags) -> {status, stdout,
 * stderr}, update(panel), maxSeed (the largest exercise seed the module
 * takes)} for readers' consoles, the answer boxes and the browser test. */
(function () {
  "use strict";

  var ENOSYS = 52, EBADF = 8;
  var api = { ready: null, run: null, update: null, maxSeed: 0 };
  window.napkin = api;

  function ExitSignal(code) { this.code = code; }

  function wasiImports(module, state) {
    var dec = new TextDecoder("utf-8");
    function mem() { return new DataView(state.exports.memory.buffer); }
    var known = {
      fd_write: function (fd, iovs, n, nwritten) {
        var m = mem(), total = 0;
        for (var i = 0; i < n; i++) {
          var p = m.getUint32(iovs + 8 * i, true), len = m.getUint32(iovs + 8 * i + 4, true);
          if (fd === 1 || fd === 2)
            state.out[fd].push(new Uint8Array(state.exports.memory.buffer.slice(p, p + len)));
          total += len;
        }
        m.setUint32(nwritten, total, true);
        return fd === 1 || fd === 2 ? 0 : EBADF;
      },
      fd_prestat_get: function () { return EBADF; },
      fd_fdstat_get: function () { return EBADF; },
      environ_sizes_get: function (count, size) {
        var m = mem(); m.setUint32(count, 0, true); m.setUint32(size, 0, true); return 0;
      },
      environ_get: function () { return 0; },
      args_sizes_get: function (count, size) {
        var m = mem(); m.setUint32(count, 0, true); m.setUint32(size, 0, true); return 0;
      },
      args_get: function () { return 0; },
      clock_time_get: function (id, precision, out) { mem().setBigUint64(out, 0n, true); return 0; },
      proc_exit: function (code) { throw new ExitSignal(code); }
    };
    var imports = {};
    WebAssembly.Module.imports(module).forEach(function (imp) {
      if (imp.module !== "wasi_snapshot_preview1" || imp.kind !== "function")
        throw new Error("napkin.wasm imports " + imp.module + "." + imp.name + ", which the page does not provide");
      imports[imp.module] = imports[imp.module] || {};
      imports[imp.module][imp.name] = known[imp.name] || function () { return ENOSYS; };
    });
    state.decode = function (chunks) {
      var n = 0, off = 0;
      chunks.forEach(function (c) { n += c.length; });
      var all = new Uint8Array(n);
      chunks.forEach(function (c) { all.set(c, off); off += c.length; });
      return dec.decode(all);
    };
    return imports;
  }

  function base64Bytes(text) {
    var bin = atob(text.replace(/\s+/g, "")), bytes = new Uint8Array(bin.length);
    for (var i = 0; i < bin.length; i++) bytes[i] = bin.charCodeAt(i);
    return bytes;
  }

  function load() {
    var el = document.getElementById("napkin-wasm");
    if (!el) return Promise.reject(new Error("the page has no napkin-wasm module"));
    var state = { exports: null, out: { 1: [], 2: [] } };
    return WebAssembly.compile(base64Bytes(el.textContent)).then(function (module) {
      return WebAssembly.instantiate(module, wasiImports(module, state));
    }).then(function (instance) {
      state.exports = instance.exports;
      if (state.exports._initialize) state.exports._initialize();
      return state;
    });
  }

  /* One command: flags is an object of flag name -> string | true. */
  function runWith(state, cmd, flags) {
    var fn = state.exports["napkin_" + cmd];
    if (!fn) throw new Error("napkin.wasm has no command " + cmd);
    var bytes = new TextEncoder().encode(JSON.stringify(flags));
    var p = state.exports.napkin_web_alloc(bytes.length + 1);
    var view = new Uint8Array(state.exports.memory.buffer, p, bytes.length + 1);
    view.set(bytes);
    view[bytes.length] = 0;
    state.out = { 1: [], 2: [] };
    var status;
    try {
      status = fn(p);
    } catch (e) {
      if (!(e instanceof ExitSignal)) throw e;
      status = e.code;
    }
    state.exports.napkin_web_free(p);
    return { status: status, stdout: state.decode(state.out[1]), stderr: state.decode(state.out[2]) };
  }

  /* ------------------------------------------------------------ panels */

  function panelFlags(panel) {
    var flags = {};
    Array.prototype.forEach.call(panel.querySelector("form.calc-form").elements, function (el) {
      if (!el.name) return;
      if (el.type === "checkbox") { if (el.checked) flags[el.name] = true; }
      else flags[el.name] = el.value;
    });
    return flags;
  }

  function commandLine(cmd, flags) {
    var words = ["napkin", cmd];
    Object.keys(flags).forEach(function (k) {
      words.push("--" + k);
      if (flags[k] !== true) words.push(/^[A-Za-z0-9._\/-]+$/.test(flags[k]) ? flags[k] : "'" + flags[k] + "'");
    });
    return words.join(" ");
  }

  function text(tag, cls, s) {
    var e = document.createElement(tag);
    if (cls) e.className = cls;
    e.textContent = s;
    return e;
  }

  /* The kind of number a section of --format table holds, from its title
   * ("Bound: ...", "Estimate: ..."; tools/calc.lua and tools/panel_test.py
   * read it alike): "bound", "estimate", "estimate at the given
   * efficiencies", or "" for a section that prices nothing. */
  function sectionKind(title) {
    var m = /^(Bound|Estimate): /.exec(title);
    if (!m) return "";
    return m[1].toLowerCase() + (/at the given efficiencies\)$/.test(title) ? " at the given efficiencies" : "");
  }

  /* Value lines of --format table, in the order of the JSON values; a
   * value's label ends with its section's kind, "(bound)" or "(estimate)". */
  function tableLines(out, n) {
    var rows = [], kind = "";
    out.split("\n").forEach(function (l) {
      if (rows.length >= n || !l) return;
      if (l.slice(0, 2) !== "  ") { kind = sectionKind(l); return; }
      var m = /^  (.*?)  +(.*)$/.exec(l);
      var row = m ? { label: m[1], shown: m[2] } : { label: l.trim(), shown: "" };
      if (kind) row.label += " (" + kind + ")";
      rows.push(row);
    });
    return rows;
  }

  function clear(panel) {
    panel.querySelectorAll(".calc-err").forEach(function (e) { e.textContent = ""; });
    panel.querySelector(".calc-status").textContent = "";
  }

  /* A non-zero exit: the CLI's message beside the field it names (else in
   * the status line).  A command that still prints its report (napkin
   * train, whose notes say what does not fit) keeps its table. */
  function showError(panel, result) {
    var msg = result.stderr.replace(/\s+$/, "");
    var status = panel.querySelector(".calc-status");
    status.appendChild(text("span", "calc-exit",
      result.status === 1 ? "No answer: this configuration does not fit (exit status 1)."
                          : "Not a question napkin can answer (exit status " + result.status + ")."));
    if (msg) {
      var target = null, re = /--([a-z0-9-]+)/g, m;
      while (!target && (m = re.exec(msg)))
        target = panel.querySelector('.calc-err[data-for="' + m[1] + '"]');
      (target || status).appendChild(text("span", "calc-msg", msg));
    }
    panel.querySelector("table").hidden = true;
    panel.querySelector(".calc-notes").hidden = true;
  }

  /* A band's numbers (<row>_band_lo, _band_hi, _band_n) are for scripts:
   * the table prints the band beside its row, not on lines of its own. */
  function scriptOnly(k) { return /_band_(lo|hi|n)$/.test(k); }

  /* A calibrated value's measured band follows it after ", " ("26.6 ms,
   * runs like this one: ..."): a span of its own, which may wrap where the
   * value may not (tools/calc.lua splits it alike). */
  var ASIDE = /^(.*?,)( (?:runs like this one|no measured run).*)$/;
  function fillValue(span, shown) {
    var m = ASIDE.exec(shown);
    if (!m) { span.textContent = shown; return; }
    span.textContent = m[1];
    span.appendChild(text("span", "calc-aside", m[2]));
  }

  function showResult(panel, report, table) {
    var keys = Object.keys(report.values).filter(function (k) { return !scriptOnly(k); });
    var lines = tableLines(table.stdout, keys.length);
    var show = panel.dataset.show ? panel.dataset.show.split(",") : keys;
    var tbody = panel.querySelector("table tbody");
    tbody.textContent = "";
    keys.forEach(function (k, i) {
      if (show.indexOf(k) < 0) return;
      var tr = document.createElement("tr");
      tr.className = tbody.children.length % 2 ? "even" : "odd";
      var label = text("td", "", lines[i] ? lines[i].label : k);
      var cell = document.createElement("td");
      label.style.textAlign = "left";
      cell.style.textAlign = "right";
      var v = text("span", "v", "");
      fillValue(v, lines[i] ? lines[i].shown : String(report.values[k]));
      v.dataset.key = k;
      var raw = report.values[k];
      v.dataset.value = raw === null ? "null" : String(raw);
      cell.appendChild(v);
      tr.appendChild(label);
      tr.appendChild(cell);
      tbody.appendChild(tr);
    });
    var notes = panel.querySelector(".calc-notes");
    notes.textContent = "";
    (report.notes || []).forEach(function (n) { notes.appendChild(text("p", "", n)); });
    panel.querySelector("table").hidden = false;
    notes.hidden = false;
  }

  function update(state, panel) {
    var cmd = panel.dataset.cmd, flags = panelFlags(panel);
    panel.querySelector(".calc-command").textContent = "";
    /* one unbreakable span per flag and value, so a line never breaks inside "--tp" */
    var code = document.createElement("code");
    commandLine(cmd, flags).split(" ").forEach(function (w, i) {
      if (i) code.appendChild(document.createTextNode(" "));
      code.appendChild(text("span", "calc-word", w));
    });
    panel.querySelector(".calc-command").appendChild(code);
    clear(panel);
    var r = runWith(state, cmd, flags);
    panel.dataset.status = String(r.status);
    if (r.status !== 0) showError(panel, r);
    if (r.status !== 0 && !r.stdout) return;
    var report;
    try {
      report = JSON.parse(r.stdout);
    } catch (e) {
      clear(panel);
      panel.dataset.status = "3";
      return showError(panel, { status: 3, stderr: "napkin " + cmd + ": the report is not JSON: " + e.message });
    }
    /* a refusal in --format json is an {"error": ...} object: the message is shown already */
    if (!report.values) return;
    var tflags = Object.assign({}, flags, { format: "table" });
    showResult(panel, report, runWith(state, cmd, tflags));
  }

  api.ready = load().then(function (state) {
    api.run = function (cmd, flags) { return runWith(state, cmd, flags); };
    api.update = function (panel) { return update(state, panel); };
    if (state.exports.napkin_web_max_seed) api.maxSeed = state.exports.napkin_web_max_seed();
    document.querySelectorAll("div.calc").forEach(function (panel) {
      var form = panel.querySelector("form.calc-form");
      form.addEventListener("input", function () { update(state, panel); });
      form.addEventListener("change", function () { update(state, panel); });
      panel.classList.add("calc-live");
      update(state, panel);
    });
    return api;
  });
  api.ready.catch(function (e) {
    document.querySelectorAll("div.calc .calc-status").forEach(function (s) {
      s.textContent = "The live calculator could not start (" + e.message + "); the numbers shown are the defaults.";
    });
    console.error("napkin panels: " + e.message);
  });
})();
