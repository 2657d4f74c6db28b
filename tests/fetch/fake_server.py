#!/usr/bin/env python3
"""A fake Flink JobManager / Spark History Server for the fetch tests.

Serves, on 127.0.0.1 and a port chosen by the kernel (written to
--port-file), the recorded REST responses of Flink fixtures (a
flink_rest_export) or a History Server application whose event logs are a
zip built from given files, and can be told to misbehave on one path.
Standard library only. Stops by itself after --lifetime seconds (or on GET
/__quit), so a test that dies never leaves it behind. GET /__stats answers
{"requests": N}, the requests served so far (/__* excluded).

Modes:
  free-port                 print a port nothing listens on, then exit
  flink FIXTURE...          JobManager serving the fixtures' responses
  spark                     History Server (--app, --file NAME=PATH)
  junk                      an HTML page for every path

Flink behaviour (like a real JobManager, research/flink.md §1.1):
  - the k-th request of a path answers the fixture's sample k-1 (the main
    responses first), the newest earlier poll when a sample lacks it;
  - per-checkpoint paths (/checkpoints/details/<id>, .../subtasks/<vid>)
    answer as recorded, and 404 when the fixture has none;
  - /jobs/overview is built from the fixtures' /jobs/<jid> responses;
  - /metrics paths without ?get= list the recorded metric names, with
    ?get= answer only the recorded entries named (unknown names: none);
  - an unknown path answers 404 {"errors": ["Not found: ..."]};
  - --extra-metrics N adds N wanted names ("Op<i>.pendingRecords") to every
    /subtasks/metrics listing, as a server choosing the request count would;
  - --extra-name NAME (repeatable) adds NAME to every /subtasks/metrics
    listing (e.g. one with a comma, which a ?get= list cannot carry).

Misbehaviour (--fail KIND:PATH) also covers a trickle (2 bytes a second
after a large Content-Length), redirects to --redirect-base (another port)
and to the other scheme, and Spark zips with a bomb entry (--bomb BYTES of
zeros) or many 1 MiB entries of zeros (--bomb-many N).
"""
import argparse
import gzip
import io
import json
import os
import re
import socket
import ssl
import sys
import threading
import time
import zipfile
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from urllib.parse import parse_qs, urlsplit

METRICS_RE = re.compile(r"^/jobs/[^/]+(/vertices/[^/]+(/subtasks)?)?/metrics$")


def base_path(key):
    """The path of a recorded key without its query string."""
    return urlsplit(key).path


class Flink:
    def __init__(self, fixtures):
        self.polls = []  # poll index -> {base path -> [(key, body)]}
        self.jobs = []
        for f in fixtures:
            with open(f) as fh:
                doc = json.load(fh)
            polls = [doc["responses"]] + [s["responses"] for s in doc.get("samples", [])]
            for i, resp in enumerate(polls):
                while len(self.polls) <= i:
                    self.polls.append({})
                for key, body in resp.items():
                    bp = base_path(key)
                    self.polls[i].setdefault(bp, []).append((key, body))
                    if i == 0 and re.fullmatch(r"/jobs/[0-9a-zA-Z]+", bp):
                        self.jobs.append(body)

    def overview(self):
        jobs = []
        for j in self.jobs:
            jobs.append({"jid": j.get("jid"), "name": j.get("name"),
                         "state": j.get("state"),
                         "start-time": j.get("start-time", 0),
                         "end-time": j.get("end-time", -1),
                         "duration": j.get("duration", 0),
                         "last-modification": j.get("now", 0),
                         "tasks": {}})
        return {"jobs": jobs}

    def metrics(self, path, query, count=1, extra=0, names_extra=()):
        """Metric names (no ?get=) from poll 0; values for the count-th
        request of the same ?get= from the matching poll, or the newest
        earlier one that has the path (counters change between polls)."""
        entries, seen = [], set()
        get = parse_qs(query).get("get")
        p = min(count - 1, len(self.polls) - 1) if get else 0
        while p > 0 and not self.polls[p].get(path):
            p -= 1
        for key, body in self.polls[p].get(path, []):
            for e in body if isinstance(body, list) else []:
                if e.get("id") not in seen:
                    seen.add(e.get("id"))
                    entries.append(e)
        if extra and path.endswith("/subtasks/metrics"):
            entries += [{"id": "Op%d.pendingRecords" % i, "min": 0, "max": 0,
                         "avg": 0, "sum": 0} for i in range(extra)]
        if path.endswith("/subtasks/metrics"):
            entries += [{"id": n, "min": 0, "max": 0, "avg": 0, "sum": 0}
                        for n in names_extra]
        if not get:
            return [{"id": e["id"]} for e in entries]
        names = set(",".join(get).split(","))
        return [e for e in entries if e.get("id") in names]

    def answer(self, path, query, count):
        """The recorded body for the count-th request (1-based), or None."""
        full = path + ("?" + query if query else "")
        for p in range(min(count - 1, len(self.polls) - 1), -1, -1):
            cands = self.polls[p].get(path)
            if not cands:
                continue
            for key, body in cands:
                if key == full:
                    return body
            return cands[0][1]
        return None


