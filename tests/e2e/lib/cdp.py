#!/usr/bin/env python3
"""cdp.py - drives headless Chromium over the DevTools protocol for the
serve browser test (tests/e2e/serve_browser.sh), with the standard library
only: --remote-debugging-pipe gives the protocol on fd 3 (commands to the
browser) and fd 4 (its answers and events), each message JSON ended by a
NUL byte, so no websocket is needed.

Usage: cdp.py CHROMIUM BASE_URL PROFILE_DIR FILE...
Loads BASE_URL/, puts FILE... into the page's file input, submits the form
(the page's own script uploads with progress and waits for the analysis),
waits for the analysis page, clicks the first finding's Approve button and
waits for the page that comes back. Prints one JSON object on stdout:
{"analysis": ID, "fingerprint": FP, "state": "approved", "progress": [...],
"console": [...]} where progress lists the texts the page's progress label
showed while uploading and waiting, and console lists every console message, script exception and log entry
of level warning or error (CSP violations are such entries). Every wait is
bounded; a failure prints the reason on stderr and exits 1.
"""
import json
import os
import select
import subprocess
import sys
import time

TIMEOUT = 60.0  # seconds for any one wait


class Browser:
    def __init__(self, exe, profile):
        cmd_r, cmd_w = os.pipe()
        res_r, res_w = os.pipe()
        # keep the child's ends above 4 so dup2 onto 3 and 4 clobbers none
        hi_cmd = os.dup2(cmd_r, 100)
        hi_res = os.dup2(res_w, 101)
        os.close(cmd_r)
        os.close(res_w)

        def child_fds():
            os.dup2(hi_cmd, 3)
            os.dup2(hi_res, 4)

        args = [exe, "--headless", "--no-sandbox", "--disable-gpu",
                "--remote-debugging-pipe", "--user-data-dir=" + profile,
                "--no-first-run", "--no-default-browser-check",
                "--disable-background-networking", "--disable-component-update",
                "--disable-sync", "--disable-extensions", "--disable-quic",
                "--window-size=1280,1800", "about:blank"]
        self.proc = subprocess.Popen(args, stdin=subprocess.DEVNULL,
                                     stdout=subprocess.DEVNULL,
                                     stderr=open(os.path.join(profile, "chromium.log"), "wb"),
                                     pass_fds=(3, 4, hi_cmd, hi_res),
                                     preexec_fn=child_fds)
        os.close(hi_cmd)
        os.close(hi_res)
        self.out = cmd_w
        self.inp = res_r
        self.buf = b""
        self.next_id = 0
        self.events = []
        self.session = None
        self.frames = []  # sessions of the page's out-of-process frames

    def close(self):
        try:
            self.send("Browser.close", session=False, wait=False)
        except OSError:
            pass
        try:
            self.proc.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.proc.kill()
            self.proc.wait()

    def _read_message(self, deadline):
        while b"\0" not in self.buf:
            left = deadline - time.monotonic()
            if left <= 0:
                raise TimeoutError("no message from the browser")
            ready, _, _ = select.select([self.inp], [], [], left)
            if not ready:
                continue
            chunk = os.read(self.inp, 65536)
            if not chunk:
                raise EOFError("the browser closed its pipe")
            self.buf += chunk
        msg, self.buf = self.buf.split(b"\0", 1)
        return json.loads(msg)

    def _write(self, msg):
        os.write(self.out, json.dumps(msg).encode() + b"\0")

    def _event(self, m):
        """Keeps an event; a frame attached by auto-attach (the sandboxed
        report may run in a process of its own) gets its console and log
        enabled before it runs, so its messages are seen too."""
        if m.get("method") == "Target.attachedToTarget":
            sid = m["params"]["sessionId"]
            self.frames.append(sid)
            for meth in ("Runtime.enable", "Log.enable", "Page.enable",
                         "Runtime.runIfWaitingForDebugger"):
                self.next_id += 1
                self._write({"id": self.next_id, "method": meth, "params": {},
                             "sessionId": sid})
        self.events.append(m)

    def send(self, method, params=None, session=True, wait=True, sid=None):
        self.next_id += 1
        msg = {"id": self.next_id, "method": method, "params": params or {}}
        if sid or (session and self.session):
            msg["sessionId"] = sid or self.session
        want = self.next_id
        self._write(msg)
        if not wait:
            return None
        deadline = time.monotonic() + TIMEOUT
        while True:
            m = self._read_message(deadline)
            if m.get("id") == want:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})
            if "method" in m:
                self._event(m)

    def eval(self, expr):
        r = self.send("Runtime.evaluate", {"expression": expr, "returnByValue": True,
                                           "awaitPromise": True})
        if "exceptionDetails" in r:
            raise RuntimeError("evaluate %s: %s" % (expr, r["exceptionDetails"]))
        return r["result"].get("value")

    def report_frame_loaded(self, since=0):
        """Whether a framed report (a frame navigated to .../report.html)
        stopped loading after event number since. The sandboxed frame may
        run in a process of its own: its events then come from its own
        session (auto-attached), so every session's events count."""
        self.send("Runtime.evaluate", {"expression": "1"})  # reads pending events
        ids = set()
        for e in self.events[since:]:
            p = e.get("params", {})
            if e.get("method") == "Page.frameNavigated" and \
                    "/report.html" in p.get("frame", {}).get("url", ""):
                ids.add(p["frame"]["id"])
            elif e.get("method") == "Page.frameStoppedLoading" and p.get("frameId") in ids:
                return True
        return False

    def wait_until(self, fn, what):
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            if fn():
                return
            time.sleep(0.1)
        raise TimeoutError("waiting for " + what)

    def wait_for(self, expr, what):
        """Polls expr (JavaScript) until it is truthy, bounded."""
        deadline = time.monotonic() + TIMEOUT
        while time.monotonic() < deadline:
            try:
                v = self.eval(expr)
            except RuntimeError:
                v = None  # between two pages
            if v:
                return v
            time.sleep(0.1)
        raise TimeoutError("waiting for " + what)


