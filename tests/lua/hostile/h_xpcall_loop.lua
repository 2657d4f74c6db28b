-- Neither may xpcall with a looping handler.
return {
  id = "t.xpcall_loop", title = "Loop under xpcall", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    for _ = 1, 100 do
      xpcall(function() while true do end end, function(e) while true do end end)
    end
    ctx.report { message = "escaped the budget" }
  end,
}
