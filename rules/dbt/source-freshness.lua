-- dbt.source-freshness: sources that are staler than their warn_after /
-- error_after criteria, or whose freshness query failed, from
-- sources.json (`dbt source freshness`). docs/rules/dbt.source-freshness.md
local du = require "dbtutil"

local function hours(ms)
  return du.dur(ms)
end

return {
  id = "dbt.source-freshness",
  title = "Sources staler than their freshness criteria",
  severity = "warning",
  sources = { "dbt" },
  tags = { "freshness", "sources" },
  options = {},
  check = function(run, ctx)
    if not du.is_freshness(run) then
      return
    end
    for _, n in ipairs(run.nodes) do
      local s = du.raw(n)
      local age = n.metrics.age_ms
      local warn, err = n.metrics.warn_after_ms, n.metrics.error_after_ms
      local crit = {}
      if warn then
        crit[#crit + 1] = "warn after " .. hours(warn)
      end
      if err then
        crit[#crit + 1] = "error after " .. hours(err)
      end
      local crit_s = #crit > 0 and (" (" .. table.concat(crit, ", ") .. ")") or ""
      if s == "warn" or s == "error" then
        ctx.report {
          node = n.id,
          severity = s == "error" and "error" or "warning",
          message = ("Source %s was last loaded %s ago%s: freshness %s."):format(
            du.name(n), age and hours(age) or "an unknown time", crit_s, s),
          recommendation = ("Check the loader feeding %s (last loaded at %s); if the "
            .. "source is expected to be quiet this long, raise its freshness criteria."):format(
            du.name(n), n.attrs.max_loaded_at or "unknown"),
          evidence = {
            status = s, age_h = age and math.floor(age / 36000 + 0.5) / 100 or nil,
            warn_after_h = warn and warn / 3600000 or nil,
            error_after_h = err and err / 3600000 or nil,
          },
        }
      elseif s == "runtime error" then
        ctx.report {
          node = n.id,
          severity = "error",
          message = ("The freshness check of source %s failed: %s"):format(du.name(n),
            n.attrs.message or "no message"),
          recommendation = "Fix the source's loaded_at_field / loaded_at_query or its "
            .. "permissions; until then its freshness is unknown.",
          evidence = { status = s },
        }
      end
    end
  end,
}
