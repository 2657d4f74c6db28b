-- Tests of spark.small-tasks (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
-- A Spark 1.6 RDD job reading 544 splits of 100 MiB (textFile), tasks of
-- med_ms each; its stage's input is split by the files' blocks.
local function splits_app(tasks, med_ms, version, sql)
  local nodes = {
    { id = "job-0", kind = "job", parents = {}, metrics = {}, attrs = { sql = sql } },
    { id = "stage-0-0", kind = "stage", name = "textFile at Load.scala:12", status = "succeeded",
      parents = {}, parallelism = tasks,
      metrics = { tasks = tasks, input_bytes = tasks * 100 * 2^20 },
      attrs = { job = "job-0", stage_id = "0" },
      dist = { executor_run_ms = { count = tasks, p50 = med_ms, max = med_ms },
               input_bytes = { count = tasks, max = 100 * 2^20 } } } }
  return { source = "spark", id = "app-rdd", engine_version = version or "1.6.1", config = {},
           metrics = { executor_cores_max = 64 }, nodes = nodes }
end

return { rule = "spark.small-tasks", cases = {
  { name = "a scan of 6000 small files: fewer partitions, at the defaults",
    inputs = { F .. "many-small-tasks.zstd" },
    expect = { { node = "stage-0-0", message = "ran 6,000 tasks with a median of 40 ms",
                 recommendation = "Use fewer, larger partitions",
                 evidence = { tasks = 6000, direction = "fewer" },
                 changes = { { key = "spark.sql.files.maxPartitionBytes", from = "128m",
                               to = "2g" } } } } },
  { name = "600 tiny shuffle tasks are spark.shuffle-partitions' (sized by bytes): quiet",
    inputs = { F .. "small-tasks.zstd" }, options = { many_tasks = 500 }, expect = {} },
  { name = "below DataFlint's 5000 tasks: quiet", inputs = { F .. "small-tasks.zstd" },
    expect = {} },
  { name = "8 tasks of 25 minutes on 16 cores: more partitions",
    inputs = { F .. "huge-tasks.zstd" },
    expect = { { node = "stage-1-0", message = "ran only 8 tasks with a median of 25m",
                 recommendation = "Use more, smaller partitions",
                 evidence = { tasks = 8, direction = "more", cores = 16 },
                 changes = { { key = "spark.sql.shuffle.partitions", from = "8", to = "112" } } } } },
  { name = "Spark 1.6.1, 40 huge tasks from repartition(40): edit the call, no key "
      .. "(spark.sql.shuffle.partitions does not control the stage)",
    inputs = { F .. "repartition-1.6.json" },
    expect = { { node = "stage-1-0", evidence = { tasks = 40, direction = "more" },
                 recommendation = "Use more, smaller partitions: repartition(40) -> "
                   .. "repartition(600) in the code" } } },
  { name = "Spark 1.6: 544 splits of 6-minute tasks: the read's minPartitions, never repartition() (issue #26)",
    inputs = { splits_app(544, 360000) },
    expect = { { recommendation = "read with minPartitions = 1344",
                 changes = { { target = "textFile at Load.scala:12", key = "minPartitions",
                               from = "544", to = "1344" } } } } },
  { name = "Spark 2.3 RDD read (no SQL execution): the split size too, not spark.sql.files.maxPartitionBytes",
    inputs = { splits_app(544, 360000, "2.3.0") },
    expect = { { changes = { { key = "minPartitions" } } } } },
  { name = "Spark 2.3 DataFrame scan of the same: spark.sql.files.maxPartitionBytes",
    inputs = { splits_app(544, 360000, "2.3.0", "sql-0") },
    expect = { { changes = { { key = "spark.sql.files.maxPartitionBytes" } } } } },
  { name = "Spark 1.6: 6000 tiny splits: a larger minimum split size",
    inputs = { splits_app(6000, 50) },
    expect = { { changes = { { key = "spark.hadoop.mapreduce.input.fileinputformat.split.minsize" } } } } },
  { name = "healthy task sizes stay quiet", inputs = { F .. "healthy.zstd" }, expect = {} },
} }
