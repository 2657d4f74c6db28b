#!/usr/bin/env bash
# SARIF 2.1.0: the demo's and a hostile bundle's reports validate against
# the vendored schema (tests/schemas/sarif-schema-2.1.0.json, checked by
# tests/schemas/validate.py), and the fields code scanning relies on are
# right: one result per JSON finding with the same fingerprint in
# partialFingerprints, ruleIndex pointing at its rule, levels mapped, a
# location for every finding of a run, helpUri only when OPTIPIPE_DOCS_URL
# says where the docs are published.
# Usage: report_sarif.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
src=$(cd "$2" && pwd)
. "$(dirname "$0")/lib/check.sh"
E2E_OUT=/nonexistent
unset OPTIPIPE_DOCS_URL

validate() { python3 "$src/tests/schemas/validate.py" "$src/tests/schemas/sarif-schema-2.1.0.json" "$1"; }

cd "$src" || exit 1
"$bin" analyze --format sarif --deterministic fixtures/demo >"$tmp/demo.sarif" 2>"$tmp/err"
check "demo sarif exits 0" test $? = 0
"$bin" analyze --format json --deterministic fixtures/demo >"$tmp/demo.json" 2>/dev/null
check "demo sarif validates against the SARIF 2.1.0 schema" validate "$tmp/demo.sarif"

cat >"$tmp/fields.py" <<'PY'
import json, sys
sarif = json.load(open(sys.argv[1]))
js = json.load(open(sys.argv[2]))
run = sarif["runs"][0]
rules = run["tool"]["driver"]["rules"]
results = run["results"]
assert sarif["version"] == "2.1.0" and len(sarif["runs"]) == 1
assert len(results) == len(js["findings"]), (len(results), len(js["findings"]))
level = {"error": "error", "warning": "warning", "info": "note"}
ids = [r["id"] for r in rules]
assert ids == sorted(ids), "rules sorted by id"
for res, f in zip(results, js["findings"]):
    assert res["ruleId"] == f["rule"]
    assert rules[res["ruleIndex"]]["id"] == f["rule"]
    assert res["level"] == level[f["severity"]]
    assert res["partialFingerprints"]["optipipe/v1"] == f["fingerprint"]
    assert res["message"]["text"].startswith(f["message"])
    if f["run"] is not None:
        loc = res["locations"][0]
        assert loc["physicalLocation"]["artifactLocation"]["uri"]
        assert loc["logicalLocations"][0]["fullyQualifiedName"].startswith(f["source"] + "/" + f["run"])
    for r in rules:
        assert "helpUri" not in r
dbt = [r for r in results if r["ruleId"] == "dbt.regression" and "/model." in
       r["locations"][0]["logicalLocations"][0]["fullyQualifiedName"]]
assert dbt and dbt[0]["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
    "models/marts/fct_orders.sql", "dbt findings point at the model's file"
flink = [r for r in results if r["ruleId"] == "flink.bottleneck"][0]
assert flink["locations"][0]["physicalLocation"]["artifactLocation"]["uri"] == \
    "fixtures/demo/flink-window-bottleneck.json", "other findings point at their input"
assert flink["locations"][0]["logicalLocations"][0]["kind"] == "vertex"
bn = rules[flink["ruleIndex"]]
assert bn["help"]["markdown"].startswith("# flink.bottleneck"), "help is the rule's doc"
assert bn["shortDescription"]["text"] and bn["defaultConfiguration"]["level"] == "warning"
print("fields ok")
PY
check "sarif results match the json findings" python3 "$tmp/fields.py" "$tmp/demo.sarif" "$tmp/demo.json"

OPTIPIPE_DOCS_URL=https://example.org/opti-pipe/docs "$bin" analyze --format sarif \
    --deterministic fixtures/demo >"$tmp/uri.sarif" 2>/dev/null
check "helpUri from OPTIPIPE_DOCS_URL validates" validate "$tmp/uri.sarif"
check "helpUri names the rule's page" grep -q \
    '"helpUri": "https://example.org/opti-pipe/docs/rules/flink.bottleneck.md"' "$tmp/uri.sarif"

mkdir -p "$tmp/hostile"
python3 "$src/tests/e2e/report_hostile.py" "$src" "$tmp/hostile"
"$bin" analyze --format sarif --deterministic --rules "$tmp/hostile/rules" \
    "$tmp/hostile/flink.json" "$tmp/hostile/dbt" >"$tmp/hostile.sarif" 2>/dev/null
check "hostile sarif validates" validate "$tmp/hostile.sarif"
check "hostile sarif has no control characters" python3 -c '
import json, sys
text = open(sys.argv[1], encoding="utf-8").read()
doc = json.loads(text)
def strings(v):
    if isinstance(v, str): yield v
    elif isinstance(v, list):
        for x in v: yield from strings(x)
    elif isinstance(v, dict):
        for k, x in v.items():
            yield k
            yield from strings(x)
bad = [s for s in strings(doc) if any(ord(c) < 32 and c != "\n" or 0x7f <= ord(c) <= 0x9f for c in s)]
assert not bad, bad[:3]
assert "<script>alert(1)</script>" in text.encode().decode("unicode_escape") or "\\u003cscript" in text
' "$tmp/hostile.sarif"

finish
