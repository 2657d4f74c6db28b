-- Every field of ctx.report, both call forms, a severity override.
return {
  id = "t.report",
  title = "Reports",
  severity = "warning",
  sources = { "flink" },
  description = "Exercises every report field.",
  check = function(run, ctx)
    ctx.report {
      node = "map",
      message = "map is busy at 97%",
      recommendation = "raise its parallelism",
      evidence = { zeta = 1, alpha = "a", mid = true, nested = { b = 2, a = 1 },
                   list = { 3, 2, 1 }, nan = 0 / 0, ratio = 0.5, [7] = "seven" },
      changes = { { target = "Map", key = "parallelism", from = 4, to = 7 } },
      impact = { time_saved_ms = 1500 },
    }
    ctx:report { node = run.by_id.src, message = "method form", severity = "error" }
    ctx.report { message = "run level", evidence = run.by_id.map.metrics }
  end,
}
