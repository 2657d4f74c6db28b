#!/usr/bin/env python3
"""gen.py OUT_DIR - writes the hostile-input corpus into OUT_DIR and prints
its manifest on stdout, one case per line, tab-separated:

    NAME  EXIT_CODES  NAMED  ARGS

NAME is a file or folder in OUT_DIR handed to `optipipe analyze`,
EXIT_CODES the accepted exit codes (comma-separated), NAMED the path that
stderr must name ("-" for none; "out:PATH" when the damage is reported in
the analysis itself: the Spark plugin keeps the events read before a
corrupt block and names the file in the run's warnings, on stdout) and
ARGS extra options ("-" for none).

Nothing here is committed as data: every file is written at test time,
the big ones (a 300 MB line, decompression bombs) streamed in chunks.
Standard library only. Run by tests/e2e/bad_inputs.sh."""
import gzip
import json
import os
import struct
import sys

FIX = os.path.join(os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__)))), "fixtures")
CRASHES = os.path.join(os.path.dirname(os.path.abspath(__file__)), "crashes")
MiB = 1 << 20

SPARK_OK = b"".join(json.dumps(e).encode() + b"\n" for e in [
    {"Event": "SparkListenerLogStart", "Spark Version": "3.5.0"},
    {"Event": "SparkListenerApplicationStart", "App Name": "bad-inputs",
     "App ID": "app-1", "Timestamp": 1700000000000, "User": "u"},
    {"Event": "SparkListenerJobStart", "Job ID": 0, "Submission Time": 1700000001000,
     "Stage Infos": [{"Stage ID": 0, "Stage Attempt ID": 0, "Stage Name": "s",
                      "Number of Tasks": 1, "Parent IDs": []}], "Stage IDs": [0]},
    {"Event": "SparkListenerJobEnd", "Job ID": 0, "Completion Time": 1700000002000,
     "Job Result": {"Result": "JobSucceeded"}},
    {"Event": "SparkListenerApplicationEnd", "Timestamp": 1700000003000},
])


def model(runs):
    return json.dumps({"schema": 1, "runs": runs}).encode()


def node(i, parents=(), **kw):
    d = {"id": i, "kind": "operator", "parents": list(parents)}
    d.update(kw)
    return d


class Corpus:
    def __init__(self, out):
        self.out = out
        self.rows = []

    def path(self, name):
        p = os.path.join(self.out, name)
        os.makedirs(os.path.dirname(p), exist_ok=True)
        return p

    def write(self, name, data):
        with open(self.path(name), "wb") as f:
            f.write(data)

    def case(self, name, codes, named=True, args="-"):
        """named=True: stderr must name this input; or a path inside it."""
        if named is True:
            named = name
        self.rows.append((name, codes, named or "-", args))


def streamed(path, chunks):
    with open(path, "wb") as f:
        for c in chunks:
            f.write(c)


