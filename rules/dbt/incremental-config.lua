-- dbt.incremental-config: incremental models without a unique_key (merge
-- and delete+insert then append duplicates or rescan the whole target) or
-- without on_schema_change (dbt ignores new columns; teams then rebuild
-- the table with --full-refresh). dbt-bouncer
-- check_model_incremental_has_unique_key.
-- docs/rules/dbt.incremental-config.md
local du = require "dbtutil"

-- strategies that need no key: they replace partitions or only append
local KEYLESS = { append = true, insert_overwrite = true, microbatch = true,
                  replace_where = true }

return {
  id = "dbt.incremental-config",
  title = "Incremental model without unique_key or on_schema_change",
  severity = "warning",
  sources = { "dbt" },
  tags = { "performance", "materialization", "incremental" },
  description = "Needs manifest.json (config.unique_key, on_schema_change).",
  options = { require_on_schema_change = true, max_reports = 10 },
  check = function(run, ctx)
    local o = ctx.options
    if not du.has_dag(run) then
      return
    end
    local k = 0
    for _, n in ipairs(run.nodes) do
      if du.mat(n) == "incremental" and k < o.max_reports then
        local a = n.attrs
        local strategy = a.incremental_strategy or "default"
        local no_key = (a.unique_key == nil or a.unique_key == "" or a.unique_key == "[]")
          and not KEYLESS[strategy]
        local osc = a.on_schema_change
        local no_osc = o.require_on_schema_change and (osc == nil or osc == "ignore")
        if no_key or no_osc then
          k = k + 1
          local what, fix, changes = {}, {}, {}
          if no_key then
            what[#what + 1] = ("no unique_key (strategy %s): each run appends its rows again "
              .. "or merges against the whole table"):format(strategy)
            fix[#fix + 1] = "set unique_key to the model's grain (the column(s) a row is "
              .. "unique by) so reruns update rows instead of duplicating them"
          end
          if no_osc then
            what[#what + 1] = ("on_schema_change %s: a new column is silently left out "
              .. "until a --full-refresh rebuilds the whole table"):format(osc or "unset (ignore)")
            fix[#fix + 1] = "set on_schema_change='append_new_columns' (or 'sync_all_columns')"
            changes[#changes + 1] = { target = du.target(n), key = "on_schema_change",
                                      from = osc, to = "append_new_columns" }
          end
          ctx.report {
            node = n.id,
            -- a missing key costs duplicates or full merges; the schema
            -- setting alone only costs the next full refresh
            severity = no_key and "warning" or "info",
            message = ("Incremental model %s has %s."):format(du.name(n),
              table.concat(what, "; and ")),
            recommendation = ("In %s: %s."):format(du.target(n), table.concat(fix, "; ")),
            evidence = { unique_key = a.unique_key, on_schema_change = osc,
                         incremental_strategy = a.incremental_strategy },
            changes = #changes > 0 and changes or nil,
          }
        end
      end
    end
  end,
}
