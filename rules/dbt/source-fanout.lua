-- dbt.source-fanout: a source read directly by several models, i.e. a
-- missing staging model (dbt-project-evaluator fct_source_fanout,
-- fct_direct_join_to_source): each of them scans the raw table and repeats
-- its renames, casts and filters. Static runs only: sources are nodes
-- there (docs/model-dbt.md "Manifest alone").
-- docs/rules/dbt.source-fanout.md
local du = require "dbtutil"

return {
  id = "dbt.source-fanout",
  title = "A source read directly by many models (no staging model)",
  severity = "info",
  sources = { "dbt" },
  tags = { "performance", "modeling" },
  description = "Needs a manifest without timings (a manifest alone or docs generate).",
  options = { min_models = 2, max_reports = 5 },
  check = function(run, ctx)
    local o = ctx.options
    if not du.static(run) then
      return
    end
    local found = {}
    for _, s in ipairs(run.nodes) do
      if s.kind == "source" then
        local readers = du.model_children(run, s)
        if #readers >= o.min_models then
          found[#found + 1] = { s = s, readers = readers }
        end
      end
    end
    du.largest_first(found, function(f) return #f.readers end, function(f) return f.s.id end)
    for i = 1, math.min(#found, o.max_reports) do
      local f = found[i]
      local names = du.names(f.readers)
      local tbl = du.name(f.s):match("([^.]+)$") or du.name(f.s)
      ctx.report {
        node = f.s.id,
        message = ("Source %s is read directly by %s (%s): each scans the raw table and "
          .. "repeats its renames and casts."):format(du.name(f.s),
          du.plural(#f.readers, "model"), du.list(names, 5)),
        recommendation = ("Add a staging model stg_%s (a view selecting from "
          .. "{{ source(...) }} with the renames and casts) and make the %d models ref() it; "
          .. "materialize it as a table if the source is large and they filter it the same "
          .. "way."):format(tbl, #f.readers),
        evidence = { readers = #f.readers, models = table.concat(names, ", ") },
      }
    end
  end,
}
