#!/usr/bin/env bash
# docs/openapi.json and docs/api.md against the server: the /api/v1 routes
# of the C route tables (srv_routes_api in serve/serve_*.c), the OpenAPI
# paths+methods and api.md's "### `METHOD /path`" sections are the same set
# each way; every $ref resolves; and against a live
# server the answers of each endpoint (successes and errors) validate
# against the schemas the document gives for their status, with
# tests/schemas/validate.py (the JSON Schema subset it knows; it fails on
# any other keyword, so the document cannot drift beyond what is checked).
# Usage: serve_openapi.sh OPTIPIPE SOURCE_DIR REAL_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
. "$(dirname "$0")/lib/serve.sh"
api=$src/docs/openapi.json
cd "$tmp" || exit 1

check "openapi.json is JSON" json_ok "$api"

# ---- routes both ways, $refs --------------------------------------------------------------
python3 - "$src" "$api" >static.out 2>&1 <<'EOF'
import glob, json, re, sys
src, api = sys.argv[1], sys.argv[2]
doc = json.load(open(api))
ok = True
routes = set()
for path in sorted(glob.glob(src + "/serve/serve_*.c")):
    text = open(path).read()
    m = re.search(r"srv_routes_api\[\]\s*=\s*\{(.*?)\n\};", text, re.S)
    if not m:
        continue
    for method, pattern in re.findall(r'\{\s*"([A-Z]+)"\s*,\s*"([^"]+)"', m.group(1)):
        routes.add((method.lower(), pattern))
if not routes:
    print("no srv_routes_api table found in serve/serve_*.c"); ok = False
documented = set()
for p, ops in doc["paths"].items():
    for m in ops:
        if m in ("get", "post", "put", "delete", "patch", "head", "options"):
            documented.add((m, p))
for m, p in sorted(routes - documented):
    print("route %s %s is not in openapi.json" % (m.upper(), p)); ok = False
for m, p in sorted(documented - routes):
    print("openapi.json has %s %s, no route serves it" % (m.upper(), p)); ok = False
def resolve(ref):
    assert ref.startswith("#/"), ref
    node = doc
    for part in ref[2:].split("/"):
        node = node[part.replace("~1", "/").replace("~0", "~")]
    return node
nrefs = 0
def walk(v, where):
    global ok, nrefs
    if isinstance(v, dict):
        for k, x in v.items():
            if k == "$ref":
                nrefs += 1
                try:
                    resolve(x)
                except (KeyError, AssertionError, TypeError):
                    print("%s: $ref %s does not resolve" % (where, x)); ok = False
            else:
                walk(x, where + "/" + k)
    elif isinstance(v, list):
        for i, x in enumerate(v):
            walk(x, "%s/%d" % (where, i))
walk(doc, "#")
assert doc["openapi"] == "3.1.0"
for name in ("analysis", "job", "run", "decision", "error", "report"):
    if name not in doc["components"]["schemas"]:
        print("components.schemas.%s missing" % name); ok = False
if doc["components"]["securitySchemes"]["bearer"].get("scheme") != "bearer":
    print("securitySchemes.bearer is not an http bearer scheme"); ok = False
# docs/api.md: one "### `METHOD /path`" heading per route, both ways
md = open(src + "/docs/api.md").read()
headed = {(m.lower(), p) for m, p in
          re.findall(r"^### `([A-Z]+) (/[^`\s]*)`", md, re.M)}
for m, p in sorted(routes - headed):
    print("route %s %s has no '### `%s %s`' section in docs/api.md" % (m.upper(), p, m.upper(), p)); ok = False
for m, p in sorted(headed - routes):
    print("docs/api.md has %s %s, no route serves it" % (m.upper(), p)); ok = False
print("%d routes, %d documented operations, %d api.md sections, %d $refs" % (len(routes), len(documented), len(headed), nrefs))
sys.exit(0 if ok else 1)
EOF
rc=$?
E2E_OUT=$tmp/static.out
check "routes, openapi.json and api.md agree, \$refs resolve" test $rc = 0
cat static.out

