return {
  id = "t.rep", title = "string.rep bomb", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    local s = ("x"):rep(1 << 30)
    ctx.report { message = "got " .. #s }
  end,
}
