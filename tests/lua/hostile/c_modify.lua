-- Writes to the model without pcall: the rule must fail with an error.
return {
  id = "t.modify",
  title = "Modify the model",
  severity = "info",
  sources = { "flink" },
  check = function(run, ctx)
    run.metrics.checkpoints = 0
    ctx.report { message = "the model was modified" }
  end,
}
