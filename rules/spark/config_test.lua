-- Tests of spark.config (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
return { rule = "spark.config", cases = {
  { name = "dynamic allocation without shuffle service; Java serializer on 5 GiB of "
      .. "DataFrame/SQL shuffle: no Kryo advice (SQL shuffles do not use it)",
    inputs = { F .. "bad-config.zstd" },
    expect = {
      { severity = "warning", message = "Dynamic allocation is on but neither",
        changes = { { key = "spark.shuffle.service.enabled", from = "false", to = "true" } } },
    } },
  { name = "Java serializer on an RDD app (Spark 1.6.1) that shuffled 120 GiB: Kryo",
    inputs = { F .. "repartition-1.6.json" },
    expect = {
      { severity = "info", message = "its RDD code shuffled 120 GiB.",
        evidence = { rdd_shuffle_write_bytes = 128849018880 },
        changes = { { key = "spark.serializer",
                      from = "org.apache.spark.serializer.JavaSerializer",
                      to = "org.apache.spark.serializer.KryoSerializer" } } },
    } },
  { name = "Kryo, static allocation, AQE on: quiet", inputs = { F .. "healthy.zstd" },
    expect = {} },
  { name = "AQE off on a SQL app with one query: singular (issue #19)",
    inputs = { { source = "spark", id = "app-aqe", engine_version = "3.5.1",
                 config = { ["spark.sql.adaptive.enabled"] = "false",
                            ["spark.serializer"] = "org.apache.spark.serializer.KryoSerializer" },
                 metrics = { sql_executions = 1 } } },
    expect = { { severity = "info", message = "on a SQL app with 1 query.",
                 changes = { { key = "spark.sql.adaptive.enabled", from = "false", to = "true" } } } } },
} }