# ---- live answers against their schemas -------------------------------------------------------
E2E_OUT=$tmp/live.out
check "server starts" serve_start "$tmp/data"
python3 - "$src" "$api" "$SERVE_URL" >live.out 2>&1 <<'EOF'
import json, sys, time, urllib.error, urllib.request, uuid
src, api, base = sys.argv[1], sys.argv[2], sys.argv[3]
sys.path.insert(0, src + "/tests/schemas")
from validate import Validator
doc = json.load(open(api))
failed = []
checked = set()

def call(method, path, body=None, ctype=None, headers=None):
    req = urllib.request.Request(base + path, data=body, method=method)
    if ctype:
        req.add_header("Content-Type", ctype)
    for k, v in (headers or {}).items():
        req.add_header(k, v)
    try:
        with urllib.request.urlopen(req) as r:
            return r.status, r.headers, r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers, e.read()

def operation(method, template):
    return doc["paths"][template][method.lower()]

def answer_schema(op, status, ctype):
    resp = op["responses"].get(str(status))
    if resp is None:
        return None, "status %d is not documented" % status
    if "$ref" in resp:
        resp = Validator(doc).resolve(resp["$ref"])
    media = resp.get("content", {}).get(ctype.split(";")[0].strip())
    if media is None:
        return None, "content type %s of %d is not documented" % (ctype, status)
    return media["schema"], None

def expect(method, template, path, status, body=None, ctype=None, headers=None):
    code, hdrs, data = call(method, path, body, ctype, headers)
    what = "%s %s -> %d" % (method, path, code)
    if code != status:
        failed.append("%s: expected %d: %s" % (what, status, data[:300])); return None
    schema, why = answer_schema(operation(method, template), code, hdrs.get("Content-Type", ""))
    if why:
        failed.append("%s: %s" % (what, why)); return None
    if not hdrs.get("Content-Type", "").startswith("application/json"):
        checked.add((method, template, code)); return data
    v = Validator(doc)
    value = json.loads(data)
    v.check(schema, value, "$")
    for e in v.errors[:10]:
        failed.append("%s: %s" % (what, e))
    checked.add((method, template, code))
    return value

def multipart(fields):
    b = uuid.uuid4().hex
    out = b""
    for name, filename, content in fields:
        out += ("--%s\r\nContent-Disposition: form-data; name=\"%s\"" % (b, name)).encode()
        if filename:
            out += ("; filename=\"%s\"\r\nContent-Type: application/octet-stream" % filename).encode()
        out += b"\r\n\r\n" + content + b"\r\n"
    out += ("--%s--\r\n" % b).encode()
    return out, "multipart/form-data; boundary=" + b

demo = src + "/fixtures/demo/"
files = [("file", n, open(demo + n, "rb").read())
         for n in ("flink-window-bottleneck.json", "spark-application_1700000000000_0042.zstd")]
body, ct = multipart(files)
acc = expect("POST", "/api/v1/analyses", "/api/v1/analyses", 202, body, ct)
aid = acc["id"]
A = "/api/v1/analyses/{id}"
first = expect("GET", A, "/api/v1/analyses/" + aid, 200)   # queued, running or done
end = time.monotonic() + 120  # a safety net
while True:
    a = expect("GET", A, "/api/v1/analyses/" + aid, 200)
    if a is None or a["status"] in ("done", "failed") or time.monotonic() >= end:
        break
    time.sleep(0.05)
if a is None or a["status"] != "done":
    failed.append("the analysis did not finish: %r" % (a,))
