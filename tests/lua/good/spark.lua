-- Runs once per spark run and never for the flink one.
return {
  id = "t.spark",
  title = "Spark only",
  severity = "info",
  sources = { "spark" },
  check = function(run, ctx)
    ctx.report { message = "spark " .. run.id }
  end,
}
