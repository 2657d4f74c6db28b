-- The next rule of the pack sees the very same tables.
return {
  id = "l.later",
  title = "Lazy tables are built once",
  severity = "info",
  sources = { "flink" },
  check = function(run, ctx)
    local ok = run.nodes[1] == run.by_id.src and run.nodes[2].metrics == run.by_id.map.metrics
      and #run.nodes[2].parents == 1 and run.nodes[2].parents[1] == "src"
    ctx.report { message = ok and "same tables" or "tables differ" }
  end,
}
