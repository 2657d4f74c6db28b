#!/usr/bin/env python3
"""seeds.py TARGET DIR - writes the seed corpus of one fuzz target into DIR,
taken from fixtures/ (plus every codec's framing written here around a
fixture line, since fixtures only hold zstd). Nothing is committed: the
seeds are assembled at run time, small files only."""
import glob
import gzip
import os
import struct
import subprocess
import sys
import zlib

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
FIX = os.path.join(ROOT, "fixtures")
SEP = b"\n%%optipipe-fuzz-file%%\n"
MAX_SEED = 64 * 1024
M32 = 0xFFFFFFFF
P1, P2, P3, P4, P5 = 0x9E3779B1, 0x85EBCA77, 0xC2B2AE3D, 0x27D4EB2F, 0x165667B1


def rotl(x, r):
    return ((x << r) | (x >> (32 - r))) & M32


def xxh32(data, seed=0):
    """XXH32, for lz4 frame header and lz4-java block checksums."""
    n, i = len(data), 0
    if n >= 16:
        v = [(seed + P1 + P2) & M32, (seed + P2) & M32, seed & M32, (seed - P1) & M32]
        while i + 16 <= n:
            for k in range(4):
                w = struct.unpack_from("<I", data, i + 4 * k)[0]
                v[k] = (rotl((v[k] + w * P2) & M32, 13) * P1) & M32
            i += 16
        h = (rotl(v[0], 1) + rotl(v[1], 7) + rotl(v[2], 12) + rotl(v[3], 18)) & M32
    else:
        h = (seed + P5) & M32
    h = (h + n) & M32
    while i + 4 <= n:
        h = (rotl((h + struct.unpack_from("<I", data, i)[0] * P3) & M32, 17) * P4) & M32
        i += 4
    while i < n:
        h = (rotl((h + data[i] * P5) & M32, 11) * P1) & M32
        i += 1
    h ^= h >> 15
    h = (h * P2) & M32
    h ^= h >> 13
    h = (h * P3) & M32
    return h ^ (h >> 16)


def lz4_java(data):
    out = b""
    for off in range(0, len(data), 1024):
        blk = data[off:off + 1024]
        chk = xxh32(blk, 0x9747B28C) & 0x0FFFFFFF
        out += b"LZ4Block" + bytes([0x10]) + struct.pack("<III", len(blk), len(blk), chk) + blk
    return out + b"LZ4Block" + bytes([0x10]) + struct.pack("<III", 0, 0, 0)


def lz4_frame(data):
    desc = bytes([0x60, 0x40])
    out = b"\x04\x22\x4d\x18" + desc + bytes([(xxh32(desc) >> 8) & 0xFF])
    for off in range(0, len(data), 4096):
        blk = data[off:off + 4096]
        out += struct.pack("<I", len(blk) | 0x80000000) + blk
    return out + struct.pack("<I", 0)


def snappy_literal(blk):
    """A raw snappy block holding blk as literals."""
    n, v = len(blk), b""
    x = n
    while True:
        if x < 0x80:
            v += bytes([x])
            break
        v += bytes([(x & 0x7F) | 0x80])
        x >>= 7
    out, off = v, 0
    while off < n:
        k = min(60, n - off)
        out += bytes([(k - 1) << 2]) + blk[off:off + k]
        off += k
    return out


def snappy_java(data):
    out = b"\x82SNAPPY\x00" + struct.pack(">II", 1, 1)
    for off in range(0, len(data), 2048):
        c = snappy_literal(data[off:off + 2048])
        out += struct.pack(">I", len(c)) + c
    return out


def lzf(data):
    out = b""
    for off in range(0, len(data), 0xFFFF):
        blk = data[off:off + 0xFFFF]
        out += b"ZV\x00" + struct.pack(">H", len(blk)) + blk
    return out


def unzstd(path):
    try:
        return subprocess.run(["zstd", "-dc", path], check=True,
                              capture_output=True).stdout
    except (OSError, subprocess.CalledProcessError):
        return None


def files(sub, suffix):
    d = os.path.join(FIX, sub)
    for dp, _, fs in os.walk(d):
        for f in sorted(fs):
            if f.endswith(suffix):
                yield os.path.join(dp, f)


def small(b):
    return b[:MAX_SEED]


