return {
  id = "t.grow", title = "Table growth", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    local t = {}
    for i = 1, 1e9 do t[i] = { i } end
    ctx.report { message = "got " .. #t }
  end,
}
