-- dbt.rejoined-concepts: a model that reads a parent and a child of that
-- parent, where the child exists only for it (dbt-project-evaluator
-- fct_rejoining_of_upstream_concepts): the parent is scanned twice in one
-- query and the child is a model that needs building for nothing else.
-- docs/rules/dbt.rejoined-concepts.md
local du = require "dbtutil"

return {
  id = "dbt.rejoined-concepts",
  title = "A model rejoins an upstream model through a single-use child",
  severity = "info",
  sources = { "dbt" },
  tags = { "performance", "modeling" },
  description = "Needs manifest.json (the DAG).",
  options = { max_reports = 5 },
  check = function(run, ctx)
    if not du.has_dag(run) then
      return
    end
    local found = {}
    for _, g in ipairs(run.nodes) do
      if g.kind == "model" then
        local direct = {}
        for _, pid in ipairs(g.parents) do
          direct[pid] = true
        end
        for _, cid in ipairs(g.parents) do
          local c = run.by_id[cid]
          -- c is read by g alone and reads a parent g reads as well
          if c and c.kind == "model" and #du.model_children(run, c) == 1 then
            for _, pid in ipairs(c.parents) do
              local p = run.by_id[pid]
              if direct[pid] and p and p.kind == "model" then
                found[#found + 1] = { g = g, c = c, p = p }
              end
            end
          end
        end
      end
    end
    table.sort(found, function(a, b)
      if a.g.id ~= b.g.id then
        return a.g.id < b.g.id
      end
      return a.c.id < b.c.id
    end)
    for i = 1, math.min(#found, ctx.options.max_reports) do
      local f = found[i]
      ctx.report {
        node = f.g.id,
        message = ("%s reads %s and %s, which reads %s too and exists only for %s: %s is "
          .. "read twice by one query, and %s is a %s built for one reader."):format(
          du.name(f.g), du.name(f.p), du.name(f.c), du.name(f.p), du.name(f.g), du.name(f.p),
          du.name(f.c), du.mat(f.c) or "model"),
        recommendation = ("Move %s's logic into %s as a CTE (or the other way round), so %s "
          .. "is read once and one model fewer is built."):format(du.target(f.c),
          du.target(f.g), du.name(f.p)),
        evidence = { model = du.name(f.g), upstream = du.name(f.p), single_use = du.name(f.c),
                     single_use_materialized = du.mat(f.c) },
      }
    end
  end,
}
