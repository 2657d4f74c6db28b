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

return { rule = "spark.critical-path", cases = {
  { name = "16-task stages on 20 executors: 3 would do; the driver works alone 61%",
    inputs = { F .. "idle.zstd" },
    expect = {
      { severity = "warning", message = "3 executors would finish about as fast as the 20",
        evidence = { executors = 20, ideal_executors = 3, executor_cores = 4 },
        changes = { { key = "spark.executor.instances", from = "20", to = "3" } } },
      { severity = "info", message = "The driver worked alone for 61.1%",
        evidence = { driver_share = 0.611 },
        changes = { { key = "spark.dynamicAllocation.enabled", from = "false", to = "true" } } },
    } },
  { name = "driver-heavy app: driver time, not executors",
    inputs = { F .. "driver-heavy.zstd" },
    expect = { { severity = "info", message = "The driver worked alone for 95.6%" } } },
  { name = "one executor would do: singular, and no estimate repeated",
    inputs = { one_task_app() },
    expect = { { severity = "warning",
      message = "1 executor would finish about as fast as the 4 the app had: the jobs are "
        .. "estimated at 2m 00s with 4 and 2m 00s with 1; the critical path",
      recommendation = "the other 3 executors mostly waited",
      evidence = { ideal_executors = 1 } } } },
  { name = "executors that all pay off, little driver time: quiet",
    inputs = { F .. "healthy.zstd" }, expect = {} },
} }