def zip_seeds():
    """Archives the unpacker must refuse or unpack: plain, deflated, a
    traversal name, an absolute name, a symlink member, a folder, a bomb
    ratio, an empty archive."""
    import io
    import zipfile

    def z(members, method=zipfile.ZIP_DEFLATED):
        b = io.BytesIO()
        with zipfile.ZipFile(b, "w", method) as zf:
            for name, data, attr in members:
                info = zipfile.ZipInfo(name)
                info.compress_type = method
                if attr:
                    info.external_attr = attr << 16
                zf.writestr(info, data)
        return b.getvalue()
    line = b'{"Event":"SparkListenerLogStart","Spark Version":"3.5.0"}\n'
    yield "stored", z([("eventlog_v2_x/events_1_x", line, 0)], zipfile.ZIP_STORED)
    yield "deflated", z([("target/run_results.json", b'{"results": []}', 0),
                         ("target/manifest.json", b'{"nodes": {}}', 0)])
    yield "traversal", z([("../../x", line, 0), ("a/../../y", line, 0)])
    yield "absolute", z([("/etc/x", line, 0)])
    yield "symlink", z([("link", b"/etc/passwd", 0o120777), ("link/x", line, 0)])
    yield "folder", z([("d/", b"", 0o40755), ("d/f", line, 0)])
    yield "ratio", z([("big", b"\0" * (4 << 20), 0)])
    yield "empty", z([])


