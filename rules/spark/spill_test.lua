-- Tests of spark.spill (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
return { rule = "spark.spill", cases = {
  { name = "a shuffle stage spills 3x its data: more shuffle partitions, or more memory",
    inputs = { F .. "spill.zstd" },
    expect = { { node = "stage-1-0", severity = "warning",
                 message = "spilled 99.8 GiB from memory (22.7 GiB on disk)",
                 recommendation = "raise spark.executor.memory from 4g to 8g",
                 evidence = { tasks = 32, executor_cores = 4, spill_ratio = 3 },
                 changes = { { key = "spark.sql.shuffle.partitions", from = "64", to = "256" } } } } },
  { name = "Spark 1.6.1, 40 partitions from repartition(40): the code, not "
      .. "spark.sql.shuffle.partitions; 1.6's memory.fraction 0.75",
    inputs = { F .. "repartition-1.6.json" },
    expect = { { node = "stage-1-0",
                 recommendation = "change repartition(40) -> repartition(320) in the code (its 40 "
                   .. "partitions are not spark.sql.shuffle.partitions (200)",
                 evidence = { task_memory_bytes = 1551630336 },
                 changes = { { key = "spark.executor.memory", from = "8g", to = "16g" } } } } },
  { name = "a higher ratio threshold stays quiet",
    inputs = { F .. "spill.zstd" }, options = { min_ratio = 4 }, expect = {} },
  { name = "no spill, no finding", inputs = { F .. "healthy.zstd" }, expect = {} },
  { name = "GC pressure without spill stays quiet", inputs = { F .. "gc.zstd" }, expect = {} },
} }
