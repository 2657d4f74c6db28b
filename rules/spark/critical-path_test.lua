-- Tests of spark.critical-path (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
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
  { name = "executors that all pay off, little driver time: quiet",
    inputs = { F .. "healthy.zstd" }, expect = {} },
} }
