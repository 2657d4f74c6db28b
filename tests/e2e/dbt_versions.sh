#!/usr/bin/env bash
# Issue #27: every dbt rule that reads the manifest behaves the same on
# manifest v5 (dbt 1.1) to v12 (dbt 1.8+). fixtures/dbt/versions/gen.py
# writes one project in each version's shape; for each version, the
# manifest alone and the manifest with its `dbt build` run_results give the
# same dbt findings (rule, node, message, evidence) as v12, the checks the
# project is built for all fire, and a version without a field the
# analysis uses says so in a warning (v5-v8: tests' attached_node, v5-v9:
# metadata.project_name), never silently.
# Usage: dbt_versions.sh OPTIPIPE SOURCE_DIR
set -u
bin=$1
src=$2
. "$(dirname "$0")/lib/check.sh"
V=$src/fixtures/dbt/versions

# sig VERSION MODE: the dbt findings of that version, one canonical line
# each, into $tmp/VERSION.MODE (MODE static: the manifest alone; build:
# with its run_results), and its warnings into $tmp/VERSION.MODE.warn
sig() {
    local v=$1 mode=$2 inputs=("$V/v$1/manifest.json")
    [ "$mode" = build ] && inputs+=("$V/v$1/run_results.json")
    "$bin" analyze --format json "${inputs[@]}" >"$tmp/a.json" 2>"$E2E_ERR"
    [ $? -le 1 ] || return 1
    python3 - "$tmp/a.json" "$tmp/$v.$mode" <<'PY'
import json, sys
doc = json.load(open(sys.argv[1]))
lines = sorted(json.dumps([f["rule"], f.get("node"), f["message"], f.get("evidence"),
                           f.get("recommendation")], sort_keys=True)
               for f in doc["findings"] if f["rule"].startswith("dbt."))
open(sys.argv[2], "w").write("\n".join(lines) + "\n")
open(sys.argv[2] + ".warn", "w").write(
    "\n".join(w for r in doc["runs"] for w in r.get("warnings", [])) + "\n")
PY
}

# same VERSION MODE: its findings equal v12's
same() {
    sig "$1" "$2" || return 1
    diff "$tmp/12.$2" "$tmp/$1.$2" >"$E2E_OUT"
}

# fires MODE RULE...: each RULE has a finding in v12's MODE findings
fires() {
    local mode=$1 r
    shift
    for r in "$@"; do
        grep -q "^\[\"$r\"" "$tmp/12.$mode" || { echo "no $r" >"$E2E_OUT"; return 1; }
    done
}

# warns VERSION MODE PATTERN: a warning of that run matches PATTERN
warns() { grep -q -- "$3" "$tmp/$1.$2.warn" || { cp "$tmp/$1.$2.warn" "$E2E_OUT"; return 1; }; }
quiet() { ! grep -q -- "$3" "$tmp/$1.$2.warn" || { cp "$tmp/$1.$2.warn" "$E2E_OUT"; return 1; }; }

for mode in static build; do
    check "v12 $mode: reads" sig 12 "$mode"
done
check "static: every DAG check fires on the project" fires static dbt.materialization \
    dbt.model-fanout dbt.rejoined-concepts dbt.exposure-views dbt.source-fanout \
    dbt.costly-macros dbt.incremental-config
check "build: the failing relationships test is fct_orders', not dim_customers'" \
    grep -q '"1 test on fct_orders failed' "$tmp/12.build"
check "build: the DAG checks still fire" fires build dbt.failures dbt.materialization \
    dbt.model-fanout dbt.rejoined-concepts dbt.costly-macros dbt.incremental-config

for v in 5 6 7 8 9 10 11; do
    for mode in static build; do
        check "v$v $mode: the same dbt findings as v12" same "$v" "$mode"
    done
done

for v in 5 6 7 8; do
    check "v$v: says tests have no attached_node and how their model was found" \
        warns "$v" build "manifest v$v (dbt [0-9.]*) has no attached_node on its tests.*3 from the ref"
done
for v in 5 6 7 8 9; do
    check "v$v: says there is no project_name and what stands in" \
        warns "$v" build "manifest v$v (dbt [0-9.]*) has no metadata.project_name.*'shop'"
done
for v in 9 10 11 12; do
    check "v$v: attached_node present, no note" quiet "$v" build "no attached_node"
done
for v in 10 11 12; do
    check "v$v: project_name present, no note" quiet "$v" build "no metadata.project_name"
done
finish