def gzip_bomb(path, total, unit):
    """`total` bytes repeating `unit` as gzip: one 1 MiB member compressed
    once and written total/1 MiB times (gzip readers chain members)."""
    member = gzip.compress(unit * (MiB // len(unit)), 9)
    with open(path, "wb") as f:
        for _ in range(total // MiB):
            f.write(member)


def flip(data, at, n=16):
    b = bytearray(data)
    for i in range(at, min(at + n, len(b))):
        b[i] ^= 0x5A
    return bytes(b)


def spark_many_stages(path, n):
    """A log claiming n jobs of one stage of one task each, gzip: more
    stage attempts and jobs than the plugin keeps (SP_MAX_STAGES)."""
    head = SPARK_OK.split(b"\n")[:2]
    with gzip.open(path, "wb", 1) as f:
        f.write(b"\n".join(head) + b"\n")
        for s in range(n):
            t = 1700000001000 + s
            f.write(b'{"Event":"SparkListenerJobStart","Job ID":%d,"Submission Time":%d,'
                    b'"Stage Infos":[{"Stage ID":%d,"Stage Attempt ID":0,"Stage Name":"s",'
                    b'"Number of Tasks":1,"Parent IDs":[]}],"Stage IDs":[%d]}\n'
                    b'{"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":%d,'
                    b'"Stage Attempt ID":0,"Number of Tasks":1,"Submission Time":%d}}\n'
                    b'{"Event":"SparkListenerTaskStart","Stage ID":%d,"Task Info":'
                    b'{"Task ID":%d,"Launch Time":%d}}\n'
                    b'{"Event":"SparkListenerTaskEnd","Stage ID":%d,"Task End Reason":'
                    b'{"Reason":"Success"},"Task Info":{"Task ID":%d,"Launch Time":%d,'
                    b'"Finish Time":%d},"Task Metrics":{"Executor Run Time":1}}\n'
                    b'{"Event":"SparkListenerStageCompleted","Stage Info":{"Stage ID":%d,'
                    b'"Stage Attempt ID":0,"Submission Time":%d,"Completion Time":%d}}\n'
                    b'{"Event":"SparkListenerJobEnd","Job ID":%d,"Completion Time":%d,'
                    b'"Job Result":{"Result":"JobSucceeded"}}\n'
                    % (s, t, s, s, s, t, s, s, t, s, s, t, t + 1, s, t, t + 1, s, t + 1))
        f.write(b'{"Event":"SparkListenerApplicationEnd","Timestamp":%d}\n'
                % (1700000001000 + n + 1))


def build(c):
    spark_fx = open(os.path.join(FIX, "spark", "skew.zstd"), "rb").read()
    flink_ok = open(os.path.join(FIX, "flink", "healthy.json"), "rb").read()

    # --- empty, garbage, unknown -------------------------------------------
    c.write("empty.json", b"")
    c.case("empty.json", "3")
    c.write("garbage.bin", bytes((i * 7919 + 13) % 256 for i in range(65536)))
    c.case("garbage.bin", "3")
    c.write("nul-bytes.log", b"\0" * 4096)
    c.case("nul-bytes.log", "3")
    c.write("bzip2.bz2", b"BZh91AY&SY" + b"\0" * 64)
    c.case("bzip2.bz2", "3")

    # --- truncated lines and streams ---------------------------------------
    c.write("spark-cut-line.log", SPARK_OK[:-30])
    c.case("spark-cut-line.log", "0")
    c.write("spark-cut.zstd", spark_fx[:len(spark_fx) // 2])
    c.case("spark-cut.zstd", "0")
    c.write("spark-cut.gz", gzip.compress(SPARK_OK)[:-12])
    c.case("spark-cut.gz", "0")
    c.write("flink-cut.json", flink_ok[:len(flink_ok) // 2])
    c.case("flink-cut.json", "3")
    c.write("spark-bad-json-lines.log",
            SPARK_OK[:200] + b'\n{"Event":"SparkListenerTaskEnd", "Task Info": {\n'
            + b'not json at all\n' + SPARK_OK[200:])
    c.case("spark-bad-json-lines.log", "0,3", named="-")

    # --- corrupt frames, blocks, checksums ---------------------------------
    c.write("spark-corrupt.zstd", flip(spark_fx, len(spark_fx) // 3))
    c.case("spark-corrupt.zstd", "0,3")
    gz = gzip.compress(SPARK_OK * 50)
    c.write("spark-corrupt.gz", flip(gz, len(gz) // 2))
    c.case("spark-corrupt.gz", "0,3")
    gz_bad_crc = bytearray(gzip.compress(SPARK_OK))
    gz_bad_crc[-8] ^= 0xFF
    c.write("spark-bad-crc.gz", bytes(gz_bad_crc))
    c.case("spark-bad-crc.gz", "0,3")
    blk = SPARK_OK
    c.write("spark-bad-checksum.lz4",
            b"LZ4Block" + bytes([0x10]) + struct.pack("<III", len(blk), len(blk), 12345) + blk)
    c.case("spark-bad-checksum.lz4", "3")
    c.write("spark-huge-block.lz4",
            b"LZ4Block" + bytes([0x20]) + struct.pack("<III", 0x7FFFFFFF, 0x7FFFFFFF, 0))
    c.case("spark-huge-block.lz4", "3")
    c.write("spark-bad-chunk.snappy",
            b"\x82SNAPPY\x00" + struct.pack(">II", 1, 1) + struct.pack(">I", 40) + b"\xff" * 40)
    c.case("spark-bad-chunk.snappy", "3")
    c.write("spark-huge-chunk.snappy",
            b"\x82SNAPPY\x00" + struct.pack(">II", 1, 1) + struct.pack(">I", 0xFFFFFFF0))
    c.case("spark-huge-chunk.snappy", "0,3", named="-")
    c.write("spark-bad.lzf", b"ZV\x01" + struct.pack(">HH", 10, 60000) + b"\xff" * 10)
    c.case("spark-bad.lzf", "3")

    # --- decompression bombs -----------------------------------------------
    # 1 GiB of zeros, no newline: stopped by the line cap (256 MiB default).
    gzip_bomb(c.path("bomb-no-newline.gz"), 1 << 30, b"\0")
    c.case("bomb-no-newline.gz", "3")
    # 1 GiB of Spark-looking lines: stopped by --max-bytes.
    gzip_bomb(c.path("bomb-lines.gz"), 1 << 30, SPARK_OK[:64] + b"\n")
    c.case("bomb-lines.gz", "0,3", named="out:bomb-lines.gz", args="--max-bytes 64m")

    # --- a 300 MB line -----------------------------------------------------
    head = b'{"Event":"SparkListenerLogStart","Spark Version":"'
    streamed(c.path("line-300mb.log"),
             [head] + [b"x" * MiB] * 300 + [b'"}\n'])
    c.case("line-300mb.log", "3")

    # --- deeply nested JSON ------------------------------------------------
    c.write("nested-model.json", b'{"schema": 1, "runs": ' + b"[" * 200000)
    c.case("nested-model.json", "3")
    c.write("nested-flink.json",
            b'{"jid": "x", "vertices": ' + b'[{"a":' * 100000 + b"1" + b"}]" * 100000 + b"}")
    c.case("nested-flink.json", "3")
    c.write("nested-spark.log",
            b'{"Event":"SparkListenerLogStart","x":' + b"[" * 100000 + b"]" * 100000 + b"}\n")
    c.case("nested-spark.log", "0,3", named="-")

    # --- wrong types everywhere --------------------------------------------
    c.write("model-wrong-types.json", json.dumps({"schema": 1, "runs": [
        {"source": 7, "id": [], "nodes": "x"},
        {"source": "flink", "id": "j", "nodes": [{"id": 1, "parents": "a", "metrics": [1]},
                                                 {"id": "n", "metrics": {"m": "str"},
                                                  "dist": {"d": 5}, "attrs": {"a": {}}}],
         "metrics": {"x": {"y": 1}}, "config": {"k": 5}, "series": {"s": "no"}}]}).encode())
    c.case("model-wrong-types.json", "0,3", named="-")
    c.write("flink-wrong-types.json", json.dumps({
        "jid": 5, "name": [], "vertices": {"a": 1}, "state": 1, "start-time": "x",
        "plan": {"nodes": "x"}, "timestamps": [], "flink_rest_export": "yes"}).encode())
    c.case("flink-wrong-types.json", "0,3", named="-")
    c.write("spark-wrong-types.log", b"".join(json.dumps(e).encode() + b"\n" for e in [
        {"Event": "SparkListenerLogStart", "Spark Version": 3},
        {"Event": "SparkListenerApplicationStart", "App Name": {}, "Timestamp": "now"},
        {"Event": "SparkListenerJobStart", "Job ID": "zero", "Stage Infos": {}},
        {"Event": "SparkListenerStageCompleted", "Stage Info": []},
        {"Event": "SparkListenerTaskEnd", "Stage ID": [], "Task Info": 5, "Task Metrics": "m"},
        {"Event": "SparkListenerExecutorAdded", "Executor ID": 1, "Executor Info": []},
    ]))
    c.case("spark-wrong-types.log", "0,3", named="-")
    dbt = os.path.join(FIX, "dbt", "healthy")
    rr = json.loads(open(os.path.join(dbt, "run_results-2024-05-06.json"), "rb").read())
    for r in rr.get("results", []):
        r["execution_time"] = "slow"
        r["timing"] = 7
        r["status"] = None
    c.write("dbt-wrong-types/run_results.json", json.dumps(rr).encode())
    c.case("dbt-wrong-types", "0,3", named="-")

    # --- NaN, Infinity, huge numbers ---------------------------------------
    c.write("model-nonfinite.json", b'{"schema": 1, "runs": [{"source": "flink", "id": "j", '
            b'"started_at": 1e308, "ended_at": -1e308, "metrics": {"a": 1e999, "b": -1e999}, '
            b'"nodes": [{"id": "a", "parallelism": 1e300, "metrics": {"busy_ratio": 1e999}}]}]}')
    c.case("model-nonfinite.json", "0,3", named="-")
    c.write("model-nan-literal.json", b'{"schema": 1, "runs": [{"source": "flink", "id": "j", '
            b'"metrics": {"a": NaN, "b": Infinity}}]}')
    c.case("model-nan-literal.json", "3")
    c.write("spark-huge-numbers.log", b"".join(json.dumps(e).encode() + b"\n" for e in [
        {"Event": "SparkListenerLogStart", "Spark Version": "3.5.0"},
        {"Event": "SparkListenerApplicationStart", "App Name": "n", "Timestamp": -9e18},
        {"Event": "SparkListenerExecutorAdded", "Executor ID": "1", "Timestamp": -9e18,
         "Executor Info": {"Host": "h", "Total Cores": 9e18}},
        {"Event": "SparkListenerExecutorAdded", "Executor ID": "2", "Timestamp": 0,
         "Executor Info": {"Host": "h", "Total Cores": 9e18}},
        {"Event": "SparkListenerApplicationEnd", "Timestamp": 9e18},
    ]).replace(b"-9e+18", b"-1e400").replace(b"9e+18", b"1e999"))
    c.case("spark-huge-numbers.log", "0,3", named="-")
    # task metrics out of range: ignored with a warning, not clamped
    task = {"Event": "SparkListenerTaskEnd", "Stage ID": 0, "Task End Reason":
            {"Reason": "Success"}, "Task Info": {"Task ID": 1, "Launch Time": "L",
            "Finish Time": "F"}, "Task Metrics": {"Executor Run Time": "R",
            "JVM GC Time": "G", "Input Metrics": {"Bytes Read": "B"}}}
    lines = SPARK_OK.split(b"\n")
    bad = json.dumps(task).encode()
    for k, v in ((b'"L"', b"1e400"), (b'"F"', b"-1e400"), (b'"R"', b"18446744073709551617"),
                 (b'"G"', b"9223372036854775808"), (b'"B"', b"1.5e300")):
        bad = bad.replace(k, v)
    c.write("spark-out-of-range.log", b"\n".join(lines[:3]) + b"\n" + bad * 1 + b"\n"
            + (bad + b"\n") * 20000 + b"\n".join(lines[3:]))
    c.case("spark-out-of-range.log", "0", named="-")

    # --- duplicated keys (Spark's reader keeps the last) -------------------
    dup = (b'{"Event":"SparkListenerTaskEnd","Stage ID":0,"Stage ID":0,"Task Info":'
           b'{"Task ID":1,"Task ID":2},"Task Metrics":{"Executor Run Time":1,'
           b'"Executor Run Time":2},"Task End Reason":{"Reason":"Success"}}\n')
    wide = b'{"Event":"SparkListenerEnvironmentUpdate","Spark Properties":{%s}}\n' % (
        b",".join(b'"k%d":"v"' % (i % 1000) for i in range(200000)))
    c.write("spark-dup-keys.log", b"\n".join(lines[:3]) + b"\n" + dup * 20000 + wide
            + b"\n".join(lines[3:]))
    c.case("spark-dup-keys.log", "0", named="-")

    # --- more stage attempts and jobs than kept (SP_MAX_STAGES) -------------
    spark_many_stages(c.path("spark-many-stages.gz"), 120000)
    c.case("spark-many-stages.gz", "0", named="-")

    # --- JSON trees far larger than their text, duplicated keys, numbers
    # beyond range (optipipe/json.h: refused above 24x + 16 MiB) ----------
    zeros = b"[0" + b",0" * (10 * MiB) + b"]"  # 20 MiB, a 40x tree
    jid = "a" * 32
    c.write("flink-zeros.json", b'{"flink_rest_export": 1, "responses": {"/jobs/'
            + jid.encode() + b'/x": ' + zeros + b"}}")
    c.case("flink-zeros.json", "3")
    c.write("dbt-zeros/run_results.json", b'{"metadata": {"dbt_schema_version": '
            b'"https://schemas.getdbt.com/dbt/run-results/v6.json"}, "results": [], '
            b'"args": {"x": ' + zeros + b"}}")
    c.case("dbt-zeros", "3", named="dbt-zeros/run_results.json")
    c.write("model-zeros.json", b'{"schema": 1, "runs": [{"source": "s", "id": "z", '
            b'"config": {"x": ' + zeros + b"}}]}")
    c.case("model-zeros.json", "3")
    c.write("flink-out-of-range.json", (
        '{"flink_rest_export": 1, "responses": {"/jobs/%s": {"jid": "%s", '
        '"state": "RUNNING", "start-time": 1e400, "name": "a", "name": "b", '
        '"vertices": [{"id": "v", "parallelism": 1.8e308, '
        '"maxParallelism": 18446744073709551617}, {"id": "v"}]}}}'
        % (jid, jid)).encode())
    c.case("flink-out-of-range.json", "0", named="-")
    # within a double but impossible for Flink: refused with a warning
    c.write("flink-impossible.json", (
        '{"flink_rest_export": 1, "responses": {"/jobs/%s": {"jid": "%s", '
        '"state": "RUNNING", "duration": -5, "vertices": [{"id": "v", '
        '"parallelism": 1e12, "maxParallelism": 40000, "duration": null}]}, '
        '"/jobs/%s/vertices/v/backpressure": {"subtasks": [{"subtask": -3, '
        '"ratio": 1e300, "busyRatio": "x"}]}}}' % (jid, jid, jid)).encode())
    c.case("flink-impossible.json", "0")
    c.write("dbt-bad-fields/run_results.json", (
        '{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/'
        'run-results/v6.json", "invocation_id": "bf"}, "results": [{"unique_id": '
        '"model.p.x", "execution_time": 1e999, "timing": "nope", "status": '
        '"success", "status": "error"}], "elapsed_time": -5}').encode())
    c.case("dbt-bad-fields", "0", named="out:dbt-bad-fields/run_results.json")

    # --- duplicated ids, cycles --------------------------------------------
    c.write("model-dup-ids.json", model([
        {"source": "flink", "id": "j", "nodes": [node("a"), node("a", ["a"]), node("b", ["a", "a"])]},
        {"source": "flink", "id": "j", "nodes": [node("a")]}]))
    c.case("model-dup-ids.json", "0,3", named="-")
    c.write("model-cycle.json", model([
        {"source": "flink", "id": "j", "nodes": [node("a", ["c"]), node("b", ["a"]),
                                                 node("c", ["b"]), node("d", ["d"])]}]))
    c.case("model-cycle.json", "0", named="-")
    man = json.loads(open(os.path.join(dbt, "manifest.json"), "rb").read())
    ids = list(man.get("nodes", {}).keys())
    for i, k in enumerate(ids):
        man["nodes"][k].setdefault("depends_on", {})["nodes"] = [ids[(i + 1) % len(ids)]]
    c.write("dbt-cycle/manifest.json", json.dumps(man).encode())
    c.write("dbt-cycle/run_results.json",
            open(os.path.join(dbt, "run_results-2024-05-06.json"), "rb").read())
    c.case("dbt-cycle", "0", named="-")

    # --- a directory mixing good and bad files -----------------------------
    c.write("mixed/a-empty.json", b"")
    c.write("mixed/b-garbage.bin", bytes(range(256)) * 64)
    c.write("mixed/c-healthy.json", flink_ok)
    c.write("mixed/d-cut.json", flink_ok[:1000])
    c.write("mixed/e-spark.log", SPARK_OK)
    c.write("mixed/f-corrupt.zstd", flip(spark_fx, 40))
    c.case("mixed", "0", named="mixed/a-empty.json")
    c.rows.append(("mixed", "0", "mixed/b-garbage.bin", "-"))
    c.rows.append(("mixed", "0", "mixed/d-cut.json", "-"))

    # --- hostile names, special files, an empty folder ----------------------
    # stderr shows names cleaned (ESC, BEL -> '?', CR -> ' '): bad_inputs.sh
    # looks for the cleaned form and for any control byte on stderr
    c.write("name\x1b]0;pwned\x07\r.log", b"just some text\n")
    c.case("name\x1b]0;pwned\x07\r.log", "3")
    c.write("names/\x1b[2J\x1b[31mred.json", b"{}")
    c.write("names/spark.log", SPARK_OK)
    c.case("names", "0", named="names/\x1b[2J\x1b[31mred.json")
    # a FIFO where Spark writes its events files: opened without blocking,
    # refused by name; the other input of the folder is still read
    roll = "fifo-rolling/eventlog_v2_app-1"
    c.write(roll + "/appstatus_app-1", b"")
    os.mkfifo(c.path(roll + "/events_1_app-1"))
    c.write("fifo-rolling/spark.log", SPARK_OK)
    c.case("fifo-rolling", "0", named=roll + "/events_1_app-1")
    os.mkfifo(c.path("fifo.log"))
    c.case("fifo.log", "3")
    os.makedirs(os.path.join(c.out, "empty-dir"), exist_ok=True)
    c.case("empty-dir", "3")

    # --- inputs that once crashed a fuzz target (tests/bad-inputs/crashes/)
    if os.path.isdir(CRASHES):
        for f in sorted(os.listdir(CRASHES)):
            c.write("crash/" + f, open(os.path.join(CRASHES, f), "rb").read())
            c.case("crash/" + f, "0,3", named="-")


def main():
    out = sys.argv[1]
    os.makedirs(out, exist_ok=True)
    c = Corpus(out)
    build(c)
    for row in c.rows:
        print("\t".join(row))


if __name__ == "__main__":
    main()
