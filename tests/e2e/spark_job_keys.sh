#!/usr/bin/env bash
# Job keys of Spark apps whose name says nothing (docs/history.md#job-identity):
# apps all called "Spark shell" but running different main classes are
# different jobs in the run store, the same class twice is one job; a
# random (UUID) name does not make every run a job of its own; an app
# with a name of its own keeps its key (the app name) as before, so the
# stores that hold it go on with the same job. The logs are the nightly
# fixture with the app's name, id and driver command line rewritten.
# Usage: spark_job_keys.sh OPTIPIPE SOURCE_DIR [REAL_DIR]
set -u
bin=$1
src=$(cd "$2" && pwd)
real=${3:-}
. "$(dirname "$0")/lib/check.sh"
op() { "$bin" "$@" >"$tmp/out" 2>"$tmp/err"; rc=$?; }
db=$tmp/h.db
night=$src/fixtures/spark-nightly/steady/night-01.log.gz

# app OUT NAME APP_ID MAIN: the nightly log as app NAME, launched by
# spark-submit --class MAIN
app() {
    python3 - "$night" "$@" <<'PY'
import gzip, json, sys
src, out, name, app_id, main = sys.argv[1:6]
cmd = ("org.apache.spark.deploy.SparkSubmit --master yarn --class %s --name %s "
       "etl.jar" % (main, name))
with gzip.open(src, "rt") as f, open(out, "w") as w:
    for line in f:
        e = json.loads(line)
        if e["Event"] == "SparkListenerApplicationStart":
            e["App Name"], e["App ID"], e["User"] = name, app_id, "etl"
        elif e["Event"] == "SparkListenerEnvironmentUpdate":
            e["Spark Properties"]["spark.app.name"] = name
            e["Spark Properties"]["spark.app.id"] = app_id
            e.setdefault("System Properties", {})["sun.java.command"] = cmd
        w.write(json.dumps(e) + "\n")
PY
}
app "$tmp/orders-1.log" "Spark shell" application_1_0001 com.acme.Orders
app "$tmp/orders-2.log" "Spark shell" application_1_0002 com.acme.Orders
app "$tmp/returns.log" "Spark shell" application_1_0003 com.acme.Returns
for f in orders-1 orders-2 returns; do
    op analyze -q --no-config --no-baseline --history "$db" "$tmp/$f.log"
    check "$f is recorded" test "$rc" = 0
done
op history jobs --history "$db" --format json
check "two main classes under one generic name: two jobs" python3 -c '
import json, sys
jobs = {j["job"]: j["runs"] for j in json.load(open(sys.argv[1]))}
assert jobs == {"Spark shell [main=com.acme.Orders, user=etl]": 2,
                "Spark shell [main=com.acme.Returns, user=etl]": 1}, jobs
' "$tmp/out"
op history runs "Spark shell [main=com.acme.Orders, user=etl]" --history "$db"
check "the key names the job" test "$rc" = 0

# a random name (SparkSession.builder without appName): one job for both
app "$tmp/u1.log" 0f8fad5b-d9cb-469f-a165-70867728950e application_1_0004 com.acme.Local
app "$tmp/u2.log" 7c9e6679-7425-40de-944b-e07fc1f90ae7 application_1_0005 com.acme.Local
op analyze -q --no-config --no-baseline --history "$db" "$tmp/u1.log" "$tmp/u2.log"
op history jobs --history "$db"
check "two UUID-named runs of one class: one job, without the UUID" \
    has "$tmp/out" "2 runs .*unnamed app \[main=com.acme.Local, user=etl\]$"

# a name of its own: the key is the name, as in every store made before
sdb=$tmp/s.db
op analyze -q --no-config --no-baseline --history "$sdb" "$night"
op history jobs --history "$sdb" --format json
check "a specific name keeps its key (the app name)" python3 -c '
import json, sys
jobs = [j["job"] for j in json.load(open(sys.argv[1]))]
assert jobs == ["nightly-orders"], jobs
' "$tmp/out"
app "$tmp/n2.log" nightly-orders application_1_0006 com.acme.Nightly
op analyze -q --no-config --no-baseline --history "$sdb" "$tmp/n2.log"
op history jobs --history "$sdb"
check "...and a later run joins that job" has "$tmp/out" "2 runs .*nightly-orders$"

# real shells: each user's shell is its own job, never one "Spark shell"
if [ -n "$real" ] && [ -d "$real/spark" ]; then
    op normalize -q "$real/spark/local-1422981780767"
    check "real spark-shell log: the user joins the key" python3 -c '
import json, sys
r = json.load(open(sys.argv[1]))["runs"][0]
assert r["name"] == "Spark shell" and r["job"] == "Spark shell [user=irashid]", r
' "$tmp/out"
    op normalize -q "$real/spark/app-20161115172038-0000"
    check "...a shell run with -i: the script too" has "$tmp/out" \
        '"job": "Spark shell \[main=test-blacklist.scala, user=jose\]"'
else
    echo "NOTE: ../shared/real absent: the real spark-shell logs are not checked"
fi
finish
