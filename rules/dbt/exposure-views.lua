-- dbt.exposure-views: an exposure (a dashboard, a notebook, an app) that
-- reads a view or an ephemeral model: every refresh of the BI tool runs
-- the view's whole query (and every view under it) in the warehouse
-- (dbt-project-evaluator fct_exposure_parents_materializations).
-- docs/rules/dbt.exposure-views.md
local du = require "dbtutil"

local INLINED = { view = true, ephemeral = true }

return {
  id = "dbt.exposure-views",
  title = "A dashboard or app reads a view",
  severity = "warning",
  sources = { "dbt" },
  tags = { "performance", "materialization" },
  description = "Needs manifest.json (exposures and materializations).",
  options = { max_reports = 10 },
  check = function(run, ctx)
    if not du.has_dag(run) then
      return
    end
    local k = 0
    for _, e in ipairs(run.nodes) do
      if e.kind == "exposure" then
        for _, pid in ipairs(e.parents) do
          local p = run.by_id[pid]
          local m = du.mat(p)
          if INLINED[m or ""] and k < ctx.options.max_reports then
            k = k + 1
            ctx.report {
              node = p.id,
              message = ("Exposure %s reads %s, a%s %s: every refresh of it runs %s's query "
                .. "in the warehouse again."):format(du.name(e), du.name(p),
                m == "ephemeral" and "n" or "", m, du.name(p)),
              recommendation = ("Materialize %s as a table (or incremental) so the exposure "
                .. "reads stored rows; dbt builds it once per run."):format(du.target(p)),
              evidence = { exposure = du.name(e), model = du.name(p), materialized = m },
              changes = { { target = du.target(p), key = "materialized", from = m,
                            to = "table" } },
            }
          end
        end
      end
    end
  end,
}
