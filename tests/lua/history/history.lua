-- Runs once, for the newest run of the history; sees the older ones.
return {
  id = "h.history", title = "History", severity = "info", sources = { "dbt" },
  check = function(run, ctx)
    local ids = {}
    for i, h in ipairs(run.history) do
      ids[i] = h.id .. (h.superseded and "*" or "")
    end
    ctx.report {
      message = run.id .. " after " .. table.concat(ids, ","),
      evidence = { key = run.history_key, superseded = run.superseded == true,
                   node_status = run.by_id.m1.raw_status },
    }
  end,
}
