-- dbt.slow-models: the few models that dominate the build's runtime,
-- ranked by their share of all node time; says whether the time goes to
-- the warehouse (execute) or to Jinja and introspection (compile).
-- docs/rules/dbt.slow-models.md
local du = require "dbtutil"

return {
  id = "dbt.slow-models",
  title = "The few models that dominate runtime",
  severity = "info",
  sources = { "dbt" },
  tags = { "performance" },
  options = {
    min_s = 300,        -- a model at least this slow ...
    min_share = 0.25,   -- ... holding this share of all node time
    max_reports = 3,
    compile_share = 0.5, -- compile phase this share of the node → compile-heavy
  },
  check = function(run, ctx)
    local o = ctx.options
    if not du.executing(run) then
      return
    end
    local total, cands = 0, {}
    for _, n in ipairs(run.nodes) do
      local ms = du.ms(n)
      if ms and not n.attrs.untimed then
        total = total + ms
        if du.builds(n) and n.status == "succeeded" then
          cands[#cands + 1] = { node = n, ms = ms }
        end
      end
    end
    if total <= 0 then
      return
    end
    table.sort(cands, function(a, b)
      return a.ms > b.ms
    end)
    for i = 1, math.min(#cands, o.max_reports) do
      local c = cands[i]
      local share = c.ms / total
      if c.ms < o.min_s * 1000 or share < o.min_share then
        break
      end
      local n = c.node
      local comp, exec = n.metrics.compile_ms, n.metrics.execute_ms
      local where, rec
      if comp and comp >= o.compile_share * c.ms then
        where = (" %s of it compiling (Jinja, run_query and introspection), %s executing"):format(
          du.dur(comp), du.dur(exec or 0))
        rec = ("Most of %s's time is compile time: look for run_query/introspective macros "
          .. "(dbt_utils.get_column_values, star, adapter.get_columns_in_relation) in %s and "
          .. "cache or hard-code their results."):format(du.name(n), du.target(n))
      else
        where = exec and (" %s of it in the warehouse"):format(du.dur(exec)) or ""
        rec = ("Fix %s first: check its query plan (scans, joins, partition and cluster "
          .. "pruning), make it incremental if it is rebuilt in full (%s), or split it."):format(
          du.name(n), n.attrs.materialized or "materialization unknown")
      end
      ctx.report {
        node = n.id,
        message = ("%s took %s, %s of all node time in this build (%s);%s."):format(du.name(n),
          du.dur(c.ms), du.pct(share, 0), du.dur(total), where),
        recommendation = rec,
        evidence = {
          duration_s = du.secs(c.ms), share = math.floor(share * 1000 + 0.5) / 1000,
          total_s = du.secs(total), compile_s = comp and du.secs(comp) or nil,
          execute_s = exec and du.secs(exec) or nil, rows = n.metrics.rows_affected,
          materialized = n.attrs.materialized,
        },
      }
    end
  end,
}
