return {
  id = "t.strmeta", title = "String metatable", severity = "info", sources = { "flink" },
  check = function(run, ctx)
    getmetatable("").__index = { upper = function() return "pwned" end }
  end,
}
