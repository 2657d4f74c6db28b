#!/usr/bin/env python3
"""The clients of tests/bench/serve_bench.sh: N threads, each uploading the
same files (one multipart POST /api/v1/analyses) and polling
GET /api/v1/analyses/{id} until the analysis is done, R rounds each, while
a sampler reads the VmRSS of the server and of every process under it
(the workers and their rule sandboxes). Prints one JSON object: latencies,
wall time, throughput, RSS. Loopback only; every wait is bounded.

Usage: serve_clients.py URL PID CLIENTS ROUNDS FILE...
URL and PID may be comma-separated lists (several instances of one store,
tests/bench/serve_multi_bench.sh): client k talks to URL number k modulo
their count, as a round-robin balancer would send it, and reads its
analysis' state there; the RSS is summed over every PID's tree. With
TOKEN set in the environment every request carries it as a Bearer token.
"""
import http.client
import json
import os
import sys
import threading
import time
import urllib.parse

POLL_S = 0.02          # between two status reads of one analysis
ANALYSIS_MAX_S = 300   # one analysis, upload to done
RETRIES_429 = 50       # queue full: wait Retry-After, at most this often


def multipart(paths):
    boundary = "optipipe-bench-%x" % os.getpid()
    parts = []
    for p in paths:
        with open(p, "rb") as f:
            data = f.read()
        head = ('--%s\r\nContent-Disposition: form-data; name="file"; '
                'filename="%s"\r\nContent-Type: application/octet-stream\r\n\r\n'
                % (boundary, os.path.basename(p)))
        parts += [head.encode(), data, b"\r\n"]
    parts.append(("--%s--\r\n" % boundary).encode())
    return b"".join(parts), "multipart/form-data; boundary=" + boundary


def rss_kib(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        pass
    return 0


def tree(root):
    """root and every process below it."""
    kids = {}
    for d in os.listdir("/proc"):
        if not d.isdigit():
            continue
        try:
            with open("/proc/%s/stat" % d) as f:
                st = f.read()
        except OSError:
            continue
        ppid = int(st[st.rindex(")") + 2:].split()[1])
        kids.setdefault(ppid, []).append(int(d))
    out, todo = [], [root]
    while todo:
        p = todo.pop()
        out.append(p)
        todo += kids.get(p, [])
    return out


class Sampler(threading.Thread):
    def __init__(self, pids):
        super().__init__(daemon=True)
        self.pids, self.stop = pids, threading.Event()
        self.server_max = self.tree_max = self.procs_max = 0

    def run(self):
        while not self.stop.is_set():
            procs = [p for root in self.pids for p in tree(root)]
            total = sum(rss_kib(p) for p in procs)
            self.server_max = max(self.server_max,
                                  sum(rss_kib(p) for p in self.pids))
            self.tree_max = max(self.tree_max, total)
            self.procs_max = max(self.procs_max, len(procs))
            self.stop.wait(0.05)


HEADERS = {"Authorization": "Bearer " + os.environ["TOKEN"]} if os.environ.get("TOKEN") else {}


def client(url, body, ctype, rounds, lat, errors, n429):
    u = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    for _ in range(rounds):
        t0 = time.monotonic()
        try:
            for _attempt in range(RETRIES_429):
                conn.request("POST", "/api/v1/analyses", body,
                             dict(HEADERS, **{"Content-Type": ctype}))
                r = conn.getresponse()
                answer = r.read()
                if r.status != 429:
                    break
                n429.append(1)
                time.sleep(int(r.getheader("Retry-After", "1")))
            if r.status != 202:
                errors.append("POST: %d %s" % (r.status, answer[:200]))
                continue
            aid = json.loads(answer)["id"]
            while time.monotonic() - t0 < ANALYSIS_MAX_S:
                conn.request("GET", "/api/v1/analyses/" + aid, headers=HEADERS)
                r = conn.getresponse()
                st = json.loads(r.read())
                if st.get("status") in ("done", "failed"):
                    break
                time.sleep(POLL_S)
            if st.get("status") != "done":
                errors.append("%s: %s" % (aid, st.get("status")))
                continue
            lat.append(time.monotonic() - t0)
        except (OSError, http.client.HTTPException, ValueError) as e:
            errors.append(repr(e))
            conn.close()
            conn = http.client.HTTPConnection(u.hostname, u.port, timeout=60)
    conn.close()


def pct(xs, p):
    xs = sorted(xs)
    if not xs:
        return None
    k = min(len(xs) - 1, max(0, int(round(p / 100.0 * len(xs) + 0.5)) - 1))
    return xs[k]


def main():
    urls = sys.argv[1].split(",")
    pids = [int(p) for p in sys.argv[2].split(",")]
    nclients, rounds = int(sys.argv[3]), int(sys.argv[4])
    body, ctype = multipart(sys.argv[5:])
    lat, errors, n429 = [], [], []
    sampler = Sampler(pids)
    sampler.start()
    threads = [threading.Thread(target=client, args=(urls[k % len(urls)], body, ctype,
                                                     rounds, lat, errors, n429))
               for k in range(nclients)]
    t0 = time.monotonic()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    wall = time.monotonic() - t0
    sampler.stop.set()
    sampler.join()
    print(json.dumps({
        "clients": nclients, "rounds": rounds, "analyses": len(lat),
        "errors": errors[:10], "nerrors": len(errors), "n429": len(n429),
        "wall_s": round(wall, 3),
        "per_s": round(len(lat) / wall, 3) if wall else None,
        "p50_s": pct(lat, 50), "p99_s": pct(lat, 99), "max_s": max(lat) if lat else None,
        "latencies_s": [round(x, 4) for x in lat],
        "upload_bytes": len(body),
        "rss_server_max_kib": sampler.server_max,
        "rss_tree_max_kib": sampler.tree_max,
        "procs_max": sampler.procs_max,
    }))


if __name__ == "__main__":
    main()
