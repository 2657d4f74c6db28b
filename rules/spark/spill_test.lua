-- Tests of spark.spill (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
-- A RAPIDS scan stage as in the real gpu_oom_eventlog: 8 GiB spilled, none
-- of it to disk (GPU memory moved to host memory).
local GIB = 1024 * 1024 * 1024
local function gpu_scan()
  return { source = "spark", id = "app-gpu", name = "nds", status = "succeeded",
    engine_version = "3.3.1", attrs = { accelerator = "gpu", platform = "standalone" },
    config = { ["spark.executor.memory"] = "16g", ["spark.executor.cores"] = "16",
               ["spark.rapids.sql.concurrentGpuTasks"] = "4",
               ["spark.sql.files.maxPartitionBytes"] = "10gb" },
    metrics = {},
    nodes = { { id = "stage-1-0", kind = "stage", name = "collect at q.py:131",
      status = "succeeded", parallelism = 16, parents = {}, attrs = { stage_id = "1" },
      metrics = { tasks = 16, input_bytes = 16 * GIB, memory_spill_bytes = 8 * GIB,
                  disk_spill_bytes = 0 } } } }
end

-- A Spark 1.5 RDD stage that spilled 6 GiB; 1.x logs no disk size.
local function old_spill()
  return { source = "spark", id = "app-15", name = "old", status = "succeeded",
    engine_version = "1.5.2", config = { ["spark.executor.memory"] = "4g" },
    metrics = {}, nodes = {
      { id = "job-0", kind = "job", parents = {}, metrics = {}, attrs = {} },
      { id = "stage-0-0", kind = "stage", name = "reduceByKey at Old.scala:9",
        status = "succeeded", parents = {}, parallelism = 8,
        metrics = { tasks = 8, memory_spill_bytes = 6 * 2^30, shuffle_read_bytes = 2 * 2^30 },
        attrs = { job = "job-0", stage_id = "0" }, dist = {} } } }
end

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
                 changes = { { target = "saveAsTextFile at Etl.scala:58", key = "numPartitions",
                               from = "40", to = "320" } } } } },
  { name = "Spark 1.5, no disk size in the log: says it is not recorded, never 'stayed in memory' (issue #26)",
    inputs = { (function()
      local r = old_spill()
      return r
    end)() },
    expect = { { message = "from memory (the disk size is not recorded by this Spark version)" } } },
  { name = "GPU app, 0 B on disk: says memory, advises RAPIDS tasks per GPU, not the heap",
    inputs = { gpu_scan() },
    expect = { { node = "stage-1-0",
                 message = "spilled 8 GiB from memory (0 B on disk: it stayed in memory)",
                 recommendation = "spark.rapids.sql.concurrentGpuTasks 4 -> 2",
                 evidence = { disk_spill_bytes = 0 },
                 changes = { { key = "spark.sql.files.maxPartitionBytes", from = "10gb" } } } } },
  { name = "a higher ratio threshold stays quiet",
    inputs = { F .. "spill.zstd" }, options = { min_ratio = 4 }, expect = {} },
  { name = "no spill, no finding", inputs = { F .. "healthy.zstd" }, expect = {} },
  { name = "GC pressure without spill stays quiet", inputs = { F .. "gc.zstd" }, expect = {} },
} }
