-- The bundle holds only the newest run of a history.
return {
  id = "h.bundle", title = "History in the bundle", severity = "info", sources = { "*" },
  check = function(bundle, ctx)
    local ids = {}
    for i, r in ipairs(bundle.runs) do ids[i] = r.id .. ":" .. #r.history end
    ctx.report { message = table.concat(ids, ",") }
  end,
}
