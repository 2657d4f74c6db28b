-- team.spark-sla: a Spark application ran longer than the SLA its
-- submitter put in a tag (spark.yarn.tags = "team:orders,sla:45m").
-- docs/cookbook.md
local units = require "optipipe.units"

-- The value of the first "<prefix><value>" item of a comma-separated list.
local function tag(list, prefix)
  for item in (list or ""):gmatch("[^,]+") do
    item = item:match("^%s*(.-)%s*$")
    if item:sub(1, #prefix) == prefix then
      return item:sub(#prefix + 1)
    end
  end
end

return {
  id = "team.spark-sla",
  title = "Spark application slower than its SLA",
  severity = "error",
  sources = { "spark" },
  tags = { "sla" },
  options = { tag_key = "spark.yarn.tags", tag_prefix = "sla:" },
  description = "Reads the SLA from a tag of the application and reports runs "
    .. "that took longer, naming the stages that took the most time.",
  check = function(run, ctx)
    local o = ctx.options
    local raw = tag(run.config[o.tag_key], o.tag_prefix)
    if not raw or not run.duration_ms then
      return -- no SLA tag, or the log ended before the application did
    end
    local sla, err = units.parse_duration(raw)
    if not sla then
      ctx.log(("%s: %s"):format(run.id, err))
      return
    end
    if run.duration_ms <= sla then
      return
    end
    local stages = {}
    for _, n in ipairs(run.nodes) do
      if n.kind == "stage" and n.duration_ms then
        stages[#stages + 1] = n
      end
    end
    table.sort(stages, function(a, b) return a.duration_ms > b.duration_ms end)
    local top = {}
    for i = 1, math.min(3, #stages) do
      top[i] = ("%s (%s)"):format(stages[i].name or stages[i].id,
                                  units.format_duration(stages[i].duration_ms))
    end
    ctx.report {
      message = ("%s ran %s, over its SLA of %s by %s."):format(
        run.name or run.id, units.format_duration(run.duration_ms),
        units.format_duration(sla), units.format_duration(run.duration_ms - sla)),
      recommendation = #top > 0 and ("Start with the longest stages: %s."):format(
        table.concat(top, ", ")) or "Look at the application's longest stages.",
      evidence = { duration_ms = run.duration_ms, sla_ms = sla,
                   over_ms = run.duration_ms - sla },
    }
  end,
}