else:
    fp = [f["fingerprint"] for f in a["report"]["findings"] if f["changes"]][0]
    D = "/api/v1/decisions"
    expect("POST", D, D, 200, json.dumps({"fingerprint": fp, "status": "approved", "comment": "ok"}).encode(), "application/json")
    expect("GET", A, "/api/v1/analyses/" + aid, 200)
    expect("GET", A + "/patches", "/api/v1/analyses/%s/patches" % aid, 200)
    expect("GET", A + "/patches", "/api/v1/analyses/%s/patches?format=text" % aid, 200)
    expect("GET", "/api/v1/analyses", "/api/v1/analyses?limit=1", 200)
    jobs = expect("GET", "/api/v1/jobs", "/api/v1/jobs", 200)
    J = "/api/v1/jobs/{job}/runs"
    runs = expect("GET", J, jobs["jobs"][0]["links"]["runs"], 200)
    expect("GET", "/api/v1/runs/{run}", "/api/v1/runs/" + runs["runs"][0]["id"], 200)
    expect("POST", D, D, 200, json.dumps({"fingerprint": fp, "status": "open"}).encode(), "application/json")
    expect("POST", D, D, 400, json.dumps({"fingerprint": fp, "status": "maybe"}).encode(), "application/json")
    expect("POST", D, D, 404, json.dumps({"fingerprint": "0123456789abcdef", "status": "approved"}).encode(), "application/json")
    expect("POST", D, D, 415, json.dumps({"fingerprint": fp, "status": "approved"}).encode(), "text/plain")
    expect("GET", "/api/v1/me", "/api/v1/me", 200)
    expect("GET", "/api/v1/users", "/api/v1/users", 200)
    H = "/api/v1/findings/{fp}/history"
    expect("GET", H, "/api/v1/findings/%s/history" % fp, 200)
    expect("GET", H, "/api/v1/findings/0123456789abcdef/history", 200)  # none
    expect("GET", H, "/api/v1/findings/nope/history", 400)
    expect("GET", "/api/v1/notifications", "/api/v1/notifications?limit=5", 200)
    expect("GET", "/api/v1/notifications", "/api/v1/notifications?limit=0", 400)
    expect("GET", J, "/api/v1/jobs/no-such/runs", 404)
    expect("GET", "/api/v1/runs/{run}", "/api/v1/runs/no-such", 404)
expect("GET", A, "/api/v1/analyses/0123456789abcdef", 404)
expect("GET", A, "/api/v1/analyses/nope", 400)
expect("GET", A + "/patches", "/api/v1/analyses/0123456789abcdef/patches", 404)
expect("POST", A + "/retry", "/api/v1/analyses/0123456789abcdef/retry", 404)
expect("POST", A + "/retry", "/api/v1/analyses/nope/retry", 400)
if a is not None and a["status"] == "done":
    expect("POST", A + "/retry", "/api/v1/analyses/%s/retry" % aid, 409)  # only failed ones
expect("GET", "/api/v1/analyses", "/api/v1/analyses?limit=0", 400)
expect("GET", "/api/v1/jobs", "/api/v1/jobs?limit=x", 400)
expect("GET", "/api/v1/jobs", "/api/v1/jobs?before=%00", 400)
expect("GET", "/api/v1/analyses", "/api/v1/analyses?before=%00", 400)
rb, rct = multipart(files[:1] + [("rules", "r.lua", b"return {}\n")])
expect("POST", "/api/v1/analyses", "/api/v1/analyses", 403, rb, rct)
expect("POST", "/api/v1/analyses", "/api/v1/analyses", 403, b'{"urls": ["http://203.0.113.1/"]}', "application/json")
eb, ect = multipart([("note", None, b"x")])
expect("POST", "/api/v1/analyses", "/api/v1/analyses", 400, eb, ect)
# no --allow-rule-upload here: the lint refuses (its 200: e2e/serve_lint)
expect("POST", "/api/v1/rules/lint", "/api/v1/rules/lint", 403, rb, rct)
# every documented operation was answered at least once
ops = {(m.upper(), p) for p, o in doc["paths"].items() for m in o}
for m, p in sorted(ops - {(m, p) for m, p, _ in checked}):
    failed.append("%s %s: never checked live" % (m, p))
for f in failed:
    print("FAIL:", f)
print("%d answers checked" % len(checked))
sys.exit(1 if failed else 0)
EOF
rc=$?
check "live answers validate against openapi.json" test $rc = 0
cat live.out
check "server stops" serve_stop
finish
