-- A plain error: reported with file, line and traceback.
return {
  id = "t.error", title = "Error", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    error("boom at " .. run.id)
  end,
}
