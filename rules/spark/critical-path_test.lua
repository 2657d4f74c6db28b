-- Tests of spark.critical-path (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"

-- One job whose single stage is one long task: one executor is as fast as
-- the four the app had (issue #19: "1 executor", no "(... with 1)" repeat).
local function one_task_app()
  return { source = "spark", id = "app-one", name = "one-task", status = "succeeded",
    started_at = 1700000000000, ended_at = 1700000130000, duration_ms = 130000,
    engine_version = "3.5.1", config = { ["spark.executor.cores"] = "4" },
    metrics = { executors_max = 4, jobs_wall_ms = 120000, driver_ms = 10000 },
    nodes = {
      { id = "job-0", kind = "job", started_at = 1700000005000, ended_at = 1700000125000,
        parents = {}, metrics = {}, attrs = {} },
      { id = "stage-0-0", kind = "stage", status = "succeeded", parents = {},
        started_at = 1700000005000, ended_at = 1700000125000,
        metrics = { executor_run_ms = 123000 }, attrs = { job = "job-0" },
        dist = { executor_run_ms = { 1000, 1000, 1000, 120000 } } },
    } }
end

-- The same app on a platform (run attrs from spark-read), or with a job
-- whose stage ran only the first half of it: the other half the driver
-- worked between stages, which task times cannot show.
local function on(platform, config)
  local run = one_task_app()
  run.attrs = { platform = platform }
  for k, v in pairs(config or {}) do
    run.config[k] = v
  end
  return run
end

local function gap_app()
  local run = one_task_app()
  local st = run.nodes[2]
  st.ended_at = 1700000065000
  st.metrics.executor_run_ms = 63000
  st.dist.executor_run_ms = { 1000, 1000, 1000, 60000 }
  return run
end

return { rule = "spark.critical-path", cases = {
  { name = "16-task stages on 20 executors: 3 would do; the driver works alone 61%",
    inputs = { F .. "idle.zstd" },
    expect = {
      { severity = "warning", message = "3 executors would finish about as fast as the 20",
        evidence = { executors = 20, ideal_executors = 3, executor_cores = 4 },
        changes = { { key = "spark.executor.instances", from = "20", to = "3" } } },
      -- one cluster shape (issue #26): the fixed count is kept, dynamic
      -- allocation is dropped with a note
      { severity = "info", message = "[Not proposed: spark.dynamicAllocation.enabled = true, "
          .. "because spark.critical-path proposes spark.executor.instances = 3 instead (one "
          .. "cluster shape, not both) and is kept: it is more severe.]",
        evidence = { driver_share = 0.611 }, changes = {} },
    } },
  { name = "driver-heavy app: driver time, not executors",
    inputs = { F .. "driver-heavy.zstd" },
    expect = { { severity = "info", message = "The driver worked alone for 95.6%" } } },
  { name = "one executor would do: singular, and no estimate repeated",
    inputs = { one_task_app() },
    expect = { { severity = "warning",
      message = "1 executor would finish about as fast as the 4 the app had: the jobs are "
        .. "estimated at 2m 00s with 4 and 2m 00s with 1; the critical path",
      recommendation = "The other 3 executors mostly waited",
      evidence = { ideal_executors = 1 } } } },
  { name = "the model misses half the measured job time (driver work between stages): "
      .. "says what it misses, proposes no executor count",
    inputs = { gap_app() },
    expect = { { severity = "info",
      message = "The task-time model puts the jobs at 1m 00s with the app's 4 executors, but "
        .. "they took 2m 00s (50% off, beyond the 25% tolerance): it misses 1m 00s when no "
        .. "stage ran (driver work between stages and jobs, job scheduling).",
      recommendation = "No executor count is proposed",
      evidence = { estimated_jobs_ms = 60000, measured_jobs_ms = 120000, stage_gap_ms = 60000,
                   model_tolerance = 0.25 } } } },
  { name = "a looser model tolerance trusts the same model: 1 executor",
    inputs = { gap_app() }, options = { model_tolerance = 0.6 },
    expect = { { severity = "warning", evidence = { ideal_executors = 1 } } } },
  { name = "Databricks: the cluster's num_workers, not spark.executor.instances",
    inputs = { on("databricks", {
      ["spark.databricks.clusterUsageTags.clusterScalingType"] = "fixed_size",
      ["spark.databricks.clusterUsageTags.clusterWorkers"] = "4" }) },
    expect = { { severity = "warning", recommendation = "set the cluster's num_workers from 4 to 1 "
        .. "(Databricks runs one executor per worker",
      changes = { { target = "cluster", key = "num_workers", from = "4", to = "1" } } } } },
  { name = "Databricks autoscaling: autoscale.max_workers",
    inputs = { on("databricks", {
      ["spark.databricks.clusterUsageTags.clusterScalingType"] = "autoscaling",
      ["spark.databricks.clusterUsageTags.clusterMaxWorkers"] = "8" }) },
    expect = { { changes = { { target = "cluster", key = "autoscale.max_workers", from = "8",
                               to = "1" } } } } },
  { name = "EMR: the Spark key (dynamic allocation is EMR's default: maxExecutors), and the instance groups said",
    inputs = { on("emr") },
    expect = { { recommendation = "on EMR also shrink the core/task instance groups",
                 changes = { { key = "spark.dynamicAllocation.maxExecutors", to = "1",
                               choice = "dynamic" } } } } },
  { name = "EMR with dynamic allocation switched off: spark.executor.instances",
    inputs = { (function()
      local r = on("emr")
      r.config["spark.dynamicAllocation.enabled"] = "false"
      return r
    end)() },
    expect = { { changes = { { key = "spark.executor.instances", to = "1", choice = "fixed" } } } } },
  { name = "local mode: no executor count, no allocation (issue #26)",
    inputs = { on("local") }, expect = {} },
  { name = "GPU (RAPIDS): no executor count from CPU task time (issue #26)",
    inputs = { (function()
      local r = on("standalone")
      r.attrs.accelerator = "gpu"
      return r
    end)() },
    expect = {} },
  { name = "Kubernetes: the key, and what each pod requests",
    inputs = { on("kubernetes") },
    expect = { { recommendation = "each executor is a pod requesting "
        .. "spark.kubernetes.executor.request.cores" } } },
  { name = "executors that all pay off, little driver time: quiet",
    inputs = { F .. "healthy.zstd" }, expect = {} },
} }
