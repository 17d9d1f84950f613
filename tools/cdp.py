"""Headless Chromium driven over the DevTools protocol, standard library only.

One Browser is one Chromium process: --remote-debugging-pipe (file
descriptors 3 and 4, NUL-separated JSON messages), so a check can open many
pages, evaluate scripts and take screenshots without starting it again.
Used by tools/browser_check.py and tools/panel_test.py.
"""
import json
import os
import select
import shutil
import subprocess
import tempfile
import time

STEP_S = float(os.environ.get("NB_BROWSER_STEP_S", "60"))  # per protocol answer
WIDTH, HEIGHT = 1280, 900


class Browser:
    def __init__(self, exe, width=WIDTH, height=HEIGHT):
        self.profile = tempfile.mkdtemp(prefix="nb-chromium-")
        to_r, self.to_w = os.pipe()
        self.from_r, from_w = os.pipe()

        def wire():
            a, b = os.dup(to_r), os.dup(from_w)
            os.dup2(a, 3)
            os.dup2(b, 4)
            os.setsid()

        args = [exe, "--headless", "--remote-debugging-pipe", "--no-sandbox", "--disable-gpu",
                "--no-first-run", "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--disable-sync", "--disable-dev-shm-usage",
                "--hide-scrollbars", "--mute-audio", "--user-data-dir=" + self.profile,
                "--window-size=%d,%d" % (width, height), "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL, stdout=subprocess.DEVNULL,
                                     stderr=subprocess.DEVNULL, preexec_fn=wire, close_fds=False)
        os.close(to_r)
        os.close(from_w)
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None

    def close(self):
        try:
            self.send("Browser.close", wait=False)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            os.killpg(self.proc.pid, 9)
            self.proc.wait()
        shutil.rmtree(self.profile, ignore_errors=True)

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no answer from Chromium in time")
            ready, _, _ = select.select([self.from_r], [], [], left)
            if ready:
                chunk = os.read(self.from_r, 1 << 20)
                if not chunk:
                    raise TimeoutError("Chromium closed the pipe")
                self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def send(self, method, params=None, session=True, wait=True, timeout=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if session and self.session:
            msg["sessionId"] = self.session
        os.write(self.to_w, json.dumps(msg).encode() + b"\0")
        if not wait:
            return None
        deadline = time.monotonic() + (timeout or STEP_S)
        while True:
            m = self._read_message(deadline)
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"].get("message")))
                return m.get("result", {})
            self.events.append(m)

    def wait_event(self, method, timeout=None):
        for i, e in enumerate(self.events):
            if e.get("method") == method:
                return self.events.pop(i)
        deadline = time.monotonic() + (timeout or STEP_S)
        while True:
            m = self._read_message(deadline)
            if m.get("method") == method:
                return m
            self.events.append(m)

    def drain(self, seconds):
        end = time.monotonic() + seconds
        while True:
            try:
                self.events.append(self._read_message(end))
            except TimeoutError:
                return

    def attach_page(self):
        """Attach to the page Chromium opened (later sends go to it)."""
        targets = self.send("Target.getTargets", session=False)["targetInfos"]
        tid = next(t["targetId"] for t in targets if t["type"] == "page")
        self.session = self.send("Target.attachToTarget", {"targetId": tid, "flatten": True},
                                 session=False)["sessionId"]

    def evaluate(self, expression, timeout=None):
        """The value of a script expression (JSON-serialisable); a promise's
        value once it settles, waiting up to timeout seconds (STEP_S)."""
        r = self.send("Runtime.evaluate", {"expression": expression, "returnByValue": True, "awaitPromise": True},
                      timeout=timeout)
        if "exceptionDetails" in r:
            d = r["exceptionDetails"]
            raise RuntimeError("script failed: %s" % (d.get("exception", {}).get("description") or d.get("text")))
        return r.get("result", {}).get("value")


def find_chromium():
    for name in [os.environ.get("CHROMIUM", ""), "chromium", "chromium-browser", "google-chrome"]:
        if name and shutil.which(name):
            return shutil.which(name)
    return None
