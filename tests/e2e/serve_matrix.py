#!/usr/bin/env python3
"""serve_matrix.py - the request path of `optipipe serve` under every
method x route x body x header shape (issue #24), over raw sockets to
127.0.0.1: each request must get a well-formed HTTP answer with a sane
status (never a 5xx but 503 busy, never a hang: a bounded read), and the
server must stay alive (checked by the caller's /healthz after every
route). Run by serve_matrix.sh, so under the ASan build of the suite too.

Usage: serve_matrix.py PORT
Prints one line per surprise and "matrix: N requests, M surprises".
"""
import socket
import sys

PORT = int(sys.argv[1])
HOST = b"127.0.0.1:%d" % PORT
ID = "0123456789abcdef"

METHODS = ["GET", "HEAD", "POST", "PUT", "DELETE", "OPTIONS", "PATCH",
           "TRACE", "BREW"]
ROUTES = ["/", "/healthz", "/metrics", "/login", "/logout", "/static/app.js",
          "/static/app.css", "/static/nope", "/analyses", "/analyses/" + ID,
          "/analyses/" + ID + "/decisions", "/analyses/" + ID + "/report.html",
          "/analyses/" + ID + "/patches", "/analyses/zz", "/jobs", "/jobs/x%2Fy",
          "/runs/x", "/diff", "/diff?a=x&b=y", "/api/v1/analyses",
          "/api/v1/analyses?limit=1&before=" + ID, "/api/v1/analyses/" + ID,
          "/api/v1/analyses/" + ID + "/patches", "/api/v1/jobs?before=%00",
          "/api/v1/jobs/x/runs?before=1", "/api/v1/runs/x", "/api/v1/decisions",
          "/api/v1/nope", "/nope", "/%", "/a%2F..%2F..", "//", "/jobs/" + "a" * 600,
          "/?x=%zz", "/healthz?" + "a=b&" * 200]

SMALL = b"a=1&csrf=x"
BIG = b"y" * (100 * 1024)   # over the 64 KiB of a small body


def chunked(data):
    out = b""
    for i in range(0, len(data), 4096):
        part = data[i:i + 4096]
        out += b"%x\r\n" % len(part) + part + b"\r\n"
    return out + b"0\r\n\r\n"


# (name, extra headers, body bytes as sent)
BODIES = [
    ("none", [], b""),
    ("small", [b"Content-Length: %d" % len(SMALL)], SMALL),
    ("big", [b"Content-Length: %d" % len(BIG)], BIG),
    ("chunked", [b"Transfer-Encoding: chunked"], chunked(SMALL)),
    ("chunked-big", [b"Transfer-Encoding: chunked"], chunked(BIG)),
]
HEADERS = [
    ("plain", []),
    ("form", [b"Content-Type: application/x-www-form-urlencoded"]),
    ("json", [b"Content-Type: application/json"]),
    ("multipart-no-boundary", [b"Content-Type: multipart/form-data"]),
    ("multipart", [b"Content-Type: multipart/form-data; boundary=B"]),
    ("expect", [b"Expect: 100-continue"]),
    ("odd", [b"Origin: null", b"Sec-Fetch-Site: cross-site",
             b"Cookie: op_session=" + b"z" * 64 + b"; op_csrf=%00",
             b"X-CSRF-Token: \x01", b"Authorization: Bearer short"]),
    ("big-header", [b"X-Pad: " + b"p" * 15000]),
]


def one(method, path, hdrs, body):
    """The status of one request (Connection: close), or a reason."""
    req = (b"%s %s HTTP/1.1\r\nHost: %s\r\nConnection: close\r\n"
           % (method.encode(), path.encode(), HOST))
    req += b"".join(h + b"\r\n" for h in hdrs) + b"\r\n"
    s = socket.create_connection(("127.0.0.1", PORT), timeout=60)
    got = b""
    try:
        try:
            s.sendall(req + body)
        except (BrokenPipeError, ConnectionResetError):
            pass  # the server answered early and closed: read what it said
        while True:
            b = s.recv(65536)
            if not b:
                break
            got += b
            if method == "HEAD" and b"\r\n\r\n" in got:
                break
    except ConnectionResetError:
        if not got:
            return "reset"
    except socket.timeout:
        return "hang"
    finally:
        s.close()
    line = got.split(b"\r\n", 1)[0]
    parts = line.split(b" ")
    if len(parts) < 2 or not parts[0].startswith(b"HTTP/1.") or not parts[1].isdigit():
        return "garbled %r" % line[:60]
    return int(parts[1])


def alive():
    return one("GET", "/healthz", [], b"") == 200


def main():
    n = bad = 0
    for path in ROUTES:
        for mi, method in enumerate(METHODS):
            for bi, (bname, bh, body) in enumerate(BODIES):
                # every header shape meets every body shape across methods
                hname, hh = HEADERS[(mi + bi * 3) % len(HEADERS)]
                got = one(method, path, bh + hh, body)
                n += 1
                ok = isinstance(got, int) and 100 <= got < 600 and \
                    (got < 500 or got == 503)
                # a client that sent its body without waiting for the
                # "100 Continue" it asked for may lose the early answer
                if got == "reset" and hname == "expect" and body:
                    ok = True
                if not ok:
                    bad += 1
                    print("surprise: %s %s body=%s headers=%s -> %s"
                          % (method, path[:80], bname, hname, got))
        if not alive():
            print("surprise: the server is gone after %s" % path[:80])
            bad += 1
            break
    print("matrix: %d requests, %d surprises" % (n, bad))
    return 1 if bad else 0


sys.exit(main())
