-- team.finance-regression: a dbt model under models/finance/ got more than
-- 20% slower than its median over the earlier runs of the same project.
-- docs/cookbook.md
local stats = require "optipipe.stats"
local units = require "optipipe.units"

return {
  id = "team.finance-regression",
  title = "Finance model slower than its history allows",
  severity = "error",
  sources = { "dbt" },
  tags = { "performance", "finance" },
  options = { folder = "models/finance/", max_regression = 0.2, min_history = 3,
              min_ms = 10000 },
  description = "Compares each model under a folder with the same model in the "
    .. "earlier runs of its history (run.history) and reports a slowdown above "
    .. "max_regression.",
  check = function(run, ctx)
    local o = ctx.options
    for _, n in ipairs(run.nodes) do
      local file = n.attrs.file or ""
      if n.kind == "model" and n.duration_ms and file:sub(1, #o.folder) == o.folder then
        local past = {}
        for _, old in ipairs(run.history) do
          local m = old.by_id[n.id]
          if m and m.duration_ms and m.status == "succeeded" then
            past[#past + 1] = m.duration_ms
          end
        end
        local median = #past >= o.min_history and stats.median(past)
        if median and n.duration_ms >= o.min_ms
            and n.duration_ms > median * (1 + o.max_regression) then
          local change = n.duration_ms / median - 1
          ctx.report {
            node = n.id,
            message = ("%s took %s, %s more than its median of %s over %d earlier runs "
              .. "(the limit is %s)."):format(n.name, units.format_duration(n.duration_ms),
                units.format_pct(change), units.format_duration(median), #past,
                units.format_pct(o.max_regression)),
            recommendation = ("Find what changed in %s since the last fast run: its SQL, "
              .. "the rows it reads, or a full refresh."):format(file),
            evidence = { duration_ms = n.duration_ms, median_ms = median,
                         regression = change, runs = #past },
          }
        end
      end
    end
  end,
}
