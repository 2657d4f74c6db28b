-- Tests of spark.config (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
-- A Spark 3.1 SQL app that sets no AQE key; attrs, metrics and config
-- are added to it.
local function aqe_app(attrs, metrics, config)
  local c = { ["spark.serializer"] = "org.apache.spark.serializer.KryoSerializer" }
  for k, v in pairs(config or {}) do
    c[k] = v
  end
  local m = { sql_executions = 2 }
  for k, v in pairs(metrics or {}) do
    m[k] = v
  end
  return { source = "spark", id = "app-31", engine_version = "3.1.2", attrs = attrs or {},
           config = c, metrics = m }
end

-- A job without an SQL execution id whose stage wrote 2 GiB of shuffle;
-- sql_exchange: its RDDs are in an SQL Exchange scope.
local function exchange_app(sql_exchange)
  return { source = "spark", id = "app-x", engine_version = "3.1.2",
    config = { ["spark.sql.adaptive.enabled"] = "true" }, metrics = {},
    nodes = {
      { id = "job-0", kind = "job", parents = {}, metrics = {}, attrs = {} },
      { id = "stage-0-0", kind = "stage", status = "succeeded", parents = {},
        metrics = { shuffle_write_bytes = 2 * 2^30 },
        attrs = { job = "job-0", stage_id = "0", sql_exchange = sql_exchange } } } }
end

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
  { name = "AQE unset on Spark 3.1 (Apache default false): fires, the value's source said",
    inputs = { aqe_app() },
    expect = { { message = "spark.sql.adaptive.enabled = false, the default before Spark 3.2",
                 evidence = { sources = { ["spark.sql.adaptive.enabled"] = "default" } } } } },
  { name = "AQE unset on a Databricks 3.1 runtime: on by the platform's default, quiet (issue #26)",
    inputs = { aqe_app({ platform = "databricks" }) }, expect = {} },
  { name = "AQE unset, the log has SQLAdaptiveExecutionUpdate events: inferred on, quiet (issue #26)",
    inputs = { aqe_app(nil, { sql_adaptive_updates = 6 }) }, expect = {} },
  { name = "AQE switched off explicitly on Databricks: fires, source set",
    inputs = { aqe_app({ platform = "databricks" }, nil, { ["spark.sql.adaptive.enabled"] = "false" }) },
    expect = { { evidence = { sources = { ["spark.sql.adaptive.enabled"] = "set" } } } } },
  { name = "EMR: dynamic allocation and the shuffle service are EMR's defaults: no dynamic-allocation finding",
    inputs = { aqe_app({ platform = "emr" }, nil, { ["spark.sql.adaptive.enabled"] = "true" }) },
    expect = {} },
  { name = "local mode with dynamic allocation set: no executors, no shuffle-storage advice (issue #26)",
    inputs = { aqe_app({ platform = "local", cluster_manager = "local" }, nil,
      { ["spark.sql.adaptive.enabled"] = "true", ["spark.master"] = "local[*]",
        ["spark.dynamicAllocation.enabled"] = "true" }) },
    expect = {} },
  { name = "the same on YARN: the shuffle service",
    inputs = { aqe_app({ platform = "yarn" }, nil,
      { ["spark.sql.adaptive.enabled"] = "true", ["spark.master"] = "yarn",
        ["spark.dynamicAllocation.enabled"] = "true" }) },
    expect = { { changes = { { key = "spark.shuffle.service.enabled", to = "true" } } } } },
  { name = "Kryo: RDD-looking stages in an SQL Exchange scope (no SQL execution id, Databricks) "
      .. "are SQL shuffles: quiet (issue #26)",
    inputs = { exchange_app("true") }, expect = {} },
  { name = "Kryo: the same 2 GiB from an RDD shuffle: Kryo proposed",
    inputs = { exchange_app(nil) },
    expect = { { message = "its RDD code shuffled 2 GiB" } } },
} }
