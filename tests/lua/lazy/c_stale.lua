-- Keeps tables of the first model in its upvalues and reads them when the
-- ruleset runs over the next one (that model is freed by then): they hold
-- what was built and nothing more, and never reach into freed memory
-- (ASan, valgrind). The spark run app-1: no other rule of the pack reads it.
local saved
return {
  id = "l.stale",
  title = "Tables kept from an earlier model",
  severity = "info",
  sources = { "*" },
  check = function(bundle, ctx)
    if not saved then
      local run = bundle.runs[2]
      saved = { nodes = run.nodes, by_id = run.by_id, series = run.series,
                node = run.nodes[1] }
      ctx.report { message = "saved" }
      return
    end
    local n = 0
    for _ in pairs(saved.by_id) do n = n + 1 end
    local ok = saved.node.id == "stage-1" and saved.node.metrics == nil and
      #saved.nodes == 1 and saved.nodes[1] == saved.node and n == 0 and
      next(saved.series) == nil and rawlen(saved.nodes) == 1
    ctx.report { message = ok and "stale ok" or "stale tables changed" }
  end,
}
