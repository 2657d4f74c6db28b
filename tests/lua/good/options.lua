-- Options: defaults, config overrides, a fresh copy per call.
return {
  id = "t.options",
  title = "Options",
  severity = "info",
  sources = { "spark" },
  options = { threshold = 0.8, count = 3, name = "x", flag = true,
              nested = { a = 1, list = { 1, 2 } } },
  check = function(run, ctx)
    local o = ctx.options
    ctx.report {
      message = "options of " .. run.id,
      evidence = { threshold = o.threshold, count = o.count, name = o.name, flag = o.flag,
                   a = o.nested.a, list2 = o.nested.list[2], count_type = math.type(o.count),
                   rule_id = ctx.rule.id, rule_severity = ctx.rule.severity },
    }
    o.threshold = 99 -- only this call's copy
    o.nested.a = 99
  end,
}
