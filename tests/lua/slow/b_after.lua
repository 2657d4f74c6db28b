return {
  id = "t.after_slow", title = "After slow", severity = "info", sources = { "*" },
  check = function(bundle, ctx)
    ctx.report { message = "still running" }
  end,
}
