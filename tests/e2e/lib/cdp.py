#!/usr/bin/env python3
"""cdp.py - drives headless Chromium over the DevTools protocol for the
serve browser test (tests/e2e/serve_browser.sh), with the standard library
only: --remote-debugging-pipe gives the protocol on fd 3 (commands to the
browser) and fd 4 (its answers and events), each message JSON ended by a
NUL byte, so no websocket is needed.

Usage: cdp.py CHROMIUM BASE_URL PROFILE_DIR FILE...
With OP_CDP_TOKEN it first signs in at /login with that token ("signed_in":
what the pages then say). Loads BASE_URL/, puts FILE... into the page's file input, submits the form
(the page's own script uploads with progress and waits for the analysis),
waits for the analysis page, clicks the first finding's Approve button and
waits for the page that comes back. Prints one JSON object on stdout:
{"analysis": ID, "fingerprint": FP, "state": "approved", "progress": [...],
"console": [...]} where progress lists the texts the page's progress label
showed while uploading and waiting, and console lists every console message, script exception and log entry
of level warning or error (CSP violations are such entries). Every wait is
bounded; a failure prints the reason on stderr and exits 1.
With OP_CDP_STEPS=DIR, after the approval it hands over to the test
(DIR/approved.json, then waits for DIR/go) and opens the finding's page
from its "Decision history" link: "decision" (its decision line) and
"trail" (the rows of its history table: class and text).
"""
import json
import os
import select
import subprocess
import sys
import time

TIMEOUT = float(os.environ.get("OP_TEST_WAIT_S", 120))  # any one wait: a safety net


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

    def wait_new_page(self, start, expr, what):
        """Runs start() (a navigation: Page.navigate, a reload, a click)
        and polls expr on the document it brings. The page before is
        marked first: a condition it met too (a reload of the same page)
        is never taken for the new one, which may still be loading."""
        self.eval("window.__opBefore = true, true")
        start()
        return self.wait_for("!window.__opBefore && (%s)" % expr, what)


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


def sign_in(b, base, token):
    """With a token (OP_CDP_TOKEN): signs in at /login as a person would
    (types it, clicks Sign in) and returns what the page then says of who
    is signed in; None without one."""
    if not token:
        return None
    b.send("Page.navigate", {"url": base + "/login"})
    b.wait_for("document.readyState === 'complete' && "
               "!!document.querySelector('input[name=token]')", "the sign-in page")
    b.eval("document.querySelector('input[name=token]').value = %s, true" % json.dumps(token))
    b.eval("document.querySelector('form button[type=submit]').click(), true")
    return b.wait_for("location.pathname !== '/login' && document.readyState === 'complete' "
                      "&& (document.querySelector('nav .who') || {}).textContent",
                      "a page that says who is signed in")


def audit_trail(b, base, analysis, fp, steps):
    """With OP_CDP_STEPS=DIR: once approved, writes DIR/approved.json
    ({analysis, fingerprint}) and waits (bounded) for DIR/go, which the test
    makes after its CLI run (the conflict); then opens the finding's page
    from the analysis page's link and returns its decision line and the
    rows of its history table."""
    if not steps:
        return None
    with open(os.path.join(steps, "approved.json.tmp"), "w") as f:
        json.dump({"analysis": analysis, "fingerprint": fp}, f)
    os.rename(os.path.join(steps, "approved.json.tmp"), os.path.join(steps, "approved.json"))
    b.wait_until(lambda: os.path.exists(os.path.join(steps, "go")), "the test's go")
    b.wait_new_page(lambda: b.eval("location.reload(), true"),
                    "document.readyState === 'complete' && "
                    "!!document.querySelector('#f-%s a[href=\"/findings/%s\"]')" % (fp, fp),
                    "the finding's history link")
    b.eval("document.querySelector('#f-%s a[href=\"/findings/%s\"]').click(), true" % (fp, fp))
    rows = b.wait_for("location.pathname === '/findings/%s' && document.readyState === 'complete' "
                      "&& JSON.stringify(Array.from(document.querySelectorAll('table.trail tbody tr'))"
                      ".map(function(r){return {cls: r.className, text: r.textContent};}))" % fp,
                      "the finding's history")
    decision = b.eval("document.querySelector('main p').textContent")
    return {"trail": json.loads(rows), "decision": decision}


