#!/usr/bin/env python3
# tests/e2e/lib/hook_receiver.py - a webhook receiver for the notification
# tests (docs/notify.md): binds 127.0.0.1 on an ephemeral port, writes the
# port into PORTFILE (renamed into place: a reader never sees half of it),
# and records each POST as DIR/<n>.json: {"path", "body" (the parsed
# payload), "signature": "ok" | "bad" | "none"}, written then renamed, so
# a test waits for the file's appearance. The signature is checked as a
# receiver should (docs/notify.md "Verifying the signature"): HMAC-SHA256
# of "<t>.<body>" under the secret in $HOOK_SECRET, compared in constant
# time, t within 300 s of now. STATUSES ("500,200") are the answers in
# turn, the last one repeated. With $HOOK_HOLD (the path of a FIFO) each
# answer is held, after its record was written, until the test writes a
# line into that FIFO (an event, not a sleep: the test sees the delivery
# arrive and controls when it ends). Stops on SIGTERM.
# Usage: hook_receiver.py PORTFILE DIR [STATUSES]
import hashlib
import hmac
import http.server
import json
import os
import signal
import sys
import time

portfile, outdir = sys.argv[1], sys.argv[2]
statuses = [int(s) for s in (sys.argv[3] if len(sys.argv) > 3 else "200").split(",")]
secret = os.environ.get("HOOK_SECRET", "").encode()
hold = os.environ.get("HOOK_HOLD")
count = 0


def verify(header, body):
    if not header:
        return "none"
    try:
        parts = dict(p.split("=", 1) for p in header.split(","))
        t = int(parts["t"])
    except (ValueError, KeyError):
        return "bad"
    if abs(time.time() - t) > 300:
        return "bad"
    want = hmac.new(secret, b"%d." % t + body, hashlib.sha256).hexdigest()
    return "ok" if hmac.compare_digest(want, parts.get("v1", "")) else "bad"


class Handler(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        global count
        n = int(self.headers.get("Content-Length", "0"))
        body = self.rfile.read(n)
        status = statuses[min(count, len(statuses) - 1)]
        count += 1
        rec = {"path": self.path, "n": count, "status": status,
               "content_type": self.headers.get("Content-Type"),
               "signature": verify(self.headers.get("X-Optipipe-Signature"), body)}
        try:
            rec["body"] = json.loads(body)
        except ValueError:
            rec["body"] = None
            rec["raw"] = body.decode("utf-8", "replace")
        path = os.path.join(outdir, "%d.json" % count)
        with open(path + ".tmp", "w") as f:
            json.dump(rec, f)
        os.rename(path + ".tmp", path)
        if hold:
            with open(hold) as f:  # blocks until the test writes
                f.readline()
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *a):
        pass


srv = http.server.HTTPServer(("127.0.0.1", 0), Handler)
signal.signal(signal.SIGTERM, lambda *a: sys.exit(0))
with open(portfile + ".tmp", "w") as f:
    f.write(str(srv.server_address[1]))
os.rename(portfile + ".tmp", portfile)
srv.serve_forever()
