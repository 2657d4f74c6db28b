return {
  id = "t.badreport2", title = "Bad report", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    ctx.report { message = "unknown node", node = "nope" }
  end,
}
