return {
  id = "t.gc", title = "__gc", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    setmetatable({}, { __gc = function() while true do end end })
  end,
}
