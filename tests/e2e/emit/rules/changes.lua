-- emit.changes: a test rule for `analyze --emit-changes` (tests/e2e/
-- emit_changes.sh). Every node with attrs.key reports one change built from
-- its attrs (to/from are numbers when attrs.numeric is set); attrs.level =
-- "run" reports it about the whole run. One finding per node, in node order.
local function value(v, numeric)
  if v and numeric then
    return math.tointeger(tonumber(v)) or tonumber(v)
  end
  return v
end

return {
  id = "emit.changes",
  title = "Test changes",
  severity = "warning",
  sources = { "*" },
  check = function(bundle, ctx)
    for _, run in ipairs(bundle.runs) do
      for _, n in ipairs(run.nodes) do
        local a = n.attrs
        if a.key then
          ctx.report {
            run = run,
            node = a.level ~= "run" and n.id or nil,
            message = a.message or ("change " .. a.key),
            severity = a.severity,
            changes = { { target = a.target, key = a.key,
                          from = value(a.from, a.numeric), to = value(a.to, a.numeric) } },
          }
        end
      end
    end
  end,
}
