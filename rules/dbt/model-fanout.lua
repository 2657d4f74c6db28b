-- dbt.model-fanout: a model read by many leaf models (models nothing else
-- reads): each leaf scans the parent again in full, usually to slice it
-- for one report (dbt-project-evaluator fct_model_fanout).
-- docs/rules/dbt.model-fanout.md
local du = require "dbtutil"

local function leaf(run, n)
  for _, cid in ipairs(n.children) do
    local c = run.by_id[cid]
    if c and (c.kind == "model" or c.kind == "exposure" or c.kind == "snapshot") then
      return false
    end
  end
  return true
end

return {
  id = "dbt.model-fanout",
  title = "A model read by many leaf models",
  severity = "info",
  sources = { "dbt" },
  tags = { "performance", "modeling" },
  description = "Needs manifest.json (the DAG).",
  options = {
    min_leaves = 4,   -- direct leaf children (dbt-project-evaluator: more than 3)
    max_reports = 5,
  },
  check = function(run, ctx)
    local o = ctx.options
    if not du.has_dag(run) then
      return
    end
    local found = {}
    for _, n in ipairs(run.nodes) do
      if n.kind == "model" then
        local leaves = {}
        for _, c in ipairs(du.model_children(run, n)) do
          if leaf(run, c) then
            leaves[#leaves + 1] = c
          end
        end
        if #leaves >= o.min_leaves then
          found[#found + 1] = { n = n, leaves = leaves }
        end
      end
    end
    du.largest_first(found, function(f) return #f.leaves end, function(f) return f.n.id end)
    for i = 1, math.min(#found, o.max_reports) do
      local f = found[i]
      local names = du.names(f.leaves)
      ctx.report {
        node = f.n.id,
        message = ("%s is read by %s that nothing else reads (%s): each scans %s again "
          .. "in full every build."):format(du.name(f.n), du.plural(#f.leaves, "leaf model"),
          du.list(names, 5), du.name(f.n)),
        recommendation = ("Fold the %d leaf models into one model over %s (one scan, the "
          .. "slices as columns or a grain column), or move the slicing to the BI tool or the "
          .. "semantic layer; keep separate models only where their consumers need a table "
          .. "each."):format(#f.leaves, du.target(f.n)),
        evidence = { leaf_children = #f.leaves, leaves = table.concat(names, ", "),
                     materialized = du.mat(f.n) },
      }
    end
  end,
}
