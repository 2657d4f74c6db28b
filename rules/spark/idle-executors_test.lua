-- Tests of spark.idle-executors (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
return { rule = "spark.idle-executors", cases = {
  { name = "20 static executors 94% idle: 2 executors or dynamic allocation",
    inputs = { F .. "idle.zstd" },
    expect = { { severity = "warning", message = "93.9% of the allocated cores sat idle",
                 recommendation = "Run with 2 executors instead of 20",
                 evidence = { executors = 20, idle_ratio = 0.939, dynamic_allocation = false },
                 changes = { { key = "spark.executor.instances", from = "20", to = "2" },
                             { key = "spark.dynamicAllocation.enabled", from = "false", to = "true" } } } } },
  { name = "a stricter idle threshold stays quiet",
    inputs = { F .. "idle.zstd" }, options = { max_idle_ratio = 0.95 }, expect = {} },
  { name = "busy executors stay quiet", inputs = { F .. "healthy.zstd" }, expect = {} },
} }
