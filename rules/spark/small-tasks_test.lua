-- Tests of spark.small-tasks (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
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
  { name = "healthy task sizes stay quiet", inputs = { F .. "healthy.zstd" }, expect = {} },
} }
