-- csv.straggler: a rule over the data of an external plugin, the csv
-- example (sdk/examples/plugin-csv): a stage whose slowest task took many
-- times its median. docs/writing-plugins.md "Rules for your plugin's data".
return {
  id = "csv.straggler",
  title = "A straggler task holds up its stage",
  severity = "warning",
  sources = { "csv" },            -- the plugin's name is the runs' source
  options = { factor = 3 },
  check = function(run, ctx)
    for _, stage in ipairs(run.nodes) do
      local d = stage.dist.duration_ms
      if d and d.p50 > 0 and d.max / d.p50 >= ctx.options.factor then
        ctx.report {
          node = stage.id,
          message = ("%s: the slowest task took %.0f ms, %.1fx the median of %.0f ms")
            :format(stage.name, d.max, d.max / d.p50, d.p50),
          recommendation = "Look at the straggler's input size: split large inputs evenly.",
          evidence = { max_ms = d.max, p50_ms = d.p50 },
        }
      end
    end
  end,
}
