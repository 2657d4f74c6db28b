-- Tests of spark.gc (fixtures/spark/gen_eventlog.py, make_fixtures.sh).
local F = "../../fixtures/spark/"
return { rule = "spark.gc", cases = {
  { name = "a third of task time in GC: more heap per task",
    inputs = { F .. "gc.zstd" },
    expect = { { severity = "warning", node = "stage-1-0",
                 message = "Tasks spent 31.9% of their run time in garbage collection",
                 recommendation = "lower spark.executor.cores from 4 to 2",
                 evidence = { gc_ratio = 0.319, worst_stage = "stage-1-0" },
                 changes = { { key = "spark.executor.memory", from = "8g", to = "10g" } } } } },
  { name = "below the floor of task time: quiet",
    inputs = { F .. "gc.zstd" }, options = { min_run_ms = 3600000 }, expect = {} },
  { name = "2% GC stays quiet", inputs = { F .. "healthy.zstd" }, expect = {} },
} }
