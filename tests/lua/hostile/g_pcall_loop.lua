-- pcall must not swallow the budget error.
return {
  id = "t.pcall_loop", title = "Loop under pcall", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    for _ = 1, 100 do
      pcall(function() while true do end end)
    end
    ctx.report { message = "escaped the budget" }
  end,
}
