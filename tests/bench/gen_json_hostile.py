#!/usr/bin/env python3
"""gen_json_hostile.py KIND SIZE_MB OUT - writes one JSON input that makes
a cJSON tree large compared to its size, for tests/bench/json_memory.sh:

  flink-zeros     a Flink REST export whose one response is [0,0,0,...]
  flink-vertices  a Flink export of one job with as many vertices as fit
  dbt-zeros       a run_results.json whose args hold [0,0,0,...]
  model-zeros     a model whose first run has a list config of 0s
  flink-dense     a Flink export just under the tree limit: eleven 0s to a
                  22-byte string (about 21 times its size as a tree)

Standard library only; written in chunks (no tree is built here)."""
import json
import sys

JID = "a" * 32


def zeros(f, n):
    f.write(b"[0")
    chunk = b",0" * 65536
    left = n - 1
    while left > 0:
        k = min(left, 65536)
        f.write(chunk[:2 * k])
        left -= k
    f.write(b"]")


def vertex(i):
    return {"id": "%032x" % i, "name": "op %d" % i, "parallelism": 1,
            "maxParallelism": 128, "status": "RUNNING", "start-time": 1,
            "end-time": -1, "duration": 10,
            "metrics": {"read-bytes": 1, "write-bytes": 1, "read-records": 1,
                        "write-records": 1}}


def main():
    kind, mb, out = sys.argv[1], float(sys.argv[2]), sys.argv[3]
    size = int(mb * (1 << 20))
    with open(out, "wb") as f:
        if kind == "flink-zeros":
            f.write(('{"flink_rest_export": 1, "responses": {"/jobs/%s": '
                     '{"jid": "%s", "name": "z", "state": "RUNNING", '
                     '"vertices": []}, "/jobs/%s/x": ' % (JID, JID, JID)).encode())
            zeros(f, size // 2)
            f.write(b"}}")
        elif kind == "flink-vertices":
            one = len(json.dumps(vertex(0))) + 2
            n = max(1, size // one)
            f.write(('{"flink_rest_export": 1, "responses": {"/jobs/%s": '
                     '{"jid": "%s", "name": "v", "state": "RUNNING", '
                     '"vertices": [' % (JID, JID)).encode())
            for i in range(n):
                f.write((", " if i else "").encode() + json.dumps(vertex(i)).encode())
            f.write(b"]}}}")
        elif kind == "dbt-zeros":
            f.write(b'{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/'
                    b'dbt/run-results/v6.json", "invocation_id": "z"}, '
                    b'"results": [], "elapsed_time": 1, "args": {"x": ')
            zeros(f, size // 2)
            f.write(b"}}")
        elif kind == "model-zeros":
            f.write(b'{"schema": 1, "runs": [{"source": "flink", "id": "z", '
                    b'"nodes": [{"id": "a", "dist": {"m": ')
            zeros(f, size // 2)
            f.write(b"}}]}]}")
        elif kind == "flink-dense":
            f.write(('{"flink_rest_export": 1, "responses": {"/jobs/%s": '
                     '{"jid": "%s", "name": "d", "state": "RUNNING", '
                     '"vertices": []}, "/jobs/%s/x": [0' % (JID, JID, JID)).encode())
            unit = b',0' * 11 + b',"aaaaaaaaaaaaaaaaaaaaaa"'
            chunk = unit * 4096
            for _ in range(max(1, size // len(chunk))):
                f.write(chunk)
            f.write(b"]}}")
        else:
            sys.exit("unknown kind " + kind)


if __name__ == "__main__":
    main()
