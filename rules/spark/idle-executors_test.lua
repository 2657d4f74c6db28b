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
  { name = "20 static executors 94% idle: 2 executors, one shape (dynamic allocation named, not proposed)",
    inputs = { F .. "idle.zstd" },
    expect = { { severity = "warning", message = "93.9% of the allocated cores sat idle",
                 recommendation = "The alternative, not proposed with it (one cluster shape): enable dynamic allocation",
                 evidence = { executors = 20, idle_ratio = 0.939, dynamic_allocation = false },
                 changes = { { key = "spark.executor.instances", from = "20", to = "2",
                               group = "cluster shape", choice = "fixed" } } } } },
  { name = "Databricks: workers, not spark.executor.instances, and not autoscaling too (issue #26)",
    inputs = { databricks() },
    expect = { { recommendation = "set the cluster's num_workers from 8 to 1",
                 changes = { { target = "cluster", key = "num_workers", from = "8", to = "1",
                               group = "cluster shape", choice = "fixed" } } } } },
  { name = "local mode: no executors, nothing to size (issue #26)",
    inputs = { (function()
      local r = databricks()
      r.attrs = { platform = "local", cluster_manager = "local" }
      r.config = {}
      return r
    end)() },
    expect = {} },
  { name = "GPU (RAPIDS) app: idle CPU cores are said, no executor count (issue #26)",
    inputs = { (function()
      local r = databricks()
      r.attrs = { platform = "standalone", accelerator = "gpu" }
      return r
    end)() },
    expect = { { severity = "info", recommendation = "No executor count or allocation change is proposed: the app ran on GPUs",
                 evidence = { sizing_withheld = "gpu" }, changes = {} } } },
  { name = "the task-time model misses the measured job time (spark.critical-path's mark): no count either (issue #26)",
    inputs = { (function()
      local r = databricks()
      r.metrics.jobs_wall_ms = 600000 -- the model (below) puts the jobs at 10 s
      r.nodes = {
        { id = "job-0", kind = "job", parents = {}, metrics = {}, attrs = {},
          started_at = 0, ended_at = 600000 },
        { id = "stage-0-0", kind = "stage", status = "succeeded", parents = {},
          started_at = 0, ended_at = 600000, metrics = { executor_run_ms = 1000000 },
          attrs = { job = "job-0" }, dist = { executor_run_ms = { count = 100, max = 10000 } } } }
      return r
    end)() },
    expect = { { severity = "info", recommendation = "the task-time model puts the jobs at 10",
                 evidence = { sizing_withheld = "model" }, changes = {} } } },
  { name = "a stricter idle threshold stays quiet",
    inputs = { F .. "idle.zstd" }, options = { max_idle_ratio = 0.95 }, expect = {} },
  { name = "busy executors stay quiet", inputs = { F .. "healthy.zstd" }, expect = {} },
} }