def console_entries(events):
    out = []
    for e in events:
        m, p = e.get("method"), e.get("params", {})
        if m == "Runtime.consoleAPICalled":
            out.append({"kind": "console", "type": p.get("type"),
                        "text": " ".join(str(a.get("value", a.get("description", "")))
                                         for a in p.get("args", []))})
        elif m == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            out.append({"kind": "exception", "text": d.get("text", "") + " " +
                        str(d.get("exception", {}).get("description", ""))})
        elif m == "Log.entryAdded":
            en = p.get("entry", {})
            if en.get("level") in ("warning", "error"):
                out.append({"kind": "log", "level": en.get("level"),
                            "source": en.get("source"), "text": en.get("text"),
                            "url": en.get("url")})
    return out


def main():
    exe, base, profile = sys.argv[1], sys.argv[2].rstrip("/"), sys.argv[3]
    files = [os.path.abspath(f) for f in sys.argv[4:]]
    b = Browser(exe, profile)
    try:
        t = b.send("Target.createTarget", {"url": "about:blank"}, session=False)
        a = b.send("Target.attachToTarget", {"targetId": t["targetId"], "flatten": True},
                   session=False)
        b.session = a["sessionId"]
        for dom in ("Page", "Runtime", "Log", "DOM"):
            b.send(dom + ".enable")
        b.send("Target.setAutoAttach", {"autoAttach": True, "waitForDebuggerOnStart": True,
                                        "flatten": True})
        b.send("Page.navigate", {"url": base + "/"})
        b.wait_for("document.readyState === 'complete' && !!document.getElementById('file')",
                   "the upload page")
        doc = b.send("DOM.getDocument")
        node = b.send("DOM.querySelector", {"nodeId": doc["root"]["nodeId"],
                                            "selector": "#file"})
        b.send("DOM.setFileInputFiles", {"files": files, "nodeId": node["nodeId"]})
        b.wait_for("document.getElementById('file').files.length === %d" % len(files),
                   "the files in the input")
        # what the page shows as progress reaches us through a binding
        b.send("Runtime.addBinding", {"name": "opProgress"})
        b.eval("new MutationObserver(function(){"
               "opProgress(document.getElementById('progress-label').textContent);})"
               ".observe(document.getElementById('progress-label'),"
               "{childList:true,characterData:true,subtree:true}), true")
        # the page's own script: its submit handler uploads with XMLHttpRequest
        b.eval("document.getElementById('submit').click(), true")
        b.wait_for("location.pathname.indexOf('/analyses/') === 0 && "
                   "document.readyState === 'complete' && "
                   "!!document.querySelector('form.decide button.approve')",
                   "the analysis page with its findings")
        analysis = b.eval("location.pathname.split('/')[2]")
        fp = b.eval("document.querySelector('form.decide input[name=fingerprint]').value")
        b.wait_until(b.report_frame_loaded, "the framed report")
        since = len(b.events)
        b.eval("document.querySelector('#f-%s input[name=comment]')"
               ".value = 'from the browser test', true" % fp)
        b.eval("document.querySelector('#f-%s button.approve').click(), true" % fp)
        state = b.wait_for("(function(){var s=document.querySelector('#f-%s .state');"
                           "return document.readyState === 'complete' && s && "
                           "s.textContent === 'approved' ? s.textContent : null;})()" % fp,
                           "the finding shown approved")
        b.wait_until(lambda: b.report_frame_loaded(since), "the framed report, again")
        # a round trip in every session: what each logged before has arrived
        b.send("Runtime.evaluate", {"expression": "1"})
        for sid in b.frames:
            try:
                b.send("Runtime.evaluate", {"expression": "1"}, sid=sid)
            except RuntimeError:
                pass  # a frame of the page before (gone)
        progress = [e["params"]["payload"] for e in b.events
                    if e.get("method") == "Runtime.bindingCalled"]
        print(json.dumps({"analysis": analysis, "fingerprint": fp, "state": state,
                          "progress": progress, "console": console_entries(b.events)}))
        return 0
    except (RuntimeError, TimeoutError, EOFError, KeyError) as e:
        print("cdp.py: %s" % e, file=sys.stderr)
        try:
            print("cdp.py: page at %s" % b.eval("location.href"), file=sys.stderr)
            print("cdp.py: error text: %s" % b.eval(
                "(document.getElementById('error')||{}).textContent"), file=sys.stderr)
        except Exception:  # the browser may be gone
            pass
        print("cdp.py: console %s" % json.dumps(console_entries(b.events)), file=sys.stderr)
        try:
            print("cdp.py: frames %s" % json.dumps(b.send("Page.getFrameTree")), file=sys.stderr)
        except Exception:
            pass
        print("cdp.py: events %s" % json.dumps([(e.get("method"), e.get("params", {}).get("frameId"), e.get("sessionId")) for e in b.events if e.get("method", "").startswith(("Page.frame", "Target."))]), file=sys.stderr)
        return 1
    finally:
        b.close()


if __name__ == "__main__":
    sys.exit(main())