def build_zip(files, evil, bomb=0, bomb_many=0):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as z:
        for spec in files:
            name, path = spec.split("=", 1)
            if path.startswith("text:"):
                z.writestr(name, path[5:])
            elif path.startswith("gunzip:"):
                with gzip.open(path[7:]) as fh:
                    z.writestr(name, fh.read())
            else:
                z.write(path, name)
        if bomb:
            z.writestr("bomb.json", b"\0" * bomb)
        mib = b"\0" * (1 << 20)
        for i in range(bomb_many):
            z.writestr("many/part-%05d.json" % i, mib)
        if evil:
            z.writestr(zipfile.ZipInfo("../escaped.txt"), "outside\n")
            z.writestr(zipfile.ZipInfo("/absolute.txt"), "absolute\n")
            z.writestr(zipfile.ZipInfo("sub/../../escaped2.txt"), "outside\n")
            link = zipfile.ZipInfo("link-to-passwd")
            link.create_system = 3
            link.external_attr = (0o120777 << 16)
            z.writestr(link, "/etc/passwd")
    return buf.getvalue()


class Handler(BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"
    server_version = "FakeServer/1"

    def log_message(self, fmt, *args):
        sys.stderr.write("%s\n" % (fmt % args))

    # --- helpers ---------------------------------------------------------
    def send(self, status, body, ctype="application/json", headers=()):
        if not isinstance(body, (bytes, bytearray)):
            body = json.dumps(body).encode()
        self.send_response(status)
        self.send_header("Content-Type", ctype)
        self.send_header("Content-Length", str(len(body)))
        for k, v in headers:
            self.send_header(k, v)
        self.end_headers()
        self.wfile.write(body)

    def count(self, path):
        st = self.server.state
        with st["lock"]:
            st["counts"][path] = st["counts"].get(path, 0) + 1
            return st["counts"][path]

    def failure(self, path):
        for kind, target in self.server.args.fail:
            if target == path or (target.endswith("*") and path.startswith(target[:-1])):
                return kind
        return None

    # --- misbehaviour ----------------------------------------------------
    def misbehave(self, kind, path):
        args = self.server.args
        if kind == "500":
            self.send(500, {"errors": [args.error_text]})
        elif kind == "hang":
            deadline = time.time() + args.hang_seconds
            while time.time() < deadline and not self.server.stopping.is_set():
                time.sleep(0.05)
            self.close_connection = True
        elif kind == "big":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(args.big_bytes))
            self.end_headers()
            self.stream(args.big_bytes)
        elif kind == "bigchunked":
            self.send_response(200)
            self.send_header("Content-Type", "application/json")
            self.send_header("Transfer-Encoding", "chunked")
            self.end_headers()
            self.stream(args.big_bytes, chunked=True)
        elif kind == "loop":
            self.send(302, b"", "text/plain", [("Location", path)])
        elif kind == "trickle":
            self.trickle()
        elif kind == "redirect":
            target = args.redirect_base + self.path
            self.send(302, b"", "text/plain", [("Location", target)])
        elif kind == "redirect-scheme":
            other = "http" if args.tls else "https"
            host = "127.0.0.1:%d" % self.server.server_address[1]
            self.send(302, b"", "text/plain",
                      [("Location", "%s://%s%s" % (other, host, self.path))])
        elif kind == "flaky":
            if self.count("flaky:" + path) == 1:
                self.send(503, {"errors": ["busy (injected)"]})
                return True
            return False
        else:
            return False
        return True

    def trickle(self):
        """2 bytes a second of a body said to be 1 MiB, until stopped."""
        self.send_response(200)
        self.send_header("Content-Type", "application/octet-stream")
        self.send_header("Content-Length", str(1 << 20))
        self.end_headers()
        try:
            while not self.server.stopping.is_set():
                self.wfile.write(b"  ")
                self.wfile.flush()
                time.sleep(1)
        except OSError:
            pass
        self.close_connection = True

    def stream(self, n, chunked=False):
        block = b" " * 65536
        try:
            while n > 0:
                part = block[: min(n, len(block))]
                if chunked:
                    self.wfile.write(b"%x\r\n" % len(part) + part + b"\r\n")
                else:
                    self.wfile.write(part)
                n -= len(part)
            if chunked:
                self.wfile.write(b"0\r\n\r\n")
        except OSError:
            pass
        self.close_connection = True

    # --- GET -------------------------------------------------------------
    def do_GET(self):
        args = self.server.args
        url = urlsplit(self.path)
        path, query = url.path, url.query
        if path == "/__quit":
            self.send(200, {"bye": True})
            threading.Thread(target=self.server.stop, daemon=True).start()
            return
        if path == "/__stats":
            self.send(200, {"requests": self.server.state["requests"]})
            return
        with self.server.state["lock"]:
            self.server.state["requests"] += 1
        if args.require_token and \
                self.headers.get("Authorization") != "Bearer " + args.require_token:
            self.send(401, {"errors": ["Unauthorized"]})
            return
        for h in args.require_header:
            name, value = h.split(":", 1)
            if self.headers.get(name.strip()) != value.strip():
                self.send(400, {"errors": ["missing header " + name]})
                return
        kind = self.failure(path)
        if kind and self.misbehave(kind, path):
            return
        mode = args.mode
        if mode == "junk":
            self.send(200, b"<html><body>hello</body></html>", "text/html")
        elif mode == "flink":
            self.flink(path, query)
        elif mode == "spark":
            self.spark(path)
        else:
            self.send(404, {"errors": ["Not found"]})

    def flink(self, path, query):
        fl = self.server.flink
        n = self.count(path)
        if path == "/jobs/overview":
            self.send(200, fl.overview())
            return
        if METRICS_RE.match(path):
            k = self.count("metrics " + path + "?" + query)
            args = self.server.args
            self.send(200, fl.metrics(path, query, k, args.extra_metrics,
                                      args.extra_name))
            return
        if path.endswith("/backpressure") and n <= self.server.args.deprecated:
            if fl.answer(path, query, 1) is not None:
                self.send(200, {"status": "deprecated"})
                return
        body = fl.answer(path, query, n)
        if body is None:
            self.send(404, {"errors": ["Not found: " + path]})
        else:
            self.send(200, body)

    def spark(self, path):
        args = self.server.args
        base = "/api/v1/applications/" + args.app
        attempts = [{"attemptId": args.attempt}] if args.attempt else [{}]
        for a in attempts:
            a.update({"completed": True, "sparkUser": "test",
                      "startTimeEpoch": 1700000000000})
        if path == base:
            self.send(200, {"id": args.app, "name": "fake app", "attempts": attempts})
        elif path == base + "/logs" or (args.attempt and path == base + "/" + args.attempt + "/logs"):
            if args.logs_garbage:
                self.send(200, b"this is not a zip archive", "application/octet-stream")
            else:
                self.send(200, self.server.zip, "application/octet-stream",
                          [("Content-Disposition", "attachment; filename=eventLogs.zip")])
        else:
            self.send(404, b"no such app", "text/plain")


