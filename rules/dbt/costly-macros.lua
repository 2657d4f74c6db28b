-- dbt.costly-macros: models calling dbt_utils / dbt macros known to cost
-- warehouse time: introspective queries at every compile (the values or
-- relations they look up) or a UNION ALL rebuilt over many relations.
-- Reads the manifest's depends_on.macros (node attr `macros`).
-- docs/rules/dbt.costly-macros.md
local du = require "dbtutil"

-- macro -> why it costs and what to do instead; `parents` = only with at
-- least options.min_union_relations parents
local KNOWN = {
  ["dbt_utils.union_relations"] = { parents = true,
    why = "introspects the columns of every relation at each compile and rebuilds a UNION ALL "
      .. "over all of them every run",
    fix = "union fewer, pre-aggregated relations, or make the model incremental so each run "
      .. "unions only new rows; pass `include` to skip column introspection" },
  ["dbt_utils.get_column_values"] = {
    why = "runs SELECT DISTINCT over the column at every compile, parse-time query included",
    fix = "keep the values in a seed or a var, or give `where` and `max_records` so the scan "
      .. "is bounded" },
  ["dbt_utils.get_relations_by_pattern"] = {
    why = "queries the information schema at every compile",
    fix = "list the relations (a var or a source) instead of discovering them each run" },
  ["dbt_utils.get_relations_by_prefix"] = {
    why = "queries the information schema at every compile",
    fix = "list the relations (a var or a source) instead of discovering them each run" },
  ["dbt_utils.get_query_results_as_dict"] = {
    why = "runs its query at every compile",
    fix = "keep the result in a seed or a var, or compute it in the model's SQL" },
  ["dbt_utils.get_single_value"] = {
    why = "runs its query at every compile",
    fix = "compute the value in the model's SQL (a CTE) instead of at compile time" },
  ["dbt.run_query"] = {
    why = "runs a query while the model compiles (every run, parse and docs generate)",
    fix = "guard it with {% if execute %} and cache its result, or move it into the SQL" },
}

return {
  id = "dbt.costly-macros",
  title = "Macros known to cost warehouse time",
  severity = "info",
  sources = { "dbt" },
  tags = { "performance", "macros" },
  description = "Needs manifest.json (depends_on.macros).",
  options = {
    min_union_relations = 10, -- union_relations over this many parents
    max_reports = 10,
  },
  check = function(run, ctx)
    local o = ctx.options
    if not du.has_dag(run) then
      return
    end
    local k = 0
    for _, n in ipairs(run.nodes) do
      local list = n.kind == "model" and n.attrs.macros
      if list then
        for macro in list:gmatch("[^,]+") do
          local m = KNOWN[macro]
          local enough = m and (not m.parents or #n.parents >= o.min_union_relations)
          if enough and k < o.max_reports then
            k = k + 1
            local over = m.parents and (" over %s"):format(du.plural(#n.parents, "relation"))
              or ""
            ctx.report {
              node = n.id,
              message = ("%s calls %s%s, which %s."):format(du.name(n), macro, over, m.why),
              recommendation = ("In %s: %s."):format(du.target(n), m.fix),
              evidence = { macro = macro, relations = m.parents and #n.parents or nil,
                           materialized = du.mat(n) },
            }
          end
        end
      end
    end
  end,
}
