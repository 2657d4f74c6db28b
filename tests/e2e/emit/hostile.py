#!/usr/bin/env python3
"""Writes OUT (argv[1]): a model (normalize's format) whose ids, keys and
values try to add lines of their own to an emitted patch, for
tests/e2e/emit_changes.sh. Raw bytes (broken UTF-8) cannot go through
json.dumps, so the file is assembled as bytes."""
import json
import sys

EVIL_ID = "x:1\nenv.java.opts.all: -javaagent:/tmp/evil.jar\n#"
HEX = "a1b2c3d4e5f60718293a4b5c6d7e8f90"


def node(i, key, to, node_id=None, numeric=False, level=None):
    attrs = {"key": key, "to": to, "message": "case %d" % i}
    if numeric:
        attrs["numeric"] = "1"
    if level:
        attrs["level"] = level
    return {"id": node_id or "n%02d" % i, "attrs": attrs}


flink = [
    node(1, "parallelism", "16", node_id=EVIL_ID, numeric=True),  # refused by the builder
    node(2, "parallelism", "16", node_id="x:1 env.java.opts.all", numeric=True),
    node(3, "parallelism", "16\nenv.java.opts.all: -javaagent:/tmp/evil.jar",
         node_id=HEX),
    node(4, "parallelism", "0", node_id=HEX.replace("a1", "b2"), numeric=True),
    node(5, "parallelism", "40000", node_id=HEX.replace("a1", "c3"), numeric=True),
    node(6, "parallelism", "8", node_id=HEX.replace("a1", "d4"), numeric=True),
    node(7, "pipeline.name\nenv.java.opts.all", "-javaagent:/tmp/evil.jar", level="run"),
    node(8, "execution.checkpointing.interval=10s", "10s", level="run"),
    node(9, "state.backend.\u00e9", "rocksdb", level="run"),
    # not pipeline.name: case 12 sets that, and one run's findings never
    # set one key to two values (core/findings.c reconciles them)
    node(10, "pipeline.classpaths", "a\u0085env.java.opts.all: x", level="run"),
    node(11, "pipeline.jars", "x\u2028env.java.opts.all: x", level="run"),
    node(12, "pipeline.name", "fine # not a comment", level="run"),
]
spark = [
    node(1, "spark.a\nspark.driver.extraJavaOptions", "-javaagent:/tmp/evil.jar", level="run"),
    node(2, "spark.executor.memory=8g", "8g", level="run"),
    node(3, "spark.executor memory", "8g", level="run"),
    node(4, "spark.ex\u00e9cutor.memory", "8g", level="run"),
    node(5, "spark.executor.cores", "4\r\nspark.driver.extraJavaOptions -javaagent:x",
         level="run"),
    node(6, "spark.local.dir", "C:\\tmp\\", level="run"),
    node(7, "spark.app.name", "BROKEN", level="run"),
]


def model(i, name, key, to, sql=None):
    n = node(i, key, to, node_id="model.shop." + name)
    n["name"] = name
    n["attrs"]["target"] = "models/%s.sql" % (sql or name)
    return n


dbt = [
    model(1, "a", "materialized\n  - name: evil", "table"),
    model(2, "b", "materialized", "table", sql="b\u2028c"),
    model(3, "c", "materialized", "table\n  - name: evil"),
    model(4, "d", "materialized", "table"),
]
other = [node(1, "retries\nretries", "3", level="run")]
doc = {"schema": 1, "runs": [
    {"source": "dbt", "id": "inv-hostile", "name": "hostile", "nodes": dbt},
    {"source": "airflow", "id": "dag-hostile", "name": "hostile", "nodes": other},
    {"source": "flink", "id": "f0hostile", "name": "hostile", "nodes": flink},
    {"source": "spark", "id": "application_9_0001", "name": "hostile", "nodes": spark},
]}
data = json.dumps(doc, ensure_ascii=False, indent=1).encode()
data = data.replace(b"BROKEN", b"br\xffoken")  # broken UTF-8 in a value
with open(sys.argv[1], "wb") as f:
    f.write(data)
