-- rules/mixed/incomplete-inputs.lua: say when an analysis stands on partial
-- data. Every plugin records what it could not read as run warnings (a
-- truncated event log, a missing REST endpoint, a dropped DAG edge); other
-- rules stay quiet where data is missing, so without this rule a user could
-- read "no findings" as "healthy".
local units = require "optipipe.units"

return {
  id = "mixed.incomplete-inputs",
  title = "Some inputs were only partly read",
  severity = "info",
  sources = { "*" },
  tags = { "inputs" },
  options = { max_listed = 3 },
  description = [[Lists the runs whose inputs were only partly read, with the first warnings, so that
quiet rules are not mistaken for a healthy pipeline.]],
  check = function(bundle, ctx)
    for _, run in ipairs(bundle.runs) do
      local n = #run.warnings
      if n > 0 then
        local shown = {}
        for i = 1, math.min(n, ctx.options.max_listed) do
          shown[#shown + 1] = run.warnings[i]
        end
        local more = n > #shown and string.format(" (and %d more)", n - #shown) or ""
        ctx.report {
          run = run,
          message = string.format("%s run %s was read with %s: %s%s",
            run.source, run.name or run.id, units.format_count(n, "warning"),
            table.concat(shown, "; "), more),
          recommendation = "Rules that need the missing data stayed quiet; supply the complete input "
            .. "(the whole event log, every REST endpoint listed in docs/flink.md, the manifest) "
            .. "for a full analysis.",
          evidence = { warnings = n },
        }
      end
    end
  end,
}