def narrow(b, base, analysis):
    """At a phone's width (390 px): how far each page scrolls sideways
    (document width beyond the viewport, 0 when it does not), for the
    upload page, the analyses, the analysis, the jobs, the notifications, the runs the
    analysis links and their jobs; and what /favicon.ico answers. {"narrow": {path: px}, "favicon": {status, type}}."""
    # not "mobile": a mobile viewport widens itself to fit what overflows
    # (innerWidth grows), which would hide the very overflow measured
    b.send("Emulation.setDeviceMetricsOverride", {"width": 390, "height": 844,
                                                  "deviceScaleFactor": 1, "mobile": False})
    out, culprits = {}, {}
    paths = ["/", "/analyses", "/analyses/" + analysis, "/jobs", "/notifications"]
    ready = "document.readyState === 'complete' && !!document.querySelector('footer')"
    i = 0
    while i < len(paths):
        path = paths[i]
        b.wait_new_page(lambda: b.send("Page.navigate", {"url": base + path}), ready, path)
        out[path] = b.eval("document.documentElement.scrollWidth - "
                           "document.documentElement.clientWidth")
        if out[path] > 0:  # what sticks out, for the failure's message
            culprits[path] = b.eval(
                "(function(){var w=document.documentElement.clientWidth,o=[];"
                "function clipped(e){for(e=e.parentElement;e;e=e.parentElement)"
                "if(/auto|scroll|hidden/.test(getComputedStyle(e).overflowX))return true;"
                "return false;}"
                "document.querySelectorAll('body *').forEach(function(e){"
                "var r=e.getBoundingClientRect();if(r.right>w+1&&o.length<8&&!clipped(e))"
                "o.push(e.tagName+'.'+e.className+' '+Math.round(r.right));});"
                "var t=document.createTreeWalker(document.body,NodeFilter.SHOW_TEXT),n;"
                "while((n=t.nextNode())&&o.length<8){var g=document.createRange();"
                "g.selectNodeContents(n);var r=g.getBoundingClientRect();"
                "if(r.right>w+1&&!clipped(n))o.push(n.parentElement.tagName+' \"'+"
                "n.textContent.slice(0,40)+'\" '+Math.round(r.right));}return o;})()")
        # then the runs the analysis links (each engine's), and their jobs
        sel = {"/analyses/" + analysis: "main a[href^='/runs/']"}.get(
            path, "main a[href^='/jobs/']" if path.startswith("/runs/") else None)
        if sel:
            hrefs = b.eval("Array.prototype.map.call(document.querySelectorAll(\"%s\"),"
                           "function(a){return a.getAttribute('href');})" % sel)
            for href in (hrefs or [])[:4]:
                if href not in paths and len(paths) < 16:
                    paths.append(href)
        i += 1
    b.send("Emulation.clearDeviceMetricsOverride")
    icon = b.eval("fetch('/favicon.ico').then(function(r){return {status: r.status, "
                  "type: r.headers.get('content-type')};})")
    return {"narrow": out, "narrow_culprits": culprits, "favicon": icon}


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
        signed_in = sign_in(b, base, os.environ.get("OP_CDP_TOKEN"))
        b.wait_new_page(lambda: b.send("Page.navigate", {"url": base + "/"}),
                        "document.readyState === 'complete' && !!document.getElementById('file')",
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
        trail = audit_trail(b, base, analysis, fp, os.environ.get("OP_CDP_STEPS"))
        phone = None if os.environ.get("OP_CDP_STEPS") else narrow(b, base, analysis)
        progress = [e["params"]["payload"] for e in b.events
                    if e.get("method") == "Runtime.bindingCalled"]
        out = {"analysis": analysis, "fingerprint": fp, "state": state,
               "progress": progress, "console": console_entries(b.events)}
        if signed_in is not None:
            out["signed_in"] = signed_in
        if trail is not None:
            out.update(trail)
        if phone is not None:
            out.update(phone)
        print(json.dumps(out))
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