class Server(ThreadingHTTPServer):
    daemon_threads = True
    allow_reuse_address = False

    def __init__(self, args):
        super().__init__(("127.0.0.1", 0), Handler)
        self.args = args
        self.state = {"lock": threading.Lock(), "counts": {}, "requests": 0}
        self.stopping = threading.Event()
        self.tls = None
        if args.tls:
            self.tls = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            self.tls.load_cert_chain(args.tls[0], args.tls[1])

    def stop(self):
        self.stopping.set()
        self.shutdown()

    def finish_request(self, request, client_address):
        # the TLS handshake runs in the request's own thread, so a client
        # that refuses the certificate never blocks the others
        request.settimeout(30)
        # answer headers and body without Nagle's delay (40 ms a request)
        request.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        if self.tls:
            try:
                request = self.tls.wrap_socket(request, server_side=True)
            except (ssl.SSLError, OSError) as e:
                sys.stderr.write("TLS handshake failed: %s\n" % e)
                return
        self.RequestHandlerClass(request, client_address, self)


def write_port_file(path, port):
    tmp = path + ".tmp"
    with open(tmp, "w") as f:
        f.write("%d\n" % port)
    os.rename(tmp, path)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("mode", choices=["free-port", "flink", "spark", "junk"])
    ap.add_argument("fixtures", nargs="*")
    ap.add_argument("--port-file")
    ap.add_argument("--lifetime", type=float, default=120)
    ap.add_argument("--fail", action="append", default=[],
                    help="KIND:PATH with KIND 500|hang|big|bigchunked|loop|flaky|"
                         "trickle|redirect|redirect-scheme; "
                         "PATH may end with *")
    ap.add_argument("--error-text", default="Internal server error (injected)",
                    help="the message of the injected 500's error body")
    ap.add_argument("--deprecated", type=int, default=0,
                    help="first N backpressure requests of a path answer deprecated")
    ap.add_argument("--hang-seconds", type=float, default=20)
    ap.add_argument("--big-bytes", type=int, default=4 << 20)
    ap.add_argument("--require-token")
    ap.add_argument("--require-header", action="append", default=[])
    ap.add_argument("--tls", nargs=2, metavar=("CERT", "KEY"))
    ap.add_argument("--app")
    ap.add_argument("--attempt")
    ap.add_argument("--file", action="append", default=[],
                    help="NAME=PATH (or NAME=text:CONTENT, NAME=gunzip:PATH) "
                         "in the logs zip")
    ap.add_argument("--evil", action="store_true",
                    help="add entries escaping the folder and a symlink")
    ap.add_argument("--logs-garbage", action="store_true")
    ap.add_argument("--redirect-base", help="where KIND redirect points")
    ap.add_argument("--extra-metrics", type=int, default=0)
    ap.add_argument("--extra-name", action="append", default=[])
    ap.add_argument("--bomb", type=int, default=0,
                    help="a zip entry of this many zero bytes")
    ap.add_argument("--bomb-many", type=int, default=0,
                    help="this many zip entries of 1 MiB of zeros")
    args = ap.parse_args()
    args.fail = [tuple(f.split(":", 1)) for f in args.fail]

    if args.mode == "free-port":
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
        s.close()
        print(port)
        return
    srv = Server(args)
    if args.mode == "flink":
        srv.flink = Flink(args.fixtures)
    if args.mode == "spark":
        srv.zip = build_zip(args.file, args.evil, args.bomb, args.bomb_many)
    timer = threading.Timer(args.lifetime, srv.stop)
    timer.daemon = True
    timer.start()
    port = srv.server_address[1]
    if args.port_file:
        write_port_file(args.port_file, port)
    else:
        print(port, flush=True)
    try:
        srv.serve_forever(poll_interval=0.1)
    finally:
        srv.stopping.set()
        srv.server_close()


if __name__ == "__main__":
    main()
