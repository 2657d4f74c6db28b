return {
  id = "t.after_stall", title = "After stall", severity = "info", sources = { "*" },
  check = function(bundle, ctx)
    ctx.report { message = "still running" }
  end,
}
