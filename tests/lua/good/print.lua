-- print and ctx.log go to stderr, prefixed with the rule id.
return {
  id = "t.print",
  title = "Print",
  severity = "info",
  sources = { "flink" },
  check = function(run, ctx)
    print("hello", 42, nil)
    ctx.log("via ctx.log")
    ctx:log("via ctx:log")
  end,
}
