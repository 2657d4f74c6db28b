-- Replaces string.format without pcall: the rule must fail.
return {
  id = "t.stdlib",
  title = "Modify the stdlib",
  severity = "info",
  sources = { "flink" },
  check = function(run, ctx)
    string.format = function() return "pwned" end
  end,
}
