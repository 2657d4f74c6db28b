-- Tests of spark.idle-executors (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
-- A Databricks app of 8 fixed workers whose cores were 94% idle (the
-- real databricks_example_1 has this shape).
local function databricks()
  return { source = "spark", id = "app-db", name = "Databricks Shell", status = "succeeded",
    engine_version = "3.1.2", attrs = { platform = "databricks" },
    config = { ["spark.databricks.clusterUsageTags.clusterScalingType"] = "fixed_size",
               ["spark.databricks.clusterUsageTags.clusterWorkers"] = "8",
               ["spark.executor.cores"] = "32" },
    metrics = { executor_core_ms = 8 * 32 * 3600000, task_time_ms = 16 * 3600000,
                executors_added = 8, executors_max = 8 },
    nodes = {} }
end

return { rule = "spark.idle-executors", cases = {
  { name = "20 static executors 94% idle: 2 executors or dynamic allocation",
    inputs = { F .. "idle.zstd" },
    expect = { { severity = "warning", message = "93.9% of the allocated cores sat idle",
                 recommendation = "Run with 2 executors instead of 20",
                 evidence = { executors = 20, idle_ratio = 0.939, dynamic_allocation = false },
                 changes = { { key = "spark.executor.instances", from = "20", to = "2" },
                             { key = "spark.dynamicAllocation.enabled", from = "false", to = "true" } } } } },
  { name = "Databricks: workers and autoscaling, not spark.executor.instances or dynamic allocation",
    inputs = { databricks() },
    expect = { { recommendation = "set the cluster's num_workers from 8 to 1",
                 changes = { { target = "cluster", key = "num_workers", from = "8", to = "1" },
                             { target = "cluster", key = "autoscale.min_workers", to = "1" } } } } },
  { name = "a stricter idle threshold stays quiet",
    inputs = { F .. "idle.zstd" }, options = { max_idle_ratio = 0.95 }, expect = {} },
  { name = "busy executors stay quiet", inputs = { F .. "healthy.zstd" }, expect = {} },
} }
