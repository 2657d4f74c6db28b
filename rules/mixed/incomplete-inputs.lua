-- rules/mixed/incomplete-inputs.lua: say when an analysis stands on partial
-- data. Every plugin records what it could not read as run warnings (a
-- truncated event log, a missing REST endpoint, a dropped DAG edge); other
-- rules stay quiet where data is missing, so without this rule a user could
-- read "no findings" as "healthy". One short finding per run: the warnings
-- themselves are on stderr (FILE: warning: ...) and in the JSON report.

-- What to supply, by engine: the input that would make the analysis whole.
local advice = {
  flink = "Export the whole job (optipipe fetch flink URL, or every REST endpoint listed in "
    .. "docs/flink.md) so the checkpoint, watermark and bottleneck rules can run.",
  spark = "Supply the whole event log (every part of a rolling log, the finished file rather "
    .. "than an .inprogress one) so the stage and executor rules see every task.",
  dbt = "Supply run_results.json together with the manifest.json of the same invocation "
    .. "(both in target/) so the DAG, critical-path and model rules can run.",
}
local generic = "Rules that need the missing data stayed quiet; supply the complete input "
  .. "for a full analysis."
local units = require "optipipe.units"

return {
  id = "mixed.incomplete-inputs",
  title = "Some inputs were only partly read",
  severity = "info",
  sources = { "*" },
  tags = { "inputs" },
  options = { max_listed = 1 },
  description = [[One finding per run whose inputs were only partly read, quoting its first warning
and saying what to supply for that engine, so that quiet rules are not mistaken for a healthy
pipeline.]],
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
          recommendation = advice[run.source] or generic,
          evidence = { warnings = n },
        }
      end
    end
  end,
}
