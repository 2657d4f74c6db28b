return {
  id = "t.loop", title = "Infinite loop", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    while true do end
  end,
}