def seeds(target):
    if target in ("stream", "spark"):
        text = None
        for p in files("spark", ".zstd"):
            raw = open(p, "rb").read()
            if target == "spark" or len(raw) <= MAX_SEED:
                yield os.path.basename(p), raw
            text = text or unzstd(p)
        for p in files("demo", ".zstd"):
            yield os.path.basename(p), open(p, "rb").read()
        if target == "spark":
            # what the sanitizer handles: out-of-range numbers, duplicated
            # keys (small and sorted objects), on the fast and slow paths
            head = (b'{"Event":"SparkListenerLogStart","Spark Version":"3.5.0"}\n'
                    b'{"Event":"SparkListenerStageSubmitted","Stage Info":{"Stage ID":0,'
                    b'"Stage Attempt ID":0,"Number of Tasks":2,"Submission Time":1}}\n'
                    b'{"Event":"SparkListenerTaskStart","Stage ID":0,"Task Info":'
                    b'{"Task ID":1,"Launch Time":2}}\n')
            end = (b'{"Event":"SparkListenerTaskEnd","Stage ID":0,"Task End Reason":'
                   b'{"Reason":"Success"},"Task Info":{"Task ID":1,"Launch Time":2,'
                   b'"Finish Time":%s},"Task Metrics":{"Executor Run Time":%s,'
                   b'"Executor Run Time":3,"Input Metrics":{"Bytes Read":%s}}}\n')
            yield "out-of-range", head + end % (b"1e400", b"18446744073709551617",
                                                b"-9223372036854775809")
            yield "dup-keys", head + end % (b"5", b"4", b"1") + (
                b'{"Event":"SparkListenerEnvironmentUpdate","Spark Properties":{'
                + b",".join(b'"k%d":"v%d"' % (i % 7, i) for i in range(40)) + b'}}\n')
            # a generic app name: the job key parses the driver's command
            # line (plugins/spark/spark_jobkey.c), in both System Properties forms
            start = (b'{"Event":"SparkListenerApplicationStart","App Name":"Spark shell",'
                     b'"App ID":"app-1","Timestamp":1,"User":"u"}\n')
            cmd = (b'org.apache.spark.deploy.SparkSubmit --class com.acme.Etl --name Spark '
                   b'shell --conf spark.app.name=Spark shell etl.jar -i x.scala')
            yield "generic-name", head + start + (
                b'{"Event":"SparkListenerEnvironmentUpdate","Spark Properties":{},'
                b'"System Properties":{"sun.java.command":"' + cmd + b'"}}\n')
            yield "generic-name-pairs", head + start + (
                b'{"Event":"SparkListenerEnvironmentUpdate","Spark Properties":[],'
                b'"System Properties":[["sun.java.command","' + cmd + b'"]]}\n')
        if target == "stream":
            plain = small(text or b'{"Event":"SparkListenerLogStart"}\n')
            yield "plain", plain
            yield "gzip", gzip.compress(plain)
            yield "zlib-in-gzip-multi", gzip.compress(plain[:100]) + gzip.compress(plain[100:])
            yield "lz4-java", lz4_java(plain)
            yield "lz4-frame", lz4_frame(plain)
            yield "snappy-java", snappy_java(plain)
            yield "lzf", lzf(plain)
            yield "crlf", plain.replace(b"\n", b"\r\n")
    elif target == "flink":
        for sub in ("flink", "mixed"):
            for p in files(sub, ".json"):
                yield os.path.basename(p), small(open(p, "rb").read())
        for p in files("demo", ".json"):
            yield os.path.basename(p), small(open(p, "rb").read())
        # duplicated keys and vertex ids, numbers beyond range (json.h)
        j = "a" * 32
        yield "dup-range", ('{"flink_rest_export": 1, "responses": {"/jobs/%s": '
                            '{"jid": "%s", "jid": "%s", "start-time": 1e400, "vertices": '
                            '[{"id": "v", "parallelism": 1.8e308}, {"id": "v", '
                            '"maxParallelism": 18446744073709551617}]}, "/jobs/%s/plan": '
                            '{"plan": {"nodes": [{"id": "v"}, {"id": "v"}]}}, '
                            '"/jobs/%s/vertices/v/metrics?get=a": [{"id": "0.x", '
                            '"value": "1e400"}]}}' % (j, j, j, j, j)).encode()
    elif target == "prometheus":
        sep = b"\n%%optipipe-fuzz-file%%\n"
        conf = os.path.join(FIX, "prometheus", "conformance")
        for p in sorted(glob.glob(os.path.join(conf, "*.txt"))):
            yield os.path.basename(p), small(open(p, "rb").read())
        for d in ("jmx", "strimzi", "micrometer"):
            scrapes = sorted(glob.glob(os.path.join(FIX, "streaming", "kafka-streams-" + d, "*.prom")))
            yield "kafka-streams-" + d, small(sep.join(open(p, "rb").read() for p in scrapes))
        yield "range", (b'{"status":"success","data":{"resultType":"matrix","result":[{"metric":'
                        b'{"__name__":"kafka_stream_task_restore_total","thread_id":"a-StreamThread-1",'
                        b'"task_id":"0_0"},"values":[[1764583200,"1"],[1764583260,"NaN"]]}]}}')
    elif target == "samza":
        for p in files(os.path.join("streaming", "samza"), ".jsonl"):
            yield os.path.basename(p), small(open(p, "rb").read())
    elif target == "dbt":
        versions = os.path.join(FIX, "dbt", "versions")
        for d in [f for f in sorted(os.listdir(os.path.join(FIX, "dbt"))) if f != "versions"] + [
                "../demo/dbt"] + [
                "versions/" + v for v in sorted(os.listdir(versions))] + [
                # nights: a build with its manifest (and sources.json)
                "%s/%s" % (h, n) for h in ("health", "health-fresh")
                for n in sorted(os.listdir(os.path.join(FIX, "dbt", h)))[:2]]:
            base = os.path.join(FIX, "dbt", d)
            if not os.path.isdir(base):
                continue
            parts = []
            for name in ("manifest.json",):
                p = os.path.join(base, name)
                if os.path.exists(p):
                    parts.append(open(p, "rb").read())
            rr = sorted(f for f in os.listdir(base) if f.startswith("run_results"))
            parts += [open(os.path.join(base, f), "rb").read() for f in rr[:2]]
            if os.path.exists(os.path.join(base, "sources.json")):
                parts.append(open(os.path.join(base, "sources.json"), "rb").read())
            yield d.replace("/", "_"), SEP.join(parts[:4])
            for i, part in enumerate(parts):
                yield "%s-%d" % (d.replace("/", "_"), i), small(part)
        # tests of a manifest before v9 (no attached_node): refs half
        # written, quotes unclosed, a source with one argument, no match
        yield "old-tests", (b'{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/'
                            b'dbt/manifest/v5.json"}, "nodes": {'
                            b'"test.p.a": {"resource_type": "test", "depends_on": {"nodes": '
                            b'["model.p.x", "model.p.y"]}, "test_metadata": {"kwargs": {"model": '
                            b'"ref(\'y\') ref(\\"x"}}}, '
                            b'"test.p.b": {"resource_type": "test", "depends_on": {"nodes": '
                            b'["source.p.s.t", "model.p.y"]}, "test_metadata": {"kwargs": {"model": '
                            b'"source(\'s\', \'t\') source(\'s\') ref( , \'\')"}}}, '
                            b'"test.p.c": {"resource_type": "test", "depends_on": {"nodes": '
                            b'["model.p.x", "model.p.y"]}, "test_metadata": {"kwargs": {"model": 7}}}, '
                            b'"model.p.x": {"resource_type": "model"}, "model.p.y": '
                            b'{"resource_type": "model", "depends_on": {"nodes": ["model.p.x"]}}}}')
        # sources.json beside a build: max_loaded_at not a time, missing,
        # a source the manifest lacks, a freshness taken after the build
        yield "fresh-bad", SEP.join([
            b'{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/manifest/'
            b'v12.json", "invocation_id": "b", "project_name": "p"}, "nodes": {"model.p.m": '
            b'{"resource_type": "model", "depends_on": {"nodes": ["source.p.s.a", '
            b'"source.p.s.b", "model.p.m"]}}, "model.p.n": {"resource_type": "model", '
            b'"depends_on": {"nodes": ["model.p.m", "source.p.s.zz"]}}}, "sources": '
            b'{"source.p.s.a": {"resource_type": "source"}, "source.p.s.b": '
            b'{"resource_type": "source"}}}',
            b'{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/run-results/'
            b'v6.json", "invocation_id": "b", "generated_at": "2024-05-01T02:10:00Z"}, '
            b'"results": [{"unique_id": "model.p.m", "status": "success", "timing": [{"name": '
            b'"execute", "started_at": "2024-05-01T02:00:00Z", "completed_at": '
            b'"2024-05-01T02:01:00Z"}]}, {"unique_id": "model.p.n", "status": "success"}], '
            b'"args": {"which": "build"}}',
            b'{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/sources/v3.json",'
            b' "invocation_id": "f", "generated_at": "2024-05-01T01:50:00Z"}, "results": ['
            b'{"unique_id": "source.p.s.a", "status": "pass", "max_loaded_at": "yesterday"}, '
            b'{"unique_id": "source.p.s.b", "status": "pass", "max_loaded_at": '
            b'"2024-05-01T01:00:00+00:00"}, {"unique_id": "source.p.s.zz", "status": "warn", '
            b'"max_loaded_at": "2024-04-01T01:00:00-99:99"}]}',
            b'{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/dbt/sources/v3.json",'
            b' "invocation_id": "g", "generated_at": "2024-05-01T03:00:00Z"}, "results": ['
            b'{"unique_id": "source.p.s.a", "max_loaded_at": "2024-05-01T02:30:00Z"}]}'])
        # wrong types and ranges, duplicated keys, numbers beyond range
        yield "bad-fields", (b'{"metadata": {"dbt_schema_version": "https://schemas.getdbt.com/'
                             b'dbt/run-results/v6.json", "invocation_id": "x"}, "results": '
                             b'[{"unique_id": "model.p.x", "execution_time": 1e999, "timing": '
                             b'"nope", "status": 3, "status": "success", "adapter_response": '
                             b'{"rows_affected": -5, "bytes_billed": "7"}}], "elapsed_time": -5}')
    elif target == "config":
        for dp, _, fs in os.walk(ROOT):
            if "/build" in dp or "/." in dp:
                continue
            for f in fs:
                if f == "optipipe.lua":
                    yield dp.replace("/", "_") + f, small(open(os.path.join(dp, f), "rb").read())
        yield "minimal", b'return { rules = { ["spark.*"] = { severity = "error" } } }\n'
        yield "full", (b'return { packs = { "spark", "flink" }, fail_on = "warning",\n'
                       b'  rules = { ["flink.bottleneck"] = { options = { target_utilization = 0.7 } },\n'
                       b'            ["dbt.*"] = false },\n'
                       b'  ignore = { { rule = "spark.skew", node = "stage 3", reason = "known" } },\n'
                       b'  rules_dirs = { "my-rules" }, plugin_path = { "plugins" },\n'
                       b'  baseline = "baseline.json" }\n')
    elif target == "rules":
        exe = os.environ.get("OPTIPIPE")
        ins = [os.path.join(FIX, "demo", "flink-window-bottleneck.json"),
               os.path.join(FIX, "demo", "dbt"),
               os.path.join(FIX, "spark", "skew.zstd"),
               os.path.join(FIX, "flink", "checkpoint-trend-rising.json")]
        for i, p in enumerate(ins):
            if not exe:
                break
            r = subprocess.run([exe, "normalize", "--format", "json", p],
                               capture_output=True)
            if r.stdout:
                yield "model-%d" % i, r.stdout
        yield "tiny", (b'{"schema": 1, "runs": [{"source": "flink", "id": "j", "nodes": ['
                       b'{"id": "a", "kind": "operator", "metrics": {"busy_ratio": 0.99}},'
                       b'{"id": "b", "kind": "operator", "parents": ["a"]}]}]}\n')
    elif target == "rule_test":
        # a rule SEP its test [SEP fz.json] (fuzz_rule_test.c): every bundled pair, then
        # small ones that reach the limits and the harness's own checks
        for pack in sorted(os.listdir(os.path.join(ROOT, "rules"))):
            d = os.path.join(ROOT, "rules", pack)
            if not os.path.isdir(d):
                continue
            for f in sorted(os.listdir(d)):
                t = os.path.join(d, f[:-4] + "_test.lua")
                if not f.endswith(".lua") or f.endswith("_test.lua") or not os.path.exists(t):
                    continue
                pair = open(os.path.join(d, f), "rb").read() + SEP + open(t, "rb").read()
                if len(pair) <= MAX_SEED:
                    yield "%s-%s" % (pack, f[:-4]), pair
        rule = (b'return { id = "fz.slow", title = "slow", severity = "warning",\n'
                b'  sources = { "spark" }, options = { max_ms = 10 },\n'
                b'  check = function(run, ctx)\n'
                b'    for _, n in ipairs(run.nodes) do\n'
                b'      if (n.duration_ms or 0) > ctx.options.max_ms then\n'
                b'        ctx.report { node = n.id, message = "slow " .. n.id,\n'
                b'                     evidence = { duration_ms = n.duration_ms } }\n'
                b'      end\n'
                b'    end\n'
                b'  end }\n')
        run = b'{ source = "spark", id = "r", nodes = { { id = "n1", duration_ms = 99 } } }'
        test = (b'return { rule = "fz.slow", cases = {\n'
                b'  { name = "fires", inputs = { ' + run + b' },\n'
                b'    expect = { { node = "n1", message = "slow n1" } } },\n'
                b'  { name = "option", options = { max_ms = 1000 }, inputs = { ' + run + b' },\n'
                b'    expect = {} },\n'
                b'  { name = "history", history = { "fz.json", "fz.json" },\n'
                b'    inputs = { "fz.json" }, expect = { { node = "n1" } } },\n'
                b'  { name = "outside", inputs = { "/etc/hostname", "../x" }, expect = {} },\n'
                b'} }\n')
        data = (b'{"schema": 1, "runs": [{"source": "spark", "id": "r", "name": "job",\n'
                b' "nodes": [{"id": "n1", "kind": "stage", "duration_ms": 99}]}]}\n')
        yield "tiny", rule + SEP + test + SEP + data
        yield "loop-rule", rule.replace(b"for _, n in", b"while true do end for _, n in") + SEP + test
        yield "loop-test", rule + SEP + b"while true do end\n" + test
        yield "big-test", rule + SEP + b'local s = ("x"):rep(1 << 20) local t = {} ' \
            b'for i = 1, 1e6 do t[i] = s .. i end\n' + test
        yield "no-sep", rule
        yield "bad-shapes", rule + SEP + (b'return { rule = "fz.slow", cases = { { inputs = 1, '
                                          b'expect = "x" }, { inputs = {}, expect = {} }, 7 } }\n')
    elif target == "unzip":
        yield from zip_seeds()
    elif target == "multipart":
        # first line: the Content-Type; then the body (fuzz_multipart.c)
        def body(ct, parts, pre=b"", epi=b"\r\n", b=b"XyZ", end=True):
            out = ct + b"\n" + pre
            for hdrs, data in parts:
                out += b"--" + b + b"\r\n" + b"".join(h + b"\r\n" for h in hdrs)
                out += b"\r\n" + data + b"\r\n"
            return out + (b"--" + b + b"--" + epi if end else b"")
        ct = b"multipart/form-data; boundary=XyZ"
        cd = b"Content-Disposition: form-data; "
        demo = small(open(os.path.join(FIX, "demo", "flink-window-bottleneck.json"),
                          "rb").read())[:4096]
        yield "basic", body(ct, [([cd + b'name="csrf"'], b"tok"),
                                 ([cd + b'name="file"; filename="a.json"',
                                   b"Content-Type: application/json"], demo)])
        yield "near-boundaries", body(ct, [([cd + b"name=file"],
                                            b"\r\r\n-\r\n--\r\n--X\r\n--Xy\r\n--XyQ")])
        yield "escapes", body(ct, [([cd + b'name="a\\"b"; filename="C:\\d\\x \\"y\\".gz"',
                                     b"content-type:  text/csv "], b"d"),
                                   ([cd + b"name=file; filename*=UTF-8''%C3%A9.json"], b"e")],
                              pre=b"preamble\r\n", epi=b"\r\nepilogue")
        yield "quoted-boundary", body(b'multipart/form-data; charset=x; boundary="a b:c"',
                                      [([cd + b"name=url"], b"http://h/1")], b=b"a b:c")
        yield "padding", body(ct, [([cd + b"name=a"], b"")]).replace(b"XyZ\r\n", b"XyZ \t\r\n", 1)
        yield "cut", body(ct, [([cd + b"name=file"], b"half")], end=False)
        yield "bad-lf", body(ct, [([cd + b"name=file"], b"x")]).replace(b"\r\n", b"\n")
        yield "many-headers", body(ct, [([cd + b"name=a"] + [b"X-%d: v" % i for i in range(16)],
                                        b"x")])
        yield "empty", ct + b"\n--XyZ--"
    elif target == "http":
        # one connection's raw bytes (fuzz_http.c): method x route x body x headers
        h = b"Host: 127.0.0.1\r\n"
        mp = (b"--B\r\nContent-Disposition: form-data; name=\"file\"; filename=\"a.json\"\r\n"
              b"\r\n{}\r\n--B--\r\n")
        yield "get-body", b"GET /healthz HTTP/1.1\r\n" + h + b"Content-Length: 1\r\n\r\nx"
        yield "head-body", b"HEAD /login HTTP/1.1\r\n" + h + b"Content-Length: 5\r\n\r\nhello"
        yield "chunked", (b"GET /static/app.css HTTP/1.1\r\n" + h +
                          b"Transfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n")
        yield "upload", (b"POST /api/v1/analyses?name=x HTTP/1.1\r\n" + h +
                         b"Content-Type: multipart/form-data; boundary=B\r\n"
                         b"Content-Length: %d\r\n\r\n" % len(mp) + mp)
        yield "decision", (b"POST /api/v1/decisions HTTP/1.1\r\n" + h +
                           b"Content-Type: application/json\r\nContent-Length: 49\r\n\r\n"
                           b'{"fingerprint":"0123456789abcdef","status":"ok"}')
        yield "form", (b"POST /login HTTP/1.1\r\n" + h + b"Cookie: op_csrf=" + b"a" * 64 +
                       b"\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                       b"Content-Length: 13\r\n\r\ntoken=x&csrf=")
        yield "cursor", b"GET /api/v1/jobs?before=%00&limit=2 HTTP/1.1\r\n" + h + b"\r\n"
        yield "pages", (b"GET /jobs?limit=1 HTTP/1.1\r\n" + h + b"\r\n"
                        b"GET /diff?a=x%40latest&b=y HTTP/1.1\r\n" + h + b"\r\n")
        yield "expect", (b"POST /api/v1/analyses HTTP/1.1\r\n" + h + b"Expect: 100-continue\r\n"
                         b"Content-Length: 999999\r\n\r\n")
        yield "odd", (b"BREW /analyses/0123456789abcdef/decisions HTTP/1.0\r\n"
                      b"Origin: null\r\nSec-Fetch-Site: cross-site\r\n\r\n")
    elif target == "users":
        h = b"0" * 64
        yield "users", (b"# people\n\nalice decide sha256:" + h + b"\n"
                        b"bob\tread  sha256:" + h + b" \r\n")
        yield "bad-lines", (b"alice decide\nal/ice read sha256:00\nx boss sha256:" + h +
                            b"\ntoken read sha256:" + h + b"\n")
        yield "twice", b"a read sha256:" + h + b"\na admin sha256:" + h + b"\n"
        yield "cidrs", b"127.0.0.1\n10.0.0.0/8\n::1\nfd00::/8\n10.0.0.0/33\n::ffff:1.2.3.4/120\n/\n"
    else:
        sys.exit("seeds.py: unknown target " + target)


def main():
    target, out = sys.argv[1], sys.argv[2]
    os.makedirs(out, exist_ok=True)
    n = 0
    for name, data in seeds(target):
        with open(os.path.join(out, name), "wb") as f:
            f.write(data)
        n += 1
    print("seeds.py: %d seeds for %s in %s" % (n, target, out), file=sys.stderr)


if __name__ == "__main__":
    main()
